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
 *
 * A tab no one sees (`background`) shares the page's one main thread with the tab in front. Its
 * flood written 1 MiB at a time held the front tab's echo behind whole megabytes of parsing (a
 * key typed beside a `yes` in another tab: p50 0.3 s, bench/terminal-render.ts figure 4). So a
 * background feeder writes at most BACKGROUND_WRITE_BYTES at once — splitting the host's large
 * chunks — and starts each write in a task of its own, so the front tab's output, which arrives
 * as tasks too, waits for one small write at most. No one is looking at the background tab, so
 * the frames its larger writes would save are not painted anyway.
 */
export interface FeederTarget {
  /** `data` may be reused once `parsed` has been called (xterm.js has consumed it by then). */
  write(data: Uint8Array, parsed: () => void): void;
}

export const MAX_WRITE_BYTES = 1024 * 1024;
/** The most a background feeder writes at once: a few milliseconds of parsing. */
export const BACKGROUND_WRITE_BYTES = 32 * 1024;

/** Schedules `fn` as a task of its own. */
export type TaskScheduler = (fn: () => void) => void;

let taskChannel: MessageChannel | null = null;
const channelTasks: (() => void)[] = [];
/**
 * A message to ourselves: a task of its own, behind what is already queued (the front tab's
 * output, input events). setTimeout(0) would do the same but is clamped to 4 ms once chained,
 * which would cap a background flood at 8 MiB/s.
 */
export const inNewTask: TaskScheduler = (fn) => {
  if (!taskChannel) {
    taskChannel = new MessageChannel();
    taskChannel.port1.onmessage = () => channelTasks.shift()?.();
  }
  channelTasks.push(fn);
  taskChannel.port2.postMessage(null);
};

export class OutputFeeder {
  private queue: { data: Uint8Array; credit: number }[] = [];
  /** Credit of empty chunks that arrived while a write was in progress. */
  private looseCredit = 0;
  private writing = false;
  private disposed = false;
  private scratch: Uint8Array | null = null;
  /** The tab is not shown: small writes, each in a task of its own (see above). */
  background = false;

  constructor(
    private readonly target: FeederTarget,
    private readonly ack: (bytes: number) => void,
    private readonly maxWrite = MAX_WRITE_BYTES,
    private readonly nextTask: TaskScheduler = inNewTask,
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
    const background = this.background;
    const { data, credit } = this.take(background ? Math.min(BACKGROUND_WRITE_BYTES, this.maxWrite) : this.maxWrite, background);
    this.target.write(data, () => {
      if (this.disposed) return;
      this.ack(credit);
      if (background) this.nextTask(() => this.writeNext());
      else this.writeNext();
    });
  }

  /**
   * Up to `limit` bytes from the front of the queue as one buffer: at least one chunk, unless
   * `split`, when a larger first chunk is cut to `limit` (its credit goes with its pieces as they
   * are written, what is left of it on its last).
   */
  private take(limit: number, split: boolean): { data: Uint8Array; credit: number } {
    const first = this.queue[0];
    if (split && first && first.data.byteLength > limit) {
      const credit = Math.min(first.credit, limit);
      const data = first.data.subarray(0, limit);
      first.data = first.data.subarray(limit);
      first.credit -= credit;
      return { data, credit };
    }
    let size = 0;
    let count = 0;
    let credit = 0;
    for (const c of this.queue) {
      if (count > 0 && size + c.data.byteLength > limit) break;
      size += c.data.byteLength;
      credit += c.credit;
      count++;
    }
    const taken = this.queue.splice(0, count);
    if (taken.length === 1 && taken[0]) return taken[0];
    // size ≤ limit ≤ maxWrite here: a chunk over the limit only ever travels alone (above).
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
