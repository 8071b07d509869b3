import { Decoder, Encoder } from '@msgpack/msgpack';
import type { Wire } from '@common/client.js';
import type { ClientMessage } from '@common/protocol.js';
import { toServerMessage } from './server-message.js';
import { WireListeners } from './wire-listeners.js';
import { MailboxReader, createMailbox, mailboxSupported } from './shared-mailbox.js';
import type { FromSocketWorker, ToSocketWorker } from './websocket-worker.js';

// Exactly the codec of src-main/server/codec.ts: Uint8Array travels as MessagePack bin,
// undefined fields are dropped so optional fields stay optional.
const encoder = new Encoder({ ignoreUndefined: true });
const decoder = new Decoder();

/**
 * Frames this page has received, by the way they came (read by wraithInspect, for tests and
 * bench/): `mailbox` through the shared ring, `posted` in postMessage batches.
 */
export const wireFrameCounts = { mailbox: 0, posted: 0 };

/** ws(s)://<the host that served this page>/ws. The HttpOnly cookie carries the token. */
export function websocketUrl(location: Location): string {
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${location.host}/ws`;
}

/**
 * Opens one WebSocket (in a worker, see websocket-worker.ts) and resolves with a Wire once it
 * is open; rejects if it never opens.
 */
export function openWebSocketWire(url: string): Promise<Wire> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./websocket-worker.ts', import.meta.url), { type: 'module', name: 'wraith-websocket' });
    const listeners = new WireListeners();
    let opened = false;
    // Small frames arrive through the mailbox where the page is cross-origin isolated; frames
    // there are older than any batch or close the worker posts after them, so those empty it first.
    const shared = mailboxSupported() ? createMailbox() : null;
    const mailbox = shared ? new MailboxReader(shared) : null;
    const deliverUnlessClosed = (frame: ArrayBuffer) => {
      if (!listeners.closed) deliver(frame);
    };
    const fromMailbox = (frames: ArrayBuffer[]) => {
      wireFrameCounts.mailbox += frames.length;
      frames.forEach(deliverUnlessClosed);
    };
    const drainMailbox = () => mailbox && fromMailbox(mailbox.drain());
    const toWorker = (m: ToSocketWorker, transfer: Transferable[] = []) => worker.postMessage(m, transfer);

    const finish = (reason: string) => {
      mailbox?.stop();
      if (listeners.finish(reason) && !opened) reject(new Error(reason));
    };

    const deliver = (frame: ArrayBuffer) => {
      let raw: unknown;
      try {
        raw = decoder.decode(new Uint8Array(frame));
      } catch {
        return; // not ours to answer: the host only sends MessagePack
      }
      const message = toServerMessage(raw);
      if (message) listeners.deliver(message);
    };

    worker.onmessage = (ev: MessageEvent<FromSocketWorker>) => {
      const m = ev.data;
      switch (m.t) {
        case 'open':
          opened = true;
          resolve({
            send(message: ClientMessage) {
              if (listeners.closed) return;
              const bytes = encoder.encode(message); // a fresh buffer of its own: safe to transfer
              toWorker({ t: 'send', data: bytes.buffer }, [bytes.buffer]);
            },
            onMessage: (listener) => listeners.onMessage(listener),
            onClose: (listener) => listeners.onClose(listener),
            close() {
              toWorker({ t: 'close' });
              finish('closed by the client');
            },
          });
          // Not before 'open', and not in this task: whoever awaits the wire adds its listeners
          // once the resolve above has run, and frames delivered earlier would find none.
          if (mailbox) setTimeout(() => mailbox.listen(fromMailbox), 0);
          return;
        case 'frames':
          try {
            drainMailbox();
            wireFrameCounts.posted += m.frames.length;
            m.frames.forEach(deliverUnlessClosed);
          } finally {
            if (!listeners.closed) toWorker({ t: 'ready' });
          }
          return;
        case 'close':
          drainMailbox();
          finish(m.reason);
          worker.terminate();
          return;
      }
    };
    worker.onerror = (ev) => {
      ev.preventDefault();
      finish('the connection worker failed');
      worker.terminate();
    };
    toWorker({ t: 'open', url, ...(shared ? { mailbox: shared } : {}) });
  });
}
