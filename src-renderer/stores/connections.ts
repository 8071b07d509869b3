import { defineStore } from 'pinia';
import { computed, ref } from 'vue';
import type { Connection, Group } from '@common/contract/connections.js';
import type { Input, Output } from '@common/contract/index.js';
import { useHost } from '../transport/index.js';
import { connectionSubtitle } from '../features/connections/labels.js';
import { useVaultStore } from './vault.js';

export type ConnectionDraft = Input<'connections.create'>;
export type ConnectionPatch = Input<'connections.update'>['patch'];
export type ConnectionSecretsInput = NonNullable<Input<'connections.create'>['secrets']>;
export type ImportResult = Output<'connections.importSshConfig'>;

function hasSecrets(s: ConnectionSecretsInput | undefined): boolean {
  return !!s && Object.values(s).some((v) => v !== undefined);
}

/** Saved connections and groups (the tree), with the filter the tree shows. */
export const useConnectionsStore = defineStore('connections', () => {
  const host = useHost();
  const vault = useVaultStore();
  const connections = ref<Connection[]>([]);
  const groups = ref<Group[]>([]);
  const tags = ref<string[]>([]);
  const query = ref('');
  const tag = ref<string | null>(null);
  const loaded = ref(false);

  async function load(): Promise<void> {
    const r = await host.call('connections.list');
    connections.value = r.connections;
    groups.value = r.groups;
    tags.value = r.tags;
    loaded.value = true;
  }

  // A change made elsewhere (another window, `wraith call`, the XO) shows here without a reload.
  // Changes come in bursts (an import, a drag of several rows): one read after the burst.
  let reloadTimer: ReturnType<typeof setTimeout> | null = null;
  host.on('connections.changed', () => {
    reloadTimer ??= setTimeout(() => {
      reloadTimer = null;
      load().catch(() => undefined); // the link went: App reads everything again when it is back
    }, 50);
  });

  const byId = computed(() => new Map(connections.value.map((c) => [c.id, c])));

  /** Connections the filter lets through (name, tags, and the second line as the rows show it: user@host:port via jump host; and the chosen tag). */
  const visible = computed(() => {
    const q = query.value.trim().toLowerCase();
    return connections.value.filter((c) => {
      if (tag.value && !c.tags.includes(tag.value)) return false;
      if (!q) return true;
      return [c.name, connectionSubtitle(c, byId.value), ...c.tags].some((f) => f.toLowerCase().includes(q));
    });
  });

  async function create(draft: ConnectionDraft): Promise<Connection> {
    const save = () => host.call('connections.create', draft);
    const c = hasSecrets(draft.secrets) ? await vault.withUnlocked(`Store the secrets of ${draft.name}`, save) : await save();
    await load();
    return c;
  }

  async function update(id: string, patch: ConnectionPatch, secrets?: ConnectionSecretsInput): Promise<Connection> {
    const save = () => host.call('connections.update', { id, patch, ...(secrets ? { secrets } : {}) });
    const c = hasSecrets(secrets) ? await vault.withUnlocked('Store the changed secrets', save) : await save();
    await load();
    return c;
  }

  /** The copy takes the saved secrets with it: a locked vault is asked for first (ELOCKED), then the copy made. */
  async function duplicate(id: string): Promise<Connection> {
    const name = byId.value.get(id)?.name ?? 'this connection';
    const c = await vault.withUnlocked(`Unlock the vault to copy the saved secrets of ${name}.`, () => host.call('connections.duplicate', { id }));
    await load();
    return c;
  }

  async function remove(id: string): Promise<void> {
    await host.call('connections.delete', { id });
    await load();
  }

  async function move(id: string, groupId: string | null): Promise<void> {
    await host.call('connections.update', { id, patch: { groupId } });
    await load();
  }

  async function createGroup(name: string, parentId: string | null = null): Promise<Group> {
    const g = await host.call('connections.groups.create', { name, parentId });
    await load();
    return g;
  }

  async function renameGroup(id: string, name: string): Promise<void> {
    await host.call('connections.groups.update', { id, name });
    await load();
  }

  async function moveGroup(id: string, parentId: string | null): Promise<void> {
    await host.call('connections.groups.update', { id, parentId });
    await load();
  }

  async function removeGroup(id: string): Promise<void> {
    await host.call('connections.groups.delete', { id });
    await load();
  }

  async function importSshConfig(source: { text: string } | { path?: string }, groupId: string | null = null): Promise<ImportResult> {
    const r = await host.call('connections.importSshConfig', { ...source, groupId });
    await load();
    return r;
  }

  return {
    connections, groups, tags, query, tag, loaded, visible, byId,
    load, create, update, duplicate, remove, move, createGroup, renameGroup, moveGroup, removeGroup, importSshConfig,
  };
});
