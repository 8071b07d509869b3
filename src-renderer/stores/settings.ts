import { defineStore } from 'pinia';
import { ref } from 'vue';
import { DEFAULT_SETTINGS, type Settings, SettingsSchema } from '@common/contract/settings.js';
import { useHost } from '../transport/index.js';

/**
 * User settings as the host stores them; defaults until the first load answers. A change made
 * anywhere else (another window, the CLI) arrives as settings.changed and is applied at
 * once: open terminals follow it, and a later change here starts from it instead of undoing it.
 */
export const useSettingsStore = defineStore('settings', () => {
  const host = useHost();
  const values = ref<Settings>({ ...DEFAULT_SETTINGS });
  const loaded = ref(false);

  host.on('settings.changed', (settings) => {
    values.value = settings;
    loaded.value = true;
  });

  async function load(): Promise<void> {
    values.value = await host.call('settings.get');
    loaded.value = true;
  }

  const Patch = SettingsSchema.partial().strict();

  async function set(patch: Partial<Settings>): Promise<void> {
    // Immediate feedback, but only with values the host will take: the terminals apply them at
    // once, and xterm throws on some (a line height under 1). The host's answer wins either way.
    if (Patch.safeParse(patch).success) values.value = { ...values.value, ...patch };
    values.value = await host.call('settings.set', patch);
  }

  return { values, loaded, load, set, defaults: DEFAULT_SETTINGS };
});
