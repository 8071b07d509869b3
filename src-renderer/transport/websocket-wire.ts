import { Decoder, Encoder } from '@msgpack/msgpack';
import type { Wire } from '@common/client.js';
import type { ClientMessage, ServerMessage } from '@common/protocol.js';
import { toServerMessage } from './server-message.js';

// Exactly the codec of src-main/server/codec.ts: Uint8Array travels as MessagePack bin,
// undefined fields are dropped so optional fields stay optional.
const encoder = new Encoder({ ignoreUndefined: true });
const decoder = new Decoder();

/** ws(s)://<the host that served this page>/ws. The HttpOnly cookie carries the token. */
export function websocketUrl(location: Location): string {
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${location.host}/ws`;
}

/** Opens one WebSocket and resolves with a Wire once it is open; rejects if it never opens. */
export function openWebSocketWire(url: string): Promise<Wire> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.binaryType = 'arraybuffer';
    const messageListeners = new Set<(m: ServerMessage) => void>();
    const closeListeners = new Set<(reason: string) => void>();
    let opened = false;
    let closed = false;

    const finish = (reason: string) => {
      if (closed) return;
      closed = true;
      if (!opened) reject(new Error(reason));
      for (const l of closeListeners) l(reason);
      closeListeners.clear();
      messageListeners.clear();
    };

    ws.onopen = () => {
      opened = true;
      resolve({
        send(message: ClientMessage) {
          if (ws.readyState === WebSocket.OPEN) ws.send(encoder.encode(message));
        },
        onMessage(listener) {
          messageListeners.add(listener);
        },
        onClose(listener) {
          if (closed) listener('closed');
          else closeListeners.add(listener);
        },
        close() {
          ws.close(1000, 'client closed');
          finish('closed by the client');
        },
      });
    };
    ws.onmessage = (ev: MessageEvent<unknown>) => {
      if (!(ev.data instanceof ArrayBuffer)) return;
      let raw: unknown;
      try {
        raw = decoder.decode(new Uint8Array(ev.data));
      } catch {
        return; // not ours to answer: the host only sends MessagePack
      }
      const message = toServerMessage(raw);
      if (message) for (const l of messageListeners) l(message);
    };
    ws.onclose = (ev) => finish(ev.reason || (opened ? 'the host closed the connection' : 'the host could not be reached'));
  });
}
