import { type Ref, onBeforeUnmount, watch } from 'vue';

/**
 * For a panel shown and hidden by a shortcut (the local shell, the XO): when it goes away with
 * the keys inside it, they go back to whatever had them when it was shown — usually the
 * terminal the user was typing in — instead of falling to the page body, where no key does
 * anything until the next click. Call during the panel's setup, before it takes focus itself.
 *
 * A panel that stays mounted while hidden (v-show) passes `shown`: it is "shown" and "goes away"
 * as that says, not only when it mounts and unmounts.
 */
export function useFocusReturn(root: Ref<HTMLElement | null>, shown: () => boolean = () => true): void {
  let opener: HTMLElement | null = null;
  const remember = () => {
    const had = document.activeElement;
    opener = had instanceof HTMLElement && had !== document.body && !root.value?.contains(had) ? had : null;
  };
  const giveBack = () => {
    const active = document.activeElement;
    const ours = !active || active === document.body || !!root.value?.contains(active);
    if (ours && opener?.isConnected) opener.focus();
    opener = null;
  };
  if (shown()) remember();
  // The default 'pre' flush runs before the DOM changes: on show the opener still has the keys,
  // on hide the panel still has them (a hidden element drops its focus to the body).
  watch(shown, (now) => (now ? remember() : giveBack()));
  onBeforeUnmount(() => {
    if (shown()) giveBack();
  });
}
