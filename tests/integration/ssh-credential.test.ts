/**
 * A connection saved without its password (or an encrypted key without its passphrase) against the
 * real sshd: ssh.open fails with a CredentialNeed the UI recognises — after the host key check —
 * and ssh.open's one-time `credential` connects; it is stored only when asked, and only once the
 * server (or the key) accepted it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ContractClient } from '../../src-main/common/client.js';
import { CredentialNeed, type Input } from '../../src-main/common/contract/index.js';
import { App } from '../../src-main/node/app.js';
import { connectInProcess } from '../../src-main/node/in-process.js';
import { startDelayProxy } from '../fixtures/delay-proxy.js';
import { type SshdHandle, logThroughConnectionEnd, startSshd } from '../fixtures/sshd.js';
import { failure } from '../fixtures/errors.js';

let sshd: SshdHandle;
let app: App;
let client: ContractClient;
let dataDir: string;

beforeAll(async () => {
  sshd = await startSshd();
  dataDir = mkdtempSync(join(tmpdir(), 'wraith-ssh-credential-'));
  app = new App({ dataDir, host: 'in-process' });
  client = connectInProcess(app);
  await client.call('vault.init', { protection: 'keyfile' });
});

afterAll(async () => {
  client?.close();
  await app?.dispose();
  await sshd?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

async function connection(fields: Partial<Input<'connections.create'>>): Promise<string> {
  const c = await client.call('connections.create', { name: 'nopw', kind: 'ssh', host: sshd.host, port: sshd.port, username: sshd.users.password.username, authMethod: 'password', ...fields });
  return c.id;
}

const encryptedKey = (): Partial<Input<'connections.create'>> => ({ name: 'enc', authMethod: 'key', username: sshd.users.key.username, keyPath: sshd.users.key.encryptedKeyPath });

/** Runs `whoami` on a fresh session opened with `credential`, and closes it. */
async function whoamiWith(connectionId: string, credential?: Input<'ssh.open'>['credential']): Promise<string> {
  const { sessionId } = await client.call('ssh.open', { connectionId, ...(credential ? { credential } : {}) });
  const r = await client.call('ssh.exec', { sessionId, command: 'whoami' });
  await client.call('sessions.close', { sessionId });
  return r.stdout.trim();
}

/** The CredentialNeed of a failed open (fails the test if the error is not one). */
async function need(p: Promise<unknown>): Promise<{ need: CredentialNeed; message: string }> {
  const err = await failure(p);
  expect(err.code).toBe('EAUTH');
  return { need: CredentialNeed.parse(err.details), message: err.message };
}

describe('a secret that is not saved', () => {
  test('is asked for only after the host key: an unknown key comes first, and nothing reaches userauth', async () => {
    const pw = await connection({});
    const key = await connection(encryptedKey());
    for (const id of [pw, key]) expect((await failure(client.call('ssh.open', { connectionId: id }))).code).toBe('EHOSTKEY_UNKNOWN');
    await client.call('hostkeys.trust', { kind: 'ssh', host: sshd.host, port: sshd.port, keyType: sshd.hostKeyType, fingerprint: sshd.hostKeyFingerprint });

    const pwLogFrom = sshd.readLog().length;
    const p = await need(client.call('ssh.open', { connectionId: pw }));
    expect(p.need).toMatchObject({ reason: 'credential-required', credential: 'password', connectionId: pw, connectionName: 'nopw', username: sshd.users.password.username, host: sshd.host, port: sshd.port });
    // The key exchange happened (host key checked) but no login was attempted: sshd logs any
    // userauth request before the line that ends the connection, so read through that line.
    const pwLog = await logThroughConnectionEnd(sshd, pwLogFrom);
    expect(pwLog).toContain('Connection from');
    expect(pwLog).not.toContain('userauth-request');
    const keyLogFrom = sshd.readLog().length;
    const k = await need(client.call('ssh.open', { connectionId: key }));
    expect(k.need).toMatchObject({ reason: 'credential-required', credential: 'passphrase', connectionId: key });
    const keyLog = await logThroughConnectionEnd(sshd, keyLogFrom);
    expect(keyLog).toContain('Connection from');
    expect(keyLog).not.toContain('userauth-request');
    expect(await client.call('sessions.list')).toEqual([]);
  });

  test('a one-time password connects and is not stored; the next open asks again', async () => {
    const id = await connection({});
    expect(await whoamiWith(id, { connectionId: id, secret: sshd.users.password.password, save: false })).toBe(sshd.users.password.username);
    expect((await client.call('connections.get', { id })).hasPassword).toBe(false);
    expect((await need(client.call('ssh.open', { connectionId: id }))).need.reason).toBe('credential-required');
    // The XO never repeats what a person typed.
    expect(app.redactor.redact(`x ${sshd.users.password.password} y`)).not.toContain(sshd.users.password.password);
  });

  test('a wrong one-time password → EAUTH credential-rejected, with the refusal and without the secret; nothing stored, even when asked', async () => {
    const id = await connection({});
    const r = await need(client.call('ssh.open', { connectionId: id, credential: { connectionId: id, secret: 'not-the-password', save: true } }));
    expect(r.need).toMatchObject({ reason: 'credential-rejected', credential: 'password', connectionId: id });
    expect(r.message).toMatch(/refused/);
    expect(r.message).not.toContain('not-the-password');
    expect((await client.call('connections.get', { id })).hasPassword).toBe(false);
    expect(await client.call('sessions.list')).toEqual([]);
  });

  test('a saved password the server refuses asks the same way (the person may type the right one)', async () => {
    const id = await connection({ secrets: { password: 'stale-password' } });
    expect((await need(client.call('ssh.open', { connectionId: id }))).need.reason).toBe('credential-rejected');
    // Typed with save: it replaces the stale one.
    expect(await whoamiWith(id, { connectionId: id, secret: sshd.users.password.password, save: true })).toBe(sshd.users.password.username);
    expect(await whoamiWith(id)).toBe(sshd.users.password.username);
  });

  test('with save: true, the password goes to the vault once accepted, and the next open needs nothing', async () => {
    const id = await connection({});
    expect(await whoamiWith(id, { connectionId: id, secret: sshd.users.password.password, save: true })).toBe(sshd.users.password.username);
    expect((await client.call('connections.get', { id })).hasPassword).toBe(true);
    expect(await whoamiWith(id)).toBe(sshd.users.password.username);
  });

  test('an encrypted key: a wrong passphrase is rejected, the right one connects, stored only when asked', async () => {
    const id = await connection(encryptedKey());
    const wrong = await need(client.call('ssh.open', { connectionId: id, credential: { connectionId: id, secret: 'wrong-passphrase', save: true } }));
    expect(wrong.need).toMatchObject({ reason: 'credential-rejected', credential: 'passphrase' });
    expect((await client.call('connections.get', { id })).hasPassphrase).toBe(false);

    expect(await whoamiWith(id, { connectionId: id, secret: sshd.users.key.passphrase, save: false })).toBe(sshd.users.key.username);
    expect((await client.call('connections.get', { id })).hasPassphrase).toBe(false);
    expect(await whoamiWith(id, { connectionId: id, secret: sshd.users.key.passphrase, save: true })).toBe(sshd.users.key.username);
    expect((await client.call('connections.get', { id })).hasPassphrase).toBe(true);
    expect(await whoamiWith(id)).toBe(sshd.users.key.username);
  });

  test('a credential for a connection not on the way, or for an auth method without a secret → EBADARGS', async () => {
    const id = await connection({});
    const other = await connection({ name: 'agent-only', authMethod: 'agent' });
    expect((await failure(client.call('ssh.open', { connectionId: id, credential: { connectionId: other, secret: 'x', save: false } }))).code).toBe('EBADARGS');
    expect((await failure(client.call('ssh.open', { connectionId: other, credential: { connectionId: other, secret: 'x', save: false } }))).code).toBe('EBADARGS');
  });

  test('a jump host and its target that both have none saved: each is asked for in turn, and given together they connect', async () => {
    const pw = sshd.users.password.password;
    const bastion = await connection({ name: 'bastion' });
    // The same sshd serves as the jump host: the target is reached through a forward on it.
    const target = await connection({ name: 'behind', jumpHostId: bastion });
    const first = await need(client.call('ssh.open', { connectionId: target }));
    expect(first.need).toMatchObject({ reason: 'credential-required', connectionId: bastion, connectionName: 'bastion' });
    const forBastion = { connectionId: bastion, secret: pw, save: false };
    const second = await need(client.call('ssh.open', { connectionId: target, credential: forBastion }));
    expect(second.need).toMatchObject({ reason: 'credential-required', connectionId: target, connectionName: 'behind' });

    const forTarget = { connectionId: target, secret: pw, save: false };
    const { sessionId } = await client.call('ssh.open', { connectionId: target, credentials: [forBastion, forTarget] });
    expect((await client.call('ssh.exec', { sessionId, command: 'whoami' })).stdout.trim()).toBe(sshd.users.password.username);
    await client.call('sessions.close', { sessionId });
    // Neither was asked to be saved.
    for (const id of [bastion, target]) expect((await client.call('connections.get', { id })).hasPassword).toBe(false);

    const twice = await failure(client.call('ssh.open', { connectionId: target, credential: forBastion, credentials: [forBastion, forTarget] }));
    expect(twice.code).toBe('EBADARGS');
    expect(twice.message).toMatch(/Two passwords were given for bastion/);
  });

  test('a keyboard-interactive connection whose saved password is refused takes a one-time one', async () => {
    const id = await connection({ name: 'ki', authMethod: 'keyboard-interactive', secrets: { password: 'not-the-password' } });
    const refused = await need(client.call('ssh.open', { connectionId: id }));
    expect(refused.need).toMatchObject({ reason: 'credential-rejected', credential: 'password', connectionId: id });
    expect(await whoamiWith(id, { connectionId: id, secret: sshd.users.password.password, save: false })).toBe(sshd.users.password.username);
  });

  test('ssh.reconnect takes a one-time password too (a dropped session whose password was never saved)', async () => {
    const id = await connection({});
    const { sessionId } = await client.call('ssh.open', { connectionId: id, credential: { connectionId: id, secret: sshd.users.password.password, save: false } });
    // Drop the connection from the server side, as a network loss would.
    sshd.dropConnections();
    await expect.poll(async () => (await client.call('sessions.list')).find((s) => s.id === sessionId)?.state, { timeout: 10_000 }).toBe('disconnected');
    expect((await need(client.call('ssh.reconnect', { sessionId }))).need.reason).toBe('credential-required');
    await client.call('ssh.reconnect', { sessionId, credential: { connectionId: id, secret: sshd.users.password.password, save: false } });
    expect((await client.call('ssh.exec', { sessionId, command: 'whoami' })).stdout.trim()).toBe(sshd.users.password.username);
    await client.call('sessions.close', { sessionId });
  });

  test('a password to save that the vault, locked meanwhile, cannot take: the reconnect is not kept, and the retry after unlocking saves it', async () => {
    // A quarter of a second each way: the vault locks while the reconnect is on its way.
    const distant = await startDelayProxy(sshd.port, 250);
    try {
      await client.call('hostkeys.trust', { kind: 'ssh', host: sshd.host, port: distant.port, keyType: sshd.hostKeyType, fingerprint: sshd.hostKeyFingerprint });
      const id = await connection({ port: distant.port });
      const secret = sshd.users.password.password;
      const { sessionId } = await client.call('ssh.open', { connectionId: id, credential: { connectionId: id, secret, save: false } });
      sshd.dropConnections();
      const stateOf = async () => (await client.call('sessions.list')).find((s) => s.id === sessionId)?.state;
      await expect.poll(stateOf, { timeout: 10_000 }).toBe('disconnected');

      client.subscribe(['session.']);
      const off = client.on('session.changed', (s) => {
        if (s.id === sessionId && s.state === 'connecting') void client.call('vault.lock');
      });
      const err = await failure(client.call('ssh.reconnect', { sessionId, credential: { connectionId: id, secret, save: true } }));
      off();
      expect(err.code).toBe('ELOCKED');
      // Not left open with the password unsaved: a retry would have found it open and saved nothing.
      expect(await stateOf()).toBe('disconnected');

      await client.call('vault.unlock', { password: '' });
      await client.call('ssh.reconnect', { sessionId, credential: { connectionId: id, secret, save: true } });
      expect((await client.call('connections.get', { id })).hasPassword).toBe(true);
      expect((await client.call('ssh.exec', { sessionId, command: 'whoami' })).stdout.trim()).toBe(sshd.users.password.username);
      await client.call('sessions.close', { sessionId });
    } finally {
      await distant.close();
    }
  });
});
