/**
 * The WebSocket of the web build, in a dedicated worker. On the page's main thread a WebSocket
 * delivers one `message` task per frame, and the browser runs a rendering update between them:
 * under an output flood each painted frame let through only a frame or two of terminal output
 * (~100 KiB) while the rest waited in the socket, so the tab parsed a quarter of what xterm.js
 * can. Here frames keep arriving while the page paints; the main thread pulls whatever has
 * arrived as one batch (`ready` → `frames`), so a busy page gets everything since its last turn
 * in one task and an idle page gets each frame at once. The buffers are transferred, not copied;
 * decoding stays on the main thread. Memory stays bounded by the host's credit window: credit
 * only goes back once the main thread has handled the bytes.
 *
 * Small frames (a key's echo, replies) go through a shared mailbox instead when the page gives
 * one (see shared-mailbox.ts: Chromium holds posted messages back after a key press until the
 * next frame is drawn). Order is kept: a frame takes the mailbox only when no batch is queued or
 * in flight, and the page empties the mailbox before it handles a batch or the close.
 */
import { MailboxWriter } from './shared-mailbox.js';

/** Page → worker. */
export type ToSocketWorker =
  /** `mailbox`: a SharedArrayBuffer from createMailbox, when the page can listen on one. */
  | { t: 'open'; url: string; mailbox?: SharedArrayBuffer }
  | { t: 'send'; data: ArrayBuffer }
  /** The page handled the last batch: post the next one as soon as there is one. */
  | { t: 'ready' }
  | { t: 'close' };

/** Worker → page. */
export type FromSocketWorker =
  | { t: 'open' }
  | { t: 'frames'; frames: ArrayBuffer[] }
  | { t: 'close'; reason: string };

let ws: WebSocket | null = null;
let queue: ArrayBuffer[] = [];
let pageReady = true;
let closed = false;
let mailbox: MailboxWriter | null = null;

function post(message: FromSocketWorker, transfer: Transferable[] = []): void {
  self.postMessage(message, { transfer });
}

function flush(): void {
  if (!pageReady || queue.length === 0) return;
  pageReady = false;
  const frames = queue;
  queue = [];
  post({ t: 'frames', frames }, frames);
}

function finish(reason: string): void {
  if (closed) return;
  closed = true;
  // Whatever arrived before the close goes first, ready or not: the page handles it in order.
  pageReady = true;
  flush();
  post({ t: 'close', reason });
}

function open(url: string): void {
  let opened = false;
  const socket = new WebSocket(url);
  ws = socket;
  socket.binaryType = 'arraybuffer';
  socket.onopen = () => {
    opened = true;
    post({ t: 'open' });
  };
  socket.onmessage = (ev: MessageEvent<unknown>) => {
    if (!(ev.data instanceof ArrayBuffer)) return; // the host only sends binary MessagePack
    if (mailbox && pageReady && queue.length === 0 && mailbox.put(new Uint8Array(ev.data))) return;
    queue.push(ev.data);
    flush();
  };
  socket.onclose = (ev) => finish(ev.reason || (opened ? 'the host closed the connection' : 'the host could not be reached'));
}

self.onmessage = (ev: MessageEvent<ToSocketWorker>) => {
  const m = ev.data;
  switch (m.t) {
    case 'open':
      if (m.mailbox) mailbox = new MailboxWriter(m.mailbox);
      if (!ws) open(m.url);
      return;
    case 'send':
      if (ws?.readyState === WebSocket.OPEN) ws.send(m.data);
      return;
    case 'ready':
      pageReady = true;
      flush();
      return;
    case 'close':
      // The page already counts the wire as closed; `close` goes back once the socket is (the
      // page then ends this worker).
      if (ws && ws.readyState !== WebSocket.CLOSED) ws.close(1000, 'client closed');
      else finish('closed by the client');
      return;
  }
};
