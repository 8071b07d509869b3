import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { CommandEndDetector, PROMPT_QUIET_MS } from '../../src-renderer/features/terminal/command-end.js';

const bytes = (s: string) => new TextEncoder().encode(s);

describe('CommandEndDetector: when a terminal shows a prompt again', () => {
  let ends = 0;
  let d: CommandEndDetector;
  beforeEach(() => {
    vi.useFakeTimers();
    ends = 0;
    d = new CommandEndDetector(() => ends++);
  });
  afterEach(() => {
    d.reset();
    vi.useRealTimers();
  });

  test('a command, its output and the prompt: one end, once the output pauses', () => {
    for (const c of 'cd /var') d.feed(bytes(c)); // the echo of typing
    d.feed(bytes('\r\n'));
    d.feed(bytes('user@web01:/var$ '));
    vi.advanceTimersByTime(PROMPT_QUIET_MS - 1);
    expect(ends).toBe(0);
    vi.advanceTimersByTime(1);
    expect(ends).toBe(1);
    vi.advanceTimersByTime(10 * PROMPT_QUIET_MS);
    expect(ends).toBe(1);
  });

  test('typing alone is not a command', () => {
    for (const c of 'ls -la') d.feed(bytes(c));
    vi.advanceTimersByTime(10 * PROMPT_QUIET_MS);
    expect(ends).toBe(0);
  });

  test('output that pauses after a line end (tail -f, a log) is not a prompt; the prompt after Ctrl+C is', () => {
    d.feed(bytes('tail -f app.log\r\n'));
    for (let i = 0; i < 5; i++) {
      d.feed(bytes(`line ${i}\r\n`));
      vi.advanceTimersByTime(3 * PROMPT_QUIET_MS);
    }
    expect(ends).toBe(0);
    d.feed(bytes('^C\r\n'));
    d.feed(bytes('\x1b[?2004huser@web01:~$ '));
    vi.advanceTimersByTime(PROMPT_QUIET_MS);
    expect(ends).toBe(1);
  });

  test('a flood is not over until it pauses', () => {
    d.feed(bytes('yes\r\n'));
    for (let i = 0; i < 50; i++) {
      d.feed(bytes('y\r\ny\r\ny'));
      vi.advanceTimersByTime(PROMPT_QUIET_MS / 3);
    }
    expect(ends).toBe(0);
    vi.advanceTimersByTime(PROMPT_QUIET_MS);
    expect(ends).toBe(1);
  });

  test('reset forgets a command in progress', () => {
    d.feed(bytes('cd /tmp\r\nuser@web01:/tmp$ '));
    d.reset();
    vi.advanceTimersByTime(10 * PROMPT_QUIET_MS);
    expect(ends).toBe(0);
  });
});
