import { createHash, createHmac } from 'node:crypto';
import type { HostKeyEntry, KnownHostsImport, RevokedHostKey } from '../../common/contract/hostkeys.js';
import { WraithError } from '../../common/errors.js';
import { hostKeyHost, sshHostKeyHost } from '../../common/host-address.js';
import type { Db } from '../db/database.js';
import { readLocalFileSync } from '../local-files.js';
import { expandHome } from '../paths.js';

export type HostKeyKind = 'ssh' | 'rdp';
export type HostKeyVerdict =
  | { status: 'trusted' }
  | { status: 'unknown' }
  | { status: 'changed'; knownFingerprint: string; knownKeyType: string }
  | { status: 'revoked'; revocation: RevokedHostKey };

interface Row {
  kind: HostKeyKind;
  host: string;
  port: number;
  key_type: string;
  fingerprint: string;
  hashed: number;
  source: 'user' | 'known_hosts';
  added_at: string;
}

interface RevokedRow {
  fingerprint: string;
  key_type: string;
  source: string;
  added_at: string;
}

/** OpenSSH's fingerprint of a public key blob: "SHA256:" + unpadded base64 of its SHA-256. */
export function sshFingerprint(keyBlob: Uint8Array): string {
  return 'SHA256:' + createHash('sha256').update(keyBlob).digest('base64').replace(/=+$/, '');
}

/** Thousands of hosts take a few MB; anything far larger is not a known_hosts file. */
const MAX_KNOWN_HOSTS_BYTES = 16 * 1024 * 1024;

/** How OpenSSH writes a host in known_hosts: bare on port 22, "[host]:port" otherwise. */
export function knownHostsName(host: string, port: number): string {
  return port === 22 ? host : `[${host}]:${port}`;
}

/**
 * Whether a hashed known_hosts name ("|1|salt|hash") stands for name, a host as knownHostsName
 * writes it: OpenSSH hashes that whole string ("[host]:port" off port 22) with HMAC-SHA1 keyed by the salt.
 */
export function hashedNameMatches(hashedName: string, name: string): boolean {
  const [, , salt = '', hash = ''] = hashedName.split('|');
  return createHmac('sha1', Buffer.from(salt, 'base64')).update(name).digest('base64') === hash;
}

/**
 * Trusted SSH host keys and RDP certificates by (kind, host, port). Hashed OpenSSH entries
 * ("|1|salt|hash") are kept as they are and matched by HMAC-SHA1 at lookup. A server has one
 * trusted key per key type, however it is named: a hashed entry never stands beside another key.
 * Every other name is stored and looked up as hostKeyHost writes it: without case (as OpenSSH
 * compares host names; migration 005 folded SSH names, 007 RDP ones) and without the brackets an
 * IPv6 address may be written in (007 took them off names stored with them).
 */
export class HostKeyStore {
  constructor(private readonly db: Db) {}

  list(): HostKeyEntry[] {
    return (this.db.prepare('SELECT * FROM known_hosts ORDER BY kind, host, port').all() as Row[]).map(toEntry);
  }

  /**
   * The certificate trusted for the RDP server at host:port (one per server), which FreeRDP is
   * given to compare the one it is offered with; null when none is.
   */
  certificate(host: string, port: number): HostKeyEntry | null {
    const [row] = this.matching('rdp', hostKeyHost(host), port);
    return row ? toEntry(row) : null;
  }

  /** The SSH host keys an import marked @revoked, refused whatever server offers them. */
  listRevoked(): RevokedHostKey[] {
    return (this.db.prepare('SELECT * FROM revoked_host_keys ORDER BY added_at, fingerprint').all() as RevokedRow[]).map(toRevoked);
  }

  /** The revocation of an SSH host key, if an import marked it @revoked. */
  revocation(fingerprint: string): RevokedHostKey | null {
    const row = this.db.prepare('SELECT * FROM revoked_host_keys WHERE fingerprint = ?').get(fingerprint) as RevokedRow | undefined;
    return row ? toRevoked(row) : null;
  }

  /**
   * Lifts a revocation deliberately: the key is then unknown, like every key never seen (nothing is trusted
   * again by this; the next connection asks). Returns how many were lifted (0: it was not revoked).
   */
  liftRevocation(fingerprint: string): number {
    return this.db.prepare('DELETE FROM revoked_host_keys WHERE fingerprint = ?').run(fingerprint).changes;
  }

  /**
   * Compares a presented key with what is trusted for host:port. A revoked SSH key is refused
   * first, whatever the host: OpenSSH's "must not ever be accepted", trusted or not. Only keys of
   * the same type count as "changed": a server offering a key type we never saw is "unknown" (as OpenSSH).
   * But if every trusted key for the host has another type, we still report unknown, never trusted.
   */
  check(kind: HostKeyKind, host: string, port: number, keyType: string, fingerprint: string): HostKeyVerdict {
    const revocation = kind === 'ssh' ? this.revocation(fingerprint) : null;
    if (revocation) return { status: 'revoked', revocation };
    const rows = this.matching(kind, hostKeyHost(host), port);
    if (rows.some((r) => r.fingerprint === fingerprint)) return { status: 'trusted' };
    const sameType = rows.find((r) => r.key_type === keyType);
    if (sameType) return { status: 'changed', knownFingerprint: sameType.fingerprint, knownKeyType: sameType.key_type };
    // RDP certificates have one identity per host:port whatever the "type".
    if (kind === 'rdp' && rows[0]) return { status: 'changed', knownFingerprint: rows[0].fingerprint, knownKeyType: rows[0].key_type };
    return { status: 'unknown' };
  }

  trust(kind: HostKeyKind, name: string, port: number, keyType: string, fingerprint: string): HostKeyEntry {
    const host = hostKeyHost(name);
    const revocation = kind === 'ssh' ? this.revocation(fingerprint) : null;
    if (revocation) {
      throw new WraithError(
        'EHOSTKEY_REVOKED',
        `The host key ${revocation.keyType} ${fingerprint} cannot be trusted: it was marked @revoked in ${revocation.source} (imported ${revocation.revokedAt.slice(0, 10)}), ` +
          'so Wraith refuses it for every server. If that revocation was a mistake, lift it in Known hosts first.',
        { kind, host, port, ...revocation },
      );
    }
    const now = new Date().toISOString();
    this.db.transaction(() => {
      // Trusting replaces what was trusted before for this key type (RDP: for the host:port).
      if (kind === 'rdp') this.db.prepare('DELETE FROM known_hosts WHERE kind = ? AND host = ? AND port = ?').run(kind, host, port);
      // A hashed known_hosts entry for this server with the old key is what was trusted before too.
      for (const r of this.hashedRows(kind, host, port)) {
        if (r.key_type === keyType) this.db.prepare('DELETE FROM known_hosts WHERE kind = ? AND host = ? AND key_type = ?').run(kind, r.host, keyType);
      }
      this.db
        .prepare(
          `INSERT INTO known_hosts (kind, host, port, key_type, fingerprint, hashed, source, added_at)
           VALUES (?, ?, ?, ?, ?, 0, 'user', ?)
           ON CONFLICT(kind, host, port, key_type) DO UPDATE SET fingerprint = excluded.fingerprint,
             source = 'user', added_at = excluded.added_at`,
        )
        .run(kind, host, port, keyType, fingerprint, now);
    })();
    return { kind, host, port, keyType, fingerprint, source: 'user', addedAt: now };
  }

  /**
   * Forgets every key trusted for host:port, hashed known_hosts entries for it included. A hashed
   * name itself ("|1|salt|hash", as hostkeys.list shows it) forgets that entry whatever the port:
   * nobody can tell which host:port it stands for.
   */
  forget(kind: HostKeyKind, name: string, port: number): number {
    if (name.startsWith('|1|')) return this.db.prepare('DELETE FROM known_hosts WHERE kind = ? AND host = ? AND hashed = 1').run(kind, name).changes;
    const host = hostKeyHost(name);
    const hashedHits = this.hashedRows(kind, host, port).map((r) => r.host);
    let n = this.db.prepare('DELETE FROM known_hosts WHERE kind = ? AND host = ? AND port = ?').run(kind, host, port).changes;
    for (const h of hashedHits) n += this.db.prepare('DELETE FROM known_hosts WHERE kind = ? AND host = ?').run(kind, h).changes;
    return n;
  }

  /**
   * The hashed entries' names that stand for any of names (each as knownHostsName writes a host),
   * in any case: OpenSSH hashes the lowercased name.
   */
  matchHashed(names: string[]): string[] {
    const hashed = this.db.prepare(`SELECT DISTINCT host FROM known_hosts WHERE kind = 'ssh' AND hashed = 1`).all() as { host: string }[];
    const lowered = names.map(sshHostKeyHost);
    return hashed.map((r) => r.host).filter((h) => lowered.some((n) => hashedNameMatches(h, n)));
  }

  /**
   * Imports an OpenSSH known_hosts file: plain, "[host]:port", comma lists and hashed entries. A key
   * the file marks @revoked is a key that must never be accepted: it is imported for no host,
   * whatever host its @revoked line names, where Wraith trusts it, it is trusted no longer, and it
   * is remembered as revoked (with this file as where that came from), so later connections and
   * imports refuse it too.
   */
  importKnownHosts(file = '~/.ssh/known_hosts'): KnownHostsImport {
    let text: string;
    try {
      text = readLocalFileSync(file, { maxBytes: MAX_KNOWN_HOSTS_BYTES, what: 'an OpenSSH known_hosts file' }).toString('utf8');
    } catch (err) {
      if (err instanceof WraithError && err.code === 'ENOTFOUND') throw new WraithError('ENOTFOUND', `No known_hosts file at ${expandHome(file)}.`);
      throw err;
    }
    const put = this.db.prepare(
      `INSERT OR IGNORE INTO known_hosts (kind, host, port, key_type, fingerprint, hashed, source, added_at)
       VALUES ('ssh', ?, ?, ?, ?, ?, 'known_hosts', ?)`,
    );
    const byName = this.db.prepare(`SELECT * FROM known_hosts WHERE kind = 'ssh' AND host = ? AND port = ? AND key_type = ?`);
    const ofType = this.db.prepare(`SELECT * FROM known_hosts WHERE kind = 'ssh' AND hashed = ? AND key_type = ?`);
    /**
     * The keys of this type Wraith trusts for the server an entry names, under any name: a plain
     * entry is also looked up among the hashed names, and a hashed one among the servers trusted by
     * name (the hashed name of each) — else a file could add a second key for a trusted server.
     */
    const trustedFor = (host: string, port: number, keyType: string): Row[] => {
      const same = byName.all(host, port, keyType) as Row[];
      const other = ofType.all(port === 0 ? 0 : 1, keyType) as Row[];
      const matches = port === 0 ? (r: Row) => hashedNameMatches(host, knownHostsName(r.host, r.port)) : (r: Row) => hashedNameMatches(r.host, knownHostsName(host, port));
      return [...same, ...other.filter(matches)];
    };
    const lines = text.split('\n').map((raw) => raw.trim().split(/\s+/));
    /** The file's @revoked keys: fingerprint → key type. */
    const revokedKeys = new Map<string, string>();
    for (const [marker, , keyType = '', b64 = ''] of lines) {
      const blob = marker === '@revoked' ? keyBlob(keyType, b64) : null;
      if (blob) revokedKeys.set(sshFingerprint(blob), keyType);
    }
    const isRevoked = this.db.prepare('SELECT 1 FROM revoked_host_keys WHERE fingerprint = ?');
    // The first import that revoked a key stays its source: a later file that says so again adds nothing.
    const remember = this.db.prepare('INSERT OR IGNORE INTO revoked_host_keys (fingerprint, key_type, source, added_at) VALUES (?, ?, ?, ?)');
    const source = expandHome(file);
    const now = new Date().toISOString();
    let imported = 0;
    let skipped = 0;
    let revoked = 0;
    // The file's key where Wraith trusts another of the same type: Wraith's is kept (a file never
    // replaces a trusted key), and the server is named: a differing key is what a man-in-the-middle
    // looks like, which the person has to look into.
    const conflicting: KnownHostsImport['conflicting'] = [];
    const add = (host: string, port: number, keyType: string, fp: string, hashed: 0 | 1) => {
      if (revokedKeys.has(fp) || isRevoked.get(fp)) {
        revoked++;
        return;
      }
      const trusted = trustedFor(host, port, keyType);
      if (trusted.some((r) => r.fingerprint === fp)) return;
      const kept = trusted[0];
      // Named by whichever side can be read: a hashed entry of the file for a server trusted by name is that server.
      if (kept) conflicting.push({ ...(hashed && !kept.hashed ? { host: kept.host, port: kept.port } : { host, port }), keyType, fingerprint: kept.fingerprint, fileFingerprint: fp });
      else if (put.run(host, port, keyType, fp, hashed, now).changes > 0) imported++;
    };
    const revokedForgotten = this.db.transaction(() => {
      for (const [fp, keyType] of revokedKeys) remember.run(fp, keyType, source, now);
      const forgotten = this.forgetFingerprints([...revokedKeys.keys()]);
      for (const parts of lines) {
        if (!parts[0] || parts[0].startsWith('#')) continue;
        // A marker (@cert-authority, @revoked) changes the meaning; we do not import those (a
        // revoked key is kept out of every other entry above).
        if (parts[0].startsWith('@') || parts.length < 3) {
          skipped++;
          continue;
        }
        const [hosts = '', keyType = '', b64 = ''] = parts;
        const blob = keyBlob(keyType, b64);
        if (!blob) {
          skipped++;
          continue;
        }
        const fp = sshFingerprint(blob);
        for (const h of hosts.split(',')) {
          if (h.startsWith('|1|')) {
            if (HASHED_NAME.test(h)) add(h, 0, keyType, fp, 1);
            else skipped++;
            continue;
          }
          const m = /^\[(.+)\]:(\d+)$/.exec(h);
          const port = m ? Number(m[2]) : 22;
          // Patterns (*, ?, negation) name no single host; we trust exact names only.
          if (/[*?!]/.test(h) || !h || port < 1 || port > 65535) {
            skipped++;
            continue;
          }
          // OpenSSH matches a plain name without case: "Web01" in the file is the server web01.
          add(sshHostKeyHost(m?.[1] ?? h), port, keyType, fp, 0);
        }
      }
      return forgotten;
    })();
    return { imported, skipped, conflicts: conflicting.length, conflicting, revoked, revokedForgotten };
  }

  /** Forgets the SSH keys with these fingerprints, whatever host they were trusted for, and says which those were. */
  private forgetFingerprints(fingerprints: string[]): KnownHostsImport['revokedForgotten'] {
    const forgotten: KnownHostsImport['revokedForgotten'] = [];
    const find = this.db.prepare(`SELECT * FROM known_hosts WHERE kind = 'ssh' AND fingerprint = ? ORDER BY host, port`);
    const remove = this.db.prepare(`DELETE FROM known_hosts WHERE kind = 'ssh' AND fingerprint = ?`);
    for (const fp of fingerprints) {
      for (const r of find.all(fp) as Row[]) forgotten.push({ host: r.host, port: r.port, keyType: r.key_type, fingerprint: r.fingerprint });
      remove.run(fp);
    }
    return forgotten;
  }

  /**
   * What is trusted for host:port, one key per key type: the entry by name, else the first hashed
   * entry of that type. Imports and trust keep a second key from being added, but one may be there
   * from before (or from two hashed files, whose names cannot be compared): taking any of them would
   * accept a changed key without a question.
   */
  private matching(kind: HostKeyKind, host: string, port: number): Row[] {
    const rows = this.db
      .prepare('SELECT * FROM known_hosts WHERE kind = ? AND host = ? AND port = ? AND hashed = 0')
      .all(kind, host, port) as Row[];
    for (const r of this.hashedRows(kind, host, port)) if (!rows.some((t) => t.key_type === r.key_type)) rows.push(r);
    return rows;
  }

  /** The hashed entries that stand for host:port, first added first. */
  private hashedRows(kind: HostKeyKind, host: string, port: number): Row[] {
    if (kind !== 'ssh') return [];
    const name = knownHostsName(host, port);
    return (this.db.prepare('SELECT * FROM known_hosts WHERE kind = ? AND hashed = 1 ORDER BY rowid').all(kind) as Row[]).filter((r) => hashedNameMatches(r.host, name));
  }
}

/** "|1|" base64 salt "|" base64 HMAC-SHA1, as `ssh-keygen -H` and HashKnownHosts write names. */
const HASHED_NAME = /^\|1\|[A-Za-z0-9+/]+=*\|[A-Za-z0-9+/]+=*$/;

/**
 * The key blob of a known_hosts line, or null when the line is not one: the blob must start with
 * its own key type as an SSH string (what every OpenSSH public key does), so a line of some other
 * file that happens to have three words is not taken for a key.
 */
function keyBlob(keyType: string, b64: string): Buffer | null {
  if (!/^[A-Za-z0-9+/]+=*$/.test(b64)) return null;
  const blob = Buffer.from(b64, 'base64');
  if (blob.length < 4 + keyType.length) return null;
  const len = blob.readUInt32BE(0);
  return len === keyType.length && blob.toString('latin1', 4, 4 + len) === keyType ? blob : null;
}

function toRevoked(r: RevokedRow): RevokedHostKey {
  return { keyType: r.key_type, fingerprint: r.fingerprint, source: r.source, revokedAt: r.added_at };
}

function toEntry(r: Row): HostKeyEntry {
  return {
    kind: r.kind,
    host: r.host,
    port: r.port,
    keyType: r.key_type,
    fingerprint: r.fingerprint,
    source: r.source,
    addedAt: r.added_at,
  };
}
