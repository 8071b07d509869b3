import { onBeforeUnmount } from 'vue';
import { useSessionsStore } from '../stores/sessions.js';

/**
 * Where the keys go when what had them goes away and nothing else takes them: a dialog whose
 * answer closed the tab of the × that opened it, a panel hidden while its opener is gone (or was
 * the button that shows it). Left alone they fall to the page body, where no key does anything
 * until the next click; they go to the tab in front instead, as a click on its tab would put
 * them. With no tab open, to the connection list, where the next one is opened, else the
 * welcome's New connection.
 */

/** How each tab's view takes the keys (its question card, its terminal, its desktop), by tab key. */
const tabFocus = new Map<string, () => void>();

/** A tab's view says, while it is mounted, how it takes the keys. Call during its setup. */
export function useTabFocus(key: string, focus: () => void): void {
  tabFocus.set(key, focus);
  onBeforeUnmount(() => {
    if (tabFocus.get(key) === focus) tabFocus.delete(key);
  });
}

/** Whether the keys are nowhere (the page body), or in `leaving`, which is going away. */
export function keysNowhere(leaving?: HTMLElement | null): boolean {
  const active = document.activeElement;
  return !active || active === document.body || !!leaving?.contains(active);
}

/** Gives the keys to the tab in front, or with none open to the connection list or the welcome. */
export function focusFront(): void {
  const key = useSessionsStore().activeKey;
  const focus = key ? tabFocus.get(key) : undefined;
  if (focus) return focus();
  (
    document.querySelector<HTMLElement>('[role="tree"][aria-label="Saved connections"] [role="treeitem"][tabindex="0"]') ??
    document.querySelector<HTMLElement>('.welcome button.primary')
  )?.focus();
}
