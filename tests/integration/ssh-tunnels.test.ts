/**
 * tunnels.* (ssh -L, -R, -D) through a real OpenSSH sshd: a TCP echo server on this machine
 * stands for a database behind the server (local, dynamic) or a service on the user's machine
 * (remote); the tunnel's port is reached with plain net sockets, as a client program (psql, a
 * browser) would, and through a SOCKS5 client (the `socks` library, as curl --socks5-hostname).
 * The sshd runs on this machine, so its loopback is this machine's too.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { type AddressInfo, type Server, connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SocksClient } from 'socks';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import type { z } from 'zod';
import type { ContractClient } from '../../src-main/common/client.js';
import type { SavedForward } from '../../src-main/common/contract/connections.js';
import type { EventPayload } from '../../src-main/common/contract/index.js';
import { App } from '../../src-main/node/app.js';
import { connectInProcess } from '../../src-main/node/in-process.js';
import { tunnelOptions } from '../../src-main/node/ssh/tunnels.js';
import { failure } from '../fixtures/errors.js';
import { type SilentPort, silentPort } from '../fixtures/net.js';
import { until } from '../fixtures/poll.js';
import { shortTimeoutService } from '../fixtures/ssh-service.js';
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

/** A port nothing listens on (one that was just free). */
async function deadPort(host = '127.0.0.1'): Promise<number> {
  const closed = createServer();
  await new Promise<void>((r) => closed.listen(0, host, r));
  const port = (closed.address() as AddressInfo).port;
  await new Promise<void>((r) => closed.close(() => r()));
  return port;
}

/** Sends `text` to host:port through the SOCKS5 proxy on proxyPort; what came back, or the refusal. */
async function socksRoundTrip(proxyPort: number, host: string, port: number, text: string): Promise<string> {
  const { socket } = await SocksClient.createConnection({
    proxy: { host: '127.0.0.1', port: proxyPort, type: 5 },
    command: 'connect',
    destination: { host, port },
    timeout: 5000,
  });
  return new Promise((resolve) => {
    let got = '';
    socket.on('data', (d: Buffer) => {
      got += d.toString();
      if (got.length < text.length) return;
      socket.destroy();
      resolve(got);
    });
    socket.on('close', () => resolve(got));
    socket.write(text);
  });
}

/**
 * SOCKS5 by hand, as an optimistic client does it: greeting, then the CONNECT request and the
 * first payload in one write, before the proxy's reply. Resolves with the payload's echo.
 */
function optimisticSocks(proxyPort: number, port: number, text: string): Promise<string> {
  return new Promise((resolve) => {
    const s = connect(proxyPort, '127.0.0.1');
    let got = Buffer.alloc(0);
    let stage = 'greeting';
    const done = (out: string) => {
      s.destroy();
      resolve(out);
    };
    s.on('connect', () => s.write(Buffer.from([5, 1, 0])));
    s.on('data', (d: Buffer) => {
      got = Buffer.concat([got, d]);
      if (stage === 'greeting' && got.length >= 2) {
        got = got.subarray(2);
        stage = 'reply';
        const request = Buffer.from([5, 1, 0, 1, 127, 0, 0, 1, port >> 8, port & 0xff]);
        s.write(Buffer.concat([request, Buffer.from(text)]));
      }
      if (stage === 'reply' && got.length >= 10) {
        if (got[1] !== 0) return done(`refused (${got[1]})`);
        got = got.subarray(10);
        stage = 'data';
      }
      if (stage === 'data' && got.length >= text.length) done(got.toString());
    });
    s.on('close', () => done(stage === 'data' ? got.toString() : ''));
    setTimeout(() => done(stage === 'data' ? got.toString() : ''), 3000);
  });
}

/** A saved password connection to the sshd whose sessions start `forwards`; its id. */
async function connectionWithForwards(name: string, forwards: z.input<typeof SavedForward>[]): Promise<string> {
  const id = (await savePasswordConnection(client, sshd, name)).id;
  await client.call('connections.update', { id, patch: { sshOptions: { forwards } } });
  return id;
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
  const dead = await deadPort();

  const t = await client.call('tunnels.start', { sessionId, bindPort: 0, targetHost: '127.0.0.1', targetPort: dead });
  expect(await roundTrip(t.bindPort, 'anyone?')).toBe('');
  const failed = await until('the refusal to be recorded', async () => (await client.call('tunnels.list', { sessionId })).tunnels.find((x) => x.lastError !== null));
  expect(failed.lastError).toContain(`could not connect to 127.0.0.1:${dead}`);

  await client.call('sessions.close', { sessionId });
  await until('the tunnel to stop with its session', async () => (await client.call('tunnels.list', {})).tunnels.length === 0);
  expect(await roundTrip(t.bindPort, 'still there?')).toBe('');
  expect((await failure(client.call('tunnels.start', { sessionId, bindPort: 0, targetPort: echoPort }))).code).toBe('ENOTFOUND');
});

describe('a target that does not answer (its packets dropped)', () => {
  let silent: SilentPort;
  beforeAll(async () => {
    silent = await silentPort();
  });
  afterAll(async () => {
    await silent?.close();
  });

  /** Connects to a tunnel's port and resolves once the tunnel has closed the connection. */
  function closedByTunnel(port: number): Promise<void> {
    return new Promise((resolve) => {
      const s = connect(port, '127.0.0.1');
      s.on('error', () => undefined);
      s.on('close', () => resolve());
    });
  }

  test('a port forward gives a connection up once the target did not answer in time, naming the session and the target, and carries the next one', async () => {
    // Its target has 1.5 s to answer (the app's wait is 20 s); the server's own dial waits over two minutes.
    const ssh = shortTimeoutService(app);
    const { sessionId } = await ssh.open({ connectionId, cols: 80, rows: 24 }, undefined, 'test');
    try {
      const session = ssh.session(sessionId);
      const local = await ssh.tunnels.start(session, tunnelOptions({ kind: 'local', bindHost: '127.0.0.1', bindPort: 0, targetHost: '127.0.0.1', targetPort: silent.port }));
      let closed = false;
      void closedByTunnel(local.bindPort).then(() => (closed = true));
      await until('the tunnel to close the connection to a silent target', () => closed);
      const [after] = ssh.tunnels.list(sessionId);
      expect(after).toMatchObject({
        active: 0,
        total: 1,
        lastError: `web01 could not connect to 127.0.0.1:${silent.port}: it did not answer in time. Is the host up and the port right?`,
      });

      // A SOCKS proxy: the connection to the silent target is refused as unreachable; the next one, elsewhere, is carried.
      const socks = await ssh.tunnels.start(session, tunnelOptions({ kind: 'dynamic', bindHost: '127.0.0.1', bindPort: 0 }));
      await expect(socksRoundTrip(socks.bindPort, '127.0.0.1', silent.port, 'anyone?')).rejects.toThrow(/HostUnreachable/);
      expect(await socksRoundTrip(socks.bindPort, '127.0.0.1', echoPort, 'still carried')).toBe('still carried');
      expect(ssh.tunnels.list(sessionId).find((t) => t.kind === 'dynamic')?.lastError).toBeNull();
    } finally {
      await app.sessions.close(sessionId);
      ssh.dispose();
    }
  });

  test("an RDP desktop's tunnel gives a connection up once the target did not answer in time, says why naming the jump host and the target, and stays up", async () => {
    const ssh = shortTimeoutService(app);
    try {
      const tunnel = await ssh.openTunnel(connectionId, '127.0.0.1', silent.port, 'desk');
      try {
        let closed = false;
        void closedByTunnel(tunnel.port).then(() => (closed = true));
        await until('the tunnel to close the connection to a silent target', () => closed);
        expect(tunnel.lastError?.code).toBe('ETIMEOUT');
        expect(tunnel.lastError?.message).toBe(`Jump host web01 could not reach 127.0.0.1:${silent.port} (desk): it did not answer in time. Is the host up and the port right?`);
        expect(tunnel.closed).toBe(false);
      } finally {
        tunnel.close();
      }
    } finally {
      ssh.dispose();
    }
  });
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
    // Local and remote forwards need a target; a dynamic one takes none.
    const noTarget = await failure(client.call('tunnels.start', { sessionId, kind: 'remote', bindPort: 0 }));
    expect(noTarget.code).toBe('EBADARGS');
    expect(noTarget.message).toContain('A remote forward needs the port to forward to');
    const socksTarget = await failure(client.call('tunnels.start', { sessionId, kind: 'dynamic', bindPort: 0, targetPort: 22 }));
    expect(socksTarget.code).toBe('EBADARGS');
    expect(socksTarget.message).toContain('each connection names its own');
    expect((await failure(client.call('tunnels.start', { sessionId, kind: 'tun' as 'local', bindPort: 0, targetPort: 22 }))).code).toBe('EBADARGS');
    expect((await client.call('tunnels.list', { sessionId })).tunnels).toEqual([]);
  } finally {
    await client.call('sessions.close', { sessionId });
  }
});

test('a remote tunnel: the server listens on its loopback and its connections reach a port here; it listens again after a reconnect', async () => {
  const { sessionId } = await client.call('ssh.open', { connectionId });
  try {
    const t = await client.call('tunnels.start', { sessionId, kind: 'remote', bindPort: 0, targetHost: '127.0.0.1', targetPort: echoPort });
    expect(t).toMatchObject({ sessionId, kind: 'remote', bindHost: '127.0.0.1', targetHost: '127.0.0.1', targetPort: echoPort, active: 0, total: 0, lastError: null });
    expect(t.bindPort).toBeGreaterThan(0);
    // The port is sshd's: a connection to it on the server comes back through the session.
    expect(await roundTrip(t.bindPort, 'from the server side')).toBe('from the server side');
    await until('the connection to be counted and closed', async () => {
      const [now] = (await client.call('tunnels.list', { sessionId })).tunnels;
      return now?.total === 1 && now.active === 0 ? now : undefined;
    });

    // The server forgets its forwards with the connection; the reconnect asks again, same port.
    sshd.dropConnections();
    await until('the session to drop', async () => (await client.call('sessions.list')).find((s) => s.id === sessionId)?.state === 'disconnected');
    expect(await roundTrip(t.bindPort, 'while down')).toBe('');
    await client.call('ssh.reconnect', { sessionId });
    const [after] = (await client.call('tunnels.list', { sessionId })).tunnels;
    expect(after).toMatchObject({ tunnelId: t.tunnelId, bindPort: t.bindPort, lastError: null });
    expect(await roundTrip(t.bindPort, 'after the reconnect')).toBe('after the reconnect');

    // Taken on the server: a clear refusal.
    const taken = await failure(client.call('tunnels.start', { sessionId, kind: 'remote', bindPort: t.bindPort, targetPort: echoPort }));
    expect(taken.code).toBe('EDENIED');
    expect(taken.message).toContain(`would not listen on 127.0.0.1:${t.bindPort}`);

    await client.call('tunnels.stop', { tunnelId: t.tunnelId });
    await until('the server to stop listening', async () => (await roundTrip(t.bindPort, 'gone?')) === '');
    expect((await client.call('tunnels.list', { sessionId })).tunnels).toEqual([]);
  } finally {
    await client.call('sessions.close', { sessionId });
  }
});

test('a remote tunnel whose target here is down says so in lastError', async () => {
  const { sessionId } = await client.call('ssh.open', { connectionId });
  try {
    const dead = await deadPort();
    const t = await client.call('tunnels.start', { sessionId, kind: 'remote', bindPort: 0, targetHost: '127.0.0.1', targetPort: dead });
    expect(await roundTrip(t.bindPort, 'anyone?')).toBe('');
    const failed = await until('the refusal to be recorded', async () => (await client.call('tunnels.list', { sessionId })).tunnels.find((x) => x.lastError !== null));
    expect(failed.lastError).toContain(`This computer could not connect to 127.0.0.1:${dead}`);
  } finally {
    await client.call('sessions.close', { sessionId });
  }
});

test('an IPv6 target written in brackets ([::1]) is reached as the address, through local and remote tunnels', async () => {
  const echo6 = createServer((s) => s.pipe(s));
  await new Promise<void>((r) => echo6.listen(0, '::1', r));
  const port6 = (echo6.address() as AddressInfo).port;
  const { sessionId } = await client.call('ssh.open', { connectionId });
  try {
    for (const kind of ['local', 'remote'] as const) {
      const t = await client.call('tunnels.start', { sessionId, kind, bindPort: 0, targetHost: '[::1]', targetPort: port6 });
      expect(await roundTrip(t.bindPort, `${kind} to [::1]`)).toBe(`${kind} to [::1]`);
      expect((await client.call('tunnels.list', { sessionId })).tunnels.find((x) => x.tunnelId === t.tunnelId)).toMatchObject({ targetHost: '[::1]', lastError: null });
      await client.call('tunnels.stop', { tunnelId: t.tunnelId });
    }
  } finally {
    await client.call('sessions.close', { sessionId });
    echo6.close();
  }
});

test('an IPv6 target that is down is named in brackets in lastError, [::1]:port, as "::1:port" could be an address alone', async () => {
  const dead = await deadPort('::1');
  const { sessionId } = await client.call('ssh.open', { connectionId });
  try {
    for (const [kind, who] of [['local', 'web01'], ['remote', 'This computer']] as const) {
      const t = await client.call('tunnels.start', { sessionId, kind, bindPort: 0, targetHost: '::1', targetPort: dead });
      expect(await roundTrip(t.bindPort, 'anyone?')).toBe('');
      const failed = await until('the refusal to be recorded', async () =>
        (await client.call('tunnels.list', { sessionId })).tunnels.find((x) => x.tunnelId === t.tunnelId && x.lastError !== null),
      );
      expect(failed.lastError).toContain(`${who} could not connect to [::1]:${dead}: `);
      await client.call('tunnels.stop', { tunnelId: t.tunnelId });
    }
  } finally {
    await client.call('sessions.close', { sessionId });
  }
});

test('a dynamic tunnel is a SOCKS5 proxy: each connection names where the server connects, by address or by name', async () => {
  const { sessionId } = await client.call('ssh.open', { connectionId });
  try {
    const t = await client.call('tunnels.start', { sessionId, kind: 'dynamic', bindPort: 0 });
    expect(t).toMatchObject({ sessionId, kind: 'dynamic', bindHost: '127.0.0.1', targetHost: null, targetPort: null, active: 0, total: 0, lastError: null });
    expect(await socksRoundTrip(t.bindPort, '127.0.0.1', echoPort, 'by address')).toBe('by address');
    // A name goes to the server to resolve (socks5h), as with ssh -D.
    expect(await socksRoundTrip(t.bindPort, 'localhost', echoPort, 'by name')).toBe('by name');
    await until('both connections to be counted and closed', async () => {
      const [now] = (await client.call('tunnels.list', { sessionId })).tunnels;
      return now?.total === 2 && now.active === 0 ? now : undefined;
    });

    // A destination the server cannot reach: the SOCKS client hears "refused", lastError says where.
    const dead = await deadPort();
    await expect(socksRoundTrip(t.bindPort, '127.0.0.1', dead, 'x')).rejects.toThrow(/ConnectionRefused/);
    const failed = await until('the refusal to be recorded', async () => (await client.call('tunnels.list', { sessionId })).tunnels.find((x) => x.lastError !== null));
    expect(failed.lastError).toContain(`could not connect to 127.0.0.1:${dead}`);
    // A client that sends its first bytes with the CONNECT request (optimistic data) loses none.
    expect(await optimisticSocks(t.bindPort, echoPort, 'sent early')).toBe('sent early');
    // Something that is not SOCKS is dropped, and the proxy goes on.
    expect(await roundTrip(t.bindPort, 'GET / HTTP/1.0\r\n\r\n')).toBe('');
    expect(await socksRoundTrip(t.bindPort, '127.0.0.1', echoPort, 'still here')).toBe('still here');
    expect((await client.call('tunnels.list', { sessionId })).tunnels[0]?.lastError).toBeNull();

    await client.call('tunnels.stop', { tunnelId: t.tunnelId });
    await expect(socksRoundTrip(t.bindPort, '127.0.0.1', echoPort, 'x')).rejects.toThrow();
  } finally {
    await client.call('sessions.close', { sessionId });
  }
});

test("a connection's saved forwards start with each session; one that cannot start is reported and the session opens anyway", async () => {
  const fixedPort = await deadPort(); // free now, taken by the first session's forward
  const busy = createServer();
  await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
  const busyPort = (busy.address() as AddressInfo).port;
  const saved = await connectionWithForwards('db-bastion', [
    { kind: 'local', bindHost: '127.0.0.1', bindPort: fixedPort, targetHost: '127.0.0.1', targetPort: echoPort },
    { kind: 'dynamic', bindHost: '127.0.0.1', bindPort: 0 },
    { kind: 'local', bindHost: '127.0.0.1', bindPort: busyPort, targetPort: echoPort },
  ]);
  const sessions: string[] = [];
  try {
    const first = await client.call('ssh.open', { connectionId: saved });
    sessions.push(first.sessionId);
    expect(first.forwardErrors).toHaveLength(1);
    expect(first.forwardErrors?.[0]).toContain(`The saved port forward (127.0.0.1:${busyPort} → localhost:${echoPort}) did not start: Port ${busyPort} is already in use`);
    const running = (await client.call('tunnels.list', { sessionId: first.sessionId })).tunnels;
    expect(running.map((t) => [t.kind, t.bindPort === fixedPort])).toEqual([
      ['local', true],
      ['dynamic', false],
    ]);
    expect(await roundTrip(fixedPort, 'saved and started')).toBe('saved and started');
    const socksPort = running[1]?.bindPort ?? 0;
    expect(await socksRoundTrip(socksPort, '127.0.0.1', echoPort, 'saved proxy')).toBe('saved proxy');

    // A second tab of the connection leaves the fixed port to the first; port 0 starts anew.
    const second = await client.call('ssh.open', { connectionId: saved });
    sessions.push(second.sessionId);
    expect(second.forwardErrors).toHaveLength(1);
    const again = (await client.call('tunnels.list', { sessionId: second.sessionId })).tunnels;
    expect(again.map((t) => t.kind)).toEqual(['dynamic']);
    expect(again[0]?.bindPort).not.toBe(socksPort);
  } finally {
    busy.close();
    for (const sessionId of sessions) await client.call('sessions.close', { sessionId });
    await client.call('connections.delete', { id: saved });
  }
});

test('a saved forward held by a tab whose connection dropped moves to a new session of the connection', async () => {
  const localPort = await deadPort();
  const remotePort = await deadPort();
  const saved = await connectionWithForwards('dropped-bastion', [
    { kind: 'local', bindHost: '127.0.0.1', bindPort: localPort, targetHost: '127.0.0.1', targetPort: echoPort },
    { kind: 'remote', bindHost: '127.0.0.1', bindPort: remotePort, targetHost: '127.0.0.1', targetPort: echoPort },
  ]);
  const sessions: string[] = [];
  try {
    const first = await client.call('ssh.open', { connectionId: saved });
    sessions.push(first.sessionId);
    expect((await client.call('tunnels.list', { sessionId: first.sessionId })).tunnels).toHaveLength(2);

    sshd.dropConnections();
    await until('the first session to drop', async () => (await client.call('sessions.list')).find((s) => s.id === first.sessionId)?.state === 'disconnected');
    // The person opens the connection again rather than pressing Reconnect: the forwards go with them.
    const second = await client.call('ssh.open', { connectionId: saved });
    sessions.push(second.sessionId);
    expect(second.forwardErrors).toBeUndefined();
    const moved = (await client.call('tunnels.list', { sessionId: second.sessionId })).tunnels;
    expect(moved.map((t) => [t.kind, t.bindPort])).toEqual([
      ['local', localPort],
      ['remote', remotePort],
    ]);
    expect((await client.call('tunnels.list', { sessionId: first.sessionId })).tunnels).toEqual([]);
    expect(await roundTrip(localPort, 'through the new tab')).toBe('through the new tab');
    expect(await roundTrip(remotePort, 'back through the new tab')).toBe('back through the new tab');

    // The old tab, reconnected, leaves them to the new one.
    await client.call('ssh.reconnect', { sessionId: first.sessionId });
    expect((await client.call('tunnels.list', { sessionId: first.sessionId })).tunnels).toEqual([]);
    expect(await roundTrip(localPort, 'still the new tab')).toBe('still the new tab');
  } finally {
    for (const sessionId of sessions) await client.call('sessions.close', { sessionId });
    await client.call('connections.delete', { id: saved });
  }
});

test('a saved forward is checked like a started one', async () => {
  const bad = await failure(
    client.call('connections.update', { id: connectionId, patch: { sshOptions: { forwards: [{ kind: 'dynamic', bindHost: '127.0.0.1', bindPort: 0, targetPort: 22 }] } } }),
  );
  expect(bad.code).toBe('EBADARGS');
  expect(bad.message).toContain('each connection names its own');
  const wide = await failure(
    client.call('connections.update', { id: connectionId, patch: { sshOptions: { forwards: [{ kind: 'local', bindHost: '0.0.0.0' as '127.0.0.1', bindPort: 8080, targetPort: 80 }] } } }),
  );
  expect(wide.code).toBe('EBADARGS');
  expect((await client.call('connections.get', { id: connectionId })).sshOptions.forwards).toBeUndefined();
});

test('an open whose caller goes away while its saved forwards start ends the session and its forwards, says it was cancelled, and never announces the session', async () => {
  const saved = await connectionWithForwards('forwards-then-gone', [{ kind: 'dynamic', bindHost: '127.0.0.1', bindPort: 0 }]);
  const sessionsBefore = (await client.call('sessions.list')).map((s) => s.id);
  // Every window makes a tab of a session it hears of: one announced and closed at once flashed
  // as a tab (and an ended one, in windows that were not looking), for an open nobody owns.
  const announced: EventPayload<'session.changed'>[] = [];
  const off = client.on('session.changed', (s) => announced.push(s));
  const gone = new AbortController();
  const start = app.ssh.tunnels.start.bind(app.ssh.tunnels);
  const started = vi.spyOn(app.ssh.tunnels, 'start').mockImplementation((session, spec) => {
    gone.abort(); // the caller goes (a closed window) while the forward starts
    return start(session, spec);
  });
  try {
    const err = await failure(app.ssh.open({ connectionId: saved, cols: 80, rows: 24 }, gone.signal, 'test'));
    expect(started).toHaveBeenCalledTimes(1);
    expect(err.code).toBe('ECANCELLED');
    expect((await client.call('sessions.list')).map((s) => s.id)).toEqual(sessionsBefore);
    expect((await client.call('tunnels.list')).tunnels).toEqual([]);
    // Events emitted before the calls above answered have been delivered by now.
    expect(announced).toEqual([]);
  } finally {
    started.mockRestore();
    off();
  }
});

test('an open with saved forwards that is not given up announces its session once, open', async () => {
  const saved = await connectionWithForwards('forwards-kept', [{ kind: 'dynamic', bindHost: '127.0.0.1', bindPort: 0 }]);
  const announced: EventPayload<'session.changed'>[] = [];
  const off = client.on('session.changed', (s) => announced.push(s));
  let sessionId: string | null = null;
  try {
    sessionId = (await client.call('ssh.open', { connectionId: saved })).sessionId;
    const tunnels = (await client.call('tunnels.list', { sessionId })).tunnels;
    expect(tunnels.map((t) => t.kind)).toEqual(['dynamic']);
    expect(announced.map((s) => [s.id, s.state])).toEqual([[sessionId, 'open']]);
  } finally {
    off();
    if (sessionId) await client.call('sessions.close', { sessionId });
    await client.call('connections.delete', { id: saved });
  }
});
