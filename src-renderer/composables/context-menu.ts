import { type Ref, nextTick } from 'vue';

/**
 * Once a context menu opened at (x, y) is rendered: moves it so all of it is inside the window (a
 * row near the bottom edge would put "Delete…" out of reach) and focuses its first usable item.
 */
export function settleMenu<M extends { x: number; y: number }>(menu: Ref<M | null>, el: Ref<HTMLElement | null>): void {
  void nextTick(() => {
    const m = menu.value;
    const box = el.value?.getBoundingClientRect();
    if (m && box) {
      const x = Math.max(4, Math.min(m.x, innerWidth - box.width - 4));
      const y = Math.max(4, Math.min(m.y, innerHeight - box.height - 4));
      if (x !== m.x || y !== m.y) menu.value = { ...m, x, y };
    }
    el.value?.querySelector<HTMLElement>('button:not(:disabled)')?.focus();
  });
}
