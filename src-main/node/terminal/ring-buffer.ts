import stripAnsiCodes from 'strip-ansi';

export const DEFAULT_RING_BUFFER_BYTES = 1024 * 1024;

export interface RingRead {
  text: string;
  /** Offset of the first byte returned. */
  seq: number;
  /** Pass as sinceSeq next time. */
  nextSeq: number;
  /** Bytes between sinceSeq and seq the buffer no longer holds. */
  dropped: number;
  /** More bytes than maxBytes were available after nextSeq. */
  truncated: boolean;
}

/**
 * The last `capacity` bytes of a session's output, addressed by byte offset in the whole stream
 * (seq). One fixed Buffer used circularly: memory is `capacity`, whatever the shell prints.
 */
export class TerminalRingBuffer {
  private readonly buf: Buffer;
  /** Total bytes ever written; the seq of the next byte. */
  private end = 0;

  constructor(readonly capacity = DEFAULT_RING_BUFFER_BYTES) {
    if (!Number.isInteger(capacity) || capacity < 16) throw new RangeError('Ring buffer capacity must be an integer ≥ 16');
    this.buf = Buffer.alloc(capacity);
  }

  /** Seq of the oldest byte still held. */
  get startSeq(): number {
    return Math.max(0, this.end - this.capacity);
  }

  /** Seq of the next byte to be written (= total bytes written). */
  get endSeq(): number {
    return this.end;
  }

  /** Appends bytes; returns the seq of the first of them. */
  write(data: Uint8Array): number {
    const seq = this.end;
    let src = data;
    // Only the last `capacity` bytes can survive anyway.
    if (src.length > this.capacity) src = src.subarray(src.length - this.capacity);
    let pos = (this.end + (data.length - src.length)) % this.capacity;
    let off = 0;
    while (off < src.length) {
      const n = Math.min(src.length - off, this.capacity - pos);
      this.buf.set(src.subarray(off, off + n), pos);
      off += n;
      pos = (pos + n) % this.capacity;
    }
    this.end += data.length;
    return seq;
  }

  /** Raw bytes [from, to), which must lie within [startSeq, endSeq]. */
  bytes(from: number, to: number): Buffer {
    const len = to - from;
    const out = Buffer.allocUnsafe(len);
    let pos = from % this.capacity;
    let off = 0;
    while (off < len) {
      const n = Math.min(len - off, this.capacity - pos);
      this.buf.copy(out, off, pos, pos + n);
      off += n;
      pos = (pos + n) % this.capacity;
    }
    return out;
  }

  /**
   * Output from `sinceSeq` (or, without it, the last `maxBytes`), at most `maxBytes` bytes, cut at
   * UTF-8 character boundaries: a character split by the start is skipped, one split by the end is
   * left for the next read (nextSeq points at its first byte).
   */
  read(sinceSeq: number | undefined, maxBytes: number, opts: { stripAnsi?: boolean } = {}): RingRead {
    const oldest = this.startSeq;
    const wanted = sinceSeq === undefined ? Math.max(oldest, this.end - maxBytes) : Math.min(sinceSeq, this.end);
    let from = Math.max(wanted, oldest);
    const dropped = sinceSeq === undefined ? 0 : Math.max(0, Math.min(oldest, this.end) - sinceSeq);
    let to = Math.min(this.end, from + maxBytes);
    // A start inside a character (its lead byte was dropped, or the caller picked an arbitrary
    // seq): skip to the next character.
    for (let i = 0; i < 3 && from < to && isContinuation(this.byteAt(from)); i++) from++;
    to = Math.max(from, utf8SafeEnd(this, from, to));
    // maxBytes smaller than one character: return that character rather than nothing forever.
    if (to === from && from < this.end) to = Math.min(this.end, from + seqLength(this.byteAt(from)));
    const raw = this.bytes(from, to);
    let text = raw.toString('utf8');
    if (opts.stripAnsi) text = stripAnsi(text);
    return { text, seq: from, nextSeq: to, dropped, truncated: to < this.end };
  }

  byteAt(seq: number): number {
    return this.buf[seq % this.capacity] ?? 0;
  }
}

function isContinuation(b: number): boolean {
  return (b & 0xc0) === 0x80;
}

/** Length of the UTF-8 sequence a lead byte starts (1 for ASCII or invalid bytes). */
function seqLength(lead: number): number {
  if (lead >= 0xf0 && lead <= 0xf7) return 4;
  if (lead >= 0xe0) return lead <= 0xef ? 3 : 1;
  if (lead >= 0xc0) return 2;
  return 1;
}

/** Moves `to` back so it does not cut a multi-byte character in two. */
function utf8SafeEnd(ring: TerminalRingBuffer, from: number, to: number): number {
  // Look back at most 3 bytes for the lead byte of the last character.
  for (let i = to - 1; i >= Math.max(from, to - 4); i--) {
    const b = ring.byteAt(i);
    if (isContinuation(b)) continue;
    return i + seqLength(b) > to ? i : to;
  }
  return to;
}

/**
 * Terminal output as plain text for readers (the XO, logs): ANSI/OSC sequences removed, CRLF as
 * LF, and carriage-return overwrites (progress bars) reduced to what the line finally showed.
 */
export function stripAnsi(text: string): string {
  return stripAnsiCodes(text)
    .replace(/\r+\n/g, '\n')
    .split('\n')
    .map((line) => {
      if (!line.includes('\r')) return line;
      // A carriage return rewrites the line from column 0, as a terminal shows it.
      let shown = '';
      for (const part of line.split('\r')) shown = part + shown.slice(part.length);
      return shown;
    })
    .join('\n')
    .replace(/[\x00-\x08\x0b-\x1f\x7f]/g, '');
}
