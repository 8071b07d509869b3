import { computed, reactive } from 'vue';
import { useRdpSession } from '../features/rdp/rdp-session.js';
import { type SessionTab, tabLabel, useSessionsStore } from '../stores/sessions.js';
import { useVaultStore } from '../stores/vault.js';
import { toast } from './dialogs.js';
import { asWraithError } from './errors.js';

/** Tabs a "Reconnect all" is reconnecting now: a second one leaves them to it. */
const underWay = reactive(new Set<string>());

/**
 * "Reconnect all": after a server restart or a network drop, every SSH and RDP tab of this window
 * whose session dropped connects again, as its own Reconnect would (scrollback kept). Each tab
 * that cannot says why in its own card or banner (a changed host key, a password to type); one
 * failing stops none of the others.
 */
export function useReconnectAll() {
  const sessions = useSessionsStore();
  const vault = useVaultStore();

  /** The tabs Reconnect would bring back: dropped, and their saved connection is still there. */
  const dropped = computed(() =>
    sessions.tabs.filter((t) => t.kind !== 'pty' && t.phase === 'disconnected' && t.sessionId !== null && !sessions.connectionDeleted(t) && !underWay.has(t.key)),
  );

  async function reconnectOne(tab: SessionTab): Promise<void> {
    underWay.add(tab.key);
    try {
      if (tab.kind === 'rdp') await useRdpSession(tab.key).reconnect();
      else await sessions.reconnect(tab.key);
    } catch (err) {
      // Each tab's reconnect says its own failures in the tab; anything else is said here.
      toast(`${tabLabel(tab)} was not reconnected: ${asWraithError(err).message}`, 'error');
    } finally {
      underWay.delete(tab.key);
    }
  }

  async function reconnectAll(): Promise<void> {
    const tabs = dropped.value;
    // With the vault locked, the first tab that needs it asks for it once, and the others then
    // find it open: one after another. Together, each would ask in place of the one before.
    await vault.load().catch(() => undefined);
    if (vault.status?.state === 'locked') {
      for (const tab of tabs) await reconnectOne(tab);
    } else {
      await Promise.all(tabs.map(reconnectOne));
    }
  }

  return { dropped, reconnectAll };
}
