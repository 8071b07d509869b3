/**
 * OSC 52, "ESC ] 52 ; Pc ; Pd BEL": a program asks the terminal to put text on the clipboard —
 * vim, neovim and tmux copy that way over SSH, where they cannot reach the local clipboard
 * otherwise. Pc names selections (c, p, s, 0-7; a browser has one clipboard, so any goes there),
 * Pd is the text in base64, or "?" to ask for the clipboard's content: never answered, a program
 * on a server has no business reading the local clipboard.
 */

/** The most text a program may copy at once, in bytes (1 MiB): a yank of a whole log goes, a runaway does not. */
export const PROGRAM_COPY_MAX_BYTES = 1024 * 1024;

export type ProgramCopy =
  | { kind: 'copy'; text: string }
  /** More than the cap (bytes, decoded): nothing is copied. */
  | { kind: 'too-large'; bytes: number }
  /** A query, an empty or malformed payload: nothing to do, and nothing to say. */
  | { kind: 'none' };

const NONE: ProgramCopy = { kind: 'none' };

/** What an OSC 52 payload (the text after "52;") asks for. */
export function readOsc52(payload: string, maxBytes = PROGRAM_COPY_MAX_BYTES): ProgramCopy {
  const semi = payload.indexOf(';');
  if (semi < 0 || !/^[cpqs0-7]*$/.test(payload.slice(0, semi))) return NONE;
  const data = payload.slice(semi + 1).replace(/[\t\n\f\r ]/g, '');
  if (data === '' || data === '?') return NONE;
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  const bytes = Math.floor((data.length * 3) / 4) - padding;
  if (bytes > maxBytes) return { kind: 'too-large', bytes };
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(data)) return NONE;
  let binary: string;
  try {
    binary = atob(data);
  } catch {
    return NONE;
  }
  const text = new TextDecoder().decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
  return text === '' ? NONE : { kind: 'copy', text };
}

/** "12 characters", "1 character": what a notice says was copied (characters as a person counts them, not UTF-16 units). */
export function characterCount(text: string): string {
  const n = [...text].length;
  return `${n.toLocaleString('en')} character${n === 1 ? '' : 's'}`;
}
