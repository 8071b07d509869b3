import { defineStore } from 'pinia';
import { ref } from 'vue';
import { DEFAULT_SETTINGS, type Settings, SettingsSchema } from '@common/contract/settings.js';
import { useHost } from '../transport/index.js';

/** User settings as the host stores them; defaults until the first load answers. */
export const useSettingsStore = defineStore('settings', () => {
  const host = useHost();
  const values = ref<Settings>({ ...DEFAULT_SETTINGS });
  const loaded = ref(false);

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
