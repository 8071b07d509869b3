/**
 * SSH host names have no case in host-key lookups, as in OpenSSH: ssh.c lowercases the host before
 * it reads known_hosts, matches plain names without case, and a hashed entry hashes the
 * lowercased name. So a connection saved as "Web01.Example.com" uses the key imported for
 * "web01.example.com", trusting it adds no second entry, and Known hosts names it for that entry.
 * RDP certificates are looked up the same way, and an IPv6 address in brackets ("[::1]", as a
 * person may write it) is the address every connection dials and looks its key up under ("::1").
 */
import Database from 'better-sqlite3';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { Connection } from '../../src-main/common/contract/connections.js';
import { hostKeyHost, sshHostKeyHost } from '../../src-main/common/host-address.js';
import { type Db, loadMigrations, migrate } from '../../src-main/node/db/database.js';
import { HostKeyStore } from '../../src-main/node/hostkeys/host-key-store.js';
import { connectionNamesByServer, connectionNamesOfHashed, serverAt } from '../../src-renderer/features/hostkeys/connection-names.js';

const KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEnTcTb8UIP4N8vOOT7LLokg486AEzSiSIECg+UKPET+';
/** KEY's fingerprint, as ssh-keygen -lf prints it. */
const FP = 'SHA256:zxZ9MTN+unOprcBLxdaYGntG1M/tw1vdbrTe2j+EUaI';
const OTHER_FP = 'SHA256:' + 'A'.repeat(43);
const TYPE = 'ssh-ed25519';

let dir: string;
let db: Db;
let store: HostKeyStore;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'wraith-host-case-'));
  db = new Database(':memory:');
  migrate(db);
  store = new HostKeyStore(db);
});

afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A known_hosts file of these lines; hashed by ssh-keygen -H (as HashKnownHosts writes them) when asked. */
function knownHosts(lines: string[], opts: { hashed?: boolean } = {}): string {
  const path = join(dir, `known_hosts_${Math.random().toString(36).slice(2)}`);
  writeFileSync(path, lines.join('\n') + '\n');
  if (opts.hashed) execFileSync('ssh-keygen', ['-H', '-f', path], { stdio: 'ignore' });
  return path;
}

const hosts = () => store.list().map((e) => `${e.host} ${e.port}`);

describe('sshHostKeyHost', () => {
  test('lowercases ASCII letters only: names, IPv6 hex digits and zones; IPv4 as it is', () => {
    expect(sshHostKeyHost('Web01.Example.COM')).toBe('web01.example.com');
    expect(sshHostKeyHost('FE80::1%ETH0')).toBe('fe80::1%eth0');
    expect(sshHostKeyHost('10.0.0.5')).toBe('10.0.0.5');
    // As C's tolower() and SQLite's lower(), which folded the stored names: nothing beyond ASCII.
    expect(sshHostKeyHost('ÄBC')).toBe('Äbc');
  });

  test('hostKeyHost: the host as dialled (no brackets), without case, for keys and certificates alike', () => {
    expect(hostKeyHost('[::1]')).toBe('::1');
    expect(hostKeyHost('[FE80::1%ETH0]')).toBe('fe80::1%eth0');
    expect(hostKeyHost('Desk01.Example.com')).toBe('desk01.example.com');
    expect(hostKeyHost('10.0.0.5')).toBe('10.0.0.5');
  });
});

describe('HostKeyStore: SSH host names without case', () => {
  test('the key imported for a lower-case name is the key of the name in any case, plain and hashed, on port 22 and others', () => {
    const path = knownHosts([`web01.example.com,[web01.example.com]:2222,fe80::1,[fe80::1]:2222 ${KEY}`]);
    expect(store.importKnownHosts(path)).toMatchObject({ imported: 4 });
    for (const [host, port] of [['Web01.Example.com', 22], ['WEB01.EXAMPLE.COM', 2222], ['FE80::1', 22], ['Fe80::1', 2222]] as const) {
      expect(store.check('ssh', host, port, TYPE, FP), `${host} ${port}`).toEqual({ status: 'trusted' });
      expect(store.check('ssh', host, port, TYPE, OTHER_FP), `${host} ${port}`).toMatchObject({ status: 'changed', knownFingerprint: FP });
    }
    // Another port is another server, in any case.
    expect(store.check('ssh', 'Web01.Example.com', 2200, TYPE, FP)).toEqual({ status: 'unknown' });

    store.forget('ssh', 'web01.example.com', 22);
    store.forget('ssh', 'web01.example.com', 2222);
    store.forget('ssh', 'fe80::1', 22);
    store.forget('ssh', 'fe80::1', 2222);
    expect(store.list()).toEqual([]);
    const hashed = knownHosts([`web01.example.com,[web01.example.com]:2222,[fe80::1]:2222 ${KEY}`], { hashed: true });
    expect(store.importKnownHosts(hashed)).toMatchObject({ imported: 3 });
    expect(store.list().every((e) => e.host.startsWith('|1|'))).toBe(true);
    for (const [host, port] of [['Web01.Example.com', 22], ['WEB01.example.com', 2222], ['FE80::1', 2222]] as const) {
      expect(store.check('ssh', host, port, TYPE, FP), `${host} ${port}`).toEqual({ status: 'trusted' });
    }
    expect(store.matchHashed(['WEB01.EXAMPLE.COM', '[Web01.Example.com]:2222', '[FE80::1]:2222'])).toHaveLength(3);
    // The hashed entries for a server are forgotten by its name in any case.
    expect(store.forget('ssh', 'Web01.Example.COM', 2222)).toBe(1);
  });

  test('a name in upper case in the file is the lower-case server (OpenSSH matches plain names without case)', () => {
    expect(store.importKnownHosts(knownHosts([`Web01.Example.COM,[DB1.example.com]:2222 ${KEY}`]))).toMatchObject({ imported: 2 });
    expect(hosts()).toEqual(['db1.example.com 2222', 'web01.example.com 22']);
    expect(store.check('ssh', 'web01.example.com', 22, TYPE, FP)).toEqual({ status: 'trusted' });
    // The same server under another spelling, with another key, is a conflict, not a second key.
    const other = `ssh-ed25519 ${Buffer.concat([Buffer.from([0, 0, 0, 11]), Buffer.from('ssh-ed25519'), Buffer.alloc(36, 7)]).toString('base64')}`;
    expect(store.importKnownHosts(knownHosts([`WEB01.example.com ${other}`]))).toMatchObject({ imported: 0, conflicts: 1, conflicting: [{ host: 'web01.example.com', port: 22 }] });
    expect(hosts()).toEqual(['db1.example.com 2222', 'web01.example.com 22']);
  });

  test('trusting a key under another case replaces the entry, never stands beside it', () => {
    store.importKnownHosts(knownHosts([`web01.example.com ${KEY}`]));
    expect(store.trust('ssh', 'Web01.Example.com', 22, TYPE, OTHER_FP)).toMatchObject({ host: 'web01.example.com' });
    expect(store.list()).toEqual([expect.objectContaining({ host: 'web01.example.com', port: 22, fingerprint: OTHER_FP, source: 'user' })]);
    store.trust('ssh', 'WEB01.EXAMPLE.COM', 22, TYPE, FP);
    expect(store.list()).toEqual([expect.objectContaining({ host: 'web01.example.com', fingerprint: FP })]);
    expect(store.check('ssh', 'web01.example.com', 22, TYPE, OTHER_FP)).toMatchObject({ status: 'changed', knownFingerprint: FP });

    // A hashed entry for the server is what was trusted before too, whatever the case it is trusted in.
    store.forget('ssh', 'web01.example.com', 22);
    store.importKnownHosts(knownHosts([`[web01.example.com]:2222 ${KEY}`], { hashed: true }));
    store.trust('ssh', 'Web01.Example.com', 2222, TYPE, OTHER_FP);
    expect(hosts()).toEqual(['web01.example.com 2222']);
  });

  test('RDP certificates are the server\'s in any case of its name too: stored once in lower case, found and forgotten by any', () => {
    const cert = Array.from({ length: 32 }, () => 'ab').join(':');
    const other = Array.from({ length: 32 }, () => 'cd').join(':');
    store.trust('rdp', 'RDP01.Example.com', 3389, 'x509', cert);
    expect(hosts()).toEqual(['rdp01.example.com 3389']);
    for (const host of ['RDP01.Example.com', 'rdp01.example.com', 'RDP01.EXAMPLE.COM']) {
      expect(store.check('rdp', host, 3389, 'x509', cert), host).toEqual({ status: 'trusted' });
      expect(store.certificate(host, 3389), host).toMatchObject({ kind: 'rdp', host: 'rdp01.example.com', fingerprint: cert });
    }
    expect(store.certificate('rdp01.example.com', 3390)).toBeNull();
    // Trusting another certificate under another case replaces it: one certificate per server.
    store.trust('rdp', 'rdp01.EXAMPLE.com', 3389, 'x509', other);
    expect(store.list()).toEqual([expect.objectContaining({ kind: 'rdp', host: 'rdp01.example.com', fingerprint: other })]);
    expect(store.forget('rdp', 'Rdp01.Example.Com', 3389)).toBe(1);
    expect(store.list()).toEqual([]);
  });
});

describe('HostKeyStore: an IPv6 address in brackets is the address', () => {
  test('a key trusted as [::1] is stored as ::1, the address connections dial and look it up under; found and forgotten either way', () => {
    const entry = store.trust('ssh', '[::1]', 2222, TYPE, FP);
    expect(entry).toMatchObject({ host: '::1', port: 2222 });
    expect(hosts()).toEqual(['::1 2222']);
    for (const host of ['::1', '[::1]']) expect(store.check('ssh', host, 2222, TYPE, FP), host).toEqual({ status: 'trusted' });
    // Trusted again bare: the same entry, not a second one.
    store.trust('ssh', '::1', 2222, TYPE, FP);
    expect(hosts()).toEqual(['::1 2222']);
    expect(store.forget('ssh', '[::1]', 2222)).toBe(1);

    // The same of RDP certificates, and of an address with letters: in brackets and in any case.
    const cert = Array.from({ length: 32 }, () => 'ab').join(':');
    store.trust('rdp', '[FE80::1]', 3389, 'x509', cert);
    expect(hosts()).toEqual(['fe80::1 3389']);
    expect(store.certificate('fe80::1', 3389)).toMatchObject({ fingerprint: cert });
    expect(store.check('rdp', '[fe80::1]', 3389, 'x509', cert)).toEqual({ status: 'trusted' });
  });

  test('a hashed known_hosts entry for [::1]:port is found for the key trusted in brackets (one key, not a second)', () => {
    store.importKnownHosts(knownHosts([`[::1]:2222 ${KEY}`], { hashed: true }));
    expect(store.check('ssh', '[::1]', 2222, TYPE, FP)).toEqual({ status: 'trusted' });
    store.trust('ssh', '[::1]', 2222, TYPE, OTHER_FP);
    expect(store.list()).toEqual([expect.objectContaining({ host: '::1', port: 2222, fingerprint: OTHER_FP })]);
  });
});

type StoredRow = [kind: string, host: string, port: number, fingerprint: string, hashed: number, source: string, addedAt: string];

/** A database as Wraith left it before migration `version`, with these rows. */
function before(version: number, rows: StoredRow[]): Db {
  const old = new Database(':memory:');
  migrate(old, loadMigrations().filter((m) => m.version < version));
  const put = old.prepare('INSERT INTO known_hosts (kind, host, port, key_type, fingerprint, hashed, source, added_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
  for (const [kind, host, port, fp, hashed, source, at] of rows) put.run(kind, host, port, kind === 'rdp' ? 'x509' : TYPE, fp, hashed, source, at);
  return old;
}

/** Applies migrations up to and including `version`. */
const migrateTo = (db: Db, version: number) => migrate(db, loadMigrations().filter((m) => m.version <= version));

describe('migration 005: SSH names stored in upper case before', () => {
  test('are lowercased and keep serving; hashed names and RDP names are left as they are', () => {
    const hashedName = '|1|she6AiV0lc3E5+wWrFRLX5rpR0Y=|5Fr/zk1emCwVQtqvPt9aZzuzIpQ=';
    const old = before(5, [
      ['ssh', 'Web01.Example.com', 22, FP, 0, 'user', '2024-01-01T00:00:00.000Z'],
      ['ssh', 'FE80::1', 2222, FP, 0, 'known_hosts', '2024-01-01T00:00:00.000Z'],
      ['ssh', hashedName, 0, FP, 1, 'known_hosts', '2024-01-01T00:00:00.000Z'],
      ['rdp', 'RDP01', 3389, 'ab', 0, 'user', '2024-01-01T00:00:00.000Z'],
    ]);
    try {
      expect(migrateTo(old, 5)).toEqual([5]);
      const migrated = new HostKeyStore(old);
      expect(migrated.list().map((e) => `${e.kind} ${e.host} ${e.port}`)).toEqual(['rdp RDP01 3389', 'ssh fe80::1 2222', 'ssh web01.example.com 22', `ssh ${hashedName} 0`]);
      expect(migrated.check('ssh', 'Web01.Example.com', 22, TYPE, FP)).toEqual({ status: 'trusted' });
      expect(migrated.check('ssh', 'web01.example.com', 22, TYPE, FP)).toEqual({ status: 'trusted' });
      expect(migrated.check('ssh', 'fe80::1', 2222, TYPE, FP)).toEqual({ status: 'trusted' });
    } finally {
      old.close();
    }
  });

  test('two names that differed only in case keep one key per type: the one trusted in Wraith, then the latest', () => {
    const old = before(5, [
      ['ssh', 'web01', 22, OTHER_FP, 0, 'known_hosts', '2024-03-01T00:00:00.000Z'],
      ['ssh', 'Web01', 22, FP, 0, 'user', '2024-01-01T00:00:00.000Z'],
      ['ssh', 'DB1', 22, OTHER_FP, 0, 'user', '2024-01-01T00:00:00.000Z'],
      ['ssh', 'db1', 22, FP, 0, 'user', '2024-02-01T00:00:00.000Z'],
      ['ssh', 'db1', 2222, OTHER_FP, 0, 'user', '2024-01-01T00:00:00.000Z'],
    ]);
    try {
      migrateTo(old, 5);
      expect(new HostKeyStore(old).list().map((e) => `${e.host} ${e.port} ${e.fingerprint}`)).toEqual([`db1 22 ${FP}`, `db1 2222 ${OTHER_FP}`, `web01 22 ${FP}`]);
      // The key dropped is a changed key now: shown and asked about, never accepted unasked.
      expect(new HostKeyStore(old).check('ssh', 'web01', 22, TYPE, OTHER_FP)).toMatchObject({ status: 'changed' });
    } finally {
      old.close();
    }
  });
});

describe('migration 007: RDP names in upper case and names in brackets stored before', () => {
  const CERT = Array.from({ length: 32 }, () => 'ab').join(':');
  const OTHER_CERT = Array.from({ length: 32 }, () => 'cd').join(':');

  test('are stored as the host is dialled, without case, and keep serving; hashed names stay as they are', () => {
    const hashedName = '|1|she6AiV0lc3E5+wWrFRLX5rpR0Y=|5Fr/zk1emCwVQtqvPt9aZzuzIpQ=';
    const old = before(7, [
      ['rdp', 'RDP01.Example.com', 3389, CERT, 0, 'user', '2024-01-01T00:00:00.000Z'],
      ['rdp', '[FE80::2]', 3389, CERT, 0, 'user', '2024-01-01T00:00:00.000Z'],
      ['ssh', '[::1]', 2222, FP, 0, 'user', '2024-01-01T00:00:00.000Z'],
      ['ssh', hashedName, 0, FP, 1, 'known_hosts', '2024-01-01T00:00:00.000Z'],
    ]);
    try {
      expect(migrate(old)).toEqual([7]);
      const migrated = new HostKeyStore(old);
      expect(migrated.list().map((e) => `${e.kind} ${e.host} ${e.port}`)).toEqual(['rdp fe80::2 3389', 'rdp rdp01.example.com 3389', 'ssh ::1 2222', `ssh ${hashedName} 0`]);
      expect(migrated.certificate('RDP01.Example.com', 3389)).toMatchObject({ fingerprint: CERT });
      expect(migrated.certificate('fe80::2', 3389)).toMatchObject({ fingerprint: CERT });
      expect(migrated.check('ssh', '::1', 2222, TYPE, FP)).toEqual({ status: 'trusted' });
    } finally {
      old.close();
    }
  });

  test('names that become one keep one certificate per RDP server and one key per type: the one trusted in Wraith, then the latest', () => {
    const old = before(7, [
      ['rdp', 'desk01', 3389, CERT, 0, 'user', '2024-01-01T00:00:00.000Z'],
      ['rdp', 'Desk01', 3389, OTHER_CERT, 0, 'user', '2024-02-01T00:00:00.000Z'],
      ['ssh', '::1', 22, OTHER_FP, 0, 'known_hosts', '2024-03-01T00:00:00.000Z'],
      ['ssh', '[::1]', 22, FP, 0, 'user', '2024-01-01T00:00:00.000Z'],
    ]);
    try {
      migrate(old);
      const migrated = new HostKeyStore(old);
      expect(migrated.list().map((e) => `${e.kind} ${e.host} ${e.port} ${e.fingerprint}`)).toEqual([`rdp desk01 3389 ${OTHER_CERT}`, `ssh ::1 22 ${FP}`]);
      // The one dropped is a changed certificate (key) now: shown and asked about, never accepted unasked.
      expect(migrated.check('rdp', 'desk01', 3389, 'x509', CERT)).toMatchObject({ status: 'changed', knownFingerprint: OTHER_CERT });
      expect(migrated.check('ssh', '::1', 22, TYPE, OTHER_FP)).toMatchObject({ status: 'changed', knownFingerprint: FP });
    } finally {
      old.close();
    }
  });
});

describe('Known hosts names the connections of an entry in any case', () => {
  const connection = (name: string, host: string, port = 22, kind: 'ssh' | 'rdp' = 'ssh') =>
    Connection.parse({
      id: name.toLowerCase().replace(/\W/g, '-'),
      name,
      kind,
      host,
      port,
      hasPassword: false,
      hasPassphrase: false,
      hasPrivateKey: false,
      createdAt: '2024-01-01T00:00:00.000Z',
      updatedAt: '2024-01-01T00:00:00.000Z',
    });

  test('a plain entry: the server of a connection is the same in any case of its host', () => {
    const byServer = connectionNamesByServer([
      connection('Web upper', 'Web01.Example.com'),
      connection('web lower', 'web01.example.com'),
      connection('v6', '[FE80::1]', 2222),
      connection('Desk upper', 'Desk01', 3389, 'rdp'),
      connection('desk lower', 'desk01', 3389, 'rdp'),
    ]);
    expect(byServer.get(serverAt('ssh', 'web01.example.com', 22))).toEqual(['web lower', 'Web upper']);
    expect(byServer.get(serverAt('ssh', 'fe80::1', 2222))).toEqual(['v6']);
    expect(byServer.get(serverAt('rdp', 'desk01', 3389))).toEqual(['desk lower', 'Desk upper']);
  });

  test('a hashed entry names the connection saved in upper case', async () => {
    const path = knownHosts([`web01.example.com ${KEY}`], { hashed: true });
    store.importKnownHosts(path);
    const [entry = ''] = readFileSync(path, 'utf8').split(' ');
    // The renderer's side only: the names it asks about are lowercased, as OpenSSH hashes them.
    const asked: string[][] = [];
    const byEntry = await connectionNamesOfHashed([connection('Web upper', 'Web01.Example.com')], async (names) => {
      asked.push(names);
      return names.includes('web01.example.com') ? [entry] : [];
    });
    expect(asked[0]).toEqual(['web01.example.com']);
    expect(byEntry.get(entry)).toEqual(['Web upper']);
    // And the host's side: it finds the entry for that name as asked.
    expect(store.matchHashed(asked[0] ?? [])).toEqual([entry]);
  });
});
