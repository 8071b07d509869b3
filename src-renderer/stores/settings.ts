import { defineStore } from 'pinia';
import { ref } from 'vue';
import { DEFAULT_SETTINGS, type Settings } from '@common/contract/settings.js';
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

  async function set(patch: Partial<Settings>): Promise<void> {
    values.value = { ...values.value, ...patch }; // immediate feedback; the host's answer wins
    values.value = await host.call('settings.set', patch);
  }

  return { values, loaded, load, set, defaults: DEFAULT_SETTINGS };
});
