/**
 * Importing the user's OpenSSH known_hosts against a real sshd: entries written by OpenSSH's own
 * tools (ssh-keyscan, ssh-keygen -H hashes them) let Wraith connect without asking, a key in the
 * file that differs from the server's refuses the connection before any credential is sent, and a
 * hashed entry can be forgotten by the name hostkeys.list shows.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ContractClient } from '../../src-main/common/client.js';
import { App } from '../../src-main/node/app.js';
import { connectInProcess } from '../../src-main/node/in-process.js';
import { type SshdHandle, savePasswordConnection, startSshd } from '../fixtures/sshd.js';
import { failure } from '../fixtures/errors.js';

let sshd: SshdHandle;
let app: App;
let client: ContractClient;
let dataDir: string;
let files: string;
let connectionId: string;

beforeAll(async () => {
  sshd = await startSshd();
  dataDir = mkdtempSync(join(tmpdir(), 'wraith-known-hosts-'));
  files = mkdtempSync(join(tmpdir(), 'wraith-known-hosts-files-'));
  app = new App({ dataDir, host: 'in-process' });
  client = connectInProcess(app);
  connectionId = (await savePasswordConnection(client, sshd, 'web01', { trust: false })).id;
});

afterAll(async () => {
  client?.close();
  await app?.dispose();
  await sshd?.stop();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(files, { recursive: true, force: true });
});

async function whoami(): Promise<string> {
  const { sessionId } = await client.call('ssh.open', { connectionId });
  const r = await client.call('ssh.exec', { sessionId, command: 'whoami' });
  await client.call('sessions.close', { sessionId });
  return r.stdout.trim();
}

function write(name: string, text: string): string {
  const path = join(files, name);
  writeFileSync(path, text);
  return path;
}

const logins = () => sshd.readLog().split('userauth-request for user wraith-pw').length - 1;

describe('OpenSSH known_hosts import', () => {
  test('a hashed entry from ssh-keyscan -H is trusted; markers, patterns and other lines are skipped', async () => {
    expect((await failure(client.call('ssh.open', { connectionId }))).code).toBe('EHOSTKEY_UNKNOWN');

    const scanned = execFileSync('ssh-keyscan', ['-H', '-t', 'ed25519', '-p', String(sshd.port), sshd.host], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    expect(scanned).toMatch(/^\|1\|/m);
    const otherKey = readFileSync(`${sshd.users.key.privateKeyPath}.pub`, 'utf8').split(' ').slice(0, 2).join(' ');
    const path = write(
      'known_hosts',
      [
        '# made by ssh-keyscan -H',
        scanned.trim(),
        `@cert-authority *.example.com ${otherKey}`,
        `*.internal ${otherKey}`,
        'Host web01 extra-word', // a line of some other file: three words, no key
        `db1.example.com,[db1.example.com]:2222 ${otherKey}`,
        '',
      ].join('\n'),
    );
    expect(await client.call('hostkeys.importKnownHosts', { path })).toEqual({ imported: 3, skipped: 3, conflicts: 0 });

    const list = await client.call('hostkeys.list');
    const hashed = list.filter((e) => e.host.startsWith('|1|'));
    expect(hashed).toEqual([expect.objectContaining({ kind: 'ssh', keyType: 'ssh-ed25519', fingerprint: sshd.hostKeyFingerprint, source: 'known_hosts' })]);
    expect(list.filter((e) => e.host === 'db1.example.com').map((e) => e.port).sort()).toEqual([22, 2222]);

    // Connects without anything trusted in Wraith itself: the hashed name matched 127.0.0.1:port.
    expect(await whoami()).toBe(sshd.users.password.username);

    // The same file again adds nothing.
    expect(await client.call('hostkeys.importKnownHosts', { path })).toEqual({ imported: 0, skipped: 3, conflicts: 0 });
  });

  test('a hashed entry is forgotten by the name hostkeys.list shows; the server is unknown again', async () => {
    const hashed = (await client.call('hostkeys.list')).find((e) => e.host.startsWith('|1|'));
    if (!hashed) throw new Error('no hashed entry');
    await client.call('hostkeys.forget', { kind: 'ssh', host: hashed.host });
    expect((await client.call('hostkeys.list')).some((e) => e.host.startsWith('|1|'))).toBe(false);
    expect((await failure(client.call('ssh.open', { connectionId }))).code).toBe('EHOSTKEY_UNKNOWN');
  });

  test('a different key for the server in known_hosts refuses the connection before the password is sent', async () => {
    const keyDir = mkdtempSync(join(files, 'other-'));
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(keyDir, 'k')]);
    const [type, b64] = readFileSync(join(keyDir, 'k.pub'), 'utf8').split(' ');
    const path = write('known_hosts_changed', `[${sshd.host}]:${sshd.port} ${type} ${b64}\n`);
    expect(await client.call('hostkeys.importKnownHosts', { path })).toEqual({ imported: 1, skipped: 0, conflicts: 0 });

    const before = logins();
    const err = await failure(client.call('ssh.open', { connectionId }));
    expect(err.code).toBe('EHOSTKEY_CHANGED');
    expect(err.details).toMatchObject({ fingerprint: sshd.hostKeyFingerprint });
    expect(logins()).toBe(before);
    // The server's real key in another file: Wraith keeps the key it trusts, and says it did.
    const real = write('known_hosts_real', `[${sshd.host}]:${sshd.port} ${readFileSync(join(sshd.dir, 'host_ed25519.pub'), 'utf8').split(' ').slice(0, 2).join(' ')}\n`);
    expect(await client.call('hostkeys.importKnownHosts', { path: real })).toEqual({ imported: 0, skipped: 0, conflicts: 1 });
    expect((await failure(client.call('ssh.open', { connectionId }))).code).toBe('EHOSTKEY_CHANGED');
    await client.call('hostkeys.forget', { kind: 'ssh', host: sshd.host, port: sshd.port });
  });

  test('a missing, unreadable or wrong file gets an error that names it; "~/" is the home folder', async () => {
    const missing = await failure(client.call('hostkeys.importKnownHosts', { path: '~/no-such-known-hosts-file' }));
    expect(missing.code).toBe('ENOTFOUND');
    expect(missing.message).toContain(join(homedir(), 'no-such-known-hosts-file'));

    const dir = join(files, 'a-folder');
    mkdirSync(dir);
    const folder = await failure(client.call('hostkeys.importKnownHosts', { path: dir }));
    expect(folder.code).toBe('EIO');
    expect(folder.message).toContain(dir);

    const config = write('ssh_config', 'Host web01\n  HostName 10.0.0.5\n  IdentityFile ~/.ssh/id_ed25519 extra\n');
    expect(await client.call('hostkeys.importKnownHosts', { path: config })).toEqual({ imported: 0, skipped: 3, conflicts: 0 });
  });
});
