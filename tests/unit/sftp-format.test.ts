import { describe, expect, test } from 'vitest';
import { formatMtime } from '../../src-renderer/features/sftp/format.js';

describe('formatMtime', () => {
  test('this year: month, day and time as ls prints them, the month named as the en locale names it', () => {
    const now = new Date(2026, 10, 27, 12, 0);
    for (let m = 0; m < 12; m++) {
      const d = new Date(2026, m, 5, 7, 3);
      expect(formatMtime(d.toISOString(), now)).toBe(`${d.toLocaleString('en', { month: 'short' })} 05 07:03`);
    }
  });

  test('another year: the date alone; an unreadable time: nothing', () => {
    expect(formatMtime(new Date(2024, 0, 9, 23, 59).toISOString(), new Date(2026, 10, 27))).toBe('2024-01-09');
    expect(formatMtime('not a date')).toBe('');
  });
});
