import DOMPurify from 'dompurify';
import { Marked, type Tokens } from 'marked';

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);
}

// One parser for the XO's messages: code blocks get a copy button (handled by the panel).
const md = new Marked({
  gfm: true,
  breaks: true,
  renderer: {
    code(token: Tokens.Code): string {
      const lang = token.lang ? escapeHtml(token.lang.split(/\s/)[0] ?? '') : '';
      return `<div class="code-block"><button type="button" class="copy-code" aria-label="Copy code">Copy</button><pre><code${lang ? ` class="language-${lang}"` : ''}>${escapeHtml(token.text)}</code></pre></div>`;
    },
  },
});

/** Markdown → sanitized HTML. Everything the model says passes DOMPurify; links open nothing in-app. */
export function renderMarkdown(text: string): string {
  const html = md.parse(text, { async: false });
  return DOMPurify.sanitize(html, {
    ALLOWED_URI_REGEXP: /^(?:https?|mailto):/i,
    FORBID_TAGS: ['style', 'form', 'input', 'img', 'iframe'],
    FORBID_ATTR: ['style'],
  });
}
