import { describe, expect, test } from 'vitest';
import { TerminalModeTracker } from '../../src-main/node/terminal/mode-tracker.js';

const ESC = '\x1b';

/** A tracker fed `chunks` in order (as latin1 bytes), as a session's output would be. */
function fed(chunks: string[], opts: { capacity?: number; rows?: number } = {}): { modes: TerminalModeTracker; end: number } {
  const modes = new TerminalModeTracker(opts.capacity ?? 1024 * 1024, opts.rows ?? 24);
  let seq = 0;
  for (const c of chunks) {
    modes.feed(Buffer.from(c, 'latin1'), seq);
    seq += c.length;
  }
  return { modes, end: seq };
}

/** The restore in effect after all of `text`. */
const after = (text: string, rows = 24) => {
  const { modes, end } = fed([text], { rows });
  return modes.restoreAt(end);
};

describe('TerminalModeTracker', () => {
  test('a fresh terminal needs nothing; a full-screen program is restored as it set itself up', () => {
    expect(after('plain text\r\n')).toBe('');
    // vim with mouse=a: alternate screen, application cursor keys and keypad, SGR mouse, bracketed paste.
    const vim = `${ESC}[?1049h${ESC}[22;0;0t${ESC}[?1h${ESC}=${ESC}[?2004h${ESC}[?1002h${ESC}[?1006h${ESC}[1;1H~\r\n`;
    expect(after(vim)).toBe(`${ESC}[?1049h${ESC}[?1;1002;1006;2004h${ESC}=`);
    // Cursor hidden and no autowrap are the modes a program turns off.
    expect(after(`${ESC}[?25l${ESC}[?7l`)).toBe(`${ESC}[?7;25l`);
    expect(after(`${ESC}[?1004h`)).toBe(`${ESC}[?1004h`);
  });

  test('the state is the one in effect at the byte asked for: a change counts from the byte after its sequence', () => {
    const text = `ab${ESC}[?1049hcd${ESC}[?1049lef`;
    const { modes } = fed([text]);
    const enterEnd = text.indexOf('cd');
    const leaveEnd = text.indexOf('ef');
    for (let seq = 0; seq <= text.length; seq++) {
      const inAlt = seq >= enterEnd && seq < leaveEnd;
      expect(modes.restoreAt(seq), `at ${seq}`).toBe(inAlt ? `${ESC}[?1049h` : '');
    }
  });

  test('a sequence split across chunks, at any byte, counts as if it came whole', () => {
    const text = `x${ESC}[?1049h${ESC}[?1000;1006h${ESC}[3;20r${ESC}=y${ESC}[?25l${ESC}c${ESC}[?2004hz`;
    const whole = fed([text]).modes;
    const expected = Array.from({ length: text.length + 1 }, (_, seq) => whole.restoreAt(seq));
    for (let cut = 1; cut < text.length; cut++) {
      const { modes } = fed([text.slice(0, cut), text.slice(cut)]);
      expect(Array.from({ length: text.length + 1 }, (_, seq) => modes.restoreAt(seq)), `cut at ${cut}`).toEqual(expected);
    }
    // One byte at a time.
    const bytewise = fed([...text]).modes;
    expect(Array.from({ length: text.length + 1 }, (_, seq) => bytewise.restoreAt(seq))).toEqual(expected);
    expect(whole.restoreAt(text.length)).toBe(`${ESC}[?2004h`);
  });

  test('RIS resets every mode; DECSTR those xterm.js resets, not the screen nor the mouse', () => {
    const setUp = `${ESC}[?1049h${ESC}[?1003h${ESC}[?1006h${ESC}[?1h${ESC}=${ESC}[?2004h${ESC}[?1004h${ESC}[?25l${ESC}[?7l${ESC}[2;10r`;
    expect(after(setUp + `${ESC}c`)).toBe('');
    expect(after(setUp + `${ESC}[!p`)).toBe(`${ESC}[?1049h${ESC}[?1003;1006h`);
    // What the host writes when a program's connection drops (FRESH_MODES) resets them all.
    expect(after(setUp + `${ESC}7${ESC}[?1049l${ESC}[!p${ESC}[?9;1000;1002;1003;1005;1006;1015;1016l`)).toBe('');
  });

  test('mouse protocols are one at a time and any reset ends tracking; an encoding reset undoes only that encoding', () => {
    expect(after(`${ESC}[?1000h${ESC}[?1002h`)).toBe(`${ESC}[?1002h`);
    expect(after(`${ESC}[?1002h${ESC}[?1000l`)).toBe('');
    expect(after(`${ESC}[?9h`)).toBe(`${ESC}[?9h`);
    expect(after(`${ESC}[?1006h${ESC}[?1015l`)).toBe(`${ESC}[?1006h`);
    expect(after(`${ESC}[?1006h${ESC}[?1006l`)).toBe('');
    expect(after(`${ESC}[?1005h${ESC}[?1016h`)).toBe(`${ESC}[?1016h`);
  });

  test('the application keypad: ESC = and ESC >, or DECSET 66', () => {
    expect(after(`${ESC}=`)).toBe(`${ESC}=`);
    expect(after(`${ESC}=${ESC}>`)).toBe('');
    expect(after(`${ESC}[?66h`)).toBe(`${ESC}=`);
    expect(after(`${ESC}=${ESC}[?66l`)).toBe('');
  });

  test('scroll regions: one per screen, set with the cursor kept, reset by CSI r, leaving the alternate screen and a resize', () => {
    const region = (t: number, b: number) => `${ESC}7${ESC}[${t};${b}r${ESC}8`;
    expect(after(`${ESC}[5;20r`)).toBe(region(5, 20));
    expect(after(`${ESC}[5r`)).toBe(region(5, 24)); // bottom defaults to the last row
    expect(after(`${ESC}[5;99r`)).toBe(region(5, 24)); // beyond it too, as xterm.js has it
    expect(after(`${ESC}[5;20r${ESC}[r`)).toBe('');
    expect(after(`${ESC}[1;24r`)).toBe(''); // the whole screen
    expect(after(`${ESC}[9;3r`)).toBe(''); // bottom above top: ignored
    expect(after(`${ESC}[5;20r${ESC}[?1049h${ESC}[2;23r`)).toBe(`${region(5, 20)}${ESC}[?1049h${region(2, 23)}`);
    expect(after(`${ESC}[5;20r${ESC}[?1049h${ESC}[2;23r${ESC}[?1049l`)).toBe(region(5, 20));
    // DECSTR resets the region of the screen shown only.
    expect(after(`${ESC}[5;20r${ESC}[?1049h${ESC}[2;23r${ESC}[!p`)).toBe(`${region(5, 20)}${ESC}[?1049h`);

    const { modes, end } = fed([`${ESC}[?1049h${ESC}[2;23r`]);
    modes.resized(40);
    expect(modes.restoreAt(end)).toBe(`${ESC}[?1049h`);
    modes.feed(Buffer.from(`${ESC}[2;39r`), end);
    expect(modes.restoreAt(end + 7)).toBe(`${ESC}[?1049h${region(2, 39)}`);
  });

  test('sequences that only look alike change nothing', () => {
    expect(after(`${ESC}[>1h${ESC}[?1$p${ESC}[1049h${ESC}[?1 h${ESC}[2 r`)).toBe(''); // other prefix, DECRQM, ANSI mode, intermediates
    expect(after(`${ESC}(=${ESC}#8${ESC}]0;${ESC}[?1049h${ESC}\\`)).toBe(`${ESC}[?1049h`); // an ESC in a title starts a sequence, as in xterm.js
    expect(after(`${ESC}[?10${ESC}[?2004h`)).toBe(`${ESC}[?2004h`); // an ESC cuts the sequence before it short
    expect(after(`${ESC}[?1049\x18h`)).toBe(''); // CAN cancels it
    expect(after(`${ESC}[?10\r49h`)).toBe(`${ESC}[?1049h`); // a C0 control inside acts without ending it
  });

  test('an unfinished sequence too long to be one is dropped, and what follows still counts', () => {
    const junk = `${ESC}[${'1;'.repeat(200)}`;
    expect(fed([junk, `${'2;'.repeat(200)}x${ESC}[?2004h`]).modes.restoreAt(junk.length + 401 + 8)).toBe(`${ESC}[?2004h`);
    expect(fed([junk, '2;', `${ESC}[?2004h`]).modes.restoreAt(junk.length + 2 + 8)).toBe(`${ESC}[?2004h`);
  });

  test('keeps only what a read of the ring buffer can still need', () => {
    // A 64-byte ring: the alternate screen entered long ago still holds for every byte it has.
    const { modes, end } = fed([`${ESC}[?1049h`, 'x'.repeat(500), `${ESC}[?25l`, 'y'.repeat(30), `${ESC}[?25h`, 'z'.repeat(10)], { capacity: 64 });
    expect(modes.changesKept).toBe(3);
    expect(modes.restoreAt(end - 64)).toBe(`${ESC}[?1049h`);
    expect(modes.restoreAt(end - 30)).toBe(`${ESC}[?1049h${ESC}[?25l`);
    expect(modes.restoreAt(end)).toBe(`${ESC}[?1049h`);

    // A program that toggles a mode endlessly keeps a bounded number of changes, the latest exact.
    const toggles = `${ESC}[?25l${ESC}[?25h`.repeat(20_000);
    const flood = fed([`${ESC}[?1049h`, toggles, `${ESC}[?25l`], { capacity: 4 * 1024 * 1024 });
    expect(flood.modes.changesKept).toBeLessThanOrEqual(4096);
    expect(flood.modes.restoreAt(flood.end)).toBe(`${ESC}[?1049h${ESC}[?25l`);
    expect(flood.modes.restoreAt(flood.end - 6)).toBe(`${ESC}[?1049h`);
    // From before the oldest change kept, the oldest one's state: the screen it was on holds.
    expect(flood.modes.restoreAt(100)).toMatch(/^\x1b\[\?1049h/);
  });
});
