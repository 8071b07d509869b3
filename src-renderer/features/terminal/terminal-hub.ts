import type { Disposer } from '@common/client.js';
import type { HostLink } from '../../transport/index.js';

/** Receives one session's output chunks in order; `acked` when the hub already gave credit. */
export type DataSink = (data: Uint8Array, seq: number, acked: boolean) => void;

/** Output kept for a session nobody views yet (its ssh.open answer may trail its first bytes). */
const UNCLAIMED_LIMIT = 512 * 1024;
/** Acks are batched: sent once this many bytes are processed, or on the next tick. */
const ACK_BATCH = 16 * 1024;

interface Unclaimed {
  chunks: { data: Uint8Array; seq: number }[];
  bytes: number;
}

/**
 * One listener for all `terminal.data`, fanned out by session id, plus credit acks.
 * Output for a session that no view has claimed is buffered (bounded) and acknowledged at once:
 * a session the UI is not showing (opened by the XO or the CLI) must never stall on our credit.
 */
export class TerminalHub {
  private readonly sinks = new Map<string, DataSink>();
  private readonly unclaimed = new Map<string, Unclaimed>();
  private readonly pendingAcks = new Map<string, number>();
  private ackTimer: ReturnType<typeof setTimeout> | null = null;
  private readonly off: Disposer[] = [];

  constructor(private readonly host: HostLink) {
    this.off.push(
      host.on('terminal.data', ({ sessionId, seq, data }) => {
        const sink = this.sinks.get(sessionId);
        if (sink) {
          sink(data, seq, false);
          return;
        }
        this.keepUnclaimed(sessionId, data, seq);
        this.ack(sessionId, data.byteLength);
      }),
      host.on('session.changed', (info) => {
        if (info.state === 'closed') this.unclaimed.delete(info.id);
      }),
    );
  }

  /** Routes a session's output to `sink`, starting with anything that arrived before. */
  claim(sessionId: string, sink: DataSink): Disposer {
    const early = this.unclaimed.get(sessionId);
    this.unclaimed.delete(sessionId);
    this.sinks.set(sessionId, sink);
    // Early chunks were acknowledged when they arrived; the sink must not ack them again.
    if (early) for (const c of early.chunks) sink(c.data, c.seq, true);
    return () => {
      if (this.sinks.get(sessionId) === sink) this.sinks.delete(sessionId);
    };
  }

  /**
   * A view attached: an ack (even of 0 bytes) arms the session's flow control on the host.
   * Credit still pending for earlier output goes first, so the host's count stays exact.
   */
  arm(sessionId: string): void {
    this.flushOne(sessionId);
    this.host.notify('terminal.ack', { sessionId, bytes: 0 });
  }

  /** Credit back to the host: `bytes` more of this session's output were processed. */
  ack(sessionId: string, bytes: number): void {
    if (bytes <= 0) return;
    const total = (this.pendingAcks.get(sessionId) ?? 0) + bytes;
    this.pendingAcks.set(sessionId, total);
    if (total >= ACK_BATCH) this.flushOne(sessionId);
    else this.ackTimer ??= setTimeout(() => this.flushAll(), 0);
  }

  dispose(): void {
    for (const off of this.off) off();
    this.flushAll();
    this.sinks.clear();
    this.unclaimed.clear();
  }

  private keepUnclaimed(sessionId: string, data: Uint8Array, seq: number): void {
    let u = this.unclaimed.get(sessionId);
    if (!u) this.unclaimed.set(sessionId, (u = { chunks: [], bytes: 0 }));
    u.chunks.push({ data, seq });
    u.bytes += data.byteLength;
    while (u.bytes > UNCLAIMED_LIMIT && u.chunks.length > 1) {
      const dropped = u.chunks.shift();
      if (dropped) u.bytes -= dropped.data.byteLength;
    }
  }

  private flushAll(): void {
    if (this.ackTimer) clearTimeout(this.ackTimer);
    this.ackTimer = null;
    for (const id of [...this.pendingAcks.keys()]) this.flushOne(id);
  }

  private flushOne(sessionId: string): void {
    const bytes = this.pendingAcks.get(sessionId) ?? 0;
    this.pendingAcks.delete(sessionId);
    if (bytes <= 0) return;
    // A closed session or an older host without flow control: nothing to credit, nothing to fix,
    // so no answer is asked for.
    this.host.notify('terminal.ack', { sessionId, bytes });
  }
}

let hub: TerminalHub | null = null;

export function terminalHub(host: HostLink): TerminalHub {
  hub ??= new TerminalHub(host);
  return hub;
}
