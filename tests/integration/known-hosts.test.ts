/**
 * Importing the user's OpenSSH known_hosts against a real sshd: entries written by OpenSSH's own
 * tools (ssh-keyscan, ssh-keygen -H hashes them) let Wraith connect without asking, a key in the
 * file that differs from the server's refuses the connection before any credential is sent, and a
 * hashed entry can be forgotten by the name hostkeys.list shows.
 */
import { execFileSync } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ContractClient } from '../../src-main/common/client.js';
import { App } from '../../src-main/node/app.js';
import { loadMigrations, openDatabase } from '../../src-main/node/db/database.js';
import { connectInProcess } from '../../src-main/node/in-process.js';
import { type SshdHandle, logThroughConnectionEnd, savePasswordConnection, startSshd } from '../fixtures/sshd.js';
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

/** The server's own host key as a known_hosts line has it: "type base64". */
const serverKey = () => readFileSync(join(sshd.dir, 'host_ed25519.pub'), 'utf8').split(' ').slice(0, 2).join(' ');

/** A new key made with ssh-keygen: its known_hosts "type base64" and its fingerprint. */
function anotherKey(): { type: string; line: string; fingerprint: string } {
  const dir = mkdtempSync(join(files, 'other-'));
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(dir, 'k')]);
  const [type = '', b64 = ''] = readFileSync(join(dir, 'k.pub'), 'utf8').split(' ');
  const fingerprint = execFileSync('ssh-keygen', ['-l', '-f', join(dir, 'k.pub')], { encoding: 'utf8' }).split(' ')[1] ?? '';
  return { type, line: `${type} ${b64}`, fingerprint };
}

/** A known_hosts file of these lines hashed by ssh-keygen -H, as HashKnownHosts writes them. */
function hashedFile(name: string, ...lines: string[]): string {
  const path = write(name, lines.join('\n') + '\n');
  execFileSync('ssh-keygen', ['-H', '-f', path], { stdio: 'ignore' });
  expect(readFileSync(path, 'utf8')).toMatch(/^\|1\|/);
  return path;
}

/** What hostkeys.list has for anything but the db1.example.com lines of the first test's file. */
const serverEntries = async () => (await client.call('hostkeys.list')).filter((e) => e.host !== 'db1.example.com');

const logins = () => sshd.readLog().split('userauth-request for user wraith-pw').length - 1;

/** What an import has to say besides what it imported and skipped, when the file and Wraith agree on every key. */
const noFindings = { conflicts: 0, conflicting: [], revoked: 0, revokedForgotten: [] };

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
    expect(await client.call('hostkeys.importKnownHosts', { path })).toEqual({ imported: 3, skipped: 3, ...noFindings });

    const list = await client.call('hostkeys.list');
    const hashed = list.filter((e) => e.host.startsWith('|1|'));
    expect(hashed).toEqual([expect.objectContaining({ kind: 'ssh', keyType: 'ssh-ed25519', fingerprint: sshd.hostKeyFingerprint, source: 'known_hosts' })]);
    expect(list.filter((e) => e.host === 'db1.example.com').map((e) => e.port).sort()).toEqual([22, 2222]);

    // Connects without anything trusted in Wraith itself: the hashed name matched 127.0.0.1:port.
    expect(await whoami()).toBe(sshd.users.password.username);

    // The same file again adds nothing.
    expect(await client.call('hostkeys.importKnownHosts', { path })).toEqual({ imported: 0, skipped: 3, ...noFindings });
  });

  test('a hashed entry is forgotten by the name hostkeys.list shows; the server is unknown again', async () => {
    const hashed = (await client.call('hostkeys.list')).find((e) => e.host.startsWith('|1|'));
    if (!hashed) throw new Error('no hashed entry');
    await client.call('hostkeys.forget', { kind: 'ssh', host: hashed.host });
    expect((await client.call('hostkeys.list')).some((e) => e.host.startsWith('|1|'))).toBe(false);
    expect((await failure(client.call('ssh.open', { connectionId }))).code).toBe('EHOSTKEY_UNKNOWN');
  });

  test('a different key for the server in known_hosts refuses the connection before the password is sent', async () => {
    const other = anotherKey();
    const path = write('known_hosts_changed', `[${sshd.host}]:${sshd.port} ${other.line}\n`);
    expect(await client.call('hostkeys.importKnownHosts', { path })).toEqual({ imported: 1, skipped: 0, ...noFindings });

    const before = logins();
    const err = await failure(client.call('ssh.open', { connectionId }));
    expect(err.code).toBe('EHOSTKEY_CHANGED');
    expect(err.details).toMatchObject({ fingerprint: sshd.hostKeyFingerprint });
    expect(logins()).toBe(before);
    // The server's real key in another file: Wraith keeps the key it trusts, and says it did.
    // The server is named, with both keys: a differing key is what a man-in-the-middle looks like.
    const real = write('known_hosts_real', `[${sshd.host}]:${sshd.port} ${serverKey()}\n`);
    expect(await client.call('hostkeys.importKnownHosts', { path: real })).toEqual({
      ...noFindings,
      imported: 0,
      skipped: 0,
      conflicts: 1,
      conflicting: [{ host: sshd.host, port: sshd.port, keyType: 'ssh-ed25519', fingerprint: other.fingerprint, fileFingerprint: sshd.hostKeyFingerprint }],
    });
    expect((await failure(client.call('ssh.open', { connectionId }))).code).toBe('EHOSTKEY_CHANGED');
    await client.call('hostkeys.forget', { kind: 'ssh', host: sshd.host, port: sshd.port });
  });

  test('a hashed entry with another key for a server Wraith trusts is a conflict, not a second trusted key', async () => {
    const other = anotherKey();
    // Wraith trusts another key for the server (the real one before a compromise, say).
    await client.call('hostkeys.trust', { kind: 'ssh', host: sshd.host, port: sshd.port, keyType: other.type, fingerprint: other.fingerprint });
    expect((await failure(client.call('ssh.open', { connectionId }))).code).toBe('EHOSTKEY_CHANGED');

    // The key the server offers, in a file hashed by ssh-keygen -H: its name is "[127.0.0.1]:port".
    const path = hashedFile('known_hosts_hashed_changed', `[${sshd.host}]:${sshd.port} ${serverKey()}`);
    // Named as Wraith trusts it: the file's hashed name stands for that server.
    expect(await client.call('hostkeys.importKnownHosts', { path })).toMatchObject({
      imported: 0,
      conflicts: 1,
      conflicting: [{ host: sshd.host, port: sshd.port, keyType: other.type, fingerprint: other.fingerprint, fileFingerprint: sshd.hostKeyFingerprint }],
    });
    expect((await client.call('hostkeys.list')).filter((e) => e.host.startsWith('|1|'))).toEqual([]);
    const before = logins();
    expect((await failure(client.call('ssh.open', { connectionId }))).code).toBe('EHOSTKEY_CHANGED');
    expect(logins()).toBe(before);

    // On port 22 the hashed name is the bare host.
    await client.call('hostkeys.trust', { kind: 'ssh', host: 'db9.example.com', port: 22, keyType: other.type, fingerprint: other.fingerprint });
    const port22 = hashedFile('known_hosts_hashed_22', `db9.example.com ${serverKey()}`);
    expect(await client.call('hostkeys.importKnownHosts', { path: port22 })).toMatchObject({
      conflicts: 1,
      conflicting: [{ host: 'db9.example.com', port: 22, keyType: other.type, fingerprint: other.fingerprint, fileFingerprint: sshd.hostKeyFingerprint }],
    });
    await client.call('hostkeys.forget', { kind: 'ssh', host: 'db9.example.com', port: 22 });
    await client.call('hostkeys.forget', { kind: 'ssh', host: sshd.host, port: sshd.port });
  });

  test('a plain entry with another key for a server trusted by a hashed entry is a conflict too', async () => {
    const path = hashedFile('known_hosts_hashed_real', `[${sshd.host}]:${sshd.port} ${serverKey()}`);
    expect(await client.call('hostkeys.importKnownHosts', { path })).toEqual({ imported: 1, skipped: 0, ...noFindings });
    const other = anotherKey();
    const plain = write('known_hosts_plain_other', `[${sshd.host}]:${sshd.port} ${other.line}\n`);
    expect(await client.call('hostkeys.importKnownHosts', { path: plain })).toEqual({
      ...noFindings,
      imported: 0,
      skipped: 0,
      conflicts: 1,
      conflicting: [{ host: sshd.host, port: sshd.port, keyType: 'ssh-ed25519', fingerprint: sshd.hostKeyFingerprint, fileFingerprint: other.fingerprint }],
    });
    expect(await whoami()).toBe(sshd.users.password.username);
    await client.call('hostkeys.forget', { kind: 'ssh', host: sshd.host, port: sshd.port });
    expect(await serverEntries()).toEqual([]);
  });

  test('at connect a hashed entry never stands beside the key trusted for the server', async () => {
    const other = anotherKey();
    // Two hashed files name the server under different salts: nobody can tell at import that they
    // are one server, so both are kept; the first one counts, the second is no second key.
    const first = hashedFile('known_hosts_hashed_first', `[${sshd.host}]:${sshd.port} ${other.line}`);
    const second = hashedFile('known_hosts_hashed_second', `[${sshd.host}]:${sshd.port} ${serverKey()}`);
    expect(await client.call('hostkeys.importKnownHosts', { path: first })).toMatchObject({ imported: 1 });
    expect(await client.call('hostkeys.importKnownHosts', { path: second })).toMatchObject({ imported: 1 });
    expect((await failure(client.call('ssh.open', { connectionId }))).code).toBe('EHOSTKEY_CHANGED');

    // Trusting the server's key replaces the hashed entries of that type: none is left with another key.
    await client.call('hostkeys.trust', { kind: 'ssh', host: sshd.host, port: sshd.port, keyType: sshd.hostKeyType, fingerprint: sshd.hostKeyFingerprint });
    expect(await serverEntries()).toEqual([expect.objectContaining({ host: sshd.host, port: sshd.port, fingerprint: sshd.hostKeyFingerprint, source: 'user' })]);
    expect(await whoami()).toBe(sshd.users.password.username);
    await client.call('hostkeys.forget', { kind: 'ssh', host: sshd.host, port: sshd.port });

    // A database written before imports checked hashed names: the key trusted by name counts.
    await client.call('hostkeys.trust', { kind: 'ssh', host: sshd.host, port: sshd.port, keyType: other.type, fingerprint: other.fingerprint });
    const [hashedName] = readFileSync(second, 'utf8').split(' ');
    app.db
      .prepare(`INSERT INTO known_hosts (kind, host, port, key_type, fingerprint, hashed, source, added_at) VALUES ('ssh', ?, 0, ?, ?, 1, 'known_hosts', ?)`)
      .run(hashedName, sshd.hostKeyType, sshd.hostKeyFingerprint, new Date().toISOString());
    expect((await failure(client.call('ssh.open', { connectionId }))).code).toBe('EHOSTKEY_CHANGED');
    await client.call('hostkeys.forget', { kind: 'ssh', host: sshd.host, port: sshd.port });
    expect(await serverEntries()).toEqual([]);
  });

  test('a key the file marks @revoked is imported for no host, under whatever name it stands', async () => {
    // The server's own key, revoked on a line for some other host: OpenSSH's "must not ever be accepted".
    const [hashedLine] = readFileSync(hashedFile('known_hosts_revoked_hashed', `[${sshd.host}]:${sshd.port} ${serverKey()}`), 'utf8').trim().split('\n');
    const other = anotherKey();
    const path = write(
      'known_hosts_revoked',
      [`@revoked [${sshd.host}]:47999 ${serverKey()}`, `web01.example.com,10.0.0.5 ${serverKey()}`, hashedLine, `db7.example.com ${other.line}`, ''].join('\n'),
    );
    expect(await client.call('hostkeys.importKnownHosts', { path })).toEqual({ ...noFindings, imported: 1, skipped: 1, revoked: 3 });
    expect((await serverEntries()).map((e) => [e.host, e.fingerprint])).toEqual([['db7.example.com', other.fingerprint]]);
    // The server's key is refused, and nothing was sent.
    const before = logins();
    expect((await failure(client.call('ssh.open', { connectionId }))).code).toBe('EHOSTKEY_REVOKED');
    expect(logins()).toBe(before);
    await client.call('hostkeys.forget', { kind: 'ssh', host: 'db7.example.com', port: 22 });
    expect(await client.call('hostkeys.liftRevocation', { fingerprint: sshd.hostKeyFingerprint })).toEqual({ ok: true, lifted: 1 });
  });

  test('a key Wraith trusts that the file marks @revoked is no longer trusted, and the import names where', async () => {
    await client.call('hostkeys.trust', { kind: 'ssh', host: sshd.host, port: sshd.port, keyType: sshd.hostKeyType, fingerprint: sshd.hostKeyFingerprint });
    expect(await whoami()).toBe(sshd.users.password.username);

    const path = write('known_hosts_revokes_trusted', `@revoked * ${serverKey()}\n`);
    expect(await client.call('hostkeys.importKnownHosts', { path })).toEqual({
      ...noFindings,
      imported: 0,
      skipped: 1,
      revokedForgotten: [{ host: sshd.host, port: sshd.port, keyType: sshd.hostKeyType, fingerprint: sshd.hostKeyFingerprint }],
    });
    expect(await serverEntries()).toEqual([]);
    const before = logins();
    expect((await failure(client.call('ssh.open', { connectionId }))).code).toBe('EHOSTKEY_REVOKED');
    expect(logins()).toBe(before);
    expect(await client.call('hostkeys.liftRevocation', { fingerprint: sshd.hostKeyFingerprint })).toEqual({ ok: true, lifted: 1 });
  });

  test('a key an import marked @revoked, on a hashed line for another host, is refused at every later connect, after a restart too, before anything is sent', async () => {
    // A hashed name of some other server: a revoked key is revoked whatever host its line names.
    const salt = randomBytes(20);
    const elsewhere = `|1|${salt.toString('base64')}|${createHmac('sha1', salt).update('elsewhere.example.com').digest('base64')}`;
    const path = write('known_hosts_revoked_remembered', `@revoked ${elsewhere} ${serverKey()}\n`);
    expect(await client.call('hostkeys.importKnownHosts', { path })).toEqual({ imported: 0, skipped: 1, ...noFindings });

    for (let round = 0; round < 2; round++) {
      const logBefore = sshd.readLog().length;
      const before = logins();
      const err = await failure(client.call('ssh.open', { connectionId }));
      expect(err.code).toBe('EHOSTKEY_REVOKED');
      const revokedAt = String(err.details?.revokedAt);
      expect(revokedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
      expect(err.message).toBe(
        `${sshd.host}:${sshd.port} (web01) offered the host key ssh-ed25519 ${sshd.hostKeyFingerprint}, which ${path} marks @revoked ` +
          `(imported ${revokedAt.slice(0, 10)}): Wraith refuses that key whichever server offers it, and nothing was sent. ` +
          "Ask the server's administrator for its new key; if the revocation was a mistake, lift it in Known hosts.",
      );
      expect(err.details).toMatchObject({ host: sshd.host, port: sshd.port, keyType: 'ssh-ed25519', fingerprint: sshd.hostKeyFingerprint, source: path });
      // The connection reached sshd, but no login did, and no password (sshd logs any userauth
      // request before the line that ends the connection: read through that line).
      expect(logins()).toBe(before);
      const log = await logThroughConnectionEnd(sshd, logBefore);
      expect(log).toContain('Connection from');
      expect(log).not.toMatch(/userauth-request|Accepted|Failed password/);
      if (round === 1) break;
      // The revocation is in the database: a restarted Wraith still refuses the key.
      client.close();
      await app.dispose();
      app = new App({ dataDir, host: 'in-process' });
      client = connectInProcess(app);
    }
  });

  test('hostkeys.trust refuses a revoked key with the same code, for any host; hostkeys.revoked lists it with where it came from', async () => {
    for (const host of [sshd.host, 'web01.example.com']) {
      const err = await failure(client.call('hostkeys.trust', { kind: 'ssh', host, port: sshd.port, keyType: sshd.hostKeyType, fingerprint: sshd.hostKeyFingerprint }));
      expect(err.code).toBe('EHOSTKEY_REVOKED');
      expect(err.message).toContain(`The host key ssh-ed25519 ${sshd.hostKeyFingerprint} cannot be trusted: it was marked @revoked in ${join(files, 'known_hosts_revoked_remembered')}`);
    }
    expect(await serverEntries()).toEqual([]);
    expect(await client.call('hostkeys.revoked')).toEqual([
      { keyType: 'ssh-ed25519', fingerprint: sshd.hostKeyFingerprint, source: join(files, 'known_hosts_revoked_remembered'), revokedAt: expect.any(String) },
    ]);
    // A later file that has the key as an ordinary entry does not bring it back.
    const path = write('known_hosts_after_revocation', `[${sshd.host}]:${sshd.port} ${serverKey()}\n`);
    expect(await client.call('hostkeys.importKnownHosts', { path })).toEqual({ ...noFindings, imported: 0, skipped: 0, revoked: 1 });
    expect((await failure(client.call('ssh.open', { connectionId }))).code).toBe('EHOSTKEY_REVOKED');
  });

  test('a revocation lifted deliberately leaves the key unknown, not trusted: it is asked about again', async () => {
    expect(await client.call('hostkeys.liftRevocation', { fingerprint: sshd.hostKeyFingerprint })).toEqual({ ok: true, lifted: 1 });
    expect(await client.call('hostkeys.liftRevocation', { fingerprint: sshd.hostKeyFingerprint })).toEqual({ ok: true, lifted: 0 });
    expect(await client.call('hostkeys.revoked')).toEqual([]);
    expect((await failure(client.call('ssh.open', { connectionId }))).code).toBe('EHOSTKEY_UNKNOWN');
    await client.call('hostkeys.trust', { kind: 'ssh', host: sshd.host, port: sshd.port, keyType: sshd.hostKeyType, fingerprint: sshd.hostKeyFingerprint });
    expect(await whoami()).toBe(sshd.users.password.username);
    await client.call('hostkeys.forget', { kind: 'ssh', host: sshd.host, port: sshd.port });
  });

  test('hostkeys.matchHashed finds the hashed entries a host name stands for', async () => {
    const path = hashedFile('known_hosts_hashed_match', `[${sshd.host}]:${sshd.port},db9.example.com ${serverKey()}`);
    expect(await client.call('hostkeys.importKnownHosts', { path })).toMatchObject({ imported: 2 });
    const names = readFileSync(path, 'utf8').trim().split('\n').map((l) => l.split(' ')[0]);
    expect(await client.call('hostkeys.matchHashed', { names: [`[${sshd.host}]:${sshd.port}`] })).toEqual([names[0]]);
    expect(await client.call('hostkeys.matchHashed', { names: ['db9.example.com', 'db8.example.com'] })).toEqual([names[1]]);
    expect(await client.call('hostkeys.matchHashed', { names: [sshd.host, '[db9.example.com]:2222'] })).toEqual([]);
    for (const name of names) await client.call('hostkeys.forget', { kind: 'ssh', host: name ?? '' });
  });

  test('a missing, unreadable or wrong file gets an error that names it; "~/" is the home folder', async () => {
    const missing = await failure(client.call('hostkeys.importKnownHosts', { path: '~/no-such-known-hosts-file' }));
    expect(missing.code).toBe('ENOTFOUND');
    expect(missing.message).toContain(join(homedir(), 'no-such-known-hosts-file'));

    const dir = join(files, 'a-folder');
    mkdirSync(dir);
    const folder = await failure(client.call('hostkeys.importKnownHosts', { path: dir }));
    expect(folder.code).toBe('EBADARGS');
    expect(folder.message).toBe(`${dir} is a folder: give an OpenSSH known_hosts file.`);

    const config = write('ssh_config', 'Host web01\n  HostName 10.0.0.5\n  IdentityFile ~/.ssh/id_ed25519 extra\n');
    expect(await client.call('hostkeys.importKnownHosts', { path: config })).toEqual({ imported: 0, skipped: 3, ...noFindings });
  });
});

/**
 * OpenSSH lowercases a host name before it looks in known_hosts (and hashes it lowercased), so a
 * connection saved as "LocalHost" is the server of the entries for "localhost". A Wraith whose
 * database was written before names were folded has a key stored as "LocalHost": it still serves.
 */
describe('host names without case, as OpenSSH reads them', () => {
  let cased: App;
  let casedClient: ContractClient;
  let casedDir: string;
  /** A connection that names the server in upper case, and one in lower case: "localhost" is 127.0.0.1, where sshd listens. */
  let upper: string;
  let lower: string;

  beforeAll(async () => {
    casedDir = mkdtempSync(join(tmpdir(), 'wraith-known-hosts-case-'));
    // The database as a Wraith before this change left it: the server's key trusted as "LocalHost".
    const before = openDatabase(casedDir, { migrations: loadMigrations().filter((m) => m.version < 4) });
    before
      .prepare(`INSERT INTO known_hosts (kind, host, port, key_type, fingerprint, hashed, source, added_at) VALUES ('ssh', 'LocalHost', ?, ?, ?, 0, 'user', ?)`)
      .run(sshd.port, sshd.hostKeyType, sshd.hostKeyFingerprint, new Date().toISOString());
    before.close();
    cased = new App({ dataDir: casedDir, host: 'in-process' });
    casedClient = connectInProcess(cased);
    await casedClient.call('vault.init', { protection: 'keyfile' });
    const save = (name: string, host: string) =>
      casedClient.call('connections.create', {
        name,
        kind: 'ssh',
        host,
        port: sshd.port,
        username: sshd.users.password.username,
        authMethod: 'password',
        secrets: { password: sshd.users.password.password },
      });
    upper = (await save('Web upper', 'LOCALHOST')).id;
    lower = (await save('web lower', 'localhost')).id;
  });

  afterAll(async () => {
    casedClient?.close();
    await cased?.dispose();
    rmSync(casedDir, { recursive: true, force: true });
  });

  async function whoamiOn(id: string): Promise<string> {
    const { sessionId } = await casedClient.call('ssh.open', { connectionId: id });
    const r = await casedClient.call('ssh.exec', { sessionId, command: 'whoami' });
    await casedClient.call('sessions.close', { sessionId });
    return r.stdout.trim();
  }

  const entries = () => casedClient.call('hostkeys.list');

  test('a key stored in upper case before serves every case of the name, stored once in lower case', async () => {
    expect(await entries()).toEqual([expect.objectContaining({ host: 'localhost', port: sshd.port, fingerprint: sshd.hostKeyFingerprint, source: 'user' })]);
    expect(await whoamiOn(upper)).toBe(sshd.users.password.username);
    expect(await whoamiOn(lower)).toBe(sshd.users.password.username);
    // Forgotten by any case of the name, as it is found by any.
    expect(await casedClient.call('hostkeys.forget', { kind: 'ssh', host: 'LocalHost', port: sshd.port })).toEqual({ ok: true, forgotten: 1 });
    expect(await entries()).toEqual([]);
  });

  test('a plain known_hosts entry in lower case serves the connection saved in upper case, and one in upper case the other', async () => {
    const path = write('known_hosts_case_plain', `[localhost]:${sshd.port} ${serverKey()}\n`);
    expect(await casedClient.call('hostkeys.importKnownHosts', { path })).toEqual({ imported: 1, skipped: 0, ...noFindings });
    expect(await whoamiOn(upper)).toBe(sshd.users.password.username);
    await casedClient.call('hostkeys.forget', { kind: 'ssh', host: 'localhost', port: sshd.port });

    // OpenSSH matches a file's names without case too: "[LocalHost]:port" is the same server, stored lowercased.
    const shouting = write('known_hosts_case_upper', `[LocalHost]:${sshd.port} ${serverKey()}\n`);
    expect(await casedClient.call('hostkeys.importKnownHosts', { path: shouting })).toEqual({ imported: 1, skipped: 0, ...noFindings });
    expect((await entries()).map((e) => e.host)).toEqual(['localhost']);
    expect(await whoamiOn(lower)).toBe(sshd.users.password.username);
    // Both files again: the key is trusted already under either spelling, nothing is added.
    expect(await casedClient.call('hostkeys.importKnownHosts', { path })).toEqual({ imported: 0, skipped: 0, ...noFindings });
    await casedClient.call('hostkeys.forget', { kind: 'ssh', host: 'LOCALHOST', port: sshd.port });
    expect(await entries()).toEqual([]);
  });

  test('a hashed entry (ssh-keygen -H hashes the lowercased name) serves the connection saved in upper case', async () => {
    const path = hashedFile('known_hosts_case_hashed', `[localhost]:${sshd.port} ${serverKey()}`);
    expect(await casedClient.call('hostkeys.importKnownHosts', { path })).toEqual({ imported: 1, skipped: 0, ...noFindings });
    const [hashedName = ''] = readFileSync(path, 'utf8').split(' ');
    expect(await whoamiOn(upper)).toBe(sshd.users.password.username);
    // What the Known hosts view asks to name the connections of a hashed entry.
    expect(await casedClient.call('hostkeys.matchHashed', { names: [`[LOCALHOST]:${sshd.port}`] })).toEqual([hashedName]);
    // Forgetting the server by its name in upper case forgets the hashed entry for it.
    expect(await casedClient.call('hostkeys.forget', { kind: 'ssh', host: 'LOCALHOST', port: sshd.port })).toEqual({ ok: true, forgotten: 1 });
    expect((await failure(casedClient.call('ssh.open', { connectionId: upper }))).code).toBe('EHOSTKEY_UNKNOWN');
  });

  test('trusting the key from the upper-case connection makes one entry, which the lower-case one uses too', async () => {
    const unknown = await failure(casedClient.call('ssh.open', { connectionId: upper }));
    expect(unknown.code).toBe('EHOSTKEY_UNKNOWN');
    // The prompt passes back what the error says, the host as the connection has it.
    expect(unknown.details).toMatchObject({ host: 'LOCALHOST' });
    const asked = { host: String(unknown.details?.host), port: Number(unknown.details?.port), keyType: String(unknown.details?.keyType), fingerprint: String(unknown.details?.fingerprint) };
    expect(await casedClient.call('hostkeys.trust', { kind: 'ssh', ...asked })).toMatchObject({ host: 'localhost' });
    await casedClient.call('hostkeys.trust', { kind: 'ssh', host: 'localhost', port: sshd.port, keyType: sshd.hostKeyType, fingerprint: sshd.hostKeyFingerprint });
    expect(await entries()).toEqual([expect.objectContaining({ host: 'localhost', port: sshd.port, fingerprint: sshd.hostKeyFingerprint })]);
    expect(await whoamiOn(lower)).toBe(sshd.users.password.username);
    expect(await whoamiOn(upper)).toBe(sshd.users.password.username);
  });
});
