import { defineStore } from 'pinia';
import { ref } from 'vue';
import type { VaultStatus } from '@common/contract/vault.js';
import { hasCode } from '../composables/errors.js';
import { useHost } from '../transport/index.js';

export interface VaultRequest {
  /** What needs the vault, shown in the dialog ("Save the password for web01"). */
  reason: string;
  resolve: (unlocked: boolean) => void;
}

/** The vault's state, and the one place that asks the user to set it up or unlock it. */
export const useVaultStore = defineStore('vault', () => {
  const host = useHost();
  const status = ref<VaultStatus | null>(null);
  /** The open set-up/unlock dialog, if any. */
  const request = ref<VaultRequest | null>(null);

  async function load(): Promise<void> {
    status.value = await host.call('vault.status');
  }

  async function initWithPassword(password: string): Promise<void> {
    status.value = await host.call('vault.init', { protection: 'password', password });
  }

  async function initWithKeyFile(): Promise<void> {
    status.value = await host.call('vault.init', { protection: 'keyfile' });
  }

  async function initWithSafeStorage(): Promise<void> {
    status.value = await host.call('vault.init', { protection: 'safeStorage' });
  }

  async function unlock(password: string): Promise<void> {
    status.value = await host.call('vault.unlock', { password });
  }

  async function lock(): Promise<void> {
    status.value = await host.call('vault.lock');
  }

  /** Opens the dialog; resolves true once the vault is unlocked, false if the user gave up. */
  function ask(reason: string): Promise<boolean> {
    request.value?.resolve(false);
    return new Promise((resolve) => {
      request.value = {
        reason,
        resolve: (ok) => {
          request.value = null;
          resolve(ok);
        },
      };
    });
  }

  /** Runs `fn`; on ELOCKED asks for the vault and runs it once more. */
  async function withUnlocked<T>(reason: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (!hasCode(err, 'ELOCKED')) throw err;
      await load().catch(() => undefined);
      if (!(await ask(reason))) throw err;
      return fn();
    }
  }

  return { status, request, load, initWithPassword, initWithKeyFile, initWithSafeStorage, unlock, lock, ask, withUnlocked };
});
