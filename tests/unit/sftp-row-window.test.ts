import { describe, expect, test } from 'vitest';
import { type RowSlot, rowSlots, visibleRange } from '../../src-renderer/features/sftp/row-window.js';

const items = Array.from({ length: 1000 }, (_, i) => `f${i}`);
const view = { scrollTop: 0, height: 240, rowHeight: 24, overscan: 5 };
const rows = (slots: RowSlot<string>[]) => slots.flatMap((s) => (s.kind === 'row' ? [s.index] : []));
/** Every slot's height adds up to the whole list's: the scrollbar is as long as with every row drawn. */
const total = (slots: RowSlot<string>[], h: number) => slots.reduce((sum, s) => sum + (s.kind === 'gap' ? s.height : h), 0);

describe('the rows a long list draws', () => {
  test('the viewport and the overscan, then one gap for the rest', () => {
    const slots = rowSlots(items, view);
    expect(rows(slots)).toEqual(Array.from({ length: 15 }, (_, i) => i)); // 10 visible + 5 below
    expect(slots.at(-1)).toEqual({ kind: 'gap', key: 'gap-end', height: (1000 - 15) * 24 });
    expect(total(slots, 24)).toBe(1000 * 24);
  });

  test('scrolled to the middle: gaps on both sides, rows where the viewport is', () => {
    const slots = rowSlots(items, { ...view, scrollTop: 500 * 24 + 10 });
    expect(rows(slots)[0]).toBe(495);
    expect(rows(slots).at(-1)).toBe(515);
    expect(slots[0]).toMatchObject({ kind: 'gap', height: 495 * 24 });
    expect(total(slots, 24)).toBe(1000 * 24);
  });

  test('a kept row far away is drawn in its place, between gaps that keep the positions true', () => {
    const slots = rowSlots(items, { ...view, scrollTop: 500 * 24 }, [3, 900, 900, 505, -1, 5000]);
    expect(rows(slots)).toEqual([3, ...Array.from({ length: 20 }, (_, i) => 495 + i), 900]);
    expect(slots.slice(0, 3)).toEqual([
      { kind: 'gap', key: 'gap-3', height: 3 * 24 },
      { kind: 'row', item: 'f3', index: 3 },
      { kind: 'gap', key: 'gap-495', height: (495 - 4) * 24 },
    ]);
    expect(total(slots, 24)).toBe(1000 * 24);
  });

  test('short lists are drawn whole; empty ones are empty; a list scrolled past its end shows its tail', () => {
    expect(rowSlots(items.slice(0, 8), view).every((s) => s.kind === 'row')).toBe(true);
    expect(rowSlots([], view)).toEqual([]);
    expect(visibleRange(1000, { ...view, scrollTop: 10_000_000 })).toEqual({ first: 985, last: 1000 });
    expect(visibleRange(1000, { ...view, scrollTop: 990 * 24 })).toEqual({ first: 985, last: 1000 });
  });
});
