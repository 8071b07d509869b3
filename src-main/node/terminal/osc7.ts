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
    const buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let s: string;
    if (this.carry === '') {
      // Fast path, native search: coloured output has an ESC every few bytes, and turning every
      // chunk into a string to run the regex cost ~1 ms per MiB (a tenth of the host's share).
      const at = buf.indexOf(OSC7_BYTES);
      if (at === -1) {
        this.carry = partialPrefixAtEnd(buf.toString('latin1', Math.max(0, buf.length - (OSC7.length - 1))));
        return;
      }
      s = buf.toString('latin1', at);
    } else {
      s = this.carry + buf.toString('latin1');
    }
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
    this.carry = partialPrefixAtEnd(s);
  }
}

const OSC7_BYTES = Buffer.from(OSC7, 'latin1');

/** The end of `s` if it is the first bytes of "ESC ] 7 ;" (the rest may come in the next chunk), else ''. */
function partialPrefixAtEnd(s: string): string {
  for (let k = Math.min(OSC7.length - 1, s.length); k > 0; k--) {
    if (OSC7.startsWith(s.slice(s.length - k))) return s.slice(s.length - k);
  }
  return '';
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
