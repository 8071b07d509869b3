import { randomUUID } from 'node:crypto';
import { ContractClient, type Wire } from '../common/client.js';
import { toSerializedError } from '../common/errors.js';
import type { ServerMessage } from '../common/protocol.js';
import type { App } from './app.js';

/**
 * The third transport: a client wired straight to an App's router and bus, no serialisation.
 * Tests and benchmarks use it; messages are delivered asynchronously, as on a real wire.
 */
export function connectInProcess(app: App, origin: 'test' | 'ai' | 'mcp' = 'test'): ContractClient {
  const clientId = randomUUID();
  let prefixes: string[] = [];
  let deliver: (m: ServerMessage) => void = () => {};
  const closeListeners: ((reason: string) => void)[] = [];
  const unsubscribe = app.bus.subscribe((name, payload) => {
    if (prefixes.some((p) => name.startsWith(p))) queueMicrotask(() => deliver({ t: 'event', name, payload }));
  });
  const wire: Wire = {
    send: (m) => {
      if (m.t === 'subscribe') {
        prefixes = m.prefixes;
        return;
      }
      app.router.call(m.method, m.params, { clientId, origin }).then(
        (result) => deliver({ t: 'result', id: m.id, result }),
        (err: unknown) => deliver({ t: 'error', id: m.id, error: toSerializedError(err) }),
      );
    },
    onMessage: (l) => {
      deliver = l;
    },
    onClose: (l) => {
      closeListeners.push(l);
    },
    close: () => {
      unsubscribe();
      for (const l of closeListeners) l('closed');
    },
  };
  return new ContractClient(wire);
}
