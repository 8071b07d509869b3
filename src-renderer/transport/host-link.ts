import { type CallArgs, ContractClient, type Disposer, type Wire } from '@common/client.js';
import type { EventName, EventPayload, Input, MethodName, Output } from '@common/contract/index.js';
import { WraithError } from '@common/errors.js';

export type LinkState = 'connecting' | 'open' | 'reconnecting';

export interface LinkStatus {
  state: LinkState;
  /** Failed attempts since the link was last open. */
  attempts: number;
  /** Why the last connection ended or failed, in words. */
  reason: string | null;
}

/** Opens a fresh wire to the host (a WebSocket or an Electron MessagePort). */
export type WireOpener = () => Promise<Wire>;

type Registration = (client: ContractClient) => Disposer;

const MIN_BACKOFF_MS = 250;
const MAX_BACKOFF_MS = 5_000;

/** When a link asks whether the host is still there, and how long it waits for any sign of it. */
export interface Heartbeat {
  /** Silence after which the link asks (health.ping). */
  everyMs: number;
  /** Silence after asking, beyond which the link is ended. */
  timeoutMs: number;
}

/**
 * For the WebSocket: a host that went silent without closing (a laptop that slept, a network that
 * changed under a NAT, a proxy that lost the connection) would look connected for as long as TCP
 * takes to give up, many minutes when the page has nothing to send. Everything the page missed
 * is caught up after a reconnect, so ending a link that may be slow, not dead, costs little.
 */
export const WEBSOCKET_HEARTBEAT: Heartbeat = { everyMs: 15_000, timeoutMs: 10_000 };

/**
 * The renderer's one way to the host, whatever the wire. Wraps a ContractClient, subscribes to
 * every event, and when the wire drops, reconnects with backoff and replays event listeners,
 * so features hold one object for the life of the page and never see which transport it is.
 */
export class HostLink {
  readonly kind: 'websocket' | 'electron';
  private client: ContractClient | null = null;
  private status: LinkStatus = { state: 'connecting', attempts: 0, reason: null };
  private readonly registrations = new Map<Registration, Disposer | null>();
  private readonly statusListeners = new Set<(s: LinkStatus) => void>();
  private readonly openListeners = new Set<(reconnected: boolean) => void>();
  private timer: ReturnType<typeof setTimeout> | null = null;
  private heartbeatTimer: ReturnType<typeof setTimeout> | null = null;
  private disposed = false;
  private everOpened = false;

  constructor(
    kind: 'websocket' | 'electron',
    private readonly open: WireOpener,
    private readonly heartbeat: Heartbeat | null = null,
  ) {
    this.kind = kind;
    void this.attempt();
  }

  get current(): LinkStatus {
    return this.status;
  }

  /** A call on the current connection; `signal` in the options gives it up (ContractClient.call). */
  call<M extends MethodName>(method: M, ...args: CallArgs<M>): Promise<Output<M>> {
    const client = this.client;
    if (!client) {
      return Promise.reject(new WraithError('EUNAVAILABLE', 'Not connected to the Wraith host; reconnecting.'));
    }
    return client.call(method, ...args);
  }

  /** A call that needs no answer (ContractClient.notify); dropped while disconnected. */
  notify<M extends MethodName>(method: M, ...params: undefined extends Input<M> ? [Input<M>?] : [Input<M>]): void {
    this.client?.notify(method, ...params);
  }

  /** Listens to an event across reconnects. */
  on<E extends EventName>(name: E, listener: (payload: EventPayload<E>) => void): Disposer {
    const reg: Registration = (client) => client.on(name, listener);
    this.registrations.set(reg, this.client ? reg(this.client) : null);
    return () => {
      this.registrations.get(reg)?.();
      this.registrations.delete(reg);
    };
  }

  onStatus(listener: (s: LinkStatus) => void): Disposer {
    this.statusListeners.add(listener);
    listener(this.status);
    return () => this.statusListeners.delete(listener);
  }

  /** Called each time the link opens; `reconnected` is true after a drop (state may be stale). */
  onOpen(listener: (reconnected: boolean) => void): Disposer {
    this.openListeners.add(listener);
    if (this.client) listener(false);
    return () => this.openListeners.delete(listener);
  }

  /**
   * Resolves once the link is open (at once when it is), or fails with EUNAVAILABLE after
   * `timeoutMs`: for a step that must reach the host and may wait out a reconnect, like the end
   * of an upload whose bytes went another way.
   */
  whenOpen(timeoutMs: number): Promise<void> {
    if (this.client) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const done = (err?: WraithError) => {
        clearTimeout(timer);
        this.openListeners.delete(opened);
        if (err) reject(err);
        else resolve();
      };
      const opened = () => done();
      const timer = setTimeout(() => done(new WraithError('EUNAVAILABLE', `The Wraith host did not come back within ${Math.round(timeoutMs / 1000)} s.`)), timeoutMs);
      this.openListeners.add(opened);
    });
  }

  dispose(): void {
    this.disposed = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.heartbeatTimer) clearTimeout(this.heartbeatTimer);
    this.client?.close();
    this.client = null;
  }

  private setStatus(s: LinkStatus): void {
    this.status = s;
    for (const l of this.statusListeners) l(s);
  }

  private async attempt(): Promise<void> {
    if (this.disposed) return;
    let wire: Wire;
    try {
      wire = await this.open();
    } catch (err) {
      this.retry(err instanceof Error ? err.message : String(err));
      return;
    }
    if (this.disposed) {
      wire.close();
      return;
    }
    const client = new ContractClient(wire);
    this.client = client;
    client.onClose((reason) => {
      if (this.client !== client) return;
      this.client = null;
      for (const [reg, dispose] of this.registrations) {
        dispose?.();
        this.registrations.set(reg, null);
      }
      this.retry(reason);
    });
    for (const reg of this.registrations.keys()) this.registrations.set(reg, reg(client));
    client.subscribe(['']);
    if (this.heartbeat) this.listen(client, wire, this.heartbeat);
    const reconnected = this.everOpened;
    this.everOpened = true;
    this.setStatus({ state: 'open', attempts: 0, reason: null });
    for (const l of this.openListeners) l(reconnected);
  }

  /**
   * Anything that arrives shows the host is there. After `everyMs` with nothing, the link asks
   * (health.ping); when nothing at all has come `timeoutMs` after it asked, the link is ended and
   * reconnects. Output still arriving counts as an answer: on a slow link a ping's reply can wait
   * behind megabytes of it, and that link is alive.
   */
  private listen(client: ContractClient, wire: Wire, hb: Heartbeat): void {
    let heardAt = performance.now();
    let askedAt: number | null = null;
    const step = Math.min(hb.everyMs, hb.timeoutMs) / 2;
    wire.onMessage(() => (heardAt = performance.now()));
    const tick = () => {
      this.heartbeatTimer = null;
      if (this.client !== client || this.disposed) return;
      const now = performance.now();
      if (askedAt !== null && heardAt < askedAt) {
        if (now - askedAt >= hb.timeoutMs) {
          client.close();
          return;
        }
      } else askedAt = null;
      if (askedAt === null && now - heardAt >= hb.everyMs) {
        askedAt = now;
        client.call('health.ping').catch(() => undefined);
      }
      this.heartbeatTimer = setTimeout(tick, step);
    };
    this.heartbeatTimer = setTimeout(tick, step);
  }

  private retry(reason: string): void {
    if (this.disposed) return;
    const attempts = this.status.state === 'open' ? 0 : this.status.attempts + 1;
    this.setStatus({ state: this.everOpened ? 'reconnecting' : 'connecting', attempts, reason });
    const delay = Math.min(MAX_BACKOFF_MS, MIN_BACKOFF_MS * 2 ** Math.min(attempts, 10));
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.attempt();
    }, delay);
  }
}
