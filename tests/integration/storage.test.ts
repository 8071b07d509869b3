import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect, test } from 'vitest';
import { DEFAULT_SETTINGS } from '../../src-main/common/contract/settings.js';
import { App } from '../../src-main/node/app.js';
import { connectInProcess } from '../../src-main/node/in-process.js';
import { loadMigrations, migrate, openDatabase } from '../../src-main/node/db/database.js';
import { REPO_ROOT } from '../fixtures/wraith-server.js';

const temp = () => mkdtempSync(join(tmpdir(), 'wraith-storage-'));

test('migrations apply on an empty database, then never again', () => {
  const dir = temp();
  const db = openDatabase(dir);
  const versions = (db.prepare('SELECT version FROM schema_migrations ORDER BY version').all() as { version: number }[]).map((r) => r.version);
  expect(versions).toEqual(loadMigrations().map((m) => m.version));
  expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
  expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
  expect(migrate(db)).toEqual([]);
  db.close();
});

test('a new migration applies on an existing database and keeps its data', () => {
  const dir = temp();
  const migrationsDir = join(dir, 'migrations');
  mkdirSync(migrationsDir);
  for (const f of readdirSync(join(REPO_ROOT, 'migrations'))) copyFileSync(join(REPO_ROOT, 'migrations', f), join(migrationsDir, f));
  const db1 = openDatabase(dir, { migrations: loadMigrations(migrationsDir) });
  db1.prepare("INSERT INTO settings (key, value) VALUES ('k', '1')").run();
  db1.close();
  writeFileSync(join(migrationsDir, '900_extra.sql'), 'ALTER TABLE settings ADD COLUMN note TEXT;');
  const db2 = new Database(join(dir, 'wraith.db'));
  expect(migrate(db2, loadMigrations(migrationsDir))).toEqual([900]);
  expect(db2.prepare("SELECT value, note FROM settings WHERE key = 'k'").get()).toEqual({ value: '1', note: null });
  db2.close();
});

test('a broken migration rolls back whole and is not recorded', () => {
  const dir = temp();
  const db = new Database(join(dir, 'x.db'));
  expect(() => migrate(db, [{ version: 1, name: 'bad', sql: 'CREATE TABLE a (x); CREATE TABLE a (y);' }])).toThrow();
  expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'a'").get()).toBeUndefined();
  expect(db.prepare('SELECT COUNT(*) AS n FROM schema_migrations').get()).toEqual({ n: 0 });
  db.close();
});

test('kill -9 in the middle of writes leaves a consistent database', async () => {
  const dir = temp();
  openDatabase(dir).close();
  // A writer that creates connections with three tags each, one transaction per connection.
  const writer = `
    import { App } from '${join(REPO_ROOT, 'src-main/node/app.ts')}';
    const app = new App({ dataDir: process.argv[2], host: 'in-process' });
    let i = 0;
    for (;;) {
      app.connections.create({ name: 'c' + i++, kind: 'ssh', host: 'h', port: 22, username: '', groupId: null,
        tags: ['a', 'b', 'c'], authMethod: 'password', keyPath: null, jumpHostId: null, sshOptions: {}, rdpOptions: {}, notes: '' });
      if (i % 50 === 0) process.stdout.write('.');
    }`;
  const file = join(dir, 'writer.ts');
  writeFileSync(file, writer);
  const child = spawn(process.execPath, ['--import', 'tsx', file, dir], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve) => {
    let dots = 0;
    child.stdout.on('data', (d: Buffer) => {
      dots += d.toString().length;
      if (dots >= 10) resolve(); // at least 500 committed connections, writing continues
    });
  });
  child.kill('SIGKILL');
  await new Promise((r) => child.once('exit', r));

  const app = new App({ dataDir: dir, host: 'in-process' });
  expect(app.db.pragma('integrity_check', { simple: true })).toBe('ok');
  const { connections } = app.connections.list();
  expect(connections.length).toBeGreaterThanOrEqual(500);
  for (const c of connections) expect(c.tags).toEqual(['a', 'b', 'c']);
  await app.dispose();
});

test('neither the database nor its WAL holds a secret in plaintext', async () => {
  const dir = temp();
  const app = new App({ dataDir: dir, host: 'in-process' });
  const password = 'PlainTextNeedle-7f3a9c-password';
  const key = '-----BEGIN OPENSSH PRIVATE KEY-----\nNeedleKeyMaterial0123456789abcdef\n-----END OPENSSH PRIVATE KEY-----';
  const master = 'MasterNeedle-correct-horse';
  app.vault.init({ protection: 'password', password: master });
  app.connections.create(
    { name: 'db', kind: 'ssh', host: 'db1', port: 22, username: 'ops', groupId: null, tags: [], authMethod: 'key',
      keyPath: null, jumpHostId: null, sshOptions: {}, rdpOptions: {}, notes: '' },
    { password, privateKey: key, passphrase: 'PassphraseNeedle-42' },
  );
  // Read the files while the WAL still holds the pages, and again after a checkpoint.
  const needles = [password, 'NeedleKeyMaterial', 'PassphraseNeedle-42', master];
  const scan = () => {
    for (const f of readdirSync(dir).filter((f) => f.startsWith('wraith.db'))) {
      const bytes = readFileSync(join(dir, f));
      for (const n of needles) {
        expect(bytes.includes(Buffer.from(n)), `${n} in ${f}`).toBe(false);
        expect(bytes.includes(Buffer.from(n, 'utf16le')), `${n} (utf16) in ${f}`).toBe(false);
        expect(bytes.includes(Buffer.from(Buffer.from(n).toString('base64').slice(0, 16))), `${n} (base64) in ${f}`).toBe(false);
      }
    }
  };
  scan();
  app.db.pragma('wal_checkpoint(TRUNCATE)');
  scan();
  // And the secrets are really there, behind the vault.
  const c = app.connections.list().connections[0];
  expect(c && app.connections.resolve(c.id).password).toBe(password);
  await app.dispose();
});

test('a stored setting that the contract now refuses (a blank font family) falls back alone; the others stay', async () => {
  const dir = temp();
  const db = openDatabase(dir);
  // As an older Wraith saved them, before a blank family was refused.
  const put = db.prepare('INSERT INTO settings (key, value) VALUES (?, ?)');
  put.run('terminal.fontFamily', JSON.stringify(''));
  put.run('terminal.fontSize', JSON.stringify(18));
  put.run('terminal.scrollback', JSON.stringify(5000));
  db.close();
  const app = new App({ dataDir: dir, host: 'in-process' });
  const client = connectInProcess(app);
  try {
    const s = await client.call('settings.get');
    expect(s['terminal.fontFamily']).toBe(DEFAULT_SETTINGS['terminal.fontFamily']);
    expect(s).toMatchObject({ 'terminal.fontSize': 18, 'terminal.scrollback': 5000 });
  } finally {
    client.close();
    await app.dispose();
  }
});
