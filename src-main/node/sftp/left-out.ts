/**
 * What a folder download leaves out: the folders this login may not list, the files it may not
 * open, the links that lead to no file and those to folders, the special files (named pipes,
 * sockets, devices) and links to them, found before the first byte, so the rest comes whole (as a
 * zip for the browser, as a folder on disk for the desktop app) with a text file that lists what
 * is missing and why. A folder upload leaves out the same of a local folder (walkLocal) and names
 * them in its transfer's notice, with no list added to the server's folder.
 */
import { posix } from 'node:path';
import type { RemoteFs } from './remote-fs.js';
import { WraithError } from '../../common/errors.js';
import { cancelledError, isItemError } from './sftp-errors.js';
import type { Tree, Unlisted } from './tree.js';

/** An item of the folder that a download (or an upload) leaves out: it could not be listed, opened or followed. */
export interface LeftOut {
  /** Its path in the folder, '/'-separated. */
  rel: string;
  folder: boolean;
  /** What the server said. */
  reason: string;
}

/** Files whose openability is checked at once (each an OPEN and a CLOSE in flight). */
const PROBES_AT_ONCE = 16;

/**
 * Takes out of `tree` the files this login cannot open, and says which (with the server's
 * reason). A zip's size is fixed before its first byte, and a folder downloaded to disk counts
 * its files and bytes before the first, so a file that fails to open once the download runs would
 * fail it whole: each file that not everyone may read is opened (and closed) beforehand. A file
 * with the others-read bit is taken as readable without asking: most files are, and a folder of
 * thousands costs no round trips for them.
 */
async function takeOutUnreadable(rfs: RemoteFs, root: string, tree: Tree, signal: AbortSignal): Promise<LeftOut[]> {
  const doubtful = tree.files.filter((f) => (f.mode & 0o004) === 0);
  const unreadable = new Map<string, string>();
  let next = 0;
  const worker = async () => {
    while (next < doubtful.length) {
      if (signal.aborted) throw cancelledError(`Download of ${root}`);
      const f = doubtful[next++];
      if (!f) return;
      const path = posix.join(root, f.rel);
      try {
        await rfs.close(await rfs.open(path, 'r'), path).catch(() => undefined);
      } catch (err) {
        if (!isItemError(err)) throw err;
        unreadable.set(f.rel, err.message);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(PROBES_AT_ONCE, doubtful.length) }, worker));
  if (!unreadable.size) return [];
  tree.files = tree.files.filter((f) => !unreadable.has(f.rel));
  tree.totalBytes = tree.files.reduce((n, f) => n + f.size, 0);
  return [...unreadable].map(([rel, reason]) => ({ rel, folder: false, reason }));
}

/**
 * Whether `err`, met opening the remote file `path` of a folder being downloaded to disk, leaves
 * that file alone out: it went away since the folder was walked (a log rotated meanwhile), or the
 * server refused it although its mode let everyone read (an ACL, SELinux: see takeOutUnreadable).
 * Nothing of it was copied yet. A failure while reading, or of the local side, is not one. The same
 * of the local file `path` of a folder being uploaded (gone, or this user may not read it).
 */
export function unopenedFile(err: unknown, path: string): err is WraithError {
  return err instanceof WraithError && (err.code === 'EDENIED' || err.code === 'ENOTFOUND') && err.details?.path === path;
}

/** walkRemote's `unlisted`: each folder this login may not list, each link to no file or to a folder, and each special file (or link to one) goes into `leftOut`. */
export function noteUnlisted(leftOut: LeftOut[]): (item: Unlisted) => void {
  return (f) => leftOut.push({ rel: f.rel, folder: f.folder, reason: f.error.message });
}

/**
 * Completes what a folder download leaves out, once walked (with noteUnlisted): the files this
 * login cannot open are taken out of `tree` and added to `leftOut`, which is sorted. Returns the
 * name of the text file that will list them, or null when nothing is left out; `alsoTaken` (what
 * a local folder downloaded into already holds) is asked only then.
 */
export async function leaveOutUnreadable(
  rfs: RemoteFs,
  root: string,
  tree: Tree,
  leftOut: LeftOut[],
  signal: AbortSignal,
  alsoTaken: () => Promise<Iterable<string>> = async () => [],
): Promise<string | null> {
  leftOut.push(...(await takeOutUnreadable(rfs, root, tree, signal)));
  if (!leftOut.length) return null;
  sortLeftOut(leftOut);
  return listNameFor(tree, await alsoTaken());
}

export function sortLeftOut(leftOut: LeftOut[]): void {
  leftOut.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
}

/** The name of the list: not one of the folder's own names, nor one of `alsoTaken`. */
export function listNameFor(tree: Tree, alsoTaken: Iterable<string>): string {
  const taken = new Set([...tree.files.map((f) => f.rel), ...tree.dirs, ...alsoTaken]);
  let name = 'WRAITH-NOT-INCLUDED.txt';
  for (let n = 2; taken.has(name); n++) name = `WRAITH-NOT-INCLUDED-${n}.txt`;
  return name;
}

/** The text of that file: what was left out of which folder, and why; `into` the zip or the folder downloaded. */
export function leftOutList(root: string, leftOut: LeftOut[], into: 'zip' | 'folder'): Buffer {
  const lines = [
    `These items of ${root} could not be read when this ${into === 'zip' ? 'zip was made' : 'folder was downloaded'}, and are not in it:`,
    '',
    ...leftOut.map((l) => `${l.folder ? `${l.rel}/` : l.rel}\t${l.reason}`),
    '',
  ];
  return Buffer.from(lines.join('\n'), 'utf8');
}
