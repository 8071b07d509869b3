/**
 * A transfer cancelled while its server does not answer (every sshd process of the connection
 * SIGSTOPped): its cleanup cannot remove the partial copy, and what the transfer says of its end
 * is true: the copy stays, named (leftBehind), until the next connection to that server removes it.
 * Streamed from the page (sftp.uploadBegin) or read by the host itself (sftp.upload).
 */
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { ContractClient } from '../../src-main/common/client.js';
import { App } from '../../src-main/node/app.js';
import { connectInProcess } from '../../src-main/node/in-process.js';
import { until } from '../fixtures/poll.js';
import { type SshdHandle, startSshd } from '../fixtures/sshd.js';

const MB = 1024 * 1024;
let sshd: SshdHandle;
let dataDir: string;
let app: App;
let c: ContractClient;
let remoteDir: string;
let localDir: string;
let connectionId: string;

/** Our temps in the remote folder (the sshd is local: read on disk, which a frozen server does not stop). */
function temps(): string[] {
  return readdirSync(remoteDir).filter((n) => n.includes('.wraith-part-'));
}

/**
 * Freezes the server once `transferId` has moved bytes, cancels it, and hands over how it ended;
 * then lets the server's connection go (dropped) and waits until the session says so.
 */
async function cancelFrozen(sessionId: string, transferId: string) {
  await until('bytes moved', async () => ((await c.call('sftp.transfers', { sessionId })).find((t) => t.transferId === transferId)?.bytes ?? 0) > 0);
  const thaw = sshd.freezeConnections();
  try {
    // The cancel answers once the cleanup is over: here, once the dead connection took the temp's removal with it.
    await c.call('sftp.cancel', { transferId });
    return (await c.call('sftp.transfers', { sessionId })).find((t) => t.transferId === transferId);
  } finally {
    sshd.dropConnections();
    thaw();
    await until('disconnected', async () => (await c.call('sessions.list')).find((s) => s.id === sessionId && s.state === 'disconnected'));
  }
}

beforeAll(async () => {
  sshd = await startSshd();
  dataDir = mkdtempSync(join(tmpdir(), 'wraith-sftp-frozen-'));
  localDir = mkdtempSync(join(tmpdir(), 'wraith-sftp-frozen-local-'));
  app = new App({ dataDir, host: 'in-process' });
  c = connectInProcess(app);
  c.subscribe(['session.']);
  await c.call('vault.init', { protection: 'keyfile' });
  await c.call('hostkeys.trust', { kind: 'ssh', host: sshd.host, port: sshd.port, keyType: sshd.hostKeyType, fingerprint: sshd.hostKeyFingerprint });
  const conn = await c.call('connections.create', {
    name: 'frozen',
    kind: 'ssh',
    host: sshd.host,
    port: sshd.port,
    username: sshd.users.password.username,
    authMethod: 'password',
    // A server that stops answering is given up on within a second, not after the default minute.
    sshOptions: { keepaliveIntervalMs: 200 },
    secrets: { password: sshd.users.password.password },
  });
  connectionId = conn.id;
  const { sessionId } = await c.call('ssh.open', { connectionId });
  remoteDir = `${(await c.call('sftp.realpath', { sessionId, path: '.' })).path}/frozen-${randomBytes(4).toString('hex')}`;
  await c.call('sftp.mkdir', { sessionId, path: remoteDir, parents: false });
  await c.call('sessions.close', { sessionId });
});

afterAll(async () => {
  if (remoteDir) rmSync(remoteDir, { recursive: true, force: true });
  c?.close();
  await app?.dispose();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  if (localDir) rmSync(localDir, { recursive: true, force: true });
  await sshd?.stop();
});

test('cancelling an upload streamed from the page while the server does not answer names its partial copy, which the next connection removes', async () => {
  const { sessionId } = await c.call('ssh.open', { connectionId });
  const dest = `${remoteDir}/frozen.bin`;
  const { transferId } = await c.call('sftp.uploadBegin', { sessionId, remotePath: dest, size: 4 * MB });
  await c.call('sftp.uploadChunk', { transferId, offset: 0, data: new Uint8Array(MB) });
  const [temp] = temps();
  expect(temp).toMatch(/^\.frozen\.bin\.wraith-part-/);

  const ended = await cancelFrozen(sessionId, transferId);
  expect(ended).toMatchObject({ state: 'cancelled', leftBehind: [`${remoteDir}/${temp}`] });
  expect(temps()).toEqual([temp]);

  // The next connection to the server removes it, as the words promise.
  await c.call('ssh.reconnect', { sessionId });
  await until('the partial copy removed', () => temps().length === 0);
  expect(readdirSync(remoteDir)).toEqual([]);
  await c.call('sessions.close', { sessionId });
});

test('cancelling an upload the host reads itself (sftp.upload) while the server does not answer names its partial copy too', async () => {
  const { sessionId } = await c.call('ssh.open', { connectionId });
  const local = join(localDir, 'host-read.bin');
  execFileSync('truncate', ['-s', '2G', local]);
  const { transferId } = await c.call('sftp.upload', { sessionId, localPath: local, remotePath: `${remoteDir}/host-read.bin` });

  const ended = await cancelFrozen(sessionId, transferId);
  const [temp] = temps();
  expect(temp).toMatch(/^\.host-read\.bin\.wraith-part-/);
  expect(ended).toMatchObject({ state: 'cancelled', leftBehind: [`${remoteDir}/${temp}`] });

  await c.call('ssh.reconnect', { sessionId });
  await until('the partial copy removed', () => temps().length === 0);
  await c.call('sessions.close', { sessionId });
});

test('a cancel the server answers removes the partial copy and lists nothing left behind', async () => {
  const { sessionId } = await c.call('ssh.open', { connectionId });
  const { transferId } = await c.call('sftp.uploadBegin', { sessionId, remotePath: `${remoteDir}/answered.bin`, size: 4 * MB });
  await c.call('sftp.uploadChunk', { transferId, offset: 0, data: new Uint8Array(MB) });
  await c.call('sftp.cancel', { transferId });
  const ended = (await c.call('sftp.transfers', { sessionId })).find((t) => t.transferId === transferId);
  expect(ended?.state).toBe('cancelled');
  expect(ended).not.toHaveProperty('leftBehind');
  expect(temps()).toEqual([]);
  await c.call('sessions.close', { sessionId });
});
