import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { toSerializedError } from '../common/errors.js';
import { ClientMessage, type ServerMessage } from '../common/protocol.js';
import type { App } from './app.js';
import { type CallContext, describeIssues } from './router.js';

export interface ContractConnection {
  /** One inbound message, exactly as the wire decoded it (not yet trusted). */
  receive(raw: unknown): void;
  /**
   * The wire closed. `left`: the client went for good (its page closed or reloaded), which ends
   * what it alone could have gone on with (CallContext.left); otherwise its link dropped and the
   * same client may come back over a new one.
   */
  close(how?: 'left'): void;
}

/**
 * One client's conversation with the App, whatever carries it (WebSocket, Electron
 * MessagePort, in-process): parses each inbound message, dispatches calls through the router,
 * and forwards the events the client subscribed to. A bad message gets an error reply; the
 * connection stays up. Closing it aborts the signal every call it made runs with: a command run
 * for a client that went away (Ctrl+C on `wraith call`, a closed window) is stopped rather than
 * left running on the server until its timeout, with nobody left to read its answer. A
 * `{t:'cancel', id}` aborts the signal of that one call (a tab closed while its SSH open was still
 * connecting), and leaves the client's other calls running. Every call also gets the connection's
 * own signal (`connectionSignal`), for what outlives the call but not the client.
 */
export function openConnection(
  app: App,
  origin: CallContext['origin'],
  send: (message: ServerMessage) => void,
): ContractConnection {
  const clientId = randomUUID();
  let prefixes: string[] = [];
  let open = true;
  const gone = new AbortController();
  const left = new AbortController();
  // Every call of the connection listens on this one signal, as many at once as the client sends;
  // every upload the client streams, on the other.
  setMaxListeners(0, gone.signal);
  setMaxListeners(0, left.signal);
  const ctx: CallContext = { clientId, origin, signal: gone.signal, connectionSignal: gone.signal, left: left.signal };
  /** The calls still running, by id, each with the controller its own signal comes from. */
  const running = new Map<number, AbortController>();
  const unsubscribe = app.bus.subscribe((name, payload) => {
    if (open && prefixes.some((p) => name.startsWith(p))) send({ t: 'event', name, payload });
  });
  const reply = (m: ServerMessage) => {
    if (open) send(m);
  };
  return {
    receive(raw) {
      const parsed = ClientMessage.safeParse(raw);
      if (!parsed.success) {
        const id = typeof raw === 'object' && raw !== null && 'id' in raw && typeof raw.id === 'number' ? raw.id : null;
        reply({ t: 'error', id, error: { code: 'EBADARGS', message: `Malformed message: ${describeIssues(parsed.error)}` } });
        return;
      }
      const msg = parsed.data;
      if (msg.t === 'subscribe') {
        prefixes = msg.prefixes;
        return;
      }
      if (msg.t === 'cancel') {
        // Finished already, or never ours: its answer crossed this cancel on the wire.
        running.get(msg.id)?.abort();
        return;
      }
      // A quiet call (a keystroke, an ack) is over before a cancel could matter: it runs with the
      // connection's signal, and costs no controller of its own.
      let own: AbortController | null = null;
      if (!msg.quiet && open) {
        own = new AbortController();
        // As the connection's signal was: a call may listen on it from many steps at once.
        setMaxListeners(0, own.signal);
        running.set(msg.id, own);
      }
      const id = msg.id;
      const finished = () => {
        if (own && running.get(id) === own) running.delete(id);
      };
      app.router.call(msg.method, msg.params, own ? { ...ctx, signal: own.signal } : ctx).then(
        (result) => {
          finished();
          if (!msg.quiet) reply({ t: 'result', id, result });
        },
        (err: unknown) => {
          finished();
          reply({ t: 'error', id, error: toSerializedError(err) });
        },
      );
    },
    close(how) {
      if (!open) return;
      open = false;
      unsubscribe();
      if (how === 'left') left.abort();
      gone.abort();
      for (const call of running.values()) call.abort();
      running.clear();
    },
  };
}
