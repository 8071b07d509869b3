import { ContractClient, type Wire } from '../common/client.js';
import type { ServerMessage } from '../common/protocol.js';
import type { App } from './app.js';
import { openConnection } from './connection.js';

/**
 * The third transport: a wire straight to an App, no serialisation. Tests and benchmarks use
 * it; replies arrive asynchronously, as on a real wire.
 */
export function openInProcessWire(app: App, origin: 'test' | 'ai' | 'mcp' = 'test'): Wire {
  let deliver: (m: ServerMessage) => void = () => {};
  const closeListeners: ((reason: string) => void)[] = [];
  const connection = openConnection(app, origin, (m) => queueMicrotask(() => deliver(m)));
  return {
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
}

/** A contract client over an in-process wire. */
export function connectInProcess(app: App, origin: 'test' | 'ai' | 'mcp' = 'test'): ContractClient {
  return new ContractClient(openInProcessWire(app, origin));
}
