/**
 * Hostile and broken input against a real `wraith serve`: every case gets its error, the host
 * stays up, and nothing is written.
 */
import { encode } from '@msgpack/msgpack';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { WebSocket } from 'ws';
import type { ContractClient } from '../../src-main/common/client.js';
import { methods } from '../../src-main/common/contract/index.js';
import { ERROR_CODES, WraithError } from '../../src-main/common/errors.js';
import { MAX_FRAME_BYTES } from '../../src-main/common/protocol.js';
import { decodeFrame } from '../../src-main/server/codec.js';
import { connectWebSocket } from '../../src-main/server/ws-client.js';
import { tokenCookieName } from '../../src-main/server/ws-server.js';
import { type WraithServer, startWraithServer } from '../fixtures/wraith-server.js';

let host: WraithServer;
let client: ContractClient;

beforeAll(async () => {
  host = await startWraithServer();
  client = await connectWebSocket(host.url, host.token);
});
afterAll(async () => {
  client?.close();
  await host?.stop();
});

const wsUrl = () => host.url.replace('http', 'ws') + '/ws';

/** Opens a raw socket, sends one frame, returns the first reply (decoded) or the close code. */
function rawExchange(frame: Buffer | string, opts: { binary?: boolean } = {}): Promise<{ reply?: unknown; closeCode?: number }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(wsUrl(), { headers: { authorization: `Bearer ${host.token}` } });
    ws.once('open', () => ws.send(frame, { binary: opts.binary ?? typeof frame !== 'string' }));
    ws.once('message', (data) => {
      resolve({ reply: decodeFrame(data as Buffer) });
      ws.close();
    });
    ws.once('close', (code) => resolve({ closeCode: code }));
    ws.once('error', reject);
  });
}

function upgradeStatus(headers: Record<string, string>, path = '/ws'): Promise<number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(host.url.replace('http', 'ws') + path, { headers });
    ws.once('open', () => (ws.close(), resolve(101)));
    ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    ws.once('error', () => resolve(-1));
  });
}

async function hostIsUp(): Promise<void> {
  expect(await client.call('health.ping')).toEqual({ ok: true });
}

test('malformed frames get EBADARGS and the connection stays usable', async () => {
  for (const frame of [Buffer.from([0xc1, 0xff, 0x00]), Buffer.from(encode(42)), Buffer.from(encode({ t: 'call' })), Buffer.from(encode({ t: 'call', id: -1, method: 'health.ping' }))]) {
    const { reply } = await rawExchange(frame);
    expect(reply).toMatchObject({ t: 'error', error: { code: 'EBADARGS' } });
  }
  const text = await rawExchange('{"t":"call","id":1,"method":"health.ping"}', { binary: false });
  expect(text.reply).toMatchObject({ t: 'error', error: { code: 'EBADARGS', message: expect.stringContaining('binary') } });
  await hostIsUp();
});

test('a frame over the size limit closes that socket only (1009)', async () => {
  const huge = Buffer.alloc(MAX_FRAME_BYTES + 1024, 0x61);
  const { closeCode } = await rawExchange(huge);
  // The host answers 1009 and drops the socket; if the client is still writing the rest of the
  // frame it may see the reset (1006) before it reads that close frame. Either way: closed.
  expect([1009, 1006]).toContain(closeCode);
  await hostIsUp();
});

test('a huge string inside a valid call is refused by the schema', async () => {
  await expect(client.callRaw('connections.create', { name: 'x'.repeat(7_000_000), kind: 'ssh', host: 'h' })).rejects.toMatchObject({
    code: 'EBADARGS',
  });
  await hostIsUp();
});

test('missing or wrong token, foreign Origin and wrong paths are refused', async () => {
  expect(await upgradeStatus({})).toBe(401);
  expect(await upgradeStatus({ authorization: 'Bearer wrong' })).toBe(401);
  expect(await upgradeStatus({ authorization: `Bearer ${host.token}`, origin: 'https://evil.example' })).toBe(403);
  expect(await upgradeStatus({ authorization: `Bearer ${host.token}` }, '/other')).toBe(404);
  expect(await upgradeStatus({ authorization: `Bearer ${host.token}`, origin: host.url })).toBe(101);
  const page = await fetch(host.url + '/');
  expect(page.status).toBe(401);
  expect(await page.text()).toContain('token');
  const wrongCookie = await fetch(host.url + '/', { headers: { cookie: `${tokenCookieName(new URL(host.url).host)}=nope` } });
  expect(wrongCookie.status).toBe(401);
  const first = await fetch(host.openUrl, { redirect: 'manual' });
  expect(first.status).toBe(302);
  expect(first.headers.get('set-cookie')).toMatch(/HttpOnly/);
  expect(first.headers.get('location')).toBe('/');
  await hostIsUp();
});

test('a right token given with the upgrade is taken over a stale cookie (one of an earlier launch)', async () => {
  const stale = { cookie: `${tokenCookieName(new URL(host.url).host)}=an-earlier-launch` };
  expect(await upgradeStatus(stale)).toBe(401);
  expect(await upgradeStatus({ ...stale, authorization: `Bearer ${host.token}` })).toBe(101);
  expect(await upgradeStatus(stale, `/ws?token=${host.token}`)).toBe(101);
  await hostIsUp();
});

/** Random JSON-ish values, biased towards the shapes schemas look at. */
function randomValue(depth = 0): unknown {
  const r = Math.random();
  if (depth > 3 || r < 0.15) return [null, true, false, 0, -1, 1e308, 3.5, '', 'x', '../../etc/passwd', '\u0000', '💥'][Math.floor(Math.random() * 12)];
  if (r < 0.3) return Math.floor(Math.random() * 2 ** 31) * (Math.random() < 0.5 ? -1 : 1);
  if (r < 0.45) return Math.random().toString(36).repeat(Math.floor(Math.random() * 5));
  if (r < 0.55) return new Uint8Array(Math.floor(Math.random() * 64));
  if (r < 0.7) return Array.from({ length: Math.floor(Math.random() * 4) }, () => randomValue(depth + 1));
  const keys = ['id', 'name', 'kind', 'host', 'port', 'sessionId', 'connectionId', 'path', 'password', 'protection', 'data', 'query', 'patch', 'command'];
  const o: Record<string, unknown> = {};
  for (let i = Math.floor(Math.random() * 5); i > 0; i--) o[keys[Math.floor(Math.random() * keys.length)] ?? 'x'] = randomValue(depth + 1);
  return o;
}

test('fuzz: random input to every method gets a result or a coded error, and writes nothing', async () => {
  const before = await client.call('connections.list');
  let errors = 0;
  // Random input can be valid by chance (a group needs only a name); count those writes.
  let groupsCreated = 0;
  for (const method of Object.keys(methods)) {
    // These change host state by design when given valid input; their valid paths are tested elsewhere.
    if (method === 'vault.init' || method === 'vault.lock') continue;
    for (let i = 0; i < 25; i++) {
      try {
        await client.callRaw(method, randomValue());
        if (method === 'connections.groups.create') groupsCreated++;
      } catch (err) {
        expect(err).toBeInstanceOf(WraithError);
        expect(ERROR_CODES).toContain((err as WraithError).code);
        errors++;
      }
    }
  }
  expect(errors).toBeGreaterThan(0);
  await hostIsUp();
  const after = await client.call('connections.list');
  expect(after.connections.length).toBe(before.connections.length);
  expect(after.groups.length).toBe(before.groups.length + groupsCreated);
  expect(host.process.exitCode).toBeNull();
});
