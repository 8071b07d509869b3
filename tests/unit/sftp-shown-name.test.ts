/** How the file list shows a name: spaces kept, those at either end and control characters marked. */
import { describe, expect, test } from 'vitest';
import { nameParts } from '../../src-renderer/features/sftp/shown-name.js';

const shown = (name: string) => nameParts(name).map((p) => (p.mark ? `[${p.text}]` : p.text)).join('');

describe('nameParts', () => {
  test('a plain name is one run, as it is; spaces inside are kept as they are', () => {
    expect(nameParts('dup.conf')).toEqual([{ text: 'dup.conf', mark: false }]);
    expect(nameParts('dup  .conf')).toEqual([{ text: 'dup  .conf', mark: false }]);
  });

  test('spaces at either end show as marks, so names that differ only there look different', () => {
    const names = ['dup.conf', ' dup.conf', 'dup.conf ', '  dup.conf  ', 'dup  .conf'];
    expect(names.map(shown)).toEqual(['dup.conf', '[␣]dup.conf', 'dup.conf[␣]', '[␣␣]dup.conf[␣␣]', 'dup  .conf']);
    expect(new Set(names.map(shown)).size).toBe(names.length);
    expect(shown('   ')).toBe('[␣␣␣]');
    expect(shown('🙂 ')).toBe('🙂[␣]');
    expect(shown(' a b ')).toBe('[␣]a b[␣]');
  });

  test('control characters show as their symbols, marked: no line break in a row, nothing invisible', () => {
    expect(shown('a\tb\nc\x7f')).toBe('a[␉]b[␊]c[␡]');
    expect(shown('\r\n ')).toBe('[␍␊␣]');
  });
});
