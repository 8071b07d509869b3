/**
 * Feeds one session's output into xterm.js, one write at a time, merging what arrived meanwhile.
 *
 * xterm parses a write whole, then yields to the browser (which paints) once 12 ms have passed.
 * Written as they come — one 64 KiB event per write — a flood costs a painted frame for every
 * ~12 ms of parsing, and a frame is expensive (~8 ms with the DOM renderer, 50–80 ms with
 * software WebGL). While xterm is busy with one write, the chunks that arrive are queued and then
 * written as one: the slower the page, the larger the write and the fewer the frames per byte, so
 * a flood is limited by parsing rather than painting. `maxWrite` bounds one write, which bounds
 * how long a keystroke can wait behind parsing.
 *
 * Credit for the host (`ack`) goes back once xterm has parsed the bytes, as before.
 *
 * Merged writes reuse one buffer: xterm has parsed a write before it calls back, and only one
 * write is outstanding, so the buffer is free again when the next merge happens. A fresh 1 MiB
 * buffer per write cost ~50 ms of main-thread time and extra GC per 32 MiB.
 */
export interface FeederTarget {
  /** `data` may be reused once `parsed` has been called (xterm.js has consumed it by then). */
  write(data: Uint8Array, parsed: () => void): void;
}

export const MAX_WRITE_BYTES = 1024 * 1024;

export class OutputFeeder {
  private queue: { data: Uint8Array; credit: number }[] = [];
  /** Credit of empty chunks that arrived while a write was in progress. */
  private looseCredit = 0;
  private writing = false;
  private disposed = false;
  private scratch: Uint8Array | null = null;

  constructor(
    private readonly target: FeederTarget,
    private readonly ack: (bytes: number) => void,
    private readonly maxWrite = MAX_WRITE_BYTES,
  ) {}

  /** `credit`: bytes owed to the host once `data` is parsed (0 when already credited). */
  push(data: Uint8Array, credit: number): void {
    if (this.disposed) return;
    if (data.byteLength === 0) {
      if (this.writing) this.looseCredit += credit;
      else this.ack(credit);
      return;
    }
    this.queue.push({ data, credit });
    if (!this.writing) this.writeNext();
  }

  /** Stops writing; whatever is queued is dropped (the view is going away). */
  dispose(): void {
    this.disposed = true;
    this.queue = [];
    this.looseCredit = 0;
  }

  private writeNext(): void {
    if (this.disposed) return;
    if (this.looseCredit > 0) {
      this.ack(this.looseCredit);
      this.looseCredit = 0;
    }
    if (this.queue.length === 0) {
      this.writing = false;
      return;
    }
    this.writing = true;
    const { data, credit } = this.take();
    this.target.write(data, () => {
      if (this.disposed) return;
      this.ack(credit);
      this.writeNext();
    });
  }

  /** Up to maxWrite bytes from the front of the queue (at least one chunk), as one buffer. */
  private take(): { data: Uint8Array; credit: number } {
    let size = 0;
    let count = 0;
    let credit = 0;
    for (const c of this.queue) {
      if (count > 0 && size + c.data.byteLength > this.maxWrite) break;
      size += c.data.byteLength;
      credit += c.credit;
      count++;
    }
    const taken = this.queue.splice(0, count);
    if (taken.length === 1 && taken[0]) return taken[0];
    // size ≤ maxWrite here: a chunk over maxWrite only ever travels alone (above).
    this.scratch ??= new Uint8Array(this.maxWrite);
    const data = this.scratch.subarray(0, size);
    let at = 0;
    for (const c of taken) {
      data.set(c.data, at);
      at += c.data.byteLength;
    }
    return { data, credit };
  }
}
