import type { Tunnel, TunnelStartInput } from '@common/contract/tunnels.js';
import { defineStore } from 'pinia';
import { ref } from 'vue';
import { useHost } from '../../transport/index.js';

/**
 * Port forwards of the SSH sessions (tunnels.*), as the host reports them (tunnels.changed), and
 * which tab's port forwarding dialog is open.
 */
export const useTunnelsStore = defineStore('tunnels', () => {
  const host = useHost();
  /** By session id. */
  const bySession = ref<Record<string, Tunnel[]>>({});
  /** The tab whose dialog is open. */
  const dialogTab = ref<string | null>(null);

  host.on('tunnels.changed', (e) => {
    bySession.value = { ...bySession.value, [e.sessionId]: e.tunnels };
  });

  /** Reads every tunnel (App loads it with everything else whenever the link opens). */
  async function load(): Promise<void> {
    const next: Record<string, Tunnel[]> = {};
    for (const t of (await host.call('tunnels.list', {})).tunnels) (next[t.sessionId] ??= []).push(t);
    bySession.value = next;
  }

  function of(sessionId: string | null): Tunnel[] {
    return sessionId ? (bySession.value[sessionId] ?? []) : [];
  }

  async function start(sessionId: string, o: Omit<TunnelStartInput, 'sessionId'>): Promise<Tunnel> {
    return host.call('tunnels.start', { sessionId, ...o });
  }

  async function stop(tunnelId: string): Promise<void> {
    await host.call('tunnels.stop', { tunnelId });
  }

  return { bySession, dialogTab, load, of, start, stop };
});
