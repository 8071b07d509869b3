/**
 * connections.create / connections.update refuse a connection that could never connect — an SSH
 * connection without a user name, the key method without a key, a pasted text or a key file that
 * is no private key — with EBADARGS and an issue on each field at fault, worded for a person, and
 * write nothing. Through the real App and contract router (what the CLI, the XO and the form call),
 * with real keys made by ssh-keygen.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ContractClient } from '../../src-main/common/client.js';
import type { Input } from '../../src-main/common/contract/index.js';
import { App } from '../../src-main/node/app.js';
import { connectInProcess } from '../../src-main/node/in-process.js';
import { failure } from '../fixtures/errors.js';

let app: App;
let client: ContractClient;
let dir: string;
let keyPath: string;
let encryptedKeyPath: string;

function keygen(path: string, passphrase = ''): void {
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', passphrase, '-C', 'test', '-f', path], { stdio: 'ignore' });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'wraith-connection-checks-'));
  keyPath = join(dir, 'id_ed25519');
  encryptedKeyPath = join(dir, 'id_enc');
  keygen(keyPath);
  keygen(encryptedKeyPath, 'a passphrase');
  app = new App({ dataDir: join(dir, 'data'), host: 'in-process' });
  client = connectInProcess(app);
  await client.call('vault.init', { protection: 'keyfile' });
});

afterAll(async () => {
  client?.close();
  await app?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

const base = { name: 'web01', kind: 'ssh', host: 'web01.example.com', username: 'ops' } as const;

/** The issues of a refused create or update, after checking it was refused as bad arguments. */
async function issues(call: Promise<unknown>): Promise<{ path: string[]; message: string }[]> {
  const err = await failure(call);
  expect(err.code).toBe('EBADARGS');
  const list = err.details?.issues;
  expect(Array.isArray(list)).toBe(true);
  return list as { path: string[]; message: string }[];
}

const create = (fields: Partial<Input<'connections.create'>>) => client.call('connections.create', { ...base, ...fields });
const count = async () => (await client.call('connections.list')).connections.length;

describe('connections.create refuses what could never connect', () => {
  test('an SSH connection without a user name, on the user name field; an RDP one may leave it for the logon screen', async () => {
    const before = await count();
    for (const username of ['', '   ']) {
      expect(await issues(create({ username }))).toEqual([{ path: ['username'], message: expect.stringMatching(/^Enter the user name to log in as/) }]);
    }
    expect(await count()).toBe(before);
    const rdp = await client.call('connections.create', { name: 'desk', kind: 'rdp', host: '10.0.0.9' });
    expect(rdp.username).toBe('');
  });

  test('the key method with neither a key file nor a pasted key, on the key file field', async () => {
    const list = await issues(create({ authMethod: 'key' }));
    expect(list).toEqual([{ path: ['keyPath'], message: expect.stringContaining('needs a key') }]);
    // Every problem at once, each on its field.
    const both = await issues(create({ authMethod: 'key', username: '' }));
    expect(both.map((i) => i.path.join('.')).sort()).toEqual(['keyPath', 'username']);
  });

  test('a pasted text that is no private key, on the pasted key field, saying what it is', async () => {
    const pasted = async (privateKey: string) => (await issues(create({ authMethod: 'key', secrets: { privateKey } })))[0];
    expect(await pasted('hunter2')).toEqual({ path: ['secrets', 'privateKey'], message: expect.stringMatching(/^This is not a private key\. Paste the whole key file/) });
    expect(await pasted('   ')).toMatchObject({ path: ['secrets', 'privateKey'], message: expect.stringContaining('not a private key') });
    expect(await pasted(readFileSync(`${keyPath}.pub`, 'utf8'))).toMatchObject({ path: ['secrets', 'privateKey'], message: expect.stringMatching(/^This is a public key/) });
    const key = readFileSync(keyPath, 'utf8');
    expect(await pasted(key.slice(0, key.length / 2))).toMatchObject({ message: expect.stringContaining('cut short') });
    // The right frame around a body ssh cannot read: the host's own reading says so.
    const damaged = key.replace(/^(-----BEGIN OPENSSH PRIVATE KEY-----\n)b3BlbnNzaC1rZXktdjE/, '$1AAAAAAAAAAAAAAAAAAAA');
    expect(damaged).not.toBe(key);
    expect(await pasted(damaged)).toMatchObject({ path: ['secrets', 'privateKey'], message: expect.stringMatching(/^ssh cannot read this key/) });
  });

  test('a key file that is not there, is a folder, or is the public half, on the key file field; working keys save, an encrypted one too (its passphrase is asked at connect)', async () => {
    const file = async (path: string) => (await issues(create({ authMethod: 'key', keyPath: path })))[0];
    expect(await file(join(dir, 'missing'))).toEqual({ path: ['keyPath'], message: `There is no file at ${join(dir, 'missing')} on the machine Wraith runs on.` });
    expect(await file(dir)).toMatchObject({ path: ['keyPath'], message: expect.stringContaining('is a folder') });
    expect(await file(`${keyPath}.pub`)).toMatchObject({ path: ['keyPath'], message: expect.stringContaining('is a public key') });

    const before = await count();
    await create({ name: 'file', authMethod: 'key', keyPath });
    const pasted = await create({ name: 'pasted', authMethod: 'key', secrets: { privateKey: readFileSync(keyPath, 'utf8') } });
    expect(pasted.hasPrivateKey).toBe(true);
    await create({ name: 'encrypted', authMethod: 'key', keyPath: encryptedKeyPath });
    await create({ name: 'encrypted, pasted', authMethod: 'key', secrets: { privateKey: readFileSync(encryptedKeyPath, 'utf8') } });
    await create({ name: 'agent', authMethod: 'agent' });
    expect(await count()).toBe(before + 5);
  });

});

describe('a control character in the user name, host or RDP domain is refused at save, named', () => {
  test('on create, on the field, saying which character and where; nothing is saved', async () => {
    const before = await count();
    const nul = await failure(create({ username: 'ops\0root' }));
    expect(nul).toMatchObject({ code: 'EBADARGS' });
    expect(nul.message).toBe(
      'username: The user name has an invisible control character in it (NUL, U+0000, at character 4), which would make connecting fail: type the user name again.',
    );
    expect(await issues(create({ username: 'o\tps' }))).toEqual([{ path: ['username'], message: expect.stringContaining('(a tab, U+0009, at character 2)') }]);
    // An RDP connection may leave its user name empty, never give one with a NUL in it; nor its domain.
    const rdp = { name: 'desk', kind: 'rdp', host: '10.0.0.9' } as const;
    expect(await issues(client.call('connections.create', { ...rdp, username: 'admin\0' }))).toEqual([
      { path: ['username'], message: expect.stringContaining('(NUL, U+0000, at character 6)') },
    ]);
    expect(await issues(client.call('connections.create', { ...rdp, rdpOptions: { domain: 'CORP\u001b' } }))).toEqual([
      { path: ['rdpOptions', 'domain'], message: expect.stringMatching(/^The domain has an invisible control character in it \(ESC, U\+001B, at character 5\)/) },
    ]);
    // The host's pattern refused it before, in words that could not point at an invisible character.
    const host = await failure(create({ host: 'web01\0.example.com' }));
    expect(host.message).toBe('host: The host has an invisible control character in it (NUL, U+0000, at character 6), which would make connecting fail: type the host again.');
    expect(await count()).toBe(before);
  });

  test('on update, under patch; one saved before this check still lists, moves, and is mended by typing the name again', async () => {
    const c = await create({ name: 'to change' });
    expect(await issues(client.call('connections.update', { id: c.id, patch: { username: 'o\nps' } }))).toEqual([
      { path: ['patch', 'username'], message: expect.stringContaining('(a line break, U+000A, at character 2)') },
    ]);
    expect((await client.call('connections.get', { id: c.id })).username).toBe('ops');
    // A line break pasted after the name is only whitespace at its end: trimmed, as before.
    expect((await client.call('connections.update', { id: c.id, patch: { username: 'root\n' } })).username).toBe('root');

    const old = app.connections.create({
      name: 'pasted', kind: 'ssh', host: 'h', port: 22, username: 'o\0ps', groupId: null, tags: [], authMethod: 'password',
      keyPath: null, jumpHostId: null, sshOptions: {}, rdpOptions: {}, notes: '',
    });
    expect((await client.call('connections.list')).connections.find((x) => x.id === old.id)?.username).toBe('o\0ps');
    expect(await client.call('connections.update', { id: old.id, patch: { name: 'pasted, renamed' } })).toMatchObject({ name: 'pasted, renamed' });
    expect(await client.call('connections.update', { id: old.id, patch: { username: 'ops' } })).toMatchObject({ username: 'ops' });
  });
});

describe('connections.update refuses a change that would keep it from connecting', () => {
  test('emptying the user name, choosing the key method without a key, removing the only key — on the fields the form shows', async () => {
    const c = await create({ name: 'to change' });
    expect(await issues(client.call('connections.update', { id: c.id, patch: { username: '' } }))).toEqual([
      { path: ['patch', 'username'], message: expect.stringMatching(/^Enter the user name/) },
    ]);
    expect(await issues(client.call('connections.update', { id: c.id, patch: { authMethod: 'key' } }))).toEqual([
      { path: ['patch', 'keyPath'], message: expect.stringContaining('needs a key') },
    ]);
    const keyed = await client.call('connections.update', { id: c.id, patch: { authMethod: 'key' }, secrets: { privateKey: readFileSync(keyPath, 'utf8') } });
    expect(keyed.hasPrivateKey).toBe(true);
    expect(await issues(client.call('connections.update', { id: c.id, patch: {}, secrets: { privateKey: null } }))).toEqual([
      { path: ['patch', 'keyPath'], message: expect.stringContaining('needs a key') },
    ]);
    expect(await issues(client.call('connections.update', { id: c.id, patch: {}, secrets: { privateKey: 'not a key' } }))).toEqual([
      { path: ['secrets', 'privateKey'], message: expect.stringContaining('not a private key') },
    ]);
    // Nothing of the refused changes was written.
    expect(await client.call('connections.get', { id: c.id })).toMatchObject({ username: 'ops', authMethod: 'key', hasPrivateKey: true });
  });

  test('a connection saved before these checks (no user name) can still be moved or renamed; saving its user name empty again is refused', async () => {
    // As an older version (or an ssh_config entry without User, imported) left it.
    const old = app.connections.create({
      name: 'legacy', kind: 'ssh', host: 'h', port: 22, username: '', groupId: null, tags: [], authMethod: 'password',
      keyPath: null, jumpHostId: null, sshOptions: {}, rdpOptions: {}, notes: '',
    });
    const group = await client.call('connections.groups.create', { name: 'Old' });
    expect(await client.call('connections.update', { id: old.id, patch: { groupId: group.id, name: 'legacy box' } })).toMatchObject({ groupId: group.id, name: 'legacy box' });
    expect(await issues(client.call('connections.update', { id: old.id, patch: { username: '', name: 'legacy box' } }))).toEqual([
      { path: ['patch', 'username'], message: expect.stringMatching(/^Enter the user name/) },
    ]);
  });
});
