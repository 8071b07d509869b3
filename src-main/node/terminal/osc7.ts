const OSC7 = '\x1b]7;';
/** Longer than any sane file:// URL; a sequence without terminator beyond this is abandoned. */
const MAX_PENDING = 8192;

/**
 * Follows OSC 7 ("ESC ] 7 ; file://host/path BEL|ST"), which shells configured for it
 * (vte.sh, fish, zsh/bash with a PROMPT_COMMAND) print at every prompt. Sequences split across
 * chunks are reassembled. Works on latin1 strings so every byte maps to one char.
 */
export class Osc7Tracker {
  private carry = '';
  private current: { cwd: string; host: string } | null = null;

  get cwd(): string | null {
    return this.current?.cwd ?? null;
  }

  get host(): string | null {
    return this.current?.host ?? null;
  }

  feed(chunk: Uint8Array): void {
    // Fast path: nothing that could start or continue a sequence.
    if (this.carry === '' && chunk.indexOf(0x1b) === -1) return;
    const s = this.carry + Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('latin1');
    this.carry = '';
    const re = /\x1b\]7;([^\x07\x1b]*)(?:\x07|\x1b\\)/g;
    let lastEnd = 0;
    for (let m = re.exec(s); m; m = re.exec(s)) {
      lastEnd = re.lastIndex;
      const parsed = parseFileUrl(m[1] ?? '');
      if (parsed) this.current = parsed;
    }
    const open = s.lastIndexOf(OSC7);
    if (open >= lastEnd && open !== -1) {
      const rest = s.slice(open);
      if (rest.length <= MAX_PENDING) this.carry = rest;
      return;
    }
    // The chunk may end with the first bytes of "ESC ] 7 ;".
    for (let k = Math.min(OSC7.length - 1, s.length); k > 0; k--) {
      if (OSC7.startsWith(s.slice(s.length - k))) {
        this.carry = s.slice(s.length - k);
        break;
      }
    }
  }
}

function parseFileUrl(latin1: string): { cwd: string; host: string } | null {
  // The URL's bytes are UTF-8 (percent-encoded or not).
  const raw = Buffer.from(latin1, 'latin1').toString('utf8');
  const m = /^file:\/\/([^/]*)(\/.*)$/.exec(raw);
  if (!m) return null;
  let path = m[2] ?? '/';
  try {
    path = decodeURIComponent(path);
  } catch {
    // Not valid percent-encoding: take the path as written.
  }
  return { host: m[1] ?? '', cwd: path };
}
