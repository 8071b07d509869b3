/**
 * Line endings of a file opened in the editor.
 *
 * A <textarea> turns every CRLF and lone CR in its value into LF, so a Windows-format file came
 * back from an edit with every line ending changed. The editor shows the text with LF and saves
 * it with the file's own ending; a file that mixes them is saved with its most common one, and
 * the editor says so before the user saves.
 */
export type Eol = '\n' | '\r\n' | '\r';

export interface LineEndings {
  /** The ending lines are saved with: the file's most common one (LF when it has none). */
  eol: Eol;
  /** More than one kind of ending is in the file. */
  mixed: boolean;
}

export function detectLineEndings(text: string): LineEndings {
  let crlf = 0;
  let lf = 0;
  let cr = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 13) {
      if (text.charCodeAt(i + 1) === 10) {
        crlf += 1;
        i += 1;
      } else cr += 1;
    } else if (c === 10) lf += 1;
  }
  const kinds = [crlf, lf, cr].filter((n) => n > 0).length;
  // Ties go to LF, then CRLF: the usual endings on the servers Wraith talks to.
  const eol: Eol = crlf > lf && crlf >= cr ? '\r\n' : cr > lf && cr > crlf ? '\r' : '\n';
  return { eol, mixed: kinds > 1 };
}

/** The text as the textarea holds it: LF only. */
export function toEditorText(text: string): string {
  return text.replace(/\r\n?/g, '\n');
}

/** The editor's text with `eol` at every line end, for saving. */
export function fromEditorText(text: string, eol: Eol): string {
  return eol === '\n' ? text : text.replace(/\n/g, eol);
}

/** How the editor names an ending: what editors show in their status bar. */
export function eolName(eol: Eol): string {
  return eol === '\r\n' ? 'CRLF' : eol === '\r' ? 'CR' : 'LF';
}
