import { describe, expect, test } from 'vitest';
import { formatBytesOver } from '../../src-main/common/format-bytes.js';
import { formatBytes, formatMtime, formatSpeed } from '../../src-renderer/features/sftp/format.js';

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
    expect([0, 999, 1024, 1536, 5 * 1024 * 1024, 5_242_890, 64 * 1024 * 1024].map(formatBytes)).toEqual(['0 B', '999 B', '1.0 KB', '1.5 KB', '5.0 MB', '5.0 MB', '64 MB']);
  });

  test('never four digits before the point (they do not fit the Size column): from 1000 of a unit on, the next unit', () => {
    const KiB = 1024;
    const MiB = 1024 * KiB;
    const GiB = 1024 * MiB;
    expect([999 * MiB, 1000, 1023, 1000 * KiB, 1023 * KiB, 1000 * MiB, 1023.9 * MiB, 1000 * GiB, 1000 * 1024 * GiB].map(formatBytes)).toEqual([
      '999 MB',
      '0.98 KB',
      '1.0 KB',
      '0.98 MB',
      '1.0 MB',
      '0.98 GB',
      '1.0 GB',
      '0.98 TB',
      '0.98 PB',
    ]);
    // 999.6 KB rounds to 1000: the next unit too.
    expect(formatBytes(Math.round(999.6 * KiB))).toBe('0.98 MB');
    // Speeds are sizes per second.
    expect(formatSpeed(1020 * MiB)).toBe('1.0 GB/s');
    for (let n = 1; n < 2 ** 53; n = Math.ceil(n * 1.37)) expect(formatBytes(n)).toMatch(/^(\d{1,3}|\d{1,2}\.\d{1,2}) (B|KB|MB|GB|TB|PB)$/);
  });

  test('a size over a limit reads as more than it: in bytes where the rounded figures are the same', () => {
    // The editor's limit is 5 MB (5 MiB); the file 10 bytes over it.
    expect(formatBytesOver(5_242_890, 5 * 1024 * 1024)).toEqual({ size: '5,242,890 bytes', limit: '5,242,880 bytes (5.0 MB)' });
    expect(formatBytesOver(6 * 1024 * 1024, 5 * 1024 * 1024)).toEqual({ size: '6.0 MB', limit: '5.0 MB' });
    // "10.0 MB" and "10 MB" are the same figure too.
    expect(formatBytesOver(10_695_475, 10_454_303)).toEqual({ size: '10,695,475 bytes', limit: '10,454,303 bytes (10.0 MB)' });
    expect(formatBytesOver(1001, 1000)).toEqual({ size: '1,001 bytes', limit: '1,000 bytes (0.98 KB)' });
    expect(formatBytesOver(999, 998)).toEqual({ size: '999 B', limit: '998 B' });
  });
});
