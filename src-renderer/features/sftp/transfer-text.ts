import { formatBytes } from './format.js';
import type { TransferRow } from './sftp-store.js';

/** What the transfers list says of a finished row; only what the row knows. */
type Ended = Pick<TransferRow, 'direction' | 'bytes' | 'totalBytes' | 'filesDone' | 'filesTotal' | 'batch' | 'madeFolders' | 'leftBehind'>;

/**
 * "Uploaded 3.5 MB"; for several files "Uploaded 1000 files, 3.9 MB". A batch counts the files
 * that arrived and their bytes: files that were already there and kept were not sent (its note
 * says how many), and a batch that kept them all sent nothing.
 */
export function doneText(t: Ended): string {
  const verb = t.direction === 'upload' ? 'Uploaded' : 'Downloaded';
  if (t.batch) {
    if (t.filesDone === 0) return `Nothing ${verb.toLowerCase()}`;
    return `${verb} ${t.filesDone} ${t.filesDone === 1 ? 'file' : 'files'}, ${formatBytes(t.bytes)}`;
  }
  const files = (t.filesTotal ?? 0) > 1 ? ` ${t.filesDone} files,` : '';
  return `${verb}${files} ${formatBytes(t.totalBytes ?? t.bytes)}`;
}

/**
 * The partial copies a transfer's host could not remove as it ended (its connection was gone: a
 * server that stopped answering), named: they stay until the next connection to that server,
 * which removes them before anything else (the host's orphan temps).
 */
function partialsKept(paths: readonly string[]): string {
  const base = (p: string) => p.slice(p.lastIndexOf('/') + 1) || p;
  const [first] = paths;
  if (paths.length === 1 && first !== undefined) {
    const dir = first.slice(0, first.lastIndexOf('/')) || '/';
    return `the connection was lost before its partial copy could be removed: ${base(first)} stays in ${dir} on the server until the next connection to it, which removes it`;
  }
  const named = paths.slice(0, 3).map(base).join(', ') + (paths.length > 3 ? ', …' : '');
  return `the connection was lost before its ${paths.length} partial copies could be removed (${named}): they stay on the server until the next connection to it, which removes them`;
}

/**
 * A cancelled transfer leaves no partial file: the host removes the temp a file was being
 * written to, and a file it would have replaced is as it was — unless the connection was gone
 * before it could (leftBehind): then the row names what stays, and until when. Of a batch, the
 * files that had arrived stay (a cancel does not take them back, and a Retry sends only the
 * rest), and so do the folders made for it, before its first file, even with nothing in them.
 */
export function cancelledText(t: Ended): string {
  const kept = t.leftBehind.length ? partialsKept(t.leftBehind) : null;
  if (!t.batch) return kept ? `Cancelled — ${kept}.` : 'Cancelled — nothing was left behind';
  const total = t.filesTotal ?? 0;
  const files = total === 1 ? 'file' : 'files';
  const arrived =
    t.filesDone > 0
      ? `Cancelled — ${t.filesDone} of ${total} ${files} had arrived and stay on the server; ${kept ?? 'no partial file was left'}.`
      : total === 1
        ? `Cancelled — the file had not arrived, and ${kept ?? 'no partial file was left'}.`
        : `Cancelled — none of the ${total} files had arrived, and ${kept ?? 'no partial file was left'}.`;
  const made = t.madeFolders;
  if (!made.length) return arrived;
  if (made.length === 1) return `${arrived} The folder ${made[0]} was made for this upload and stays.`;
  return `${arrived} The ${made.length} folders made for this upload (${made.join(', ')}) stay.`;
}

/** How far a transfer is, in whole percent (null: its size is not known yet). */
export function percentDone(bytes: number, total: number | null): number | null {
  if (total === null) return null;
  if (total === 0) return 100;
  return Math.min(100, Math.floor((bytes / total) * 100));
}

/** What a running transfer's row knows of it that says which it is and how far. */
type Running = Pick<TransferRow, 'direction' | 'name' | 'remotePath' | 'bytes' | 'totalBytes'>;

/** "the upload of big1g (12 %)", "the upload of a (3 %), the download of b.log (40 %) and 2 more". */
function stoppingList(list: readonly Running[]): string {
  const SHOWN = 4;
  const named = list.slice(0, list.length > SHOWN ? SHOWN - 1 : SHOWN).map((t) => {
    const p = percentDone(t.bytes, t.totalBytes);
    return `the ${t.direction} of ${t.name || t.remotePath}${p === null ? '' : ` (${p} %)`}`;
  });
  if (named.length < list.length) named.push(`${list.length - named.length} more`);
  return named.length > 1 ? `${named.slice(0, -1).join(', ')} and ${named[named.length - 1] ?? ''}` : (named[0] ?? '');
}

/** The running transfers a question about closing their tab names: "The upload of big1g (12 %) will stop." */
export function transfersWillStop(list: readonly Running[]): string {
  if (!list.length) return '';
  const named = stoppingList(list);
  return list.length === 1 ? `${named.charAt(0).toUpperCase()}${named.slice(1)} will stop.` : `${list.length} transfers will stop: ${named}.`;
}

/**
 * What closing tabs stopped, said once it has (`closing`: "Closing web01", "Closing 3 tabs"):
 * "Closing web01 stopped the upload of big1g (12 %)."
 */
export function transfersStopped(closing: string, list: readonly Running[]): string {
  const named = stoppingList(list);
  return list.length === 1 ? `${closing} stopped ${named}.` : `${closing} stopped ${list.length} transfers: ${named}.`;
}
