import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import type {
  Connection,
  ConnectionFields,
  ConnectionSecrets,
  Group,
} from '../../common/contract/connections.js';
import { WraithError } from '../../common/errors.js';
import type { Db } from '../db/database.js';
import type { SecretKind, Vault } from '../vault/vault.js';
import { type FieldIssue, connectabilityIssues, controlCharacterIssues, keyFileProblem, privateKeyProblem } from './connection-checks.js';

type Fields = z.output<typeof ConnectionFields>;
type Secrets = z.output<typeof ConnectionSecrets>;

interface ConnectionRow {
  id: string;
  name: string;
  kind: 'ssh' | 'rdp';
  host: string;
  port: number;
  username: string;
  group_id: string | null;
  auth_method: Fields['authMethod'];
  key_path: string | null;
  jump_host_id: string | null;
  ssh_options: string;
  rdp_options: string;
  notes: string;
  password_secret_id: string | null;
  passphrase_secret_id: string | null;
  private_key_secret_id: string | null;
  created_at: string;
  updated_at: string;
}

const SECRET_COLUMNS = {
  password: 'password_secret_id',
  passphrase: 'passphrase_secret_id',
  privateKey: 'private_key_secret_id',
} as const satisfies Record<keyof Secrets, keyof ConnectionRow>;

const SECRET_WORDS = { password: 'password', passphrase: 'key passphrase', privateKey: 'private key' } as const satisfies Record<keyof Secrets, string>;

export const DEFAULT_PORTS = { ssh: 22, rdp: 3389 } as const;

/** What a session needs to connect: the stored fields plus secrets read from the vault. */
export interface ResolvedConnection extends Connection {
  password: string | null;
  passphrase: string | null;
  privateKey: string | null;
}

/** Connections, groups and tags in SQLite; their secrets in the vault, referenced by id. */
export class ConnectionsService {
  constructor(
    private readonly db: Db,
    private readonly vault: Vault,
  ) {}

  list(filter: { query?: string; tag?: string } = {}): { connections: Connection[]; groups: Group[]; tags: string[] } {
    let connections = (this.db.prepare('SELECT * FROM connections ORDER BY name COLLATE NOCASE').all() as ConnectionRow[]).map(
      (r) => this.toConnection(r),
    );
    const q = filter.query?.trim().toLowerCase();
    if (q) {
      connections = connections.filter((c) =>
        [c.name, c.host, c.username, ...c.tags].some((s) => s.toLowerCase().includes(q)),
      );
    }
    if (filter.tag) connections = connections.filter((c) => c.tags.includes(filter.tag as string));
    const groups = (
      this.db.prepare('SELECT id, name, parent_id, position FROM groups ORDER BY position, name COLLATE NOCASE').all() as {
        id: string;
        name: string;
        parent_id: string | null;
        position: number;
      }[]
    ).map((g) => ({ id: g.id, name: g.name, parentId: g.parent_id, position: g.position }));
    const tags = (this.db.prepare('SELECT DISTINCT tag FROM connection_tags ORDER BY tag').all() as { tag: string }[]).map(
      (t) => t.tag,
    );
    return { connections, groups, tags };
  }

  get(id: string): Connection {
    return this.toConnection(this.row(id));
  }

  /** The connection with its secrets, for a session about to connect. ELOCKED if a secret is needed and the vault is locked. */
  resolve(id: string): ResolvedConnection {
    const row = this.row(id);
    return {
      ...this.toConnection(row),
      password: this.vault.reveal(row.password_secret_id),
      passphrase: this.vault.reveal(row.passphrase_secret_id),
      privateKey: this.vault.reveal(row.private_key_secret_id),
    };
  }

  /** ELOCKED unless a secret could be written now (the vault is set up and unlocked). */
  assertCanSaveSecrets(): void {
    this.vault.assertWritable();
  }

  /**
   * EBADARGS, with an issue on each field at fault, when the connection a create (`id` null) or an
   * update would save could never connect: an SSH connection without a user name, the key method
   * without a key, a pasted text or a key file that is no private key, a user name or RDP domain
   * with a control character in it (connection-checks.ts). The contract's create and update ask
   * this before saving; an import, a duplicate and the vault writes of a typed password do not.
   * An update is judged on what it changes, so a connection saved before these checks existed (no
   * user name, say) can still be renamed or moved.
   */
  assertSavable(id: string | null, change: Partial<Fields>, secrets: Secrets = {}): void {
    const current = id === null ? null : this.get(id);
    const touched = (...keys: (keyof Fields)[]) => current === null || keys.some((k) => change[k] !== undefined);
    const at = (field: string): string[] => (current === null ? [field] : ['patch', field]);
    const kind = change.kind ?? current?.kind ?? 'ssh';
    const authMethod = change.authMethod ?? current?.authMethod ?? 'password';
    const keyPath = (change.keyPath !== undefined ? change.keyPath : current?.keyPath ?? null)?.trim() || null;
    // Blank is "remove the saved key" (writeSecrets); spaces alone are a paste gone wrong.
    const pasted = typeof secrets.privateKey === 'string' && secrets.privateKey !== '' ? secrets.privateKey : null;
    const hasPrivateKey = secrets.privateKey === undefined ? (current?.hasPrivateKey ?? false) : pasted !== null;
    const keyChanged = touched('kind', 'authMethod', 'keyPath') || secrets.privateKey !== undefined;

    const issues: FieldIssue[] = connectabilityIssues({
      kind,
      username: change.username ?? current?.username ?? '',
      authMethod,
      keyPath,
      hasPrivateKey,
    })
      .filter((i) => (i.path[0] === 'username' ? touched('kind', 'username') : i.path[0] === 'keyPath' ? keyChanged : true))
      .map((i) => ({ ...i, path: at(i.path[0] ?? '') }));

    for (const i of controlCharacterIssues({ username: change.username, domain: change.rdpOptions?.domain })) {
      issues.push({ ...i, path: current === null ? i.path : ['patch', ...i.path] });
    }

    if (kind === 'ssh' && authMethod === 'key' && !issues.some((i) => i.path.at(-1) === 'keyPath')) {
      // The key a connect will use: the pasted (or kept) one before the file, as the connect step takes them.
      if (pasted) {
        const problem = privateKeyProblem(pasted);
        if (problem) issues.push({ path: ['secrets', 'privateKey'], message: problem });
      } else if (!hasPrivateKey && keyPath && keyChanged) {
        const problem = keyFileProblem(keyPath);
        if (problem) issues.push({ path: at('keyPath'), message: problem });
      }
    }
    if (issues.length > 0) {
      throw new WraithError('EBADARGS', issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '), { issues });
    }
  }

  create(fields: Fields, secrets: Secrets = {}): Connection {
    this.checkRefs(null, fields.groupId, fields.jumpHostId);
    const id = randomUUID();
    const now = new Date().toISOString();
    this.db.transaction(() => {
      this.db
        .prepare(
          `INSERT INTO connections (id, name, kind, host, port, username, group_id, auth_method, key_path, jump_host_id,
             ssh_options, rdp_options, notes, created_at, updated_at)
           VALUES (@id, @name, @kind, @host, @port, @username, @groupId, @authMethod, @keyPath, @jumpHostId,
             @sshOptions, @rdpOptions, @notes, @now, @now)`,
        )
        .run({
          ...fields,
          id,
          now,
          port: fields.port ?? DEFAULT_PORTS[fields.kind],
          sshOptions: JSON.stringify(fields.sshOptions),
          rdpOptions: JSON.stringify(fields.rdpOptions),
        });
      this.writeTags(id, fields.tags);
      this.writeSecrets(id, fields.name, secrets);
    })();
    return this.get(id);
  }

  update(id: string, patch: Partial<Fields>, secrets: Secrets = {}): Connection {
    const current = this.get(id);
    const next: Fields = { ...current, ...patch };
    this.checkRefs(id, next.groupId, next.jumpHostId);
    this.db.transaction(() => {
      this.db
        .prepare(
          `UPDATE connections SET name = @name, kind = @kind, host = @host, port = @port, username = @username,
             group_id = @groupId, auth_method = @authMethod, key_path = @keyPath, jump_host_id = @jumpHostId,
             ssh_options = @sshOptions, rdp_options = @rdpOptions, notes = @notes, updated_at = @now WHERE id = @id`,
        )
        .run({
          ...next,
          id,
          now: new Date().toISOString(),
          port: patch.port ?? (patch.kind && patch.kind !== current.kind ? DEFAULT_PORTS[patch.kind] : current.port),
          sshOptions: JSON.stringify(next.sshOptions),
          rdpOptions: JSON.stringify(next.rdpOptions),
        });
      if (patch.tags) this.writeTags(id, patch.tags);
      this.writeSecrets(id, next.name, secrets);
    })();
    return this.get(id);
  }

  /**
   * A copy named "… (copy)", with copies of its saved secrets (password, pasted private key,
   * passphrase) as new vault entries: a copy without them would keep the key method and no key,
   * and fail only at connect. ELOCKED, before anything is written, when it has secrets and the
   * vault is locked: unlocking and duplicating again gives a copy that works.
   */
  duplicate(id: string): Connection {
    const row = this.row(id);
    const c = this.toConnection(row);
    const secrets: Secrets = {};
    const saved = (Object.entries(SECRET_COLUMNS) as [keyof Secrets, (typeof SECRET_COLUMNS)[keyof Secrets]][]).filter(([, col]) => row[col] !== null);
    if (saved.length > 0) {
      try {
        // reveal() needs the vault unlocked: ELOCKED here, before anything is written.
        for (const [field, col] of saved) secrets[field] = this.vault.reveal(row[col]);
      } catch (err) {
        if (!(err instanceof WraithError) || err.code !== 'ELOCKED') throw err;
        const what = saved.map(([field]) => SECRET_WORDS[field]).join(', ');
        throw new WraithError(
          'ELOCKED',
          `Unlock the vault to duplicate ${c.name}: its saved ${what} ${saved.length > 1 ? 'are' : 'is'} kept in the vault, and the copy needs ${saved.length > 1 ? 'them' : 'it'} to connect. Nothing was copied.`,
          { connectionId: id },
        );
      }
    }
    return this.create({ ...c, name: this.copyName(c.name) }, secrets);
  }

  /** "web01 (copy)", then "web01 (copy 2)" and on: a second copy should not look like the first. */
  private copyName(name: string): string {
    const base = name.replace(/ \(copy(?: \d+)?\)$/, '');
    const taken = new Set((this.db.prepare('SELECT name FROM connections').all() as { name: string }[]).map((r) => r.name));
    let copy = `${base} (copy)`;
    for (let n = 2; taken.has(copy); n++) copy = `${base} (copy ${n})`;
    return copy;
  }

  delete(id: string): void {
    const row = this.row(id);
    // The database would set their jump host to none, and they would go on connecting straight to
    // their servers, past the bastion they were meant to go through, with nobody told.
    const usedBy = this.db.prepare('SELECT id, name FROM connections WHERE jump_host_id = ? ORDER BY name').all(id) as { id: string; name: string }[];
    if (usedBy.length) {
      const names = usedBy.map((u) => `"${u.name}"`);
      const list = names.length === 1 ? names[0] : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
      throw new WraithError(
        'EBADARGS',
        `Cannot delete "${row.name}": it is the jump host of ${list}. Give ${usedBy.length === 1 ? 'that connection' : 'those connections'} another jump host (or none), or delete ${usedBy.length === 1 ? 'it' : 'them'}, first.`,
        { reason: 'in_use', usedBy },
      );
    }
    this.db.transaction(() => {
      this.db.prepare('DELETE FROM connections WHERE id = ?').run(id);
      for (const col of Object.values(SECRET_COLUMNS)) {
        const secretId = row[col];
        if (secretId) this.db.prepare('DELETE FROM credentials WHERE id = ?').run(secretId);
      }
    })();
  }

  createGroup(name: string, parentId: string | null): Group {
    if (parentId !== null) this.groupRow(parentId);
    const id = randomUUID();
    const position = (this.db.prepare('SELECT COALESCE(MAX(position), -1) + 1 AS p FROM groups').get() as { p: number }).p;
    this.db.prepare('INSERT INTO groups (id, name, parent_id, position) VALUES (?, ?, ?, ?)').run(id, name, parentId, position);
    return { id, name, parentId, position };
  }

  updateGroup(id: string, patch: { name?: string; parentId?: string | null; position?: number }): Group {
    const g = this.groupRow(id);
    const parentId = patch.parentId === undefined ? g.parent_id : patch.parentId;
    // A group cannot move under itself or one of its descendants.
    for (let p = parentId; p !== null; p = this.groupRow(p).parent_id) {
      if (p === id) throw new WraithError('EBADARGS', 'parentId: A group cannot be moved inside itself.');
    }
    const next = { id, name: patch.name ?? g.name, parentId, position: patch.position ?? g.position };
    this.db.prepare('UPDATE groups SET name = @name, parent_id = @parentId, position = @position WHERE id = @id').run(next);
    return next;
  }

  deleteGroup(id: string): void {
    const g = this.groupRow(id);
    this.db.transaction(() => {
      this.db.prepare('UPDATE connections SET group_id = ? WHERE group_id = ?').run(g.parent_id, id);
      this.db.prepare('UPDATE groups SET parent_id = ? WHERE parent_id = ?').run(g.parent_id, id);
      this.db.prepare('DELETE FROM groups WHERE id = ?').run(id);
    })();
  }

  private row(id: string): ConnectionRow {
    const row = this.db.prepare('SELECT * FROM connections WHERE id = ?').get(id) as ConnectionRow | undefined;
    // The id means nothing to a person; it goes in details for scripts and logs.
    if (!row) {
      throw new WraithError(
        'ENOTFOUND',
        'That saved connection no longer exists: it was deleted (here, in another window or from the CLI). Refresh the connections list, or save the connection again.',
        { connectionId: id },
      );
    }
    return row;
  }

  private groupRow(id: string): { id: string; name: string; parent_id: string | null; position: number } {
    const g = this.db.prepare('SELECT * FROM groups WHERE id = ?').get(id) as
      | { id: string; name: string; parent_id: string | null; position: number }
      | undefined;
    if (!g) throw new WraithError('ENOTFOUND', `No group with id ${id}.`);
    return g;
  }

  private checkRefs(selfId: string | null, groupId: string | null, jumpHostId: string | null): void {
    if (groupId !== null) this.groupRow(groupId);
    // The jump chain must end: no cycles back to this connection, every hop an SSH connection.
    const seen = new Set<string>(selfId ? [selfId] : []);
    for (let hop = jumpHostId; hop !== null; ) {
      if (seen.has(hop)) throw new WraithError('EBADARGS', 'jumpHostId: That jump host chain loops back on itself.');
      seen.add(hop);
      const r = this.db.prepare('SELECT kind, jump_host_id FROM connections WHERE id = ?').get(hop) as
        | { kind: string; jump_host_id: string | null }
        | undefined;
      if (!r) throw new WraithError('EBADARGS', 'jumpHostId: The jump host does not exist.');
      if (r.kind !== 'ssh') throw new WraithError('EBADARGS', 'jumpHostId: A jump host must be an SSH connection.');
      hop = r.jump_host_id;
    }
  }

  private writeTags(id: string, tags: string[]): void {
    this.db.prepare('DELETE FROM connection_tags WHERE connection_id = ?').run(id);
    const ins = this.db.prepare('INSERT OR IGNORE INTO connection_tags (connection_id, tag) VALUES (?, ?)');
    for (const t of tags) ins.run(id, t);
  }

  private writeSecrets(id: string, name: string, secrets: Secrets): void {
    const row = this.row(id);
    for (const [field, col] of Object.entries(SECRET_COLUMNS) as [keyof Secrets, (typeof SECRET_COLUMNS)[keyof Secrets]][]) {
      const value = secrets[field];
      if (value === undefined) continue;
      const existing = row[col];
      if (value === null || value === '') {
        if (existing) {
          this.db.prepare(`UPDATE connections SET ${col} = NULL WHERE id = ?`).run(id);
          this.db.prepare('DELETE FROM credentials WHERE id = ?').run(existing);
        }
        continue;
      }
      const kind: SecretKind = field;
      const secretId = this.vault.setSecret({ id: existing ?? undefined, kind, label: `${name} ${field}`, value });
      if (!existing) this.db.prepare(`UPDATE connections SET ${col} = ? WHERE id = ?`).run(secretId, id);
    }
  }

  private toConnection(r: ConnectionRow): Connection {
    const tags = (
      this.db.prepare('SELECT tag FROM connection_tags WHERE connection_id = ? ORDER BY tag').all(r.id) as { tag: string }[]
    ).map((t) => t.tag);
    return {
      id: r.id,
      name: r.name,
      kind: r.kind,
      host: r.host,
      port: r.port,
      username: r.username,
      groupId: r.group_id,
      tags,
      authMethod: r.auth_method,
      keyPath: r.key_path,
      jumpHostId: r.jump_host_id,
      sshOptions: JSON.parse(r.ssh_options) as Connection['sshOptions'],
      rdpOptions: JSON.parse(r.rdp_options) as Connection['rdpOptions'],
      notes: r.notes,
      hasPassword: r.password_secret_id !== null,
      hasPassphrase: r.passphrase_secret_id !== null,
      hasPrivateKey: r.private_key_secret_id !== null,
      createdAt: r.created_at,
      updatedAt: r.updated_at,
    };
  }
}
