/**
 * The rows of a long list worth drawing: those in or near the scrolled viewport, plus any that
 * must stay in the page (the row that holds the keyboard focus), with gaps of the rows' height
 * standing in for the rest so the scrollbar and positions stay true.
 *
 * A folder of 20 000 files drawn whole built 20 000 table rows: about 20 s of layout and script
 * in Chromium before the list showed. Windowed it draws about a screenful and a half.
 */
import { type Ref, computed, onBeforeUnmount, ref, watch } from 'vue';

export type RowSlot<T> = { kind: 'row'; item: T; index: number } | { kind: 'gap'; key: string; height: number };

export interface RowView {
  /** The list's scroll offset, px. */
  scrollTop: number;
  /** The list's visible height, px. */
  height: number;
  /** One row's height, px (rows are all alike). */
  rowHeight: number;
  /** Rows drawn beyond each edge of the viewport, so a quick scroll shows rows, not gaps. */
  overscan: number;
}

/** Index range [first, last) of the rows in the viewport, widened by the overscan. */
export function visibleRange(count: number, v: RowView): { first: number; last: number } {
  const h = Math.max(1, v.rowHeight);
  const height = Math.max(0, v.height);
  // An offset past the end (the list just got shorter, the browser has not clamped it yet) shows the tail.
  const top = Math.max(0, Math.min(v.scrollTop, count * h - height));
  const first = Math.max(0, Math.floor(top / h) - v.overscan);
  const last = Math.min(count, Math.ceil((top + height) / h) + v.overscan);
  return { first: Math.min(first, last), last };
}

/**
 * Rows and gaps in list order. `keep`: indexes drawn wherever they are (out-of-range ones are
 * ignored). A gap's key names the row after it, so gaps keep their identity while that row does.
 */
export function rowSlots<T>(items: readonly T[], v: RowView, keep: readonly number[] = []): RowSlot<T>[] {
  const { first, last } = visibleRange(items.length, v);
  const extra = [...new Set(keep)].filter((i) => Number.isInteger(i) && i >= 0 && i < items.length && (i < first || i >= last)).sort((a, b) => a - b);
  const slots: RowSlot<T>[] = [];
  let next = 0;
  /** Rows must come in increasing index order; the gap before each stands in for the skipped ones. */
  const add = (index: number) => {
    if (index > next) slots.push({ kind: 'gap', key: `gap-${index}`, height: (index - next) * v.rowHeight });
    slots.push({ kind: 'row', item: items[index] as T, index });
    next = index + 1;
  };
  for (const i of extra) if (i < first) add(i);
  for (let i = first; i < last; i++) add(i);
  for (const i of extra) if (i >= last) add(i);
  if (items.length > next) slots.push({ kind: 'gap', key: 'gap-end', height: (items.length - next) * v.rowHeight });
  return slots;
}

/**
 * rowSlots for a scrolled element: follows its scroll offset and height, and measures the rows
 * it draws (`rowSelector`) so a different font size keeps the gaps true. `keep` is evaluated
 * reactively (the focused row's index).
 */
export function useRowWindow<T>(
  el: Ref<HTMLElement | null>,
  items: () => readonly T[],
  keep: () => number[],
  opts: { rowSelector: string; rowHeight: number; overscan: number },
) {
  const scrollTop = ref(0);
  const height = ref(800);
  const rowHeight = ref(opts.rowHeight);
  const slots = computed(() =>
    rowSlots(items(), { scrollTop: scrollTop.value, height: height.value, rowHeight: rowHeight.value, overscan: opts.overscan }, keep()),
  );

  function onScroll(): void {
    scrollTop.value = el.value?.scrollTop ?? 0;
  }

  /** Back to the top (another folder): the browser would keep the old offset. */
  function toTop(): void {
    if (el.value) el.value.scrollTop = 0;
    scrollTop.value = 0;
  }

  /** Rows a page key moves by: a viewport less one row, so one row stays in sight. */
  const pageRows = computed(() => Math.max(1, Math.floor(height.value / rowHeight.value) - 2));

  const resize = new ResizeObserver(() => {
    height.value = el.value?.clientHeight ?? height.value;
  });
  watch(
    el,
    (now, before) => {
      if (before) resize.unobserve(before);
      if (now) {
        resize.observe(now);
        height.value = now.clientHeight || height.value;
        scrollTop.value = now.scrollTop;
      }
    },
    { immediate: true },
  );
  watch(
    slots,
    () => {
      const row = el.value?.querySelector<HTMLElement>(opts.rowSelector);
      const h = row?.getBoundingClientRect().height ?? 0;
      if (h > 0 && Math.abs(h - rowHeight.value) > 0.25) rowHeight.value = h;
    },
    { flush: 'post' },
  );
  onBeforeUnmount(() => resize.disconnect());

  return { slots, onScroll, toTop, pageRows };
}
