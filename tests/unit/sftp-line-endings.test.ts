import { describe, expect, test } from 'vitest';
import { detectLineEndings, eolName, fromEditorText, toEditorText } from '../../src-renderer/features/sftp/line-endings.js';

describe('the editor keeps a file\'s line endings', () => {
  test.each([
    ['unix', 'a\nb\n', { eol: '\n', mixed: false }],
    ['windows', 'a\r\nb\r\n', { eol: '\r\n', mixed: false }],
    ['classic mac', 'a\rb\r', { eol: '\r', mixed: false }],
    ['no line ends', 'single line', { eol: '\n', mixed: false }],
    ['mostly windows', 'a\r\nb\r\nc\n', { eol: '\r\n', mixed: true }],
    ['mostly unix', 'a\nb\nc\r\n', { eol: '\n', mixed: true }],
    ['a tie goes to LF', 'a\r\nb\n', { eol: '\n', mixed: true }],
  ])('%s', (_name, text, want) => {
    expect(detectLineEndings(text)).toEqual(want);
  });

  test('a file round-trips through the editor byte for byte when its endings are not mixed', () => {
    for (const text of ['port = 1\r\nhost = x\r\n', 'no final newline\r\nlast', 'a\rb\r', 'plain\n\n']) {
      const { eol } = detectLineEndings(text);
      const shown = toEditorText(text);
      expect(shown).not.toContain('\r');
      expect(fromEditorText(shown, eol)).toBe(text);
    }
  });

  test('a mixed file is saved with its most common ending throughout', () => {
    const text = 'a\r\nb\r\nc\n';
    expect(fromEditorText(toEditorText(text), detectLineEndings(text).eol)).toBe('a\r\nb\r\nc\r\n');
  });

  test('names as editors show them', () => {
    expect(['\n', '\r\n', '\r'].map((e) => eolName(e as '\n'))).toEqual(['LF', 'CRLF', 'CR']);
  });
});
