/**
 * Saved connections as a person meets them: a deleted connection is said to be deleted (by the
 * name the host still knows, never by its raw id), an ssh_config entry without User is imported
 * with the local login name as ssh would use, and a duplicate takes its saved secrets with it so
 * the copy connects. Through the real App and contract router (what the CLI, the XO and the form
 * call), against a real OpenSSH sshd where a connect is involved.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ContractClient } from '../../src-main/common/client.js';
import type { Input } from '../../src-main/common/contract/index.js';
import { App } from '../../src-main/node/app.js';
import { connectInProcess } from '../../src-main/node/in-process.js';
import { failure } from '../fixtures/errors.js';
import { until } from '../fixtures/poll.js';
import { type SshdHandle, savePasswordConnection, startSshd } from '../fixtures/sshd.js';

const VAULT_PASSWORD = 'correct horse battery';

let sshd: SshdHandle;
let app: App;
let client: ContractClient;
let dataDir: string;

beforeAll(async () => {
  sshd = await startSshd();
  dataDir = mkdtempSync(join(tmpdir(), 'wraith-saved-connections-'));
  app = new App({ dataDir, host: 'in-process' });
  client = connectInProcess(app);
  client.subscribe(['']);
  // A password vault, so a test can lock it and unlock it again.
  await client.call('vault.init', { protection: 'password', password: VAULT_PASSWORD });
  await client.call('hostkeys.trust', { kind: 'ssh', host: sshd.host, port: sshd.port, keyType: sshd.hostKeyType, fingerprint: sshd.hostKeyFingerprint });
});

afterAll(async () => {
  client?.close();
  await app?.dispose();
  await sshd?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

async function sessionState(sessionId: string): Promise<string | undefined> {
  return (await client.call('sessions.list')).find((s) => s.id === sessionId)?.state;
}

/** Runs a command in the session's shell and waits for its output. */
async function runInShell(sessionId: string, command: string, expected: RegExp): Promise<void> {
  let text = '';
  let seq = 0;
  await client.call('terminal.write', { sessionId, data: `${command}\n` });
  await until(`output ${expected}`, async () => {
    const r = await client.call('terminal.read', { sessionId, sinceSeq: seq, stripAnsi: true, maxBytes: 1024 * 1024 });
    text += r.text;
    seq = r.nextSeq;
    return expected.test(text) ? true : undefined;
  });
}

describe('a jump host in use', () => {
  test('cannot be deleted while connections go through it: they would connect directly, unseen', async () => {
    const ssh = { kind: 'ssh' as const, host: 'example.invalid', username: 'ops' };
    const bastion = await client.call('connections.create', { ...ssh, name: 'bastion-in-use' });
    const web = await client.call('connections.create', { ...ssh, name: 'web01', jumpHostId: bastion.id });
    const db = await client.call('connections.create', { ...ssh, name: 'db01', jumpHostId: bastion.id });

    const err = await failure(client.call('connections.delete', { id: bastion.id }));
    expect(err.code).toBe('EBADARGS');
    expect(err.message).toBe(
      'Cannot delete "bastion-in-use": it is the jump host of "db01" and "web01". Give those connections another jump host (or none), or delete them, first.',
    );
    expect(err.details).toEqual({ reason: 'in_use', usedBy: [{ id: db.id, name: 'db01' }, { id: web.id, name: 'web01' }] });
    expect((await client.call('connections.get', { id: web.id })).jumpHostId).toBe(bastion.id);

    await client.call('connections.update', { id: web.id, patch: { jumpHostId: null } });
    expect((await failure(client.call('connections.delete', { id: bastion.id }))).message).toContain('it is the jump host of "db01". Give that connection');
    await client.call('connections.delete', { id: db.id });
    await client.call('connections.delete', { id: bastion.id });
    expect((await failure(client.call('connections.get', { id: bastion.id }))).code).toBe('ENOTFOUND');
    await client.call('connections.delete', { id: web.id });
  });
});

describe('a deleted connection is said to be deleted, not named by its id', () => {
  test('ssh.open, connections.get and connections.update: ENOTFOUND that says it no longer exists, the id in details only', async () => {
    const { id } = await savePasswordConnection(client, sshd, 'gone01');
    await client.call('connections.delete', { id });
    for (const call of [
      client.call('ssh.open', { connectionId: id, cols: 80, rows: 24 }),
      client.call('connections.get', { id }),
      client.call('connections.update', { id, patch: { name: 'x' } }),
      client.call('connections.duplicate', { id }),
    ]) {
      const err = await failure(call);
      expect(err.code).toBe('ENOTFOUND');
      expect(err.message).toMatch(/saved connection no longer exists/);
      expect(err.message).not.toContain(id);
      expect(err.details).toMatchObject({ connectionId: id });
    }
  });

  test('ssh.reconnect of a dropped session whose connection was deleted names the session by its title', async () => {
    const { id } = await savePasswordConnection(client, sshd, 'db-primary');
    const { sessionId } = await client.call('ssh.open', { connectionId: id, cols: 80, rows: 24 });
    sshd.dropConnections();
    await until('the session to drop', async () => ((await sessionState(sessionId)) === 'disconnected' ? true : undefined));
    await client.call('connections.delete', { id });

    const err = await failure(client.call('ssh.reconnect', { sessionId }));
    expect(err.code).toBe('ENOTFOUND');
    expect(err.message).toMatch(/^The saved connection db-primary was deleted, so this session cannot reconnect\./);
    expect(err.message).not.toContain(id);
    expect(err.details).toMatchObject({ connectionId: id, sessionId });
    // The tab stays as it was, for its scrollback; closing it still works.
    expect(await sessionState(sessionId)).toBe('disconnected');
    await client.call('sessions.close', { sessionId });
  });
});

describe('host, user name and key file as a person types them', () => {
  /** Who the server logged the connection in as. */
  async function whoami(connectionId: string): Promise<string> {
    const { sessionId } = await client.call('ssh.open', { connectionId, cols: 80, rows: 24 });
    try {
      return (await client.call('ssh.exec', { sessionId, command: 'whoami' })).stdout.trim();
    } finally {
      await client.call('sessions.close', { sessionId });
    }
  }

  test('spaces around the user name and the key file are not saved, on create and update, and the connection connects', async () => {
    const keyed = await client.call('connections.create', {
      name: 'spaced-key',
      kind: 'ssh',
      host: sshd.host,
      port: sshd.port,
      username: `  ${sshd.users.key.username} `,
      authMethod: 'key',
      keyPath: `  ${sshd.users.key.privateKeyPath}  `,
    });
    expect(keyed).toMatchObject({ username: sshd.users.key.username, keyPath: sshd.users.key.privateKeyPath });
    expect(await whoami(keyed.id)).toBe(sshd.users.key.username);

    const { id } = await savePasswordConnection(client, sshd, 'spaced-pw');
    const updated = await client.call('connections.update', { id, patch: { username: ` ${sshd.users.password.username}` } });
    expect(updated.username).toBe(sshd.users.password.username);
    expect(await whoami(id)).toBe(sshd.users.password.username);
    const rekeyed = await client.call('connections.update', { id: keyed.id, patch: { keyPath: `${sshd.users.key.privateKeyPath} ` } });
    expect(rekeyed.keyPath).toBe(sshd.users.key.privateKeyPath);
  });

  test('a port written after the host is refused, saying it goes in the Port field; an IPv6 address is not taken for one', async () => {
    const before = (await client.call('connections.list')).connections.length;
    const fields = { name: 'with-port', kind: 'ssh', username: 'ops', authMethod: 'agent' } as const;
    const err = await failure(client.call('connections.create', { ...fields, host: `${sshd.host}:${sshd.port}` }));
    expect(err.code).toBe('EBADARGS');
    expect(err.details?.issues).toMatchObject([{ path: ['host'], message: 'Enter the host without a port: the port goes in the Port field.' }]);
    const { id } = await client.call('connections.create', { ...fields, host: 'fe80::1' });
    const patched = await failure(client.call('connections.update', { id, patch: { host: '[::1]:2222' } }));
    expect(patched.details?.issues).toMatchObject([{ path: ['patch', 'host'], message: 'Enter the host without a port: the port goes in the Port field.' }]);
    expect((await client.call('connections.update', { id, patch: { host: '[::1]' } })).host).toBe('[::1]');
    expect((await client.call('connections.list')).connections.length).toBe(before + 1);
  });
});

describe('ssh_config import without User', () => {
  test('an entry (and a ProxyJump hop) without User get the local login name, and the result says so', async () => {
    const local = userInfo().username;
    const text = [
      'Host nouser-target',
      `  HostName ${sshd.host}`,
      `  Port ${sshd.port}`,
      '  ProxyJump nouser-hop.example',
      'Host withuser',
      '  HostName 10.0.0.5',
      '  User deploy',
      '',
    ].join('\n');
    const result = await client.call('connections.importSshConfig', { text });
    expect(result.skipped).toEqual([]);
    const byName = new Map(result.created.map((c) => [c.name, c]));
    expect(byName.get('nouser-target')?.username).toBe(local);
    expect(byName.get('nouser-hop.example')?.username).toBe(local);
    expect(byName.get('withuser')?.username).toBe('deploy');
    for (const host of ['nouser-target', 'nouser-hop.example']) {
      expect(result.notes).toContainEqual({ host, note: expect.stringContaining(`the user name is ${local}, the account Wraith runs as`) });
    }
    expect(result.notes.filter((n) => n.host === 'withuser')).toEqual([]);

    // What was imported is what a save would accept: renaming it back and forth is not refused.
    const target = byName.get('nouser-target');
    if (!target) throw new Error('not imported');
    const saved = await client.call('connections.update', { id: target.id, patch: { username: target.username } });
    expect(saved.username).toBe(local);
  });
});

describe('Duplicate keeps the saved secrets', () => {
  async function pastedKeyConnection(name: string): Promise<string> {
    const fields: Input<'connections.create'> = {
      name,
      kind: 'ssh',
      host: sshd.host,
      port: sshd.port,
      username: sshd.users.key.username,
      authMethod: 'key',
      secrets: { privateKey: sshd.users.key.privateKey },
    };
    return (await client.call('connections.create', fields)).id;
  }

  test('the copy of a connection with a pasted private key has the key and connects to sshd', async () => {
    const id = await pastedKeyConnection('keyed');
    const copy = await client.call('connections.duplicate', { id });
    expect(copy).toMatchObject({ name: 'keyed (copy)', authMethod: 'key', keyPath: null, hasPrivateKey: true });

    const { sessionId } = await client.call('ssh.open', { connectionId: copy.id, cols: 80, rows: 24 });
    await runInShell(sessionId, 'echo copy-$((6*7))', /copy-42/);
    await client.call('sessions.close', { sessionId });

    // Copies, not shared entries: deleting the original leaves the copy's key in place.
    await client.call('connections.delete', { id });
    expect((await client.call('connections.get', { id: copy.id })).hasPrivateKey).toBe(true);
    const again = await client.call('ssh.open', { connectionId: copy.id, cols: 80, rows: 24 });
    await client.call('sessions.close', { sessionId: again.sessionId });
  });

  test('a password connection copies its password', async () => {
    const { id } = await savePasswordConnection(client, sshd, 'pw01');
    const copy = await client.call('connections.duplicate', { id });
    expect(copy.hasPassword).toBe(true);
    const { sessionId } = await client.call('ssh.open', { connectionId: copy.id, cols: 80, rows: 24 });
    await client.call('sessions.close', { sessionId });
  });

  test('with the vault locked: ELOCKED that names the connection and what it keeps, and no copy is made; unlocked, it copies', async () => {
    const id = await pastedKeyConnection('locked-keyed');
    const before = (await client.call('connections.list')).connections.length;
    await client.call('vault.lock');
    try {
      const err = await failure(client.call('connections.duplicate', { id }));
      expect(err.code).toBe('ELOCKED');
      expect(err.message).toMatch(/^Unlock the vault to duplicate locked-keyed: its saved private key is kept in the vault/);
      expect((await client.call('connections.list')).connections.length).toBe(before);

      // A connection with no secrets needs no vault.
      const plain = await client.call('connections.create', { name: 'agent01', kind: 'ssh', host: 'a.example', username: 'ops', authMethod: 'agent' });
      expect((await client.call('connections.duplicate', { id: plain.id })).name).toBe('agent01 (copy)');
    } finally {
      await client.call('vault.unlock', { password: VAULT_PASSWORD });
    }
    expect((await client.call('connections.duplicate', { id })).hasPrivateKey).toBe(true);
  });
});
