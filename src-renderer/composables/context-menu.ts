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

/**
 * The keys of an open context menu (WAI-ARIA's menu): ArrowDown and ArrowUp move between its
 * usable items, wrapping at the ends; Home and End go to the first and the last. Escape stays each
 * menu's own (it closes the menu and says where the keys go back to). Put on the role="menu" element.
 */
export function onMenuKeys(ev: KeyboardEvent): void {
  if (ev.ctrlKey || ev.altKey || ev.metaKey || !(ev.currentTarget instanceof HTMLElement)) return;
  const items = [...ev.currentTarget.querySelectorAll<HTMLElement>('[role="menuitem"]:not(:disabled)')];
  if (!items.length) return;
  const at = items.indexOf(document.activeElement as HTMLElement);
  const last = items.length - 1;
  let next: number;
  if (ev.key === 'ArrowDown') next = at < 0 || at === last ? 0 : at + 1;
  else if (ev.key === 'ArrowUp') next = at <= 0 ? last : at - 1;
  else if (ev.key === 'Home') next = 0;
  else if (ev.key === 'End') next = last;
  else return;
  // The list or the terminal behind the menu would take the arrows too.
  ev.preventDefault();
  ev.stopPropagation();
  items[next]?.focus();
}
