import { createCipheriv, createDecipheriv, randomBytes, randomUUID, scryptSync } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { VaultStatus } from '../../common/contract/vault.js';
import { WraithError } from '../../common/errors.js';
import type { Db } from '../db/database.js';

export type Protection = 'safeStorage' | 'password' | 'keyfile';
export type SecretKind = 'password' | 'passphrase' | 'privateKey' | 'apiKey' | 'other';

/** Electron's safeStorage, injected by the Electron host (the node room never imports electron). */
export interface OsKeyWrapper {
  isAvailable(): boolean;
  encrypt(plain: Buffer): Buffer;
  decrypt(wrapped: Buffer): Buffer;
}

// scrypt cost: ~100 ms and 32 MiB here; a stolen database costs an attacker that per guess.
const SCRYPT = { N: 1 << 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 } as const;
const KEY_AAD = Buffer.from('wraith-vault-data-key-v1');
const KEYFILE_NAME = 'vault.key';

function seal(key: Buffer, plain: Buffer, aad: Buffer): { nonce: Buffer; ciphertext: Buffer } {
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(aad);
  const ciphertext = Buffer.concat([cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
  return { nonce, ciphertext };
}

function open(key: Buffer, nonce: Buffer, sealed: Buffer, aad: Buffer): Buffer {
  const decipher = createDecipheriv('aes-256-gcm', key, nonce);
  decipher.setAAD(aad);
  decipher.setAuthTag(sealed.subarray(sealed.length - 16));
  return Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - 16)), decipher.final()]);
}

/**
 * Secrets at rest: each one AES-256-GCM under a random data key, its record id as AAD (so a
 * ciphertext cannot be moved to another record). The data key is stored only wrapped: by OS
 * safe storage (Electron), by scrypt(master password), or by a 0600 key file (opt-in, warned).
 */
export class Vault {
  private dataKey: Buffer | null = null;

  constructor(
    private readonly db: Db,
    private readonly dataDir: string,
    private readonly osWrapper: OsKeyWrapper | null = null,
  ) {
    this.tryAutoUnlock();
  }

  status(): VaultStatus {
    const protection = this.protection();
    const available: Protection[] = ['password', 'keyfile'];
    if (this.osWrapper?.isAvailable()) available.unshift('safeStorage');
    return {
      state: protection === null ? 'uninitialized' : this.dataKey ? 'unlocked' : 'locked',
      protection,
      available,
      warning:
        protection === 'keyfile'
          ? `Secrets are protected only by a key file (${join(this.dataDir, KEYFILE_NAME)}): anyone who can read your data directory can read them. Set a master password to protect them.`
          : null,
    };
  }

  init(opts: { protection: 'password'; password: string } | { protection: 'keyfile' } | { protection: 'safeStorage' }): VaultStatus {
    if (this.protection() !== null) {
      throw new WraithError('EDENIED', 'The vault is already set up. Unlock it instead.');
    }
    const dataKey = randomBytes(32);
    const meta: Record<string, Buffer> = { protection: Buffer.from(opts.protection) };
    if (opts.protection === 'password') {
      const salt = randomBytes(16);
      const kek = scryptSync(opts.password, salt, 32, SCRYPT);
      const { nonce, ciphertext } = seal(kek, dataKey, KEY_AAD);
      Object.assign(meta, { salt, nonce, wrapped: ciphertext });
    } else if (opts.protection === 'keyfile') {
      const kek = randomBytes(32);
      const path = join(this.dataDir, KEYFILE_NAME);
      writeFileSync(path, kek.toString('base64'), { mode: 0o600 });
      chmodSync(path, 0o600);
      const { nonce, ciphertext } = seal(kek, dataKey, KEY_AAD);
      Object.assign(meta, { nonce, wrapped: ciphertext });
    } else {
      if (!this.osWrapper?.isAvailable()) {
        throw new WraithError('EUNAVAILABLE', 'OS safe storage is not available here; use a master password.');
      }
      meta.wrapped = this.osWrapper.encrypt(dataKey);
    }
    const put = this.db.prepare('INSERT INTO vault_meta (key, value) VALUES (?, ?)');
    this.db.transaction(() => {
      for (const [k, v] of Object.entries(meta)) put.run(k, v);
    })();
    this.dataKey = dataKey;
    return this.status();
  }

  unlock(password: string): VaultStatus {
    const protection = this.protection();
    if (protection === null) throw new WraithError('ELOCKED', 'The vault is not set up yet. Choose a master password first.');
    if (protection !== 'password') {
      this.tryAutoUnlock();
      return this.status();
    }
    const salt = this.meta('salt');
    const nonce = this.meta('nonce');
    const wrapped = this.meta('wrapped');
    if (!salt || !nonce || !wrapped) throw new WraithError('EIO', 'The vault record is incomplete; it cannot be unlocked.');
    const kek = scryptSync(password, salt, 32, SCRYPT);
    try {
      this.dataKey = open(kek, nonce, wrapped, KEY_AAD);
    } catch {
      throw new WraithError('EAUTH', 'Wrong master password.');
    }
    return this.status();
  }

  lock(): VaultStatus {
    this.dataKey?.fill(0);
    this.dataKey = null;
    return this.status();
  }

  isUnlocked(): boolean {
    return this.dataKey !== null;
  }

  /** ELOCKED (saying why) unless setSecret would work now. */
  assertWritable(): void {
    this.requireKey();
  }

  setSecret(input: { id?: string; kind: SecretKind; label: string; value: string }): string {
    const key = this.requireKey();
    const id = input.id ?? randomUUID();
    const { nonce, ciphertext } = seal(key, Buffer.from(input.value, 'utf8'), Buffer.from(id));
    const now = new Date().toISOString();
    this.db
      .prepare(
        `INSERT INTO credentials (id, kind, label, nonce, ciphertext, created_at, updated_at)
         VALUES (@id, @kind, @label, @nonce, @ciphertext, @now, @now)
         ON CONFLICT(id) DO UPDATE SET kind = @kind, label = @label, nonce = @nonce,
           ciphertext = @ciphertext, updated_at = @now`,
      )
      .run({ id, kind: input.kind, label: input.label, nonce, ciphertext, now });
    return id;
  }

  getSecret(id: string): { id: string; kind: SecretKind; label: string; value: string } {
    const key = this.requireKey();
    const row = this.db.prepare('SELECT id, kind, label, nonce, ciphertext FROM credentials WHERE id = ?').get(id) as
      | { id: string; kind: SecretKind; label: string; nonce: Buffer; ciphertext: Buffer }
      | undefined;
    if (!row) throw new WraithError('ENOTFOUND', `No secret with id ${id}.`);
    let value: string;
    try {
      value = open(key, row.nonce, row.ciphertext, Buffer.from(row.id)).toString('utf8');
    } catch {
      throw new WraithError('EIO', `Secret ${id} cannot be decrypted: it was altered or belongs to another vault.`);
    }
    return { id: row.id, kind: row.kind, label: row.label, value };
  }

  /** Reads a secret's value, or null if the id is null. Throws ELOCKED when locked. */
  reveal(id: string | null): string | null {
    return id === null ? null : this.getSecret(id).value;
  }

  deleteSecret(id: string): void {
    const r = this.db.prepare('DELETE FROM credentials WHERE id = ?').run(id);
    if (r.changes === 0) throw new WraithError('ENOTFOUND', `No secret with id ${id}.`);
  }

  private requireKey(): Buffer {
    if (this.dataKey) return this.dataKey;
    const protection = this.protection();
    if (protection === null) {
      throw new WraithError('ELOCKED', 'The vault is not set up yet: choose a master password (or a key file) to store secrets.');
    }
    throw new WraithError('ELOCKED', 'The vault is locked: enter your master password to use saved secrets.');
  }

  private protection(): Protection | null {
    const p = this.meta('protection')?.toString();
    return p === 'password' || p === 'keyfile' || p === 'safeStorage' ? p : null;
  }

  private meta(key: string): Buffer | undefined {
    const row = this.db.prepare('SELECT value FROM vault_meta WHERE key = ?').get(key) as { value: Buffer } | undefined;
    return row?.value;
  }

  /** Key-file and safe-storage vaults open by themselves; a password vault waits for unlock(). */
  private tryAutoUnlock(): void {
    const protection = this.protection();
    const wrapped = this.meta('wrapped');
    if (!wrapped) return;
    if (protection === 'keyfile') {
      const path = join(this.dataDir, KEYFILE_NAME);
      const nonce = this.meta('nonce');
      if (!existsSync(path) || !nonce) return;
      const kek = Buffer.from(readFileSync(path, 'utf8').trim(), 'base64');
      if (kek.length !== 32) return;
      try {
        this.dataKey = open(kek, nonce, wrapped, KEY_AAD);
      } catch {
        this.dataKey = null;
      }
    } else if (protection === 'safeStorage' && this.osWrapper?.isAvailable()) {
      try {
        this.dataKey = this.osWrapper.decrypt(wrapped);
      } catch {
        this.dataKey = null;
      }
    }
  }
}

