import type Anthropic from '@anthropic-ai/sdk';
import type { Block, StoredMessage, ToolResultBlock } from './messages.js';

/**
 * Turns the stored conversation into what is sent to the model: a valid alternation of
 * user/assistant turns (every tool_use answered), old screenshots replaced by a note, and
 * prompt-cache breakpoints on the last turn.
 */
export function prepareMessages(history: StoredMessage[], keepScreenshots: number): Anthropic.MessageParam[] {
  const merged: StoredMessage[] = [];
  for (const m of history) {
    const content = m.content.filter((b) => !(b.type === 'text' && b.text.length === 0));
    if (content.length === 0) continue;
    const last = merged.at(-1);
    if (last && last.role === m.role) last.content = [...last.content, ...content];
    else merged.push({ role: m.role, content: [...content] });
  }
  // The first turn must be the Commander's.
  while (merged[0] && merged[0].role !== 'user') merged.shift();

  // Every tool_use must be answered by a tool_result in the next user turn (a run cut short by a crash).
  for (let i = 0; i < merged.length; i++) {
    const m = merged[i];
    if (!m || m.role !== 'assistant') continue;
    const uses = m.content.filter((b) => b.type === 'tool_use');
    if (uses.length === 0) continue;
    let next = merged[i + 1];
    if (!next || next.role !== 'user') {
      next = { role: 'user', content: [] };
      merged.splice(i + 1, 0, next);
    }
    const answered = new Set(next.content.flatMap((b) => (b.type === 'tool_result' ? [b.tool_use_id] : [])));
    const missing: ToolResultBlock[] = uses
      .filter((u) => !answered.has(u.id))
      .map((u) => ({ type: 'tool_result', tool_use_id: u.id, is_error: true, content: [{ type: 'text', text: 'Interrupted: this tool call did not complete.' }] }));
    // tool_result blocks must come first in the user turn.
    next.content = [...next.content.filter((b) => b.type === 'tool_result'), ...missing, ...next.content.filter((b) => b.type !== 'tool_result')];
  }

  // Keep only the newest screenshots; older ones become a note.
  let images = 0;
  const out: Anthropic.MessageParam[] = [];
  for (let i = merged.length - 1; i >= 0; i--) {
    const m = merged[i];
    if (!m) continue;
    const content: Anthropic.ContentBlockParam[] = [];
    for (let j = m.content.length - 1; j >= 0; j--) {
      const b = m.content[j];
      if (b) content.unshift(toParam(b, () => images++ < keepScreenshots));
    }
    out.unshift({ role: m.role, content });
  }

  // Cache breakpoint on the last block: the conversation so far is reused next turn.
  const lastMsg = out.at(-1);
  if (lastMsg && Array.isArray(lastMsg.content)) {
    const lastBlock = lastMsg.content.at(-1);
    if (lastBlock && (lastBlock.type === 'text' || lastBlock.type === 'tool_result' || lastBlock.type === 'image')) {
      lastMsg.content[lastMsg.content.length - 1] = { ...lastBlock, cache_control: { type: 'ephemeral' } };
    }
  }
  return out;
}

const OMITTED = '[Older screenshot omitted from the context; take a new rdp_screenshot if you need to see the screen.]';

function toParam(b: Block, keepImage: () => boolean): Anthropic.ContentBlockParam {
  switch (b.type) {
    case 'text':
      return { type: 'text', text: b.text };
    case 'image':
      return keepImage() ? { type: 'image', source: { ...b.source } } : { type: 'text', text: OMITTED };
    case 'tool_use':
      return { type: 'tool_use', id: b.id, name: b.name, input: b.input };
    case 'tool_result': {
      const content: (Anthropic.TextBlockParam | Anthropic.ImageBlockParam)[] = [];
      for (let k = b.content.length - 1; k >= 0; k--) {
        const c = b.content[k];
        if (!c) continue;
        if (c.type === 'text') content.unshift({ type: 'text', text: c.text });
        else content.unshift(keepImage() ? { type: 'image', source: { ...c.source } } : { type: 'text', text: OMITTED });
      }
      return b.is_error ? { type: 'tool_result', tool_use_id: b.tool_use_id, content, is_error: true } : { type: 'tool_result', tool_use_id: b.tool_use_id, content };
    }
  }
}
