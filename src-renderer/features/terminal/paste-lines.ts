/**
 * How many lines a paste holds, as the shell will see them. Text copied from an editor or a web
 * page often ends with a line end; that ends the last line, it does not start another one.
 */
export function pastedLineCount(text: string): number {
  const body = text.replace(/[\r\n]+$/, '');
  return body ? body.split(/\r\n|\r|\n/).length : 0;
}

const PASTE_MARKER = /\x1b\[20[01]~/g;

/**
 * The text without bracketed-paste markers (ESC[200~, ESC[201~). xterm.js wraps a paste in them
 * as it is, so an ESC[201~ inside ends the paste early in the program's eyes: what follows reads
 * as typed, and its line end runs a command nobody was asked about. Text has no use for them.
 * Taken out until none is left: taking one out can join the halves of another.
 */
export function withoutPasteMarkers(text: string): string {
  let out = text;
  for (let before = ''; before !== out; ) {
    before = out;
    out = out.replace(PASTE_MARKER, '');
  }
  return out;
}

/** Control characters other than tab and line ends (C0, DEL, C1): keys and escape sequences, not text. */
const CONTROL = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]/g;

/**
 * The text with its control characters made visible for a person to judge, in caret notation as
 * `cat -v` shows them: ESC as ^[, BEL as ^G, DEL as ^?, C1 with M- before (CSI 0x9B as M-^[).
 * Shown as they are they are invisible in a dialog, yet a program acts on them. (Unicode's
 * control pictures, ␛, show as empty boxes in many monospace fonts.)
 */
export function showControls(text: string): string {
  return text.replace(CONTROL, (c) => {
    const code = c.charCodeAt(0);
    if (code === 0x7f) return '^?';
    return `${code >= 0x80 ? 'M-' : ''}^${String.fromCharCode((code & 0x1f) + 0x40)}`;
  });
}

/**
 * Why a paste is asked about first:
 * - 'controls': it holds control characters, which the program takes as keys (an ESC can start a
 *   sequence that moves the cursor, edits the line or ends a bracketed paste);
 * - 'lines': several lines, each of which may run as a command;
 * - 'runs': one line with a line end, into a program that did not turn on bracketed paste, so
 *   the line end runs it as it arrives (Windows Terminal asks here too). A program with
 *   bracketed paste on (bash, zsh) only puts the text on its command line.
 */
export type PasteReason = 'controls' | 'lines' | 'runs';

export function pasteReasons(text: string, bracketed: boolean): PasteReason[] {
  const reasons: PasteReason[] = [];
  if (text.search(CONTROL) >= 0) reasons.push('controls');
  const lines = pastedLineCount(text);
  if (lines > 1) reasons.push('lines');
  else if (lines === 1 && !bracketed && /[\r\n]/.test(text)) reasons.push('runs');
  return reasons;
}

/**
 * `text` cut into pieces of at most `max` UTF-16 units, in order, never between the two halves of
 * a surrogate pair (each piece is sent as UTF-8 on its own, and half a pair would become U+FFFD).
 */
export function inPieces(text: string, max: number): string[] {
  if (text.length <= max) return [text];
  const pieces: string[] = [];
  for (let at = 0; at < text.length; ) {
    let end = Math.min(text.length, at + max);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff && end - 1 > at) end -= 1;
    pieces.push(text.slice(at, end));
    at = end;
  }
  return pieces;
}
