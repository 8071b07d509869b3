import { ContractClient, type Wire } from '../common/client.js';
import type { ServerMessage } from '../common/protocol.js';
import type { App } from './app.js';
import { openConnection } from './connection.js';

/**
 * The third transport: a client wired straight to an App, no serialisation. Tests and
 * benchmarks use it; replies arrive asynchronously, as on a real wire.
 */
export function connectInProcess(app: App, origin: 'test' | 'ai' | 'mcp' = 'test'): ContractClient {
  let deliver: (m: ServerMessage) => void = () => {};
  const closeListeners: ((reason: string) => void)[] = [];
  const connection = openConnection(app, origin, (m) => queueMicrotask(() => deliver(m)));
  const wire: Wire = {
    send: (m) => connection.receive(m),
    onMessage: (l) => {
      deliver = l;
    },
    onClose: (l) => {
      closeListeners.push(l);
    },
    close: () => {
      connection.close();
      for (const l of closeListeners) l('closed');
    },
  };
  return new ContractClient(wire);
}
