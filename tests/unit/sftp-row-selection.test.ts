/** The files panel's selection: click, Ctrl+click, Shift ranges in screen order, select all, pruning. */
import { describe, expect, it } from 'vitest';
import { useRowSelection } from '../../src-renderer/features/sftp/row-selection.js';

const rows = ['/d/a', '/d/b', '/d/c', '/d/d', '/d/e'];

describe('useRowSelection', () => {
  it('selects one row on click, toggles with Ctrl, and ranges from the anchor with Shift', () => {
    let shown = rows;
    const sel = useRowSelection(() => shown);
    sel.selectOnly('/d/b');
    expect(sel.keys.value).toEqual(['/d/b']);
    sel.extendTo('/d/d');
    expect(sel.keys.value).toEqual(['/d/b', '/d/c', '/d/d']);
    // The anchor stays where the range started: Shift towards the other side flips the range.
    sel.extendTo('/d/a');
    expect(sel.keys.value).toEqual(['/d/a', '/d/b']);
    expect(sel.cursor.value).toBe('/d/a');
    sel.toggle('/d/e');
    expect(sel.keys.value).toEqual(['/d/a', '/d/b', '/d/e']);
    sel.toggle('/d/a');
    expect(sel.keys.value).toEqual(['/d/b', '/d/e']);
    expect(sel.count.value).toBe(2);
    // A Ctrl+click also moves the anchor: the next Shift range starts there.
    sel.extendTo('/d/c');
    expect(sel.keys.value).toEqual(['/d/a', '/d/b', '/d/c']);
    // Ranges follow the order on screen (another sort), not the order of the folder.
    shown = [...rows].reverse();
    sel.selectOnly('/d/e');
    sel.extendTo('/d/c');
    expect(sel.keys.value).toEqual(['/d/e', '/d/d', '/d/c']);
  });

  it('selects all, and forgets rows that a new listing no longer shows', () => {
    let shown = rows;
    const sel = useRowSelection(() => shown);
    sel.all();
    expect(sel.count.value).toBe(5);
    sel.selectOnly('/d/c');
    sel.extendTo('/d/e');
    shown = ['/d/a', '/d/b', '/d/e'];
    sel.keepShown();
    expect(sel.keys.value).toEqual(['/d/e']);
    expect(sel.cursor.value).toBe('/d/e');
    sel.selectOnly('/d/b');
    shown = ['/d/a'];
    sel.keepShown();
    expect(sel.keys.value).toEqual([]);
    expect(sel.cursor.value).toBeNull();
    // With no anchor left, a Shift+click selects just that row.
    sel.extendTo('/d/a');
    expect(sel.keys.value).toEqual(['/d/a']);
    expect(sel.has('/d/a')).toBe(true);
    sel.selectOnly(null);
    expect(sel.count.value).toBe(0);
  });
});
