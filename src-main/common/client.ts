import type { EventName, EventPayload, Input, MethodName, Output } from './contract/index.js';
import { WraithError, fromSerializedError } from './errors.js';
import type { ClientMessage, ServerMessage } from './protocol.js';

/** A connected wire: sends client messages, delivers server messages. Transports implement it. */
export interface Wire {
  send(message: ClientMessage): void;
  onMessage(listener: (message: ServerMessage) => void): void;
  onClose(listener: (reason: string) => void): void;
  close(): void;
}

export type Disposer = () => void;

type Pending = { resolve: (value: unknown) => void; reject: (err: WraithError) => void };

export interface CallOptions {
  /**
   * Gives the call up when it aborts: the host is told (`{t:'cancel', id}`) and stops it, as it
   * does for a caller that went away. The call still settles with the host's answer, ECANCELLED
   * when it was stopped, and its result when it had finished before the cancel arrived: what that
   * result made (a session, say) is then the caller's to end. A signal aborted before the call is
   * sent fails it with ECANCELLED, and nothing is sent.
   */
  signal?: AbortSignal;
}

/** The arguments of a call: its input (optional where the method takes none), then its options. */
export type CallArgs<M extends MethodName> = undefined extends Input<M> ? [Input<M>?, CallOptions?] : [Input<M>, CallOptions?];

/**
 * The typed side of the contract every caller uses (renderer, CLI, tests), whatever the wire.
 * Calls are matched to results by id; events fan out to listeners by name.
 */
export class ContractClient {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly listeners = new Map<string, Set<(payload: unknown) => void>>();
  private readonly anyListeners = new Set<(name: string, payload: unknown) => void>();
  private closedReason: string | null = null;
  private readonly closeListeners = new Set<(reason: string) => void>();
  private readonly notifyErrorListeners = new Set<(err: WraithError) => void>();
  /** Replies whose id no call waits for (a host that answered a notify, say); for tests and diagnostics. */
  unmatchedReplies = 0;

  constructor(private readonly wire: Wire) {
    wire.onMessage((m) => this.receive(m));
    wire.onClose((reason) => {
      this.closedReason = reason;
      for (const p of this.pending.values()) p.reject(new WraithError('ESESSIONCLOSED', `Connection to Wraith closed: ${reason}`));
      this.pending.clear();
      for (const l of this.closeListeners) l(reason);
    });
  }

  call<M extends MethodName>(method: M, ...args: CallArgs<M>): Promise<Output<M>> {
    return this.callRaw(method, args[0], args[1]) as Promise<Output<M>>;
  }

  /** Untyped call, for the CLI and fuzzing; the host validates everything anyway. */
  callRaw(method: string, params: unknown, options: CallOptions = {}): Promise<unknown> {
    if (this.closedReason !== null) {
      return Promise.reject(new WraithError('ESESSIONCLOSED', `Connection to Wraith closed: ${this.closedReason}`));
    }
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(new WraithError('ECANCELLED', `${method} was cancelled before it was sent.`));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      // Only while the call waits: a cancel after its answer would be news to nobody.
      const cancel = () => {
        if (this.pending.has(id) && this.closedReason === null) this.wire.send({ t: 'cancel', id });
      };
      const settled = () => signal?.removeEventListener('abort', cancel);
      signal?.addEventListener('abort', cancel, { once: true });
      this.pending.set(id, {
        resolve: (value) => (settled(), resolve(value)),
        reject: (err) => (settled(), reject(err)),
      });
      this.wire.send({ t: 'call', id, method, params });
    });
  }

  /**
   * A call that needs no answer: the host runs it and sends nothing back unless it fails, and
   * then the error goes to the onNotifyError listeners. For what a view sends per keystroke or per
   * chunk of output, where a result per message would only be traffic. On a closed connection it
   * is dropped.
   */
  notify<M extends MethodName>(method: M, ...params: undefined extends Input<M> ? [Input<M>?] : [Input<M>]): void {
    if (this.closedReason !== null) return;
    this.wire.send({ t: 'call', id: this.nextId++, method, params: params[0], quiet: true });
  }

  onNotifyError(listener: (err: WraithError) => void): Disposer {
    this.notifyErrorListeners.add(listener);
    return () => this.notifyErrorListeners.delete(listener);
  }

  /** Which events this client wants; the host sends nothing else. */
  subscribe(prefixes: string[]): void {
    this.wire.send({ t: 'subscribe', prefixes });
  }

  on<E extends EventName>(name: E, listener: (payload: EventPayload<E>) => void): Disposer {
    let set = this.listeners.get(name);
    if (!set) this.listeners.set(name, (set = new Set()));
    const l = listener as (payload: unknown) => void;
    set.add(l);
    return () => set.delete(l);
  }

  onAny(listener: (name: string, payload: unknown) => void): Disposer {
    this.anyListeners.add(listener);
    return () => this.anyListeners.delete(listener);
  }

  onClose(listener: (reason: string) => void): Disposer {
    this.closeListeners.add(listener);
    return () => this.closeListeners.delete(listener);
  }

  close(): void {
    this.wire.close();
  }

  private receive(m: ServerMessage): void {
    if (m.t === 'event') {
      const set = this.listeners.get(m.name);
      if (set) for (const l of set) l(m.payload);
      for (const l of this.anyListeners) l(m.name, m.payload);
      return;
    }
    if (m.id === null) return; // an error about a frame we could not read; nothing waits for it
    const p = this.pending.get(m.id);
    if (!p) {
      // A call waits for its answer until this wire closes, so an error nobody waits for is a
      // notify's; a result nobody waits for should not exist.
      if (m.t === 'error') for (const l of this.notifyErrorListeners) l(fromSerializedError(m.error));
      else this.unmatchedReplies += 1;
      return;
    }
    this.pending.delete(m.id);
    if (m.t === 'result') p.resolve(m.result);
    else p.reject(fromSerializedError(m.error));
  }
}
