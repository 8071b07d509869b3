import { describe, expect, it } from 'vitest';
import { inPieces, pasteReasons, pastedLineCount, showControls, withoutPasteMarkers } from '../../src-renderer/features/terminal/paste-lines.js';

describe('what a paste holds', () => {
  it('counts lines as the shell sees them: a last line end ends a line, it does not start one', () => {
    expect(pastedLineCount('echo a\n')).toBe(1);
    expect(pastedLineCount('echo a\r\necho b\r\n')).toBe(2);
    expect(pastedLineCount('\n')).toBe(0);
  });

  it('drops the bracketed-paste markers, also one whose halves surround another', () => {
    expect(withoutPasteMarkers('echo harmless\x1b[201~; id > /tmp/x\n')).toBe('echo harmless; id > /tmp/x\n');
    expect(withoutPasteMarkers('\x1b[200~a\x1b[201~b')).toBe('ab');
    expect(withoutPasteMarkers('x\x1b[20\x1b[201~1~y')).toBe('xy');
    expect(withoutPasteMarkers('echo ok\n')).toBe('echo ok\n');
  });

  it('asks about control characters, several lines, and a line end that runs without bracketed paste', () => {
    expect(pasteReasons('echo ok', false)).toEqual([]);
    expect(pasteReasons('a\tb', true)).toEqual([]);
    // With bracketed paste the line only lands on the command line; without it, Enter is pressed.
    expect(pasteReasons('echo ok\n', true)).toEqual([]);
    expect(pasteReasons('echo ok\n', false)).toEqual(['runs']);
    expect(pasteReasons('echo ok\r', false)).toEqual(['runs']);
    expect(pasteReasons('a\nb\n', true)).toEqual(['lines']);
    expect(pasteReasons('a\nb\n', false)).toEqual(['lines']);
    expect(pasteReasons('echo \x1b[A', true)).toEqual(['controls']);
    expect(pasteReasons('x\x7f', true)).toEqual(['controls']);
    expect(pasteReasons('x\u009b2J', true)).toEqual(['controls']);
    expect(pasteReasons('x\x03\ny\n', true)).toEqual(['controls', 'lines']);
  });

  it('shows control characters visibly, leaving tabs, line ends and text as they are', () => {
    expect(showControls('echo a\x1b[201~; id\x07\x00\x7f\u009b\tok\r\n')).toBe('echo a^[[201~; id^G^@^?M-^[\tok\r\n');
    expect(showControls('grep ^[a-z] é')).toBe('grep ^[a-z] é');
  });

  it('cuts a long text into pieces in order, never inside a surrogate pair', () => {
    expect(inPieces('abc', 5)).toEqual(['abc']);
    expect(inPieces('abcdefg', 3)).toEqual(['abc', 'def', 'g']);
    const text = 'ab😀cd😀';
    const pieces = inPieces(text, 3);
    expect(pieces.join('')).toBe(text);
    expect(pieces.every((p) => p.length <= 3)).toBe(true);
    // no piece starts with a low surrogate or ends with a high one
    expect(pieces.some((p) => /^[\udc00-\udfff]|[\ud800-\udbff]$/.test(p))).toBe(false);
    const big = 'x'.repeat(1_100_000);
    expect(inPieces(big, 256 * 1024).map((p) => p.length)).toEqual([262144, 262144, 262144, 262144, 51424]);
  });
});
