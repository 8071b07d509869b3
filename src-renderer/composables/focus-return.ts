import { type Ref, onBeforeUnmount, watch } from 'vue';
import { focusFront, keysNowhere } from './focus-front.js';

/**
 * A button that shows the panel (the status bar's Local shell and XO, with `aria-controls` naming
 * the panel) is no place to give the keys back to: Enter or Space there would show it again,
 * and other keys reach nothing.
 */
function showsPanel(opener: HTMLElement, panel: HTMLElement | null): boolean {
  return !!panel?.id && (opener.getAttribute('aria-controls') ?? '').split(/\s+/).includes(panel.id);
}

/**
 * For a panel shown and hidden by a shortcut (the local shell, the XO): when it goes away with
 * the keys inside it, they go back to whatever had them when it was shown — usually the
 * terminal the user was typing in — instead of falling to the page body, where no key does
 * anything until the next click. When that is gone, was nothing, or was the button that shows the
 * panel, they go to the tab in front (focusFront). Call during the panel's setup, before it takes
 * focus itself.
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
    if (keysNowhere(root.value)) {
      if (opener?.isConnected && !showsPanel(opener, root.value)) opener.focus();
      // The opener gone, hidden, or none: the tab in front takes them, not the page body.
      if (keysNowhere(root.value)) focusFront();
    }
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
