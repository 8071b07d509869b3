import type { Db } from '../db/database.js';

/** A remote temp our cleanup could not remove because the connection was gone: its site and its path there. */
export interface OrphanTemp {
  site: string;
  path: string;
}

/**
 * Where SftpService remembers those temps beyond its own life (the App: its database), so that
 * they are removed through the next session to their site after a restart too, and do not stay on
 * the server for ever. SftpService keeps them in memory as well and reads this once, at start.
 */
export interface OrphanTempStore {
  all(): OrphanTemp[];
  add(temp: OrphanTemp): void;
  /** Once the temp is gone from the server (removed, or it was not there). */
  remove(temp: OrphanTemp): void;
}

/**
 * The temps in the database's sftp_orphan_temps (migration 004), each site a saved connection's id:
 * a connection deleted takes its rows with it (migration 006), and a temp noted for one deleted
 * already is not stored (the foreign key refuses it; SftpService keeps it in memory).
 */
export class DbOrphanTemps implements OrphanTempStore {
  constructor(private readonly db: Db) {}

  all(): OrphanTemp[] {
    return this.db.prepare('SELECT site, path FROM sftp_orphan_temps ORDER BY noted_at, path').all() as OrphanTemp[];
  }

  add(temp: OrphanTemp): void {
    this.db.prepare('INSERT OR IGNORE INTO sftp_orphan_temps (site, path, noted_at) VALUES (?, ?, ?)').run(temp.site, temp.path, new Date().toISOString());
  }

  remove(temp: OrphanTemp): void {
    this.db.prepare('DELETE FROM sftp_orphan_temps WHERE site = ? AND path = ?').run(temp.site, temp.path);
  }
}
