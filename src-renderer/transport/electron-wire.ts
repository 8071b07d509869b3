import type { Wire } from '@common/client.js';
import type { ClientMessage } from '@common/protocol.js';
import { toServerMessage } from './server-message.js';
import { WireListeners } from './wire-listeners.js';

const PORT_MESSAGE = 'wraith:port';

/**
 * Electron: the preload's one capability, `window.wraith.connect()`, makes it post a
 * MessagePort to this window. Messages are the same ClientMessage/ServerMessage objects as
 * on the WebSocket, carried by structured clone (Uint8Array stays bytes).
 */
export function openElectronWire(preload: WraithPreload, timeoutMs = 10_000): Promise<Wire> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      window.removeEventListener('message', onWindowMessage);
      reject(new Error('the Electron main process did not answer'));
    }, timeoutMs);

    function onWindowMessage(event: MessageEvent<unknown>) {
      // Only the preload (same window) may hand us the port; other frames cannot.
      if (event.source !== window || event.data !== PORT_MESSAGE) return;
      const port = event.ports[0];
      if (!port) return;
      clearTimeout(timer);
      window.removeEventListener('message', onWindowMessage);
      resolve(portWire(port));
    }

    window.addEventListener('message', onWindowMessage);
    preload.connect();
  });
}

function portWire(port: MessagePort): Wire {
  const listeners = new WireListeners();
  port.onmessage = (ev: MessageEvent<unknown>) => {
    const message = toServerMessage(ev.data);
    if (message) listeners.deliver(message);
  };
  // Chromium fires 'close' on a MessagePort whose other end went away (main process reload).
  port.addEventListener('close', () => listeners.finish('the main process closed the port'));
  port.start();
  return {
    send(message: ClientMessage) {
      if (!listeners.closed) port.postMessage(message);
    },
    onMessage: (listener) => listeners.onMessage(listener),
    onClose: (listener) => listeners.onClose(listener),
    close() {
      port.close();
      listeners.finish('closed by the client');
    },
  };
}
