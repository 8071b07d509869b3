/**
 * rdp.resize re-makes the desktop through the jump host's tunnel still up. When it fails, the
 * session is disconnected (the tab says "Disconnected — Reconnect"), and the tunnel goes with it:
 * a Reconnect opens a tunnel of its own, so one kept would hold an SSH login on the jump host that
 * nothing uses. Against a real FreeRDP shadow server and a real sshd as the jump host; the
 * FreeRDP addon is the real one, only made to refuse a session when a test asks (as it does where
 * it is missing), since nothing a resize is given can make it refuse one.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import type { ContractClient } from '../../src-main/common/client.js';
import { App } from '../../src-main/node/app.js';
import { connectInProcess } from '../../src-main/node/in-process.js';
import type * as Native from '../../src-main/node/rdp/native.js';
import { failure } from '../fixtures/errors.js';
import { until } from '../fixtures/poll.js';
import { type RdpTestServer, startRdpServer } from '../fixtures/rdp-server.js';
import { type SshdHandle, startSshd } from '../fixtures/sshd.js';

/**
 * `refuseNext`: set to make the next desktop session refuse to be made, as the addon's loader does
 * where it is missing. `asked`: the size the last one was asked for (the server may pick another).
 */
const addon = vi.hoisted(() => ({ refuseNext: false, asked: null as { width: number | undefined; height: number | undefined } | null }));
vi.mock('../../src-main/node/rdp/native.js', async (importOriginal) => {
  const real = await importOriginal<typeof Native>();
  class RefusableRdpSession extends real.RdpSession {
    constructor(options: Native.RdpConnectOptions) {
      addon.asked = { width: options.width, height: options.height };
      if (addon.refuseNext) {
        addon.refuseNext = false;
        throw new real.RdpError('EUNAVAILABLE', 'RDP is unavailable: the FreeRDP addon was not built.');
      }
      super(options);
    }
  }
  return { ...real, RdpSession: RefusableRdpSession };
});

let server: RdpTestServer;
let sshd: SshdHandle;
let app: App;
let client: ContractClient;
let rdpId: string;

beforeAll(async () => {
  [server, sshd] = await Promise.all([startRdpServer({ width: 1024, height: 768 }), startSshd()]);
  app = new App({ dataDir: mkdtempSync(join(tmpdir(), 'wraith-rdp-resize-')), host: 'in-process' });
  client = connectInProcess(app);
  client.subscribe(['rdp.', 'session.']);
  await client.call('vault.init', { protection: 'keyfile' });
  await client.call('hostkeys.trust', { kind: 'ssh', host: sshd.host, port: sshd.port, keyType: sshd.hostKeyType, fingerprint: sshd.hostKeyFingerprint });
  const jump = await client.call('connections.create', {
    name: 'gate', kind: 'ssh', host: sshd.host, port: sshd.port, username: sshd.users.password.username, secrets: { password: sshd.users.password.password },
  });
  rdpId = (await client.call('connections.create', { name: 'desk behind gate', kind: 'rdp', host: '127.0.0.1', port: server.port, jumpHostId: jump.id, rdpOptions: { security: 'tls' } })).id;
  await trustDesk();
});

afterAll(async () => {
  await app?.dispose();
  await Promise.all([server?.dispose(), sshd?.stop()]);
});

/** The desktop's certificate trusted, as the tab's card trusts it. */
async function trustDesk(): Promise<void> {
  const unknown = await failure(client.call('rdp.open', { connectionId: rdpId }));
  expect(unknown.code).toBe('ECERT_UNKNOWN');
  await client.call('hostkeys.trust', { kind: 'rdp', host: '127.0.0.1', port: server.port, keyType: 'x509', fingerprint: String(unknown.details?.fingerprint) });
}

const state = async (sessionId: string) => (await client.call('sessions.list')).find((s) => s.id === sessionId)?.state;

/** Every login on the jump host over (this file's alone): sshd's process for one ends a moment after its client left. */
const gateIdle = (what: string) => until(what, () => sshd.heldConnections() === 0, 10_000);

/** A desktop open through the jump host: one login there, which a resize that works keeps using. */
async function openThroughGate(): Promise<string> {
  await gateIdle('no login left on the jump host');
  const { sessionId } = await client.call('rdp.open', { connectionId: rdpId });
  expect(sshd.heldConnections()).toBe(1);
  await client.call('rdp.resize', { sessionId, width: 800, height: 600 });
  expect(await state(sessionId)).toBe('open');
  expect(sshd.heldConnections()).toBe(1);
  return sessionId;
}

test('a resize whose desktop session cannot be made leaves the session disconnected and closes the jump host tunnel it kept; Reconnect opens a new one', async () => {
  const sessionId = await openThroughGate();

  addon.refuseNext = true;
  const refused = await failure(client.call('rdp.resize', { sessionId, width: 1024, height: 640 }));
  expect(refused.code).toBe('EUNAVAILABLE');
  expect(await state(sessionId)).toBe('disconnected');
  await gateIdle('the jump host login closed');

  await client.call('rdp.reconnect', { sessionId });
  expect(await state(sessionId)).toBe('open');
  expect(sshd.heldConnections()).toBe(1);
  await client.call('sessions.close', { sessionId });
  await gateIdle('the jump host login closed with the session');
});

test('a resize whose FreeRDP connect fails (the certificate no longer trusted) leaves the session disconnected and no tunnel open', async () => {
  const sessionId = await openThroughGate();

  await client.call('hostkeys.forget', { kind: 'rdp', host: '127.0.0.1', port: server.port });
  const unknown = await failure(client.call('rdp.resize', { sessionId, width: 1024, height: 640 }));
  expect(unknown.code).toBe('ECERT_UNKNOWN');
  expect(await state(sessionId)).toBe('disconnected');
  await gateIdle('the jump host login closed');

  await client.call('hostkeys.trust', { kind: 'rdp', host: '127.0.0.1', port: server.port, keyType: 'x509', fingerprint: String(unknown.details?.fingerprint) });
  await client.call('rdp.reconnect', { sessionId });
  expect(await state(sessionId)).toBe('open');
  await client.call('sessions.close', { sessionId });
  await gateIdle('the jump host login closed with the session');
});

test('an open whose desktop session cannot be made closes the tunnel just opened for it, and registers no session', async () => {
  await gateIdle('no login left on the jump host');
  const sessions = async () => (await client.call('sessions.list')).map((s) => s.id);
  const listed = await sessions();
  addon.refuseNext = true;
  expect((await failure(client.call('rdp.open', { connectionId: rdpId }))).code).toBe('EUNAVAILABLE');
  await gateIdle('the jump host login closed');
  expect(await sessions()).toEqual(listed);
});

test('a resize of a disconnected session connects nothing, even with the connection edited since: it keeps the size for Reconnect, which connects as saved now', async () => {
  const sessionId = await openThroughGate();
  addon.refuseNext = true;
  expect((await failure(client.call('rdp.resize', { sessionId, width: 1024, height: 640 }))).code).toBe('EUNAVAILABLE');
  await gateIdle('the jump host login closed');
  // Edited since it last connected, which a resize would have connected with.
  await client.call('connections.update', { id: rdpId, patch: { name: 'desk renamed' } });
  try {
    const refused = await failure(client.call('rdp.resize', { sessionId, width: 900, height: 700 }));
    expect(refused.code).toBe('ESESSIONCLOSED');
    expect(refused.message).toBe('The RDP session to desk behind gate is disconnected, and a resize does not connect it. Reconnect it: it then asks for 900x700.');
    expect(await state(sessionId)).toBe('disconnected');
    expect(sshd.heldConnections()).toBe(0);

    await client.call('rdp.reconnect', { sessionId });
    expect(addon.asked).toEqual({ width: 900, height: 700 });
    expect((await client.call('sessions.list')).find((s) => s.id === sessionId)).toMatchObject({ state: 'open', title: 'desk renamed' });
    await client.call('sessions.close', { sessionId });
    await gateIdle('the jump host login closed with the session');
  } finally {
    await client.call('connections.update', { id: rdpId, patch: { name: 'desk behind gate' } });
  }
});
