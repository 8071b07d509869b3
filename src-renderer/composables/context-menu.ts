import { type Ref, nextTick } from 'vue';

/**
 * Where a menu opens: at the pointer for a right click, below the element (`indent` px in from its
 * left edge) when a key opened it (ContextMenu, Shift+F10), which has no pointer position.
 */
export function menuPoint(ev: MouseEvent | KeyboardEvent, indent: number): { x: number; y: number } {
  if (ev instanceof MouseEvent && ev.clientX) return { x: ev.clientX, y: ev.clientY };
  const box = ev.currentTarget instanceof HTMLElement ? ev.currentTarget.getBoundingClientRect() : null;
  return { x: (box?.left ?? 0) + indent, y: box?.bottom ?? 0 };
}

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
