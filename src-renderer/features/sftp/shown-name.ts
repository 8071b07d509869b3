/** A run of a name as the file list shows it: as it is, or marks standing for what would not show. */
export interface NamePart {
  text: string;
  mark: boolean;
}

/** A control character's own symbol (Control Pictures: U+0009 → ␉, U+000A → ␊, U+007F → ␡). */
const pictureOf = (c: string): string => String.fromCharCode(c === '\x7f' ? 0x2421 : 0x2400 + c.charCodeAt(0));

/**
 * A name in runs for the file list, which keeps its spaces as they are (white-space: pre), so that
 * "dup.conf" and "dup  .conf" look different. Spaces at either end would still look like nothing
 * (" dup.conf", "dup.conf "): each shows as ␣, marked. A control character (a tab, a line feed)
 * would break the row or show as nothing: it shows as its symbol (␉, ␊), marked.
 */
export function nameParts(name: string): NamePart[] {
  const lead = /^ */.exec(name)?.[0].length ?? 0;
  const trail = lead === name.length ? 0 : (/ *$/.exec(name)?.[0].length ?? 0);
  const control = /[\x00-\x1f\x7f]/;
  if (!lead && !trail && !control.test(name)) return [{ text: name, mark: false }];
  const parts: NamePart[] = [];
  const push = (text: string, mark: boolean) => {
    const last = parts[parts.length - 1];
    if (last?.mark === mark) last.text += text;
    else parts.push({ text, mark });
  };
  let at = 0; // in UTF-16 units, as lead and trail are counted
  for (const c of name) {
    if (c === ' ' && (at < lead || at >= name.length - trail)) push('␣', true);
    else if (control.test(c)) push(pictureOf(c), true);
    else push(c, false);
    at += c.length;
  }
  return parts;
}
