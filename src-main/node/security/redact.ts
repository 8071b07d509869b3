/**
 * Secrets redaction: runs on everything the XO sends to the model (tool results, the
 * Commander's messages) and on everything written to logs and the audit table.
 *
 * Two kinds of knowledge: patterns (key blocks, cloud/API tokens, `password=` pairs) and exact
 * strings learned at run time (what was typed at a password prompt).
 */

export const REDACTED = '[REDACTED]';

interface Rule {
  name: string;
  re: RegExp;
  replace: string | ((...groups: string[]) => string);
}

const KEY_WORDS = String.raw`(?:password|passwd|passphrase|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|secret[_-]?key|private[_-]?key|client[_-]?secret|auth)`;

const RULES: Rule[] = [
  // PEM / OpenSSH / PGP private keys, complete or cut off by a truncated read; also inside JSON ("\n" escaped).
  {
    name: 'private-key',
    re: /-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|$)/g,
    replace: (_m, kind) => `[REDACTED ${kind}]`,
  },
  { name: 'putty-key', re: /PuTTY-User-Key-File-\d:[\s\S]*?Private-MAC:\s*[0-9a-f]+/g, replace: '[REDACTED PUTTY KEY]' },
  { name: 'anthropic', re: /\bsk-ant-[A-Za-z0-9_-]{10,}/g, replace: '[REDACTED ANTHROPIC KEY]' },
  { name: 'openai', re: /\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}/g, replace: '[REDACTED OPENAI KEY]' },
  { name: 'github', re: /\b(?:gh[pousr]_[A-Za-z0-9]{30,255}|github_pat_[A-Za-z0-9_]{22,255})\b/g, replace: '[REDACTED GITHUB TOKEN]' },
  { name: 'aws-access-key', re: /\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b/g, replace: '[REDACTED AWS KEY ID]' },
  {
    name: 'aws-secret',
    re: /\b(aws_?secret_?access_?key|aws_?session_?token|SecretAccessKey)(["']?\s*[:=]\s*["']?)[A-Za-z0-9/+=]{16,}/gi,
    replace: (_m, k, sep) => `${k}${sep}${REDACTED}`,
  },
  { name: 'gcp-api-key', re: /\bAIza[0-9A-Za-z_-]{35}\b/g, replace: '[REDACTED GCP KEY]' },
  { name: 'gcp-oauth', re: /\bya29\.[0-9A-Za-z_-]{20,}/g, replace: '[REDACTED GCP TOKEN]' },
  { name: 'slack', re: /\bxox[abprs]-[A-Za-z0-9-]{10,}/g, replace: '[REDACTED SLACK TOKEN]' },
  { name: 'jwt', re: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g, replace: '[REDACTED JWT]' },
  {
    name: 'bearer',
    re: /\b(Bearer|Token|Basic)([ \t]+)[A-Za-z0-9._~+/-]{12,}=*/g,
    replace: (_m, scheme, sp) => `${scheme}${sp}${REDACTED}`,
  },
  { name: 'url-credentials', re: /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/@]+):[^\s@/]+@/gi, replace: (_m, pre) => `${pre}:${REDACTED}@` },
  {
    name: 'key-value',
    re: new RegExp(
      String.raw`\b([A-Za-z0-9_.-]*${KEY_WORDS}[A-Za-z0-9_.-]*)(["']?[ \t]*[:=][ \t]*)("[^"\n]*"|'[^'\n]*'|[^\s"',;&]+)`,
      'gi',
    ),
    replace: (m, key, sep, value) => {
      // Already redacted, or a placeholder — leave it alone.
      if (value.includes('REDACTED') || /^["']?\$\{?[A-Z_]+\}?["']?$/.test(value)) return m;
      // "Authorization: Bearer …": the scheme is not the secret; the bearer rule took the token.
      if (/^(Bearer|Basic|Token|Digest)$/i.test(value)) return m;
      const quote = value.startsWith('"') ? '"' : value.startsWith("'") ? "'" : '';
      return `${key}${sep}${quote}${REDACTED}${quote}`;
    },
  },
];

/** Lines that ask for a secret: "Password:", "[sudo] password for bob:", "Enter passphrase for key '…':". */
export const PASSWORD_PROMPT = /(?:password|passphrase|passcode|\bpin\b|verification code|one-time code|otp)[^\n:]{0,80}:\s*$/i;

const ANSI = /\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][A-Za-z0-9]|\x1b[=>NOM78c]/g;

export function stripAnsi(s: string): string {
  return s.replace(ANSI, '');
}

export class Redactor {
  private readonly known = new Set<string>();

  /** Remembers a secret seen at run time (a typed password); it is redacted wherever it appears. */
  addSecret(value: string): void {
    const v = value.replace(/[\r\n]+$/, '');
    if (v.length >= 4) this.known.add(v);
  }

  knownCount(): number {
    return this.known.size;
  }

  redact(text: string): string {
    let out = text;
    for (const rule of RULES) {
      const replace = rule.replace;
      out = typeof replace === 'string' ? out.replace(rule.re, replace) : out.replace(rule.re, (...args: unknown[]) => replace(...args.filter((a): a is string => typeof a === 'string')));
    }
    // Longest first, so a secret that contains another is removed whole.
    for (const secret of [...this.known].sort((a, b) => b.length - a.length)) {
      if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    }
    return out;
  }

  /** Redacts every string inside a JSON-like value (tool inputs, message blocks). */
  redactValue<T>(value: T): T {
    return this.walk(value) as T;
  }

  private walk(value: unknown): unknown {
    if (typeof value === 'string') return this.redact(value);
    if (Array.isArray(value)) return value.map((v) => this.walk(v));
    if (value !== null && typeof value === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) {
        // Image bytes are not text: redacting them would only corrupt them.
        out[k] = k === 'data' && typeof v === 'string' && v.length > 1000 && /^[A-Za-z0-9+/=]+$/.test(v.slice(0, 200)) ? v : this.walk(v);
      }
      return out;
    }
    return value;
  }
}

/**
 * Watches terminal output and input per session: when the last output line is a password
 * prompt, the next line typed into that session is a secret and is handed to the redactor.
 * The echo of a password (if the remote echoes it) is thereby redacted from every later read.
 */
/** A prompt line is short; more than this after the last line break cannot end in one that matters. */
const TAIL_BYTES = 4096;

export class PasswordPromptTracker {
  private readonly lastLine = new Map<string, string>();
  private readonly typing = new Map<string, string>();

  constructor(private readonly redactor: Redactor) {}

  /**
   * Sees every byte of every terminal, so it looks only at what follows the chunk's last line
   * break (at most TAIL_BYTES): decoding and un-escaping whole 64 KiB chunks cost ~9 ms of host
   * CPU per MiB of output, more than ssh2's decryption.
   */
  noteOutput(sessionId: string, data: Uint8Array | string): void {
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    const afterBreak = Math.max(bytes.lastIndexOf(0x0a), bytes.lastIndexOf(0x0d)) + 1;
    const from = Math.max(afterBreak, bytes.length - TAIL_BYTES);
    const tail = stripAnsi(bytes.toString('utf8', from));
    const prev = afterBreak > 0 ? '' : (this.lastLine.get(sessionId) ?? '');
    this.lastLine.set(sessionId, (prev + tail).slice(-300));
  }

  /** True when the session's last output line asks for a secret. */
  atPasswordPrompt(sessionId: string): boolean {
    return PASSWORD_PROMPT.test(this.lastLine.get(sessionId) ?? '');
  }

  /** Call with what is typed into a session; returns true if it is (part of) a secret. */
  noteInput(sessionId: string, data: Uint8Array | string): boolean {
    const text = typeof data === 'string' ? data : Buffer.from(data).toString('utf8');
    const pending = this.typing.get(sessionId);
    if (pending === undefined && !this.atPasswordPrompt(sessionId)) return false;
    const buf = (pending ?? '') + text;
    const end = buf.search(/[\r\n]/);
    if (end < 0) {
      this.typing.set(sessionId, buf);
      return true;
    }
    this.typing.delete(sessionId);
    this.redactor.addSecret(buf.slice(0, end));
    // What is typed now ends the prompt: the next prompt must be seen anew.
    this.lastLine.set(sessionId, '');
    return true;
  }

  forget(sessionId: string): void {
    this.lastLine.delete(sessionId);
    this.typing.delete(sessionId);
  }
}
