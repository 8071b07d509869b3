/**
 * The RDP service through the contract, against a real FreeRDP shadow server on Xvfb:
 * certificate trust, screenshots that show the display, clicks mapped back through the
 * screenshot's scale, typed keys, frames, and a clean closed state when the server dies.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { ContractClient } from '../../src-main/common/client.js';
import type { EventPayload } from '../../src-main/common/contract/index.js';
import { WraithError } from '../../src-main/common/errors.js';
import { hostAndPort } from '../../src-main/common/host-address.js';
import { App } from '../../src-main/node/app.js';
import { connectInProcess } from '../../src-main/node/in-process.js';
import { toDesktopPoint } from '../../src-main/node/rdp/screenshot.js';
import { type RdpTestServer, startRdpServer } from '../fixtures/rdp-server.js';
import { startDelayProxy } from '../fixtures/delay-proxy.js';
import { failure } from '../fixtures/errors.js';
import { freePort } from '../fixtures/net.js';
import { until } from '../fixtures/poll.js';
import { type SshdHandle, askingConnection, startSshd } from '../fixtures/sshd.js';

let server: RdpTestServer;
let app: App;
let client: ContractClient;
let connectionId: string;

beforeAll(async () => {
  server = await startRdpServer({ width: 1600, height: 900, ipv6Loopback: true });
  app = new App({ dataDir: mkdtempSync(join(tmpdir(), 'wraith-rdp-svc-')), host: 'in-process' });
  client = connectInProcess(app);
  client.subscribe(['rdp.', 'session.']);
  const c = await client.call('connections.create', { name: 'desk', kind: 'rdp', host: server.host, port: server.port, rdpOptions: { security: 'tls' } });
  connectionId = c.id;
});
afterAll(async () => {
  await app?.dispose();
  await server?.dispose();
});

async function openTrusted(id = connectionId): Promise<string> {
  const first = await client.call('rdp.open', { connectionId: id }).catch((e: unknown) => (e instanceof WraithError ? e : Promise.reject(e)));
  if (!(first instanceof WraithError)) return first.sessionId;
  expect(first.code).toBe('ECERT_UNKNOWN');
  const fingerprint = first.details?.fingerprint;
  expect(fingerprint).toMatch(/^([0-9a-f]{2}:){31}[0-9a-f]{2}$/i);
  await client.call('hostkeys.trust', { kind: 'rdp', host: server.host, port: server.port, keyType: 'x509', fingerprint: String(fingerprint) });
  return (await client.call('rdp.open', { connectionId: id })).sessionId;
}

test('unknown certificate first, then trusted: the session opens and is listed', async () => {
  const sessionId = await openTrusted();
  const listed = await client.call('sessions.list');
  expect(listed).toContainEqual(expect.objectContaining({ id: sessionId, kind: 'rdp', state: 'open', title: 'desk' }));
  await client.call('rdp.close', { sessionId });
  expect((await client.call('sessions.list')).find((s) => s.id === sessionId)).toBeUndefined();
});

test('an IPv6 host, saved as [::1] or ::1, is dialled as the address; its certificate is asked about as [::1]:port and trusted for both', async () => {
  const bracketed = await client.call('connections.create', { name: 'desk6', kind: 'rdp', host: '[::1]', port: server.port, rdpOptions: { security: 'tls' } });
  const unknown = await failure(client.call('rdp.open', { connectionId: bracketed.id }));
  expect(unknown.code).toBe('ECERT_UNKNOWN');
  expect(unknown.message).toBe(`The certificate of [::1]:${server.port} is not trusted yet. Check its fingerprint, then trust it to connect.`);
  expect(unknown.details).toMatchObject({ host: '::1', port: server.port });
  await client.call('hostkeys.trust', { kind: 'rdp', host: '::1', port: server.port, keyType: 'x509', fingerprint: String(unknown.details?.fingerprint) });
  const bare = await client.call('connections.create', { name: 'desk6 bare', kind: 'rdp', host: '::1', port: server.port, rdpOptions: { security: 'tls' } });
  for (const connectionId of [bracketed.id, bare.id]) {
    const { sessionId } = await client.call('rdp.open', { connectionId });
    expect((await client.call('sessions.list')).find((s) => s.id === sessionId)).toMatchObject({ state: 'open' });
    await client.call('rdp.close', { sessionId });
  }
});

test('a certificate is the server\'s in any case of its name: trusted as a connection to "LocalHost" asked, it serves one to "localhost", and is forgotten by any case', async () => {
  const upper = await client.call('connections.create', { name: 'desk upper', kind: 'rdp', host: 'LocalHost', port: server.port, rdpOptions: { security: 'tls' } });
  const lower = await client.call('connections.create', { name: 'desk lower', kind: 'rdp', host: 'localhost', port: server.port, rdpOptions: { security: 'tls' } });
  const unknown = await failure(client.call('rdp.open', { connectionId: upper.id }));
  expect(unknown.code).toBe('ECERT_UNKNOWN');
  expect(unknown.details).toMatchObject({ host: 'LocalHost', port: server.port });
  // Trusted as the tab's card sends the question back: under the name as the connection has it.
  await client.call('hostkeys.trust', { kind: 'rdp', host: 'LocalHost', port: server.port, keyType: 'x509', fingerprint: String(unknown.details?.fingerprint) });
  const named = async () => (await client.call('hostkeys.list')).filter((e) => e.kind === 'rdp' && e.host.toLowerCase() === 'localhost').map((e) => `${e.host}:${e.port}`);
  expect(await named()).toEqual([`localhost:${server.port}`]);
  for (const connectionId of [upper.id, lower.id]) {
    const { sessionId } = await client.call('rdp.open', { connectionId });
    expect((await client.call('sessions.list')).find((s) => s.id === sessionId)).toMatchObject({ state: 'open' });
    await client.call('rdp.close', { sessionId });
  }
  expect(await client.call('hostkeys.forget', { kind: 'rdp', host: 'LOCALHOST', port: server.port })).toEqual({ ok: true, forgotten: 1 });
  expect(await named()).toEqual([]);
  expect((await failure(client.call('rdp.open', { connectionId: lower.id }))).code).toBe('ECERT_UNKNOWN');
});

test("a connection's picture quality decides whether H.264 is offered", async () => {
  const lossless = await client.call('connections.create', { name: 'exact', kind: 'rdp', host: server.host, port: server.port, rdpOptions: { security: 'tls', quality: 'lossless' } });
  const fast = await openTrusted();
  const exact = await openTrusted(lossless.id);
  const stats = (sessionId: string) => app.rdp.tab(sessionId).requireNative().getStats();
  expect(stats(fast).h264Offered).toBe(true);
  expect(stats(exact).h264Offered).toBe(false);
  await client.call('rdp.close', { sessionId: fast });
  await client.call('rdp.close', { sessionId: exact });
});

test('the screenshot shows the display, fits 1280x720, and a click lands where xdotool says', async () => {
  await server.x('xsetroot', ['-solid', '#2080e0']);
  const sessionId = await openTrusted();
  const near = (rgb: number[], want: number[]) => rgb.every((v, i) => Math.abs(v - (want[i] ?? 0)) < 12);
  const blue = [0x20, 0x80, 0xe0];
  // The server sends the new colour when it next polls the display: wait for it to show.
  let shot = await client.call('rdp.screenshot', { sessionId });
  let pixels: number[][] = [];
  await expect
    .poll(async () => {
      shot = await client.call('rdp.screenshot', { sessionId });
      const { data, info } = await sharp(Buffer.from(shot.data, 'base64')).raw().toBuffer({ resolveWithObject: true });
      expect([info.width, info.height]).toEqual([1280, 720]);
      const px = (x: number, y: number) => [...data.subarray((y * info.width + x) * info.channels, (y * info.width + x) * info.channels + 3)];
      pixels = [px(640, 360), px(10, 10), px(1270, 710)];
      return pixels.every((p) => near(p, blue));
    }, { timeout: 5000 })
    .toBe(true);
  expect(shot).toMatchObject({ mime: 'image/jpeg', width: 1280, height: 720, desktopWidth: 1600, desktopHeight: 900 });
  expect(shot.scale).toBeCloseTo(0.8, 5);
  // The XO picks (400, 300) on the screenshot; on the desktop that is (500, 375).
  const point = toDesktopPoint(shot, 400, 300);
  expect(point).toEqual({ x: 500, y: 375 });
  await client.call('rdp.mouse', { sessionId, action: 'move', x: point?.x ?? 0, y: point?.y ?? 0 });
  await expect.poll(() => server.mouseLocation(), { timeout: 5000 }).toEqual({ x: 500, y: 375 });
  await client.call('rdp.close', { sessionId });
});

test('frames arrive as bytes and keep coming when acknowledged', async () => {
  const sessionId = await openTrusted();
  const frames: EventPayload<'rdp.frame'>[] = [];
  const off = client.on('rdp.frame', (f) => {
    if (f.sessionId !== sessionId) return;
    frames.push(f);
    void client.call('rdp.ack', { sessionId });
  });
  for (const colour of ['#ff0000', '#00ff00', '#0000ff']) {
    await server.x('xsetroot', ['-solid', colour]);
    await new Promise((r) => setTimeout(r, 150));
  }
  await expect.poll(() => frames.length, { timeout: 5000 }).toBeGreaterThanOrEqual(2);
  const rect = frames.at(-1)?.rects[0];
  expect(rect?.data).toBeInstanceOf(Uint8Array);
  expect(rect?.data.length).toBe((rect?.width ?? 0) * (rect?.height ?? 0) * 4);
  off();
  const fb = await client.call('rdp.framebuffer', { sessionId });
  expect(fb.data.length).toBe(fb.width * fb.height * 4);
  await client.call('rdp.close', { sessionId });
});

test('bad input is refused with codes; a dead server leaves a clean disconnected state', async () => {
  const sessionId = await openTrusted();
  await expect(client.callRaw('rdp.mouse', { sessionId, action: 'click', x: -5, y: 1 })).rejects.toMatchObject({ code: 'EBADARGS' });
  await expect(client.call('rdp.keypress', { sessionId, keys: 'ctrl+nosuchkey' })).rejects.toMatchObject({ code: 'EBADARGS' });
  await expect(client.call('rdp.screenshot', { sessionId: 'nope' })).rejects.toMatchObject({ code: 'ENOTFOUND' });
  expect(await client.call('rdp.key', { sessionId, code: 'NotAKey', down: true })).toEqual({ mapped: false });

  const closed = new Promise<EventPayload<'rdp.closed'>>((resolve) => client.on('rdp.closed', (e) => e.sessionId === sessionId && resolve(e)));
  await server.killServer('SIGKILL');
  const info = await closed;
  expect(info.message.length).toBeGreaterThan(0);
  const listed = (await client.call('sessions.list')).find((s) => s.id === sessionId);
  expect(listed).toMatchObject({ state: 'disconnected' });
  await expect(client.call('rdp.screenshot', { sessionId })).rejects.toMatchObject({ code: 'ESESSIONCLOSED' });
  await server.restartServer();
  await client.call('rdp.reconnect', { sessionId });
  expect((await client.call('sessions.list')).find((s) => s.id === sessionId)).toMatchObject({ state: 'open' });
  await client.call('sessions.close', { sessionId });
});

test('reconnect takes the connection as saved now: an edit is used, and a deleted one is refused with the session left as it was', async () => {
  const { id } = await client.call('connections.create', { name: 'desk to edit', kind: 'rdp', host: server.host, port: server.port, rdpOptions: { security: 'tls' } });
  const sessionId = await openTrusted(id);
  const info = async () => (await client.call('sessions.list')).find((s) => s.id === sessionId);

  // Moved to a port where nothing listens: the reconnect dials it (and fails), as ssh.reconnect would.
  await client.call('connections.update', { id, patch: { name: 'desk edited', port: await freePort() } });
  await expect(client.call('rdp.reconnect', { sessionId })).rejects.toBeInstanceOf(WraithError);
  expect(await info()).toMatchObject({ state: 'disconnected' });
  await client.call('connections.update', { id, patch: { port: server.port } });
  await client.call('rdp.reconnect', { sessionId });
  expect(await info()).toMatchObject({ state: 'open', title: 'desk edited' });

  // Edited into another kind of connection: refused as rdp.open refuses it, the session untouched.
  await client.call('connections.update', { id, patch: { kind: 'ssh', username: 'someone', authMethod: 'agent' } });
  await expect(client.call('rdp.reconnect', { sessionId })).rejects.toMatchObject({ code: 'EBADARGS', message: expect.stringContaining('desk edited is an SSH connection now, not RDP') });
  expect(await info()).toMatchObject({ state: 'open' });

  await client.call('connections.delete', { id });
  const refused = await client.call('rdp.reconnect', { sessionId }).catch((e: unknown) => e);
  expect(refused).toMatchObject({ code: 'ENOTFOUND', details: { connectionId: id, sessionId } });
  expect((refused as WraithError).message).toBe('The saved connection desk edited was deleted, so this session cannot reconnect. Save the connection again, or open another.');
  expect(await info()).toMatchObject({ state: 'open' });
  expect((await client.call('rdp.screenshot', { sessionId, maxWidth: 320, maxHeight: 200 })).width).toBeGreaterThan(0);
  await client.call('sessions.close', { sessionId });
});

test('through an SSH jump host: the tunnel carries RDP, the certificate is checked for the real target', async () => {
  const sshd = await startSshd();
  try {
    await client.call('vault.init', { protection: 'keyfile' }).catch(() => undefined);
    const jump = await client.call('connections.create', {
      name: 'bastion', kind: 'ssh', host: sshd.host, port: sshd.port, username: sshd.users.password.username,
      secrets: { password: sshd.users.password.password },
    });
    await client.call('hostkeys.trust', { kind: 'ssh', host: sshd.host, port: sshd.port, keyType: sshd.hostKeyType, fingerprint: sshd.hostKeyFingerprint });
    const rdp = await client.call('connections.create', { name: 'behind', kind: 'rdp', host: '127.0.0.1', port: server.port, jumpHostId: jump.id, rdpOptions: { security: 'tls' } });
    const sessionId = await openTrusted(rdp.id);
    const shot = await client.call('rdp.screenshot', { sessionId, maxWidth: 320, maxHeight: 200 });
    expect(shot.width).toBeLessThanOrEqual(320);
    // The forwarded connection shows in sshd's log as a direct-tcpip channel to the RDP port.
    expect(sshd.readLog()).toMatch(new RegExp(`direct_tcpip.*target 127\\.0\\.0\\.1 port ${server.port}`));
    await client.call('sessions.close', { sessionId });

    // Saved as [::1] behind the jump host: its certificate is asked about, and trusted, under the
    // address, as when it is reached directly, and the server is asked for the address.
    await client.call('hostkeys.forget', { kind: 'rdp', host: '::1', port: server.port });
    const v6 = await client.call('connections.create', { name: 'behind6', kind: 'rdp', host: '[::1]', port: server.port, jumpHostId: jump.id, rdpOptions: { security: 'tls' } });
    const unknown = await failure(client.call('rdp.open', { connectionId: v6.id }));
    expect(unknown.code).toBe('ECERT_UNKNOWN');
    expect(unknown.details).toMatchObject({ host: '::1', port: server.port });
    await client.call('hostkeys.trust', { kind: 'rdp', host: '::1', port: server.port, keyType: 'x509', fingerprint: String(unknown.details?.fingerprint) });
    const v6Session = (await client.call('rdp.open', { connectionId: v6.id })).sessionId;
    expect(sshd.readLog()).toMatch(new RegExp(`direct_tcpip.*target ::1 port ${server.port}`));
    await client.call('sessions.close', { sessionId: v6Session });
  } finally {
    await sshd.stop();
  }
});

test("through a jump host whose key is not trusted: the jump host's question names the hop, as an SSH open's does; changed and revoked keys are refused the same way", async () => {
  const sshd = await startSshd();
  try {
    await client.call('vault.init', { protection: 'keyfile' }).catch(() => undefined);
    const jump = await client.call('connections.create', {
      name: 'gate', kind: 'ssh', host: sshd.host, port: sshd.port, username: sshd.users.password.username,
      // Agent forwarding is the target's: a jump host on the way to a desktop forwards none (no agent runs here).
      sshOptions: { agentForward: true },
      secrets: { password: sshd.users.password.password },
    });
    const rdp = await client.call('connections.create', { name: 'desk behind gate', kind: 'rdp', host: '127.0.0.1', port: server.port, jumpHostId: jump.id, rdpOptions: { security: 'tls' } });
    const hop = `${hostAndPort(sshd.host, sshd.port)} (jump host gate, on the way to desk behind gate)`;
    const hopDetails = { host: sshd.host, port: sshd.port, keyType: sshd.hostKeyType, fingerprint: sshd.hostKeyFingerprint, connectionId: jump.id, connectionName: 'gate', jumpHostFor: 'desk behind gate' };

    const unknown = await failure(client.call('rdp.open', { connectionId: rdp.id }));
    expect(unknown.code).toBe('EHOSTKEY_UNKNOWN');
    expect(unknown.details).toEqual(hopDetails);
    expect(unknown.message).toBe(`The host key of ${hop} is not known yet. Check its fingerprint ${sshd.hostKeyFingerprint} (${sshd.hostKeyType}) and trust it to connect.`);

    const wrong = `SHA256:${'A'.repeat(43)}`;
    await client.call('hostkeys.trust', { kind: 'ssh', host: sshd.host, port: sshd.port, keyType: sshd.hostKeyType, fingerprint: wrong });
    const changed = await failure(client.call('rdp.open', { connectionId: rdp.id }));
    expect(changed.code).toBe('EHOSTKEY_CHANGED');
    expect(changed.details).toEqual({ ...hopDetails, knownFingerprint: wrong, knownKeyType: sshd.hostKeyType });
    expect(changed.message).toContain(`Host key for ${hop} changed`);
    await client.call('hostkeys.forget', { kind: 'ssh', host: sshd.host, port: sshd.port });

    const revocations = join(mkdtempSync(join(tmpdir(), 'wraith-rdp-kh-')), 'known_hosts');
    writeFileSync(revocations, `@revoked * ${readFileSync(join(sshd.dir, 'host_ed25519.pub'), 'utf8').split(' ').slice(0, 2).join(' ')}\n`);
    await client.call('hostkeys.importKnownHosts', { path: revocations });
    const revoked = await failure(client.call('rdp.open', { connectionId: rdp.id }));
    expect(revoked.code).toBe('EHOSTKEY_REVOKED');
    expect(revoked.details).toMatchObject({ ...hopDetails, source: revocations });
    expect(revoked.message).toContain(`${hop} offered the host key ${sshd.hostKeyType} ${sshd.hostKeyFingerprint}, which ${revocations} marks @revoked`);
    await client.call('hostkeys.liftRevocation', { fingerprint: sshd.hostKeyFingerprint });

    // Trusted as the question's details say (as the tab's card sends them back): the desktop opens.
    await client.call('hostkeys.trust', { kind: 'ssh', ...(unknown.details as typeof hopDetails) });
    const sessionId = await openTrusted(rdp.id);
    expect((await client.call('rdp.screenshot', { sessionId, maxWidth: 320, maxHeight: 200 })).width).toBeGreaterThan(0);
    await client.call('sessions.close', { sessionId });
  } finally {
    await sshd.stop();
  }
});

test("a jump host's keyboard-interactive login during an RDP open is asked as an SSH open's is (ssh.prompt), and the desktop opens once answered", async () => {
  const sshd = await startSshd();
  client.subscribe(['rdp.', 'session.', 'ssh.prompt']);
  const asked: string[] = [];
  const off = client.on('ssh.prompt', (p) => {
    asked.push(p.connectionId);
    void client.call('ssh.answer', { promptId: p.promptId, answers: [sshd.users.password.password] });
  });
  try {
    const jump = await askingConnection(client, sshd, 'ki gate');
    await client.call('hostkeys.trust', { kind: 'ssh', host: sshd.host, port: sshd.port, keyType: sshd.hostKeyType, fingerprint: sshd.hostKeyFingerprint });
    const rdp = await client.call('connections.create', { name: 'desk behind ki gate', kind: 'rdp', host: '127.0.0.1', port: server.port, jumpHostId: jump.id, rdpOptions: { security: 'tls' } });
    const sessionId = await openTrusted(rdp.id);
    // Once per rdp.open (the first may stop at the desktop's certificate question), each for the jump host.
    expect(asked.length).toBeGreaterThan(0);
    expect(new Set(asked)).toEqual(new Set([jump.id]));
    await client.call('sessions.close', { sessionId });
  } finally {
    off();
    client.subscribe(['rdp.', 'session.']);
    await sshd.stop();
  }
});

/** The desktop's certificate trusted, as a tab's card would trust it (the tests below are about the jump host). */
async function trustDesk(): Promise<void> {
  await client.call('sessions.close', { sessionId: await openTrusted() });
}

/** A jump host on the test sshd whose login the person answers (keyboard-interactive), and a desktop behind it. */
async function askingGate(sshd: SshdHandle, name: string): Promise<{ jumpId: string; rdpId: string }> {
  await client.call('vault.init', { protection: 'keyfile' }).catch(() => undefined);
  await client.call('hostkeys.trust', { kind: 'ssh', host: sshd.host, port: sshd.port, keyType: sshd.hostKeyType, fingerprint: sshd.hostKeyFingerprint });
  const jump = await askingConnection(client, sshd, name);
  const rdp = await client.call('connections.create', { name: `desk behind ${name}`, kind: 'rdp', host: '127.0.0.1', port: server.port, jumpHostId: jump.id, rdpOptions: { security: 'tls' } });
  return { jumpId: jump.id, rdpId: rdp.id };
}

/**
 * Runs `body` with a jump host of its own (stopped after), whose login prompts this client hears,
 * and the ids of the prompts withdrawn meanwhile; the desk's certificate trusted.
 */
async function withAskingJumpHost(body: (sshd: SshdHandle, withdrawn: string[]) => Promise<void>): Promise<void> {
  const sshd = await startSshd();
  client.subscribe(['rdp.', 'session.', 'ssh.prompt']);
  const withdrawn: string[] = [];
  const offClosed = client.on('ssh.prompt_closed', (p) => withdrawn.push(p.promptId));
  try {
    await trustDesk();
    await body(sshd, withdrawn);
  } finally {
    offClosed();
    client.subscribe(['rdp.', 'session.']);
    await sshd.stop();
  }
}

/** The id of the next ssh.prompt for `connectionId`. */
function nextPrompt(connectionId: string): Promise<string> {
  return new Promise((resolve) => {
    const off = client.on('ssh.prompt', (p) => {
      if (p.connectionId !== connectionId) return;
      off();
      resolve(p.promptId);
    });
  });
}

test("a jump host with no saved password fails the RDP open as an SSH open's does (EAUTH credential-required); `credentials` gives it for one connect, saved only with save: true once accepted", async () => {
  const sshd = await startSshd();
  try {
    await trustDesk();
    await client.call('vault.init', { protection: 'keyfile' }).catch(() => undefined);
    await client.call('hostkeys.trust', { kind: 'ssh', host: sshd.host, port: sshd.port, keyType: sshd.hostKeyType, fingerprint: sshd.hostKeyFingerprint });
    const jump = await client.call('connections.create', { name: 'pw gate', kind: 'ssh', host: sshd.host, port: sshd.port, username: sshd.users.password.username, authMethod: 'password' });
    const rdp = await client.call('connections.create', { name: 'desk behind pw gate', kind: 'rdp', host: '127.0.0.1', port: server.port, jumpHostId: jump.id, rdpOptions: { security: 'tls' } });
    const need = { credential: 'password', connectionId: jump.id, connectionName: 'pw gate', username: sshd.users.password.username, host: sshd.host, port: sshd.port };
    const typed = { connectionId: jump.id, secret: sshd.users.password.password };

    const missing = await failure(client.call('rdp.open', { connectionId: rdp.id }));
    expect(missing.code).toBe('EAUTH');
    expect(missing.details).toEqual({ reason: 'credential-required', ...need });
    expect(missing.message).toBe('No password is saved for pw gate: enter it to connect.');

    const wrong = await failure(client.call('rdp.open', { connectionId: rdp.id, credentials: [{ ...typed, secret: 'not-the-password' }] }));
    expect(wrong.code).toBe('EAUTH');
    expect(wrong.details).toEqual({ reason: 'credential-rejected', ...need });

    const misdirected = await failure(client.call('rdp.open', { connectionId: rdp.id, credentials: [{ ...typed, connectionId: rdp.id }] }));
    expect(misdirected.code).toBe('EBADARGS');
    expect(misdirected.message).toBe('The password given is for a connection that is not on the way to desk behind pw gate.');
    // A desktop reached directly has no hop to give one for.
    const direct = await failure(client.call('rdp.open', { connectionId, credentials: [typed] }));
    expect(direct.code).toBe('EBADARGS');

    // For this connect only: the desktop opens, and the next open asks again.
    const once = (await client.call('rdp.open', { connectionId: rdp.id, credentials: [typed] })).sessionId;
    expect((await client.call('sessions.list')).find((s) => s.id === once)?.state).toBe('open');
    // A resize re-makes the desktop through the tunnel that is still up: nothing to ask again.
    // (The shadow server keeps its own screen's size whatever is asked.)
    expect(await client.call('rdp.resize', { sessionId: once, width: 1024, height: 640 })).toEqual({ width: expect.any(Number), height: expect.any(Number) });
    expect((await client.call('sessions.list')).find((s) => s.id === once)?.state).toBe('open');
    // Its Reconnect asks too, the session waiting, disconnected; given the password it connects again.
    const again = await failure(client.call('rdp.reconnect', { sessionId: once }));
    expect(again.details).toEqual({ reason: 'credential-required', ...need });
    expect((await client.call('sessions.list')).find((s) => s.id === once)?.state).toBe('disconnected');
    await client.call('rdp.reconnect', { sessionId: once, credentials: [typed] });
    expect((await client.call('sessions.list')).find((s) => s.id === once)?.state).toBe('open');
    await client.call('sessions.close', { sessionId: once });
    expect((await failure(client.call('rdp.open', { connectionId: rdp.id }))).details).toMatchObject({ reason: 'credential-required' });

    // Saved once the jump host accepted it: later opens need none.
    const saving = (await client.call('rdp.open', { connectionId: rdp.id, credentials: [{ ...typed, save: true }] })).sessionId;
    await client.call('sessions.close', { sessionId: saving });
    const later = (await client.call('rdp.open', { connectionId: rdp.id })).sessionId;
    await client.call('sessions.close', { sessionId: later });
  } finally {
    await sshd.stop();
  }
});

test("an RDP open given up at its jump host's login prompt ends ECANCELLED: the prompt is withdrawn, and no session nor jump host connection is left", async () => {
  await withAskingJumpHost(async (sshd, withdrawn) => {
    const { jumpId, rdpId } = await askingGate(sshd, 'asking gate');
    const before = sshd.heldConnections();
    const prompted = nextPrompt(jumpId);
    const giveUp = new AbortController();
    const opening = failure(client.call('rdp.open', { connectionId: rdpId }, { signal: giveUp.signal }));
    const promptId = await prompted;
    expect(sshd.heldConnections()).toBe(before + 1);
    giveUp.abort();
    // The prompt would wait two minutes for its answer: it is withdrawn now.
    await until('the prompt withdrawn', () => withdrawn.includes(promptId), 10_000);
    const e = await opening;
    expect(e.code).toBe('ECANCELLED');
    expect(e.message).toBe('Connecting to desk behind asking gate was cancelled.');
    expect((await failure(client.call('ssh.answer', { promptId, answers: [sshd.users.password.password] }))).code).toBe('ENOTFOUND');
    await until('the login connection closed on the jump host', () => sshd.heldConnections() === before, 10_000);
    expect((await client.call('sessions.list')).some((s) => s.connectionId === rdpId)).toBe(false);
  });
});

test('an RDP reconnect given up at the jump host\'s login prompt leaves the session disconnected; one closed meanwhile is closed, its prompt withdrawn', async () => {
  await withAskingJumpHost(async (sshd, withdrawn) => {
    const { jumpId, rdpId } = await askingGate(sshd, 'reasking gate');
    const answered = nextPrompt(jumpId).then((promptId) => client.call('ssh.answer', { promptId, answers: [sshd.users.password.password] }));
    const sessionId = (await client.call('rdp.open', { connectionId: rdpId })).sessionId;
    await answered;
    const state = async () => (await client.call('sessions.list')).find((s) => s.id === sessionId)?.state;

    let prompted = nextPrompt(jumpId);
    const giveUp = new AbortController();
    const reconnecting = failure(client.call('rdp.reconnect', { sessionId }, { signal: giveUp.signal }));
    let promptId = await prompted;
    giveUp.abort();
    await until('the prompt withdrawn', () => withdrawn.includes(promptId), 10_000);
    expect((await reconnecting).code).toBe('ECANCELLED');
    expect(await state()).toBe('disconnected');

    // Closed (its tab closed) while it reconnects: the connect is given up with it.
    const before = sshd.heldConnections();
    prompted = nextPrompt(jumpId);
    const closedWhile = failure(client.call('rdp.reconnect', { sessionId }));
    promptId = await prompted;
    await client.call('sessions.close', { sessionId });
    await until('the prompt withdrawn', () => withdrawn.includes(promptId), 10_000);
    const e = await closedWhile;
    expect(e.code).toBe('ECANCELLED');
    expect(e.message).toBe('desk behind reasking gate was closed while connecting.');
    expect(await state()).toBeUndefined();
    await until('the login connection closed on the jump host', () => sshd.heldConnections() === before, 10_000);
  });
});

test('an RDP open given up while FreeRDP connects ends ECANCELLED: no session, and its connection (and tunnel) closed', async () => {
  const sshd = await startSshd();
  // A far desktop: its handshake takes many round trips of two seconds each.
  const far = await startDelayProxy(server.port, 1000);
  try {
    await client.call('vault.init', { protection: 'keyfile' }).catch(() => undefined);
    await client.call('hostkeys.trust', { kind: 'ssh', host: sshd.host, port: sshd.port, keyType: sshd.hostKeyType, fingerprint: sshd.hostKeyFingerprint });
    const jump = await client.call('connections.create', {
      name: 'far gate', kind: 'ssh', host: sshd.host, port: sshd.port, username: sshd.users.password.username, secrets: { password: sshd.users.password.password },
    });
    const direct = await client.call('connections.create', { name: 'far desk', kind: 'rdp', host: '127.0.0.1', port: far.port, rdpOptions: { security: 'tls' } });
    const behind = await client.call('connections.create', { name: 'far desk behind gate', kind: 'rdp', host: '127.0.0.1', port: far.port, jumpHostId: jump.id, rdpOptions: { security: 'tls' } });
    const jumpBefore = sshd.heldConnections();
    for (const id of [direct.id, behind.id]) {
      const giveUp = new AbortController();
      const opening = failure(client.call('rdp.open', { connectionId: id }, { signal: giveUp.signal }));
      await until('FreeRDP connected to the far desktop', () => far.openConnections() === 1, 20_000);
      giveUp.abort();
      const e = await opening;
      expect(e.code).toBe('ECANCELLED');
      expect(e.message).toMatch(/^Connecting to far desk( behind gate)? was cancelled\.$/);
      await until('the connection to the desktop closed', () => far.openConnections() === 0, 10_000);
      await until('the jump host connection closed', () => sshd.heldConnections() === jumpBefore, 10_000);
      expect((await client.call('sessions.list')).some((s) => s.connectionId === id)).toBe(false);
    }
  } finally {
    await far.close();
    await sshd.stop();
  }
});
