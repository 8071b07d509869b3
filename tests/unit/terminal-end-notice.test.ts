import { describe, expect, it } from 'vitest';
import { endNotice, formatEndTime } from '../../src-renderer/features/terminal/end-notice.js';

describe('the line a terminal shows where its session ended', () => {
  const now = new Date(2026, 10, 28, 19, 30, 0);

  it('gives the time of day for an end today, and the day too for an earlier one', () => {
    expect(formatEndTime(new Date(2026, 10, 28, 9, 5, 7), now)).toBe('09:05:07');
    expect(formatEndTime(new Date(2026, 10, 27, 23, 59, 59), now)).toBe('Nov 27 23:59:59');
    expect(formatEndTime(new Date(2025, 10, 28, 9, 5, 7), now)).toBe('Nov 28 09:05:07');
  });

  it('says a drop with why and, for the end in effect, what Enter does', () => {
    const at = new Date(2026, 10, 28, 19, 2, 13);
    expect(endNotice('disconnected', 'Connection to web01 lost.', at, ' Press Enter to reconnect.', now)).toBe(
      '— Disconnected at 19:02:13: Connection to web01 lost. Press Enter to reconnect.',
    );
    expect(endNotice('disconnected', 'Connection to web01 lost.', at, '', now)).toBe('— Disconnected at 19:02:13: Connection to web01 lost.');
    expect(endNotice('disconnected', null, at, '', now)).toBe('— Disconnected at 19:02:13.');
    expect(endNotice('ended', 'bash exited with code 0.', at, ' Press Enter to relaunch.', now)).toBe('— Ended at 19:02:13: bash exited with code 0. Press Enter to relaunch.');
    expect(endNotice('ended', null, at, '', now)).toBe('— Session ended at 19:02:13.');
  });
});
