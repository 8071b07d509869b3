import type { App } from '../node/app.js';
import { openConnection } from '../node/connection.js';

/**
 * The smallest view of a message port the contract needs. Electron's MessagePortMain fits it
 * (main.ts adapts its `{ data }` events), and so does Node's worker_threads MessagePort, which
 * lets tests run this transport — structured clone and all — without an Electron runtime.
 */
export interface ContractPort {
  postMessage(message: unknown): void;
  onMessage(listener: (data: unknown) => void): void;
  onClose(listener: () => void): void;
  start(): void;
}

/** Serves the contract on one port: the Electron transport. */
export function servePort(app: App, port: ContractPort): void {
  const connection = openConnection(app, 'ui', (m) => port.postMessage(m));
  port.onMessage((data) => connection.receive(data));
  // A window's port closes only when its page goes (a reload, a closed window, a crash): unlike a
  // WebSocket it never drops to come back, so the page has left for good.
  port.onClose(() => connection.close('left'));
  port.start();
}
