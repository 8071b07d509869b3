import { onMounted, ref } from 'vue';

/**
 * The focus of a card that refuses a server's identity (changed, revoked): it takes the keys when
 * it appears — the HTML autofocus attribute only acts on page load, not on a card inserted later —
 * on the safe way out, so Enter or Escape cancels a Reconnect (the tab and its scrollback stay) or
 * closes a new tab. A card in a tab not shown cannot take focus. Bind `closeButton` and
 * `cancelButton` as the template refs of those buttons; expose `focus` for the pane.
 */
export function useSafeWayOut() {
  const closeButton = ref<HTMLButtonElement | null>(null);
  const cancelButton = ref<HTMLButtonElement | null>(null);
  const focus = (): void => (cancelButton.value ?? closeButton.value)?.focus();
  onMounted(focus);
  return { closeButton, cancelButton, focus };
}
