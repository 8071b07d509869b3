import { computed, ref } from 'vue';

/**
 * Which rows of a list are selected, the way file managers do it: a click selects one row,
 * Ctrl+click adds or removes one, Shift+click (or Shift+arrow) selects the range from the anchor,
 * Ctrl+A selects all. `cursor` is the row with focus; it is also where a range starts when
 * nothing anchored one yet. Rows are named by a key (the SFTP panel uses the remote path);
 * `order` gives the keys as they are shown, so ranges follow the sort order on screen.
 */
export function useRowSelection(order: () => string[]) {
  const keys = ref<string[]>([]);
  const cursor = ref<string | null>(null);
  let anchor: string | null = null;

  const set = computed(() => new Set(keys.value));
  const count = computed(() => keys.value.length);

  function has(key: string): boolean {
    return set.value.has(key);
  }

  /** Just this row (or none). */
  function selectOnly(key: string | null): void {
    keys.value = key === null ? [] : [key];
    cursor.value = key;
    anchor = key;
  }

  /** Ctrl+click: in or out of the selection, and the anchor of the next range. */
  function toggle(key: string): void {
    keys.value = has(key) ? keys.value.filter((k) => k !== key) : [...keys.value, key];
    cursor.value = key;
    anchor = key;
  }

  /** Shift+click or Shift+arrow: every row between the anchor and this one, in screen order. */
  function extendTo(key: string): void {
    const shown = order();
    const from = shown.indexOf(anchor ?? cursor.value ?? key);
    const to = shown.indexOf(key);
    if (from < 0 || to < 0) return selectOnly(key);
    keys.value = shown.slice(Math.min(from, to), Math.max(from, to) + 1);
    cursor.value = key;
    anchor ??= shown[from] ?? key;
  }

  function all(): void {
    keys.value = [...order()];
  }

  /** After a listing: rows that are gone leave the selection (and the cursor). */
  function keepShown(): void {
    const shown = new Set(order());
    if (keys.value.some((k) => !shown.has(k))) keys.value = keys.value.filter((k) => shown.has(k));
    if (cursor.value !== null && !shown.has(cursor.value)) cursor.value = null;
    if (anchor !== null && !shown.has(anchor)) anchor = null;
  }

  return { keys, cursor, count, has, selectOnly, toggle, extendTo, all, keepShown };
}
