import { z } from 'zod';
import { Empty, Id, Ok, method } from './define.js';

export const VaultProtection = z.enum(['safeStorage', 'password', 'keyfile']);

export const VaultStatus = z.object({
  /** uninitialized: no data key yet; locked: key exists but is not in memory. */
  state: z.enum(['uninitialized', 'locked', 'unlocked']),
  protection: VaultProtection.nullable(),
  /** Protections this host can offer (safeStorage only inside Electron). */
  available: z.array(VaultProtection),
  /** Set when the protection is weaker than the user should accept silently. */
  warning: z.string().nullable(),
});
export type VaultStatus = z.infer<typeof VaultStatus>;

export const SecretKind = z.enum(['password', 'passphrase', 'privateKey', 'apiKey', 'other']);

export const vaultMethods = {
  'vault.status': method(Empty.optional(), VaultStatus, 'Whether secrets can be read now, and how they are protected.'),
  'vault.init': method(
    z.discriminatedUnion('protection', [
      z.object({ protection: z.literal('password'), password: z.string().min(8, 'Use at least 8 characters').max(1024) }),
      z.object({ protection: z.literal('keyfile') }),
      z.object({ protection: z.literal('safeStorage') }),
    ]),
    VaultStatus,
    'Creates the vault data key, protected by a master password, a 0600 key file, or OS safe storage.',
  ),
  'vault.unlock': method(
    z.object({ password: z.string().max(1024) }),
    VaultStatus,
    'Unlocks a password-protected vault for this host process.',
  ),
  'vault.lock': method(Empty.optional(), VaultStatus, 'Forgets the data key until the next unlock.'),
  'vault.setSecret': method(
    z.object({ id: Id.optional(), kind: SecretKind, label: z.string().max(200).default(''), value: z.string().max(1_000_000) }),
    z.object({ id: Id }),
    'Stores (or replaces) a secret; returns its id. The value is encrypted before it reaches disk.',
  ),
  'vault.deleteSecret': method(z.object({ id: Id }), Ok, 'Deletes a secret.'),
  'vault.getSecret': method(
    z.object({ id: Id }),
    z.object({ id: Id, kind: SecretKind, label: z.string(), value: z.string() }),
    'Reads a secret back, for the editor only.',
  ),
};
