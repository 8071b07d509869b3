import { type Ref, onBeforeUnmount } from 'vue';

/**
 * For a panel shown and hidden by a shortcut (the local shell, the XO): when it goes away with
 * the keys inside it, they go back to whatever had them when it was shown — usually the
 * terminal the user was typing in — instead of falling to the page body, where no key does
 * anything until the next click. Call during the panel's setup, before it takes focus itself.
 */
export function useFocusReturn(root: Ref<HTMLElement | null>): void {
  const had = document.activeElement;
  const opener = had instanceof HTMLElement && had !== document.body ? had : null;
  onBeforeUnmount(() => {
    const active = document.activeElement;
    const ours = !active || active === document.body || !!root.value?.contains(active);
    if (ours && opener?.isConnected) opener.focus();
  });
}
