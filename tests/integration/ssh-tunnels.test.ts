/**
 * tunnels.* (local port forwards, ssh -L) through a real OpenSSH sshd: a TCP echo server on this
 * machine stands for a database behind the server; the tunnel's port is reached with plain net
 * sockets, as a client program (psql, a browser) would.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { type AddressInfo, type Server, connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { ContractClient } from '../../src-main/common/client.js';
import type { EventPayload } from '../../src-main/common/contract/index.js';
import { App } from '../../src-main/node/app.js';
import { connectInProcess } from '../../src-main/node/in-process.js';
import { failure } from '../fixtures/errors.js';
import { until } from '../fixtures/poll.js';
import { type SshdHandle, savePasswordConnection, startSshd } from '../fixtures/sshd.js';

let sshd: SshdHandle;
let app: App;
let client: ContractClient;
let dataDir: string;
let echo: Server;
let echoPort: number;
let connectionId: string;

/** Sends `text` through host:port and resolves with what came back before the other side closed or 2 s passed. */
function roundTrip(port: number, text: string): Promise<string> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    let got = '';
    const done = () => {
      s.destroy();
      resolve(got);
    };
    s.on('connect', () => s.write(text));
    s.on('data', (d) => {
      got += d.toString();
      if (got.length >= text.length) done();
    });
    s.on('error', done);
    s.on('close', done);
    setTimeout(done, 2000);
  });
}

beforeAll(async () => {
  sshd = await startSshd();
  dataDir = mkdtempSync(join(tmpdir(), 'wraith-tunnels-'));
  app = new App({ dataDir, host: 'in-process' });
  client = connectInProcess(app);
  client.subscribe(['']);
  connectionId = (await savePasswordConnection(client, sshd)).id;
  echo = createServer((s) => s.pipe(s));
  await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
  echoPort = (echo.address() as AddressInfo).port;
});

afterAll(async () => {
  client?.close();
  await app?.dispose();
  echo?.close();
  await sshd?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

test('a local tunnel carries connections to a port behind the server, counts them, and stops', async () => {
  const { sessionId } = await client.call('ssh.open', { connectionId });
  const changes: EventPayload<'tunnels.changed'>[] = [];
  const off = client.on('tunnels.changed', (e) => changes.push(e));
  try {
    const t = await client.call('tunnels.start', { sessionId, bindPort: 0, targetHost: '127.0.0.1', targetPort: echoPort });
    expect(t).toMatchObject({ sessionId, kind: 'local', bindHost: '127.0.0.1', targetHost: '127.0.0.1', targetPort: echoPort, active: 0, total: 0, lastError: null });
    expect(t.bindPort).toBeGreaterThan(0);
    expect(await roundTrip(t.bindPort, 'hello through sshd')).toBe('hello through sshd');
    expect(await roundTrip(t.bindPort, 'and again')).toBe('and again');
    await until('both connections to be counted and closed', async () => {
      const [now] = (await client.call('tunnels.list', { sessionId })).tunnels;
      return now?.total === 2 && now.active === 0 ? now : undefined;
    });
    expect(changes.some((e) => e.tunnels[0]?.active === 1)).toBe(true);

    // The same port twice: a clear refusal, not a crash.
    const busy = await failure(client.call('tunnels.start', { sessionId, bindPort: t.bindPort, targetPort: echoPort }));
    expect(busy.code).toBe('EBADARGS');
    expect(busy.message).toContain(`Port ${t.bindPort} is already in use`);

    await client.call('tunnels.stop', { tunnelId: t.tunnelId });
    expect((await client.call('tunnels.list', { sessionId })).tunnels).toEqual([]);
    expect(await roundTrip(t.bindPort, 'nobody home')).toBe('');
    expect((await failure(client.call('tunnels.stop', { tunnelId: t.tunnelId }))).code).toBe('ENOTFOUND');
  } finally {
    off();
    await client.call('sessions.close', { sessionId });
  }
});

test('a target the server cannot reach is named in lastError; closing the session stops its tunnels', async () => {
  const { sessionId } = await client.call('ssh.open', { connectionId });
  // A port nothing listens on: the echo server's port after it moved on.
  const closed = createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const deadPort = (closed.address() as AddressInfo).port;
  await new Promise<void>((r) => closed.close(() => r()));

  const t = await client.call('tunnels.start', { sessionId, bindPort: 0, targetHost: '127.0.0.1', targetPort: deadPort });
  expect(await roundTrip(t.bindPort, 'anyone?')).toBe('');
  const failed = await until('the refusal to be recorded', async () => (await client.call('tunnels.list', { sessionId })).tunnels.find((x) => x.lastError !== null));
  expect(failed.lastError).toContain(`could not connect to 127.0.0.1:${deadPort}`);

  await client.call('sessions.close', { sessionId });
  await until('the tunnel to stop with its session', async () => (await client.call('tunnels.list', {})).tunnels.length === 0);
  expect(await roundTrip(t.bindPort, 'still there?')).toBe('');
  expect((await failure(client.call('tunnels.start', { sessionId, bindPort: 0, targetPort: echoPort }))).code).toBe('ENOTFOUND');
});

test('bad tunnel input gets stable codes', async () => {
  const { sessionId } = await client.call('ssh.open', { connectionId });
  try {
    expect((await failure(client.call('tunnels.start', { sessionId, bindPort: 70000, targetPort: 22 }))).code).toBe('EBADARGS');
    expect((await failure(client.call('tunnels.start', { sessionId, bindPort: 0, targetPort: 0 }))).code).toBe('EBADARGS');
    expect((await failure(client.call('tunnels.start', { sessionId, bindPort: 0, targetHost: 'bad host; rm -rf /', targetPort: 22 }))).code).toBe('EBADARGS');
    // Only loopback: a tunnel is not offered to the network.
    expect((await failure(client.call('tunnels.start', { sessionId, bindHost: '0.0.0.0' as '127.0.0.1', bindPort: 0, targetPort: 22 }))).code).toBe('EBADARGS');
    expect((await failure(client.call('tunnels.start', { sessionId: 'no-such-session', bindPort: 0, targetPort: 22 }))).code).toBe('ENOTFOUND');
  } finally {
    await client.call('sessions.close', { sessionId });
  }
});
