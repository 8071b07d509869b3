/**
 * Is this text we can show in an editor and save back unchanged? UTF-8 without NUL bytes.
 * The BOM is kept (ignoreBOM) so that saving the text writes the same bytes back.
 */
const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export function decodeText(bytes: Uint8Array): string | null {
  if (bytes.includes(0)) return null;
  try {
    return decoder.decode(bytes);
  } catch {
    return null;
  }
}
