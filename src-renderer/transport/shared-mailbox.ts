/**
 * A single-producer, single-consumer ring of frames in a SharedArrayBuffer: the WebSocket worker
 * writes small frames, the page's main thread reads them when `Atomics.waitAsync` wakes it.
 *
 * Why not just postMessage: after a key press whose handling left a frame pending, Chromium
 * defers every per-frame task of the page (worker messages and WebSocket messages included)
 * until that frame has been drawn ("DeferRendererTasksAfterInput", on by default). A key's echo
 * that arrives a millisecond later then waits ~10 ms for the frame, and is drawn one frame late.
 * The wake of `Atomics.waitAsync` is a V8 task of the main thread, not a task of the page's
 * frame, so it is not deferred. Needs a cross-origin isolated page (`wraith serve` sends
 * COOP/COEP for that); without one the wire keeps to postMessage alone.
 *
 * Layout: a control block of Int32 words (write position, read position, wake counter) and a
 * data area of a power-of-two size. Positions only grow (mod 2^32); a record is a little-endian
 * uint32 length and the bytes, padded to 4, and its bytes may run on from the end of the area to
 * its start. The writer publishes with Atomics.store on the write position after the bytes are in
 * place; the reader frees space the same way on the read position. Both are sequentially
 * consistent, so the bytes a position covers are visible to the other side.
 */

const WRITE = 0;
const READ = 1;
const WAKE = 2;
const CONTROL_BYTES = 16;

/** 256 KiB: room for a burst of small frames while the page is busy. */
export const MAILBOX_CAPACITY = 256 * 1024;
/** Larger frames (output floods, RDP updates) are transferred by postMessage without a copy. */
export const MAILBOX_MAX_FRAME = 32 * 1024;

const padded = (n: number) => (n + 3) & ~3;

export function createMailbox(capacity = MAILBOX_CAPACITY): SharedArrayBuffer {
  if (capacity <= 0 || (capacity & (capacity - 1)) !== 0) throw new Error('mailbox capacity must be a power of two');
  return new SharedArrayBuffer(CONTROL_BYTES + capacity);
}

class MailboxView {
  protected readonly ctrl: Int32Array;
  protected readonly data: Uint8Array;
  protected readonly view: DataView;
  protected readonly capacity: number;

  constructor(buffer: SharedArrayBuffer) {
    this.ctrl = new Int32Array(buffer, 0, CONTROL_BYTES / 4);
    this.capacity = buffer.byteLength - CONTROL_BYTES;
    this.data = new Uint8Array(buffer, CONTROL_BYTES, this.capacity);
    this.view = new DataView(buffer, CONTROL_BYTES, this.capacity);
  }

  protected load(word: number): number {
    return Atomics.load(this.ctrl, word) >>> 0;
  }
}

/** The worker's side. */
export class MailboxWriter extends MailboxView {
  /**
   * Copies `frame` in and wakes the reader; false (nothing written) when it is larger than
   * MAILBOX_MAX_FRAME or does not fit in the free space now.
   */
  put(frame: Uint8Array): boolean {
    const len = frame.byteLength;
    const record = 4 + padded(len);
    if (len > MAILBOX_MAX_FRAME || record > this.capacity) return false;
    const w = this.load(WRITE);
    if (record > this.capacity - ((w - this.load(READ)) >>> 0)) return false;
    const at = w & (this.capacity - 1); // 4-aligned, so the length word never wraps
    this.view.setUint32(at, len, true);
    const start = (at + 4) & (this.capacity - 1);
    const first = Math.min(len, this.capacity - start);
    this.data.set(frame.subarray(0, first), start);
    if (first < len) this.data.set(frame.subarray(first), 0);
    Atomics.store(this.ctrl, WRITE, (w + record) | 0);
    Atomics.add(this.ctrl, WAKE, 1);
    Atomics.notify(this.ctrl, WAKE);
    return true;
  }
}

/** The page's side. */
export class MailboxReader extends MailboxView {
  private stopped = false;

  /** Every frame written so far, oldest first, each copied into an ArrayBuffer of its own. */
  drain(): ArrayBuffer[] {
    const out: ArrayBuffer[] = [];
    const w = this.load(WRITE);
    let r = this.load(READ);
    while (r !== w) {
      const at = r & (this.capacity - 1);
      const len = this.view.getUint32(at, true);
      const start = (at + 4) & (this.capacity - 1);
      const first = Math.min(len, this.capacity - start);
      // A copy that is not shared memory (TextDecoder refuses views on shared memory).
      const frame = new Uint8Array(len);
      frame.set(this.data.subarray(start, start + first));
      if (first < len) frame.set(this.data.subarray(0, len - first), first);
      out.push(frame.buffer);
      r = (r + 4 + padded(len)) >>> 0;
    }
    Atomics.store(this.ctrl, READ, r | 0);
    return out;
  }

  /**
   * Calls `onFrames` with what `drain` returns whenever the writer has put something in, until
   * `stop`. The counter is read before draining, so a frame put in meanwhile wakes the next wait.
   */
  listen(onFrames: (frames: ArrayBuffer[]) => void): void {
    const turn = (): void => {
      while (!this.stopped) {
        const seen = Atomics.load(this.ctrl, WAKE);
        const frames = this.drain();
        if (frames.length) {
          try {
            onFrames(frames);
          } catch (err) {
            // Surface it as an uncaught error without ending the listening.
            setTimeout(() => {
              throw err;
            });
          }
        }
        if (this.stopped) return;
        const wait = Atomics.waitAsync(this.ctrl, WAKE, seen);
        if (wait.async) {
          void wait.value.then(turn);
          return;
        }
        // 'not-equal': something arrived while we drained; go round again.
      }
    };
    turn();
  }

  /** Ends `listen`: its pending wait is woken and does nothing more. */
  stop(): void {
    this.stopped = true;
    Atomics.notify(this.ctrl, WAKE);
  }
}

/** True where the page may share memory with its worker and wait on it asynchronously. */
export function mailboxSupported(): boolean {
  return globalThis.crossOriginIsolated === true && typeof SharedArrayBuffer === 'function' && typeof Atomics.waitAsync === 'function';
}
