/**
 * The font-family list xterm draws with: the one chosen in Settings, ending in the generic
 * `monospace` unless it names that already. xterm measures one cell and puts every character on
 * that grid; when no font of the list is installed (a typo, a font of another machine), the
 * browser falls back to its default font, which is proportional, and the columns no longer line
 * up. The generic family is the fallback every browser has, and it is monospaced. A quoted
 * 'monospace' is a font of that name, not the generic family (CSS Fonts §5.1), and does not count.
 */
export function terminalFontFamily(family: string): string {
  const names = splitFamilies(family);
  if (names.some((n) => n.toLowerCase() === 'monospace')) return names.join(', ');
  return [...names, 'monospace'].join(', ');
}

/** The names of a CSS font-family list, quotes kept, empty entries (a stray comma) dropped. */
function splitFamilies(list: string): string[] {
  const out: string[] = [];
  let current = '';
  let quote: string | null = null;
  for (const ch of list) {
    if (quote) {
      if (ch === quote) quote = null;
      current += ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      current += ch;
    } else if (ch === ',') {
      out.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  out.push(current);
  return out.map((n) => n.trim().replace(/\s+/g, ' ')).filter((n) => n !== '');
}
