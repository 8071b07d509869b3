import { describe, expect, test } from 'vitest';
import { formatBytesOver } from '../../src-main/common/format-bytes.js';
import { formatBytes, formatMtime } from '../../src-renderer/features/sftp/format.js';

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

describe('sizes', () => {
  test('binary units labelled as people know them, one decimal under 10', () => {
    expect([0, 1023, 1024, 1536, 5 * 1024 * 1024, 5_242_890, 64 * 1024 * 1024].map(formatBytes)).toEqual(['0 B', '1023 B', '1.0 KB', '1.5 KB', '5.0 MB', '5.0 MB', '64 MB']);
  });

  test('a size over a limit reads as more than it: in bytes where the rounded figures are the same', () => {
    // The editor's limit is 5 MB (5 MiB); the file 10 bytes over it.
    expect(formatBytesOver(5_242_890, 5 * 1024 * 1024)).toEqual({ size: '5,242,890 bytes', limit: '5,242,880 bytes (5.0 MB)' });
    expect(formatBytesOver(6 * 1024 * 1024, 5 * 1024 * 1024)).toEqual({ size: '6.0 MB', limit: '5.0 MB' });
    // "10.0 MB" and "10 MB" are the same figure too.
    expect(formatBytesOver(10_695_475, 10_454_303)).toEqual({ size: '10,695,475 bytes', limit: '10,454,303 bytes (10.0 MB)' });
    expect(formatBytesOver(1001, 1000)).toEqual({ size: '1001 B', limit: '1000 B' });
  });
});
