import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { openDatabase } from '../../src-main/node/db/database.js';
import { Vault } from '../../src-main/node/vault/vault.js';

const temp = () => mkdtempSync(join(tmpdir(), 'wraith-vault-'));

test('a password vault: locked after restart, wrong password is EAUTH, right one unlocks', () => {
  const dir = temp();
  const db = openDatabase(dir);
  const v = new Vault(db, dir);
  expect(v.status().state).toBe('uninitialized');
  expect(() => v.setSecret({ kind: 'password', label: '', value: 'x' })).toThrow(expect.objectContaining({ code: 'ELOCKED' }));
  v.init({ protection: 'password', password: 'master-password' });
  const id = v.setSecret({ kind: 'password', label: 'web', value: 's3cret' });
  const again = new Vault(db, dir);
  expect(again.status()).toMatchObject({ state: 'locked', protection: 'password', warning: null });
  expect(() => again.getSecret(id)).toThrow(expect.objectContaining({ code: 'ELOCKED', message: expect.stringContaining('master password') }));
  expect(() => again.unlock('nope')).toThrow(expect.objectContaining({ code: 'EAUTH' }));
  again.unlock('master-password');
  expect(again.getSecret(id).value).toBe('s3cret');
  expect(() => again.init({ protection: 'keyfile' })).toThrow(expect.objectContaining({ code: 'EDENIED' }));
  db.close();
});

test('a key-file vault opens by itself, warns, and keeps the file private', () => {
  const dir = temp();
  const db = openDatabase(dir);
  new Vault(db, dir).init({ protection: 'keyfile' });
  expect(statSync(join(dir, 'vault.key')).mode & 0o777).toBe(0o600);
  const v = new Vault(db, dir);
  expect(v.status().state).toBe('unlocked');
  expect(v.status().warning).toMatch(/key file/);
  db.close();
});

test('a ciphertext moved to another record does not decrypt (record id is the AAD)', () => {
  const dir = temp();
  const db = openDatabase(dir);
  const v = new Vault(db, dir);
  v.init({ protection: 'password', password: 'master-password' });
  const a = v.setSecret({ kind: 'password', label: 'a', value: 'alpha' });
  const b = v.setSecret({ kind: 'password', label: 'b', value: 'bravo' });
  db.prepare('UPDATE credentials SET nonce = (SELECT nonce FROM credentials WHERE id = ?), ciphertext = (SELECT ciphertext FROM credentials WHERE id = ?) WHERE id = ?').run(a, a, b);
  expect(() => v.getSecret(b)).toThrow(expect.objectContaining({ code: 'EIO' }));
  expect(v.getSecret(a).value).toBe('alpha');
  db.close();
});

test('safe storage wraps the key when the host provides it', () => {
  const dir = temp();
  const db = openDatabase(dir);
  // Stands in for Electron's safeStorage, which needs the Electron runtime.
  const wrapper = {
    isAvailable: () => true,
    encrypt: (b: Buffer) => Buffer.from(b.map((x) => x ^ 0x5a)),
    decrypt: (b: Buffer) => Buffer.from(b.map((x) => x ^ 0x5a)),
  };
  const v = new Vault(db, dir, wrapper);
  expect(v.status().available).toContain('safeStorage');
  v.init({ protection: 'safeStorage' });
  const id = v.setSecret({ kind: 'apiKey', label: '', value: 'k' });
  expect(new Vault(db, dir, wrapper).getSecret(id).value).toBe('k');
  expect(new Vault(db, dir, null).status().state).toBe('locked');
  db.close();
});
