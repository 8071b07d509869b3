import Database from 'better-sqlite3';
import { mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../paths.js';

export type Db = Database.Database;

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

const MIGRATION_FILE = /^(\d{3})_([a-z0-9_]+)\.sql$/;

export function loadMigrations(dir = join(packageRoot(), 'migrations')): Migration[] {
  const list = readdirSync(dir)
    .map((file) => {
      const m = MIGRATION_FILE.exec(file);
      return m ? { version: Number(m[1]), name: m[2] ?? file, sql: readFileSync(join(dir, file), 'utf8') } : null;
    })
    .filter((m): m is Migration => m !== null)
    .sort((a, b) => a.version - b.version);
  for (let i = 1; i < list.length; i++) {
    if (list[i]?.version === list[i - 1]?.version) throw new Error(`Two migrations share version ${list[i]?.version}`);
  }
  return list;
}

/** Applies every migration not yet recorded, each in its own transaction. Returns the versions applied. */
export function migrate(db: Db, migrations: Migration[] = loadMigrations()): number[] {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`);
  const done = new Set(
    (db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map((r) => r.version),
  );
  const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
  const applied: number[] = [];
  for (const m of migrations) {
    if (done.has(m.version)) continue;
    db.transaction(() => {
      db.exec(m.sql);
      record.run(m.version, m.name, new Date().toISOString());
    })();
    applied.push(m.version);
  }
  return applied;
}

/** Opens (creating if needed) the database in the data dir: WAL, foreign keys on, migrated. */
export function openDatabase(dataDir: string, opts: { migrations?: Migration[] } = {}): Db {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const db = new Database(join(dataDir, 'wraith.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('foreign_keys = ON');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  migrate(db, opts.migrations);
  return db;
}
