import type { TextEncoding } from '../../common/contract/sftp.js';
import { sftpError } from './sftp-errors.js';

/**
 * Is this text we can show in an editor and save back unchanged? UTF-8 without NUL bytes.
 * The BOM is kept (ignoreBOM) so that saving the text writes the same bytes back.
 */
const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function decodeText(bytes: Uint8Array): string | null {
  if (bytes.includes(0)) return null;
  try {
    return decoder.decode(bytes);
  } catch {
    return null;
  }
}

/**
 * Windows-1252, which browsers also read for "ISO-8859-1" and "Latin-1": the legacy encoding of
 * Western European text files, old configs and logs. It is Latin-1 but for 0x80–0x9F, where it
 * has € ‚ ƒ „ … and the curly quotes (the five bytes it leaves undefined stay U+0081 and the like,
 * as WHATWG decodes them). Each of its 256 bytes is a character of its own, so a file read this
 * way and saved unchanged is the same bytes again. (Node 20's TextDecoder('windows-1252'), this
 * one's included, decodes 0x80–0x9F as Latin-1's C1 controls, hence the table.)
 */
const CP1252_80_9F = [
  0x20ac, 0x81, 0x201a, 0x192, 0x201e, 0x2026, 0x2020, 0x2021, 0x2c6, 0x2030, 0x160, 0x2039, 0x152, 0x8d, 0x17d, 0x8f,
  0x90, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x2dc, 0x2122, 0x161, 0x203a, 0x153, 0x9d, 0x17e, 0x178,
];
const CP1252 = Array.from({ length: 256 }, (_, b) => String.fromCharCode(b >= 0x80 && b <= 0x9f ? (CP1252_80_9F[b - 0x80] as number) : b));
const CP1252_BYTES = new Map(CP1252.map((ch, b) => [ch, b]));

/** The text of a file in `encoding`; null when it is not text in it (UTF-8 that does not decode, or NUL bytes). */
export function decodeAs(bytes: Uint8Array, encoding: TextEncoding): string | null {
  if (encoding === 'utf-8') return decodeText(bytes);
  if (bytes.includes(0)) return null;
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    .toString('latin1')
    .replace(/[\x80-\x9f]/g, (c) => CP1252[c.charCodeAt(0)] as string);
}

/** The bytes of `text` in `encoding`; EBADARGS (reason "unencodable") naming the first character it cannot hold. */
export function encodeAs(text: string, encoding: TextEncoding, path: string): Buffer {
  if (encoding === 'utf-8') return Buffer.from(text, 'utf8');
  const out = Buffer.allocUnsafe(text.length);
  for (let i = 0; i < text.length; i++) {
    const byte = CP1252_BYTES.get(text[i] as string);
    if (byte === undefined) {
      const ch = String.fromCodePoint(text.codePointAt(i) ?? 0);
      const line = text.slice(0, i).split('\n').length;
      throw sftpError(
        'EBADARGS',
        `${path} is saved as Windows-1252, which has no “${ch}” (U+${(ch.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}, line ${line}). Remove it, or convert the file to UTF-8 in the terminal (iconv -f windows-1252 -t utf-8).`,
        'unencodable',
        { path, line },
      );
    }
    out[i] = byte;
  }
  return out;
}
