/**
 * The file editor's encodings (sftp/text.ts): UTF-8, and Windows-1252 for legacy "Latin-1" files,
 * whose bytes must come back the same when the text is saved unchanged.
 */
import { describe, expect, test } from 'vitest';
import { WraithError } from '../../src-main/common/errors.js';
import { decodeAs, encodeAs } from '../../src-main/node/sftp/text.js';

describe('text encodings of the file editor', () => {
  test('Windows-1252: every byte but NUL is a character of its own, and encodes back to itself', () => {
    const all = Uint8Array.from({ length: 255 }, (_, i) => i + 1);
    const text = decodeAs(all, 'windows-1252');
    expect(text).not.toBeNull();
    expect(new Set(text).size).toBe(255);
    expect(encodeAs(text as string, 'windows-1252', '/f')).toEqual(Buffer.from(all));
    // Where it differs from Latin-1: 0x80–0x9F.
    expect(decodeAs(Uint8Array.of(0x80, 0x85, 0x93, 0x94, 0x99, 0x9f, 0xe9, 0x81), 'windows-1252')).toBe('€…“”™Ÿé\u0081');
  });

  test('NUL bytes are no text in either; invalid UTF-8 is none in UTF-8', () => {
    expect(decodeAs(Uint8Array.of(0x61, 0, 0x62), 'windows-1252')).toBeNull();
    expect(decodeAs(Uint8Array.of(0x61, 0, 0x62), 'utf-8')).toBeNull();
    expect(decodeAs(Uint8Array.of(0x63, 0x61, 0x66, 0xe9), 'utf-8')).toBeNull();
    expect(decodeAs(Buffer.from('café ✓'), 'utf-8')).toBe('café ✓');
  });

  test('a character Windows-1252 has no byte for is refused, named with its line', () => {
    let err: unknown;
    try {
      encodeAs('first\nsecond ✓ here\n', 'windows-1252', '/etc/legacy.conf');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(WraithError);
    expect(err).toMatchObject({ code: 'EBADARGS', details: { reason: 'unencodable', path: '/etc/legacy.conf', line: 2 } });
    expect((err as WraithError).message).toContain('no “✓” (U+2713, line 2)');
    // Outside the Basic Multilingual Plane too (a surrogate pair): named whole.
    expect(() => encodeAs('🙂', 'windows-1252', '/f')).toThrow('no “🙂” (U+1F642, line 1)');
  });
});
