import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createReadStream, existsSync, statSync } from 'node:fs';
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, sep } from 'node:path';
import { WebSocket, WebSocketServer } from 'ws';
import { MAX_FRAME_BYTES, type ServerMessage } from '../common/protocol.js';
import { WraithError, toSerializedError } from '../common/errors.js';
import { hostAndPort } from '../common/host-address.js';
import type { App } from '../node/app.js';
import { openConnection } from '../node/connection.js';
import { decodeFrame, encodeBytesEvent, encodeFrame } from './codec.js';
import { originAllowed } from './origin.js';

export interface ServeOptions {
  app: App;
  host?: string;
  port?: number;
  /** The built renderer (dist/renderer). Without it only the WebSocket is served. */
  staticDir?: string;
  token?: string;
  /**
   * Origins of pages allowed besides those on the origin their request went to (parseOrigin
   * form): a reverse proxy that sends its own address as the Host header.
   */
  origins?: readonly string[];
  /** How often each WebSocket is pinged (liveness below); tests shorten it. */
  pingIntervalMs?: number;
}

export interface RunningServer {
  url: string;
  /** The URL to open in a browser, with the token. */
  openUrl: string;
  token: string;
  port: number;
  close(): Promise<void>;
}

const COOKIE = 'wraith_token';
const FOREIGN_ORIGIN =
  'Wraith: this page is on another origin than the address it talks to. Behind a reverse proxy, pass the Host header through, or start `wraith serve --origin <the address in the browser>`.';
const MIME: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.json': 'application/json',
  '.ico': 'image/x-icon',
  '.wasm': 'application/wasm',
};

// The same policy the Electron window sets: our own scripts only, no eval, no plugins.
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; " +
  "font-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'";

function sameToken(a: string | undefined | null, b: string): boolean {
  if (!a) return false;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * The token cookie's name for a request sent to `hostHeader`. Browsers keep one cookie jar for all
 * ports of a host name, so two hosts reached at localhost:7841 and localhost:7842 (two tunnels to
 * two jump hosts, which may both listen on the same port over there) would overwrite each other's
 * cookie of one name. The port the browser sent to is in the name: each host it sees at once has
 * its own, and a host restarted on the same port sets the same name again, over the old cookie
 * (whose token, from an earlier launch, is refused like any wrong one).
 */
export function tokenCookieName(hostHeader: string | undefined): string {
  const port = /:(\d+)$/.exec(hostHeader ?? '')?.[1];
  return port ? `${COOKIE}_${port}` : COOKIE;
}

function cookieToken(req: IncomingMessage): string | undefined {
  const name = tokenCookieName(req.headers.host);
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === name) return v.join('=');
  }
  return undefined;
}

function refuse(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });
  res.end(text + '\n');
}

/** Why the server could not listen, in words a person starting `wraith serve` can act on. */
function listenError(err: Error, host: string, port: number): Error {
  const where = hostAndPort(host, port);
  switch ((err as NodeJS.ErrnoException).code) {
    case 'EADDRINUSE':
      return new WraithError('EUNAVAILABLE', `Cannot listen on ${where}: another program is using that port. Choose another with --port, or --port 0 for any free one.`);
    case 'EACCES':
      return new WraithError('EDENIED', `Cannot listen on ${where}: ports below 1024 need root. Choose a port of 1024 or more with --port.`);
    case 'EADDRNOTAVAIL':
      return new WraithError('EBADARGS', `Cannot listen on ${where}: ${host} is not an address of this machine (--host).`);
    default:
      return err;
  }
}

/**
 * The headless host: the built renderer over HTTP and the contract over a WebSocket, on
 * loopback by default. Every request needs the per-launch token (URL once, then an HttpOnly
 * cookie); browsers must also come from our own origin.
 */
export async function startServer(opts: ServeOptions): Promise<RunningServer> {
  const { app } = opts;
  // Hex, not base64url: a token that began with "-" read as an option in `wraith call --token …`.
  const token = opts.token ?? randomBytes(24).toString('hex');
  const host = opts.host ?? '127.0.0.1';
  // Browsers must come from a page on the origin they send to, or one the user named (origin.ts).
  const named = new Set(opts.origins ?? []);

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const queryToken = url.searchParams.get('token');
    if (sameToken(queryToken, token)) {
      // First load: keep the token in a cookie and drop it from the address bar.
      res.writeHead(302, {
        'set-cookie': `${tokenCookieName(req.headers.host)}=${token}; HttpOnly; SameSite=Strict; Path=/`,
        location: url.pathname,
        'cache-control': 'no-store',
      });
      res.end();
      return;
    }
    if (!sameToken(cookieToken(req), token)) {
      refuse(res, 401, 'Wraith: this page needs the token. Open the full URL that `wraith serve` printed.');
      return;
    }
    if (url.pathname.startsWith('/upload/')) {
      const reqOrigin = req.headers.origin;
      if (req.method !== 'PUT') refuse(res, 405, 'Wraith: an upload link takes PUT.');
      else if (!originAllowed(reqOrigin, req.headers.host, named)) refuse(res, 403, FOREIGN_ORIGIN);
      else serveUpload(app, url.pathname, req, res);
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      refuse(res, 405, 'Wraith: only GET is served here.');
      return;
    }
    if (url.pathname.startsWith('/download/')) {
      serveDownload(app, url.pathname, req, res);
      return;
    }
    serveStatic(opts.staticDir, url.pathname, res);
  });

  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES });
  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    // Any one of them right lets it in: a token given explicitly is not lost behind a stale cookie.
    const presented = [url.searchParams.get('token'), bearer, cookieToken(req)];
    const reqOrigin = req.headers.origin;
    let refusal: [status: number, reason: string, why: string] | null = null;
    if (url.pathname !== '/ws') refusal = [404, 'Not Found', 'Not Found'];
    else if (!originAllowed(reqOrigin, req.headers.host, named)) refusal = [403, 'Forbidden', FOREIGN_ORIGIN];
    else if (!presented.some((p) => sameToken(p, token))) refusal = [401, 'Unauthorized', 'Unauthorized: missing or wrong token'];
    if (refusal) {
      const [status, reason, why] = refusal;
      socket.end(`HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n${why}\n`);
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => serveSocket(app, ws, reqOrigin === undefined ? 'cli' : 'ui', opts.pingIntervalMs ?? PING_INTERVAL_MS));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) => reject(listenError(err, host, opts.port ?? 0)));
    server.listen(opts.port ?? 0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://${hostAndPort(host, port)}`;

  return {
    url,
    openUrl: `${url}/?token=${token}`,
    token,
    port,
    close: async () => {
      for (const c of wss.clients) c.terminate();
      wss.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * GET /download/<ticket>/<name>: the file of an sftp.downloadLink, streamed as it is read. The
 * ticket is good once (HEAD does not use it up); the token cookie was checked before.
 */
function serveDownload(app: App, pathname: string, req: IncomingMessage, res: ServerResponse): void {
  const ticket = pathname.split('/')[2] ?? '';
  if (req.method === 'HEAD') {
    res.writeHead(405, { allow: 'GET', 'cache-control': 'no-store' });
    res.end();
    return;
  }
  const link = app.sftp.claimDownload(ticket);
  if (!link) {
    refuse(res, 404, 'Wraith: this download link was used already or has expired. Start the download again from the Files panel.');
    return;
  }
  res.writeHead(200, {
    'content-type': 'application/octet-stream',
    'content-length': String(link.size),
    'content-disposition': attachment(link.name),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  });
  link.start(res);
}

/** What one sftp.uploadChunk of an upload link's body carries: the body's pieces (64 KiB) gathered. */
const UPLOAD_GATHER_BYTES = 1024 * 1024;
/** Gathered chunks being written at once; beyond that the request is paused (TCP pushes back on the browser). */
const UPLOAD_CHUNKS_IN_FLIGHT = 4;

/**
 * PUT /upload/<ticket>: the whole body of an sftp.uploadLink's upload, written in order through
 * sftp.uploadChunk as it arrives, never more than a few MiB of it held. Answers {bytes} once all
 * are written (the page then calls sftp.uploadEnd), or {code, message} at the first failure.
 */
function serveUpload(app: App, pathname: string, req: IncomingMessage, res: ServerResponse): void {
  let failed = false;
  // A newer link of the same upload takes over (the page saw this body cut off): read no more of it.
  const stop = () => {
    failed = true;
    req.destroy();
  };
  const link = app.sftp.claimUpload(pathname.split('/')[2] ?? '', stop);
  if (!link) {
    req.resume();
    refuse(res, 404, 'Wraith: this upload link was used already, or its upload is over. Start the upload again from the Files panel.');
    return;
  }
  const { transferId } = link;
  let parts: Buffer[] = [];
  let gathered = 0;
  // The body starts where the upload stood at its link: 0, or where a body cut off before it left
  // off. Its first `skip` bytes the host took from that older body meanwhile.
  let skip = link.skip;
  let offset = link.offset + skip;
  const writing = new Set<Promise<unknown>>();
  const fail = (err: unknown) => {
    if (failed) return;
    failed = true;
    // The rest of the body is read and dropped: the browser reads the answer once it has sent it.
    req.resume();
    const e = toSerializedError(err);
    res.writeHead(e.code === 'ENOTFOUND' ? 404 : e.code === 'EBADARGS' ? 400 : e.code === 'ECANCELLED' ? 409 : 500, {
      'content-type': 'application/json',
      'cache-control': 'no-store',
    });
    res.end(JSON.stringify({ code: e.code, message: e.message }));
  };
  const send = () => {
    const data = parts.length === 1 && parts[0] ? parts[0] : Buffer.concat(parts, gathered);
    const at = offset;
    offset += data.length;
    parts = [];
    gathered = 0;
    const write = app.sftp.uploadChunk({ transferId, offset: at, data });
    writing.add(write);
    write.then(
      () => {
        writing.delete(write);
        if (writing.size < UPLOAD_CHUNKS_IN_FLIGHT && !failed) req.resume();
      },
      fail,
    );
    if (writing.size >= UPLOAD_CHUNKS_IN_FLIGHT) req.pause();
  };
  req.on('data', (whole: Buffer) => {
    if (failed) return;
    const piece = skip > 0 ? whole.subarray(Math.min(skip, whole.length)) : whole;
    skip -= whole.length - piece.length;
    if (piece.length === 0) return;
    parts.push(piece);
    gathered += piece.length;
    if (gathered >= UPLOAD_GATHER_BYTES) send();
  });
  req.on('end', () => {
    if (failed) return;
    if (gathered > 0) send();
    Promise.all(writing).then(() => {
      if (failed) return;
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(JSON.stringify({ bytes: offset }));
    }, fail);
  });
  // A body cut off (the page cancelled, the tab closed, the network dropped): the page cancels the
  // transfer, or resumes it with a new link; a page closed or reloaded ends it as it goes (its
  // WebSocket says so: serveSocket), and otherwise its idle timer does, saying it was cut off here.
  // What was gathered and not yet written is dropped; the new link starts at what was.
  req.on('close', () => {
    if (!req.complete && !failed) app.sftp.uploadCut(transferId);
  });
}

/** Content-Disposition for a file name of any characters: an ASCII fallback and the UTF-8 name (RFC 6266). */
export function attachment(name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]|["\\]/g, '_') || 'download';
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`;
}

function serveStatic(root: string | undefined, pathname: string, res: ServerResponse): void {
  if (!root || !existsSync(root)) {
    refuse(res, 503, 'Wraith: the renderer is not built. Run `npm run build` and restart `wraith serve`.');
    return;
  }
  let rel: string;
  try {
    rel = normalize(decodeURIComponent(pathname)).replace(/^([/\\])+/, '');
  } catch {
    refuse(res, 400, 'Wraith: bad path.');
    return;
  }
  let file = join(root, rel);
  if (!file.startsWith(root + sep) && file !== root) {
    refuse(res, 403, 'Wraith: outside the app.');
    return;
  }
  if (!existsSync(file) || statSync(file).isDirectory()) file = join(root, 'index.html');
  res.writeHead(200, {
    'content-type': MIME[extname(file)] ?? 'application/octet-stream',
    'content-security-policy': CSP,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    // Cross-origin isolation: lets the page share memory with its WebSocket worker, which is
    // how a key's echo reaches xterm.js without waiting for the next frame (see
    // src-renderer/transport/shared-mailbox.ts). The page loads nothing from other origins.
    'cross-origin-opener-policy': 'same-origin',
    'cross-origin-embedder-policy': 'require-corp',
    'cross-origin-resource-policy': 'same-origin',
    'cache-control': extname(file) === '.html' ? 'no-store' : 'max-age=3600',
  });
  createReadStream(file).pipe(res);
}

/**
 * Past this much unsent data, stream events (terminal output, RDP frames) are not queued for
 * that client: a reader that does not keep up (a paused `wraith events`, a stalled tab) must not
 * grow the host's memory. Terminal seqs are byte offsets, so a client sees the gap and catches
 * up with terminal.read; RDP views repaint from rdp.framebuffer. Replies are never dropped.
 */
const STREAM_HIGH_WATER_BYTES = 8 * 1024 * 1024;
const STREAM_EVENTS = new Set(['terminal.data', 'rdp.frame']);

/**
 * Every socket is pinged this often. A proxy in front of the host (nginx closes a WebSocket idle
 * for 60 s by default) then never sees it idle, and a peer that went away without closing (a laptop
 * that slept, a cut link) is let go: its subscriptions and buffered output are freed, and a page
 * that comes back reconnects. Browsers and `ws` answer pings by themselves.
 */
const PING_INTERVAL_MS = 25_000;
/** The WebSocket close code a browser sends for a page that is closed or navigated away from (RFC 6455 §7.4.1). */
const WS_GOING_AWAY = 1001;
/** Intervals in a row with nothing heard from a socket and none of its backlog drained, before it is dropped. */
const SILENT_INTERVALS = 2;

/**
 * Pings `ws` every `intervalMs` and terminates it after SILENT_INTERVALS with no pong, no message
 * and none of its send backlog taken: on a slow link a ping can wait behind megabytes of output,
 * and a peer still taking that output is alive.
 */
function keepAlive(ws: WebSocket, intervalMs: number): void {
  let heard = true;
  let silent = 0;
  let backlog = ws.bufferedAmount;
  const alive = () => (heard = true);
  ws.on('pong', alive);
  ws.on('message', alive);
  const timer = setInterval(() => {
    const drained = ws.bufferedAmount < backlog;
    silent = heard || drained ? 0 : silent + 1;
    if (silent >= SILENT_INTERVALS) {
      ws.terminate();
      return;
    }
    heard = false;
    backlog = ws.bufferedAmount;
    ws.ping();
  }, intervalMs);
  timer.unref();
  ws.on('close', () => clearInterval(timer));
}

function serveSocket(app: App, ws: WebSocket, origin: 'ui' | 'cli', pingIntervalMs: number): void {
  keepAlive(ws, pingIntervalMs);
  const connection = openConnection(app, origin, (m: ServerMessage) => {
    if (ws.readyState !== WebSocket.OPEN) return;
    if (m.t === 'event' && STREAM_EVENTS.has(m.name) && ws.bufferedAmount > STREAM_HIGH_WATER_BYTES) return;
    ws.send(m.t === 'event' && m.name === 'terminal.data' ? encodeBytesEvent(m.name, m.payload as { data: Uint8Array }) : encodeFrame(m), { binary: true });
  });
  const refuseFrame = (message: string) =>
    ws.send(encodeFrame({ t: 'error', id: null, error: { code: 'EBADARGS', message } } satisfies ServerMessage));
  // A browser closes a page's WebSockets with "going away" when the page is closed, reloaded or
  // left (its worker's too): that page is gone for good. Any other end (1006: the connection
  // dropped; 1000: the page's own reconnect) may be followed by the same page over a new socket.
  ws.on('close', (code) => connection.close(code === WS_GOING_AWAY ? 'left' : undefined));
  ws.on('error', () => ws.terminate());
  ws.on('message', (data, isBinary) => {
    if (!isBinary) {
      refuseFrame('Send MessagePack binary frames, not text.');
      return;
    }
    const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
    let raw: unknown;
    try {
      raw = decodeFrame(bytes);
    } catch {
      refuseFrame('That frame is not valid MessagePack.');
      return;
    }
    connection.receive(raw);
  });
}
