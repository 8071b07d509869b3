import type { SessionInfo } from '../../common/contract/sessions.js';
import { WraithError } from '../../common/errors.js';
import { FRESH_MODES } from '../../common/terminal-modes.js';
import { allocFramed } from '../frame-headroom.js';
import type { EventBus } from '../router.js';
import type { SessionHandle } from '../sessions/session-registry.js';
import { TerminalModeTracker } from './mode-tracker.js';
import { Osc7Tracker } from './osc7.js';
import { DEFAULT_RING_BUFFER_BYTES, type RingRead, TerminalRingBuffer, stripAnsi } from './ring-buffer.js';

const FRESH_MODES_BYTES = Buffer.from(FRESH_MODES);
/** Ends of a session's program kept at most (a connection that drops again and again). */
const MAX_ENDS = 256;

/** Where a session's program ended (its connection dropped, its shell exited): the seq just past its last output. */
interface ProgramEnd {
  seq: number;
  at: string;
  reason: string | null;
}

/** A read of a session's output, with what a view writes around it (terminal.read's result). */
export type TerminalRead = RingRead & { restore: string; closed: boolean; ends: (ProgramEnd & { index: number })[] };

/** Where a terminal's bytes come from and go to: an SSH shell channel or a local PTY. */
export interface TerminalSource {
  write(data: Buffer): void;
  resize(cols: number, rows: number): void;
  /** Stop producing output (back pressure reaches the remote program). */
  pause(): void;
  resume(): void;
}

export interface FlowControlOptions {
  /** Unacknowledged bytes above which the source is paused. */
  highWatermark: number;
  /** Unacknowledged bytes below which a paused source resumes. */
  lowWatermark: number;
  /** A terminal.data event carries up to this many bytes; smaller reads are coalesced. */
  batchBytes: number;
  /**
   * A source paused this long without any ack is resumed and flow control disarmed: the view
   * that was acking has gone (tab closed, renderer crashed). The next ack re-arms it.
   */
  stallMs: number;
}

/**
 * The window is sized for the round trip, not for memory: credit comes back only after xterm has
 * parsed a write, and the view merges what arrived meanwhile into its next write (output-feeder.ts),
 * so the host must have enough in flight to cover a write plus an ack's trip through the page,
 * worker, WebSocket and back. With 512K/128K the tab waited for data (a flood ran at 11–12 MiB/s
 * with the page idle a quarter of the time); with 2M/1.5M it runs at 16–18 MiB/s. What it costs is
 * Ctrl+C during a flood — everything in flight is shown first — and that stayed at 0.3–0.4 s,
 * because most of what is in flight is ssh2's own 2 MiB channel window (bench/terminal-render.ts).
 *
 * A batch is what one turn of the event loop read, up to batchBytes: small output (a key's echo)
 * leaves at once, a flood in few large frames. Each frame costs a socket write here and a task in
 * the browser's network process, the page's worker and its main thread, which share two cores with
 * sshd on the bench machine; 1 MiB instead of 64 KiB batches took a 64 MiB flood from 26 to 31
 * MiB/s (median of 4 rounds each) and the host from 8–10 to 6–8 ms of CPU per MiB.
 */
export const DEFAULT_FLOW: FlowControlOptions = {
  highWatermark: 2 * 1024 * 1024,
  lowWatermark: 1536 * 1024,
  batchBytes: 1024 * 1024,
  stallMs: 30_000,
};

export interface TerminalCwd {
  cwd: string | null;
  source: 'osc7' | 'exec' | 'proc' | 'unknown';
}

export interface TerminalSessionOptions {
  ringBufferBytes?: number;
  cols: number;
  rows: number;
  flow?: Partial<FlowControlOptions>;
}

/**
 * What SSH shells and local PTYs share: the output ring buffer, OSC 7 tracking, the terminal modes
 * a read back must start in, batching of output into `terminal.data` events, and credit flow control.
 *
 * Flow control. Every emitted byte is a credit the view owes back through `terminal.ack`. Above
 * the high watermark of unacknowledged bytes the source is paused (ssh2 stops widening the
 * channel window, node-pty stops reading the master), below the low watermark it resumes.
 * Only views ack; the CLI and the XO read the ring buffer and never do. So flow control is
 * *armed by the first ack* (a view sends `terminal.ack {bytes: 0}` when it attaches) and, while
 * unarmed, output runs at full speed with memory bounded by the ring buffer alone. A view that
 * goes away without saying so cannot stall the session for ever: after `stallMs` paused without
 * any ack, flow control disarms and the source resumes.
 */
export abstract class TerminalSession implements SessionHandle {
  readonly ring: TerminalRingBuffer;
  readonly osc7 = new Osc7Tracker();
  /** The modes in effect at each point of the ring buffer, for terminal.read's `restore`. */
  private readonly modes: TerminalModeTracker;
  /**
   * Where the program ended, oldest first: a view says so in the terminal ("Disconnected"), and a
   * view that reads the output back after a reload says it there again. Kept beside the ring,
   * not in it: the output is the program's (the XO and the CLI read it as such).
   */
  private ends: ProgramEnd[] = [];
  cols: number;
  rows: number;
  protected source: TerminalSource | null = null;
  private readonly flowOpts: FlowControlOptions;
  private unacked = 0;
  private armed = false;
  private paused = false;
  private stallTimer: NodeJS.Timeout | null = null;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private pendingSeq = 0;
  private flushScheduled: NodeJS.Immediate | null = null;

  protected constructor(
    readonly id: string,
    protected readonly bus: EventBus,
    opts: TerminalSessionOptions,
  ) {
    this.ring = new TerminalRingBuffer(opts.ringBufferBytes ?? DEFAULT_RING_BUFFER_BYTES);
    this.modes = new TerminalModeTracker(this.ring.capacity, opts.rows);
    this.cols = opts.cols;
    this.rows = opts.rows;
    this.flowOpts = { ...DEFAULT_FLOW, ...opts.flow };
  }

  abstract info(): SessionInfo;
  abstract close(): Promise<void>;
  abstract cwd(): Promise<TerminalCwd>;

  /** True while a source is attached and producing output. */
  get live(): boolean {
    return this.source !== null;
  }

  /** For tests, benchmarks and diagnostics. */
  get flow(): { unacked: number; armed: boolean; paused: boolean } {
    return { unacked: this.unacked, armed: this.armed, paused: this.paused };
  }

  write(data: Uint8Array | string): void {
    if (!this.source) throw new WraithError('ESESSIONCLOSED', `${this.info().title} is not connected; reconnect it first.`);
    this.source.write(typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  }

  resize(cols: number, rows: number): void {
    if (cols !== this.cols || rows !== this.rows) this.modes.resized(rows);
    this.cols = cols;
    this.rows = rows;
    this.source?.resize(cols, rows);
  }

  read(sinceSeq: number | undefined, maxBytes: number, strip: boolean): TerminalRead {
    const r = this.ring.read(sinceSeq, maxBytes, { stripAnsi: strip });
    const restore = this.modes.restoreAt(r.seq);
    // A read from sinceSeq has the ends after it: one at sinceSeq itself came with the read before.
    const within = this.ends.filter((e) => e.seq >= r.seq && e.seq <= r.nextSeq && (sinceSeq === undefined || e.seq > sinceSeq));
    if (within.length === 0) return { ...r, restore, closed: !this.live, ends: [] };
    // The text in pieces cut at the ends, so each one's index is exact (stripped text too).
    const piece = (from: number, to: number) => {
      const text = this.ring.bytes(from, to).toString('utf8');
      return strip ? stripAnsi(text) : text;
    };
    let text = '';
    let from = r.seq;
    const ends = within.map((e) => {
      text += piece(from, e.seq);
      from = e.seq;
      return { ...e, index: text.length };
    });
    text += piece(from, r.nextSeq);
    return { ...r, text, restore, closed: !this.live, ends };
  }

  ack(bytes: number): void {
    if (!this.armed) {
      // The first ack of a view: what was emitted before it attached is not owed.
      this.armed = true;
      this.unacked = 0;
    }
    this.unacked = Math.max(0, this.unacked - bytes);
    if (this.paused) {
      this.armStallTimer();
      if (this.unacked < this.flowOpts.lowWatermark) this.setPaused(false);
    }
  }

  /** Subclasses attach the source once it produces output (and on reconnect/relaunch). */
  protected attachSource(source: TerminalSource): void {
    this.source = source;
    this.paused = false;
    this.unacked = 0;
  }

  /**
   * Subclasses detach when the source ended; pending output is flushed first, ending with the
   * modes put back (FRESH_MODES): in the ring too, so a view that reads the output back later
   * (after a reload, or once a reconnect's new shell has added to it) is not left in the alternate
   * screen with mouse reports on by a full-screen program that never undid them.
   */
  protected detachSource(): void {
    if (this.source) this.output(FRESH_MODES_BYTES);
    this.flush();
    this.source = null;
    this.paused = false;
    this.clearStallTimer();
  }

  /** Subclasses call this with every chunk the source produced. */
  protected output(data: Buffer): void {
    if (data.length === 0) return;
    const seq = this.ring.write(data);
    this.osc7.feed(data);
    this.modes.feed(data, seq);
    if (this.pendingBytes === 0) this.pendingSeq = seq;
    this.pending.push(data);
    this.pendingBytes += data.length;
    if (this.pendingBytes >= this.flowOpts.batchBytes) this.flush();
    else this.flushScheduled ??= setImmediate(() => this.flush());
  }

  protected emitExit(code: number | null, signal: string | null, reason: string | null): void {
    this.flush();
    this.ends.push({ seq: this.ring.endSeq, at: new Date().toISOString(), reason });
    const oldest = this.ring.startSeq;
    // An end before the oldest byte kept belongs to output no read returns any more.
    this.ends = this.ends.filter((e) => e.seq >= oldest).slice(-MAX_ENDS);
    this.bus.emit('terminal.exit', { sessionId: this.id, code, signal, reason });
  }

  /** Stops timers; call from close(). */
  protected disposeTerminal(): void {
    this.flush();
    this.clearStallTimer();
  }

  private flush(): void {
    if (this.flushScheduled) {
      clearImmediate(this.flushScheduled);
      this.flushScheduled = null;
    }
    if (this.pendingBytes === 0) return;
    // Always a fresh buffer: sources hand out slices of pooled memory that must not travel. It
    // has room in front for the WebSocket frame header (frame-headroom.ts).
    const data = allocFramed(this.pendingBytes);
    let at = 0;
    for (const chunk of this.pending) {
      data.set(chunk, at);
      at += chunk.length;
    }
    this.pending = [];
    this.pendingBytes = 0;
    this.unacked += data.length;
    this.bus.emit('terminal.data', { sessionId: this.id, seq: this.pendingSeq, data });
    if (this.armed && !this.paused && this.unacked > this.flowOpts.highWatermark) this.setPaused(true);
  }

  private setPaused(paused: boolean): void {
    if (this.paused === paused) return;
    this.paused = paused;
    if (paused) {
      this.source?.pause();
      this.armStallTimer();
    } else {
      this.clearStallTimer();
      this.source?.resume();
    }
  }

  private armStallTimer(): void {
    this.clearStallTimer();
    this.stallTimer = setTimeout(() => {
      this.stallTimer = null;
      // Nobody acked for stallMs: the view is gone. Run free until a view acks again.
      this.armed = false;
      this.unacked = 0;
      this.setPaused(false);
    }, this.flowOpts.stallMs);
    this.stallTimer.unref();
  }

  private clearStallTimer(): void {
    if (this.stallTimer) clearTimeout(this.stallTimer);
    this.stallTimer = null;
  }
}
