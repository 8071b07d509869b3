/**
 * The host pings every WebSocket (so a proxy never sees it idle) and lets go of one that went
 * silent: no pong, no message. A real server (in this process, with a 100 ms interval) and real
 * `ws` clients, one of which does not answer pings.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { WebSocket } from 'ws';
import { App } from '../../src-main/node/app.js';
import { encodeFrame } from '../../src-main/server/codec.js';
import { type RunningServer, startServer } from '../../src-main/server/ws-server.js';

const INTERVAL_MS = 100;
let dataDir: string;
let app: App;
let server: RunningServer;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'wraith-keepalive-'));
  app = new App({ dataDir, host: 'in-process' });
  server = await startServer({ app, pingIntervalMs: INTERVAL_MS });
});
afterAll(async () => {
  await server?.close();
  await app?.dispose();
  rmSync(dataDir, { recursive: true, force: true });
});

async function open(autoPong: boolean): Promise<{ ws: WebSocket; pings: () => number; closed: Promise<number> }> {
  const ws = new WebSocket(`${server.url.replace('http', 'ws')}/ws`, { headers: { authorization: `Bearer ${server.token}` }, autoPong });
  let pings = 0;
  ws.on('ping', () => pings++);
  const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return { ws, pings: () => pings, closed };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('a client that answers pings stays connected, pinged every interval', async () => {
  const c = await open(true);
  let closed = false;
  void c.closed.then(() => (closed = true));
  await sleep(INTERVAL_MS * 12);
  expect(closed).toBe(false);
  expect(c.pings()).toBeGreaterThanOrEqual(6);
  c.ws.close();
});

test('a client that answers nothing is let go', async () => {
  const c = await open(false);
  // Dropped after two silent intervals: well within this wait, which bounds the test.
  const code = await Promise.race([c.closed, sleep(INTERVAL_MS * 30).then(() => 'still open')]);
  // terminate() sends no close frame: the client sees an abnormal closure.
  expect(code).toBe(1006);
  expect(c.pings()).toBeGreaterThanOrEqual(1);
});

test('a client that does not answer pings but keeps sending is alive', async () => {
  const c = await open(false);
  let closed = false;
  void c.closed.then(() => (closed = true));
  for (let i = 0; i < 24; i++) {
    c.ws.send(encodeFrame({ t: 'call', id: i + 1, method: 'health.ping' }));
    await sleep(INTERVAL_MS / 2);
  }
  expect(closed).toBe(false);
  expect(c.pings()).toBeGreaterThanOrEqual(6);
  c.ws.close();
});
