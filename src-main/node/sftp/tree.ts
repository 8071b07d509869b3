import type { Dirent } from 'node:fs';
import { lstat, readdir, readlink, stat } from 'node:fs/promises';
import { basename, join, posix } from 'node:path';
import { linkToNowhere } from '../../common/contract/sftp.js';
import { WraithError } from '../../common/errors.js';
import type { RemoteFs } from './remote-fs.js';
import { entryType, specialFile } from './remote-fs.js';
import { cancelledError, fromLocalError, isItemError, sftpError } from './sftp-errors.js';

/**
 * What a folder transfer will copy, found before any byte moves (so progress has a total).
 * Paths are relative to the folder, '/'-separated. Symlinks to files are copied as the file
 * they point to; symlinks to directories and special files are skipped (no loops, no devices),
 * and so are symlinks that lead to no file (both walks tell `unlisted` of all of those).
 */
export interface Tree {
  dirs: string[];
  /** mtime in seconds since the epoch, where the walk knows it (remote folders). */
  files: { rel: string; size: number; mode: number; mtime?: number }[];
  totalBytes: number;
}

/**
 * An item below the root that the walk could not take in, and the server's reason (the local
 * system's, walking a local folder): a folder it
 * could not list, or a symlink it could not follow to a file (one to nowhere, a loop of links),
 * or would not follow (one to a folder: `folder` is true then, and the reason is ours); or a
 * special file (a named pipe, a socket, a device) or a link to one, which has no contents to copy
 * (the reason is ours).
 */
export interface Unlisted {
  rel: string;
  folder: boolean;
  error: WraithError;
}

/**
 * A special file (a named pipe, a socket, a device), or a link (to `to`) to one, met in a folder
 * being copied: nothing to copy, and not left out unsaid. `mode`: its own, or its target's.
 */
function specialFileError(name: string, mode: number, path: string, to?: string | null): WraithError {
  const { what, why } = specialFile(mode);
  const is = to === undefined ? what : to === null ? `a link to ${what}` : `a link to ${to}, ${what}`;
  return sftpError('EBADARGS', `${name} is ${is}: ${why}.`, 'not_a_file', { path });
}

/** A link to a folder (at `to`), met in a folder being copied: not followed, and not left out unsaid. */
function linkToFolderError(name: string, to: string | null, path: string, transfer: 'download' | 'upload'): WraithError {
  const message = `${name} is a link to the folder ${to ?? 'it points to'}, and a folder ${transfer} does not follow links to folders (they can lead round in a loop); ${transfer} that folder on its own.`;
  return new WraithError('EBADARGS', message, { path });
}

/**
 * How an upload says that the local link at `path`, which points to `to`, leads to no file (a
 * folder upload of one inside the folder, and an upload of the link itself): `statError` is what
 * following it failed with. Null when that was something else (fromLocalError says it then).
 */
export function localLinkToNowhere(path: string, to: string, statError: unknown): WraithError | null {
  const code = statError instanceof Error ? (statError as NodeJS.ErrnoException).code : undefined;
  if (code !== 'ENOENT' && code !== 'ENOTDIR' && code !== 'ELOOP') return null;
  return sftpError('ENOTFOUND', `Cannot upload local ${path}: ${linkToNowhere(basename(path), to, code === 'ELOOP')}.`, 'broken_link', { path });
}

/**
 * Walks a remote directory, a few READDIRs in flight at a time. A failure to list the root
 * always throws. With `unlisted`, a folder below it that cannot be listed (permission denied,
 * removed meanwhile) is told there and left out, its contents unknown; without it, that throws too.
 * A symlink that leads to no file it can reach is told there too (a download of it alone fails
 * in the same words), and so is one to a folder, and so is a special file or a link to one; all
 * of those are left out either way.
 */
export async function walkRemote(rfs: RemoteFs, root: string, signal: AbortSignal, opts: { unlisted?: (item: Unlisted) => void } = {}): Promise<Tree> {
  const tree: Tree = { dirs: [], files: [], totalBytes: 0 };
  const special = (rel: string, name: string, mode: number, to?: string | null) =>
    opts.unlisted?.({ rel, folder: false, error: specialFileError(name, mode, posix.join(root, rel), to) });
  const queue: string[] = [''];
  const skipped = new Set<string>();
  const list = async (rel: string) => {
    try {
      return await rfs.readdir(rel ? posix.join(root, rel) : root);
    } catch (err) {
      if (!rel || !opts.unlisted || !isItemError(err)) throw err;
      opts.unlisted({ rel, folder: true, error: err });
      skipped.add(rel);
      return [];
    }
  };
  while (queue.length) {
    if (signal.aborted) throw cancelledError(`Listing ${root}`);
    const batch = queue.splice(0, 8);
    const listings = await Promise.all(batch.map(async (rel) => ({ rel, entries: await list(rel) })));
    for (const { rel, entries } of listings) {
      for (const e of entries) {
        if (e.filename === '.' || e.filename === '..') continue;
        const childRel = rel ? `${rel}/${e.filename}` : e.filename;
        let type = entryType(e.attrs.mode);
        let attrs = e.attrs;
        if (type === 'symlink') {
          const path = posix.join(root, childRel);
          const target = await rfs.statTarget(path, `open ${path}`).catch((err: unknown) => {
            // A link gone since the folder was listed is simply gone.
            const gone = err instanceof WraithError && err.code === 'ENOTFOUND' && err.details?.reason !== 'broken_link';
            if (opts.unlisted && isItemError(err) && !gone) opts.unlisted({ rel: childRel, folder: false, error: err });
            return null;
          });
          if (target && entryType(target.mode) === 'dir' && opts.unlisted) {
            // Not followed (a link back up the tree would make the walk endless), and not left out unsaid.
            const to = await rfs.readlink(path).catch(() => null);
            opts.unlisted({ rel: childRel, folder: true, error: linkToFolderError(e.filename, to, path, 'download') });
          }
          if (target && entryType(target.mode) === 'other' && opts.unlisted) special(childRel, e.filename, target.mode, await rfs.readlink(path).catch(() => null));
          if (!target || entryType(target.mode) !== 'file') continue;
          type = 'file';
          attrs = target;
        }
        if (type === 'dir') {
          tree.dirs.push(childRel);
          queue.push(childRel);
        } else if (type === 'file') {
          tree.files.push({ rel: childRel, size: attrs.size, mode: attrs.mode & 0o7777, mtime: attrs.mtime });
          tree.totalBytes += attrs.size;
        } else if (type === 'other') special(childRel, e.filename, attrs.mode);
      }
    }
  }
  // A folder that could not be listed is not one of the tree's: no empty folder stands in for it.
  if (skipped.size) tree.dirs = tree.dirs.filter((d) => !skipped.has(d));
  return tree;
}

/**
 * Walks a local directory. A failure to list the root throws. With `unlisted`, what a folder
 * upload cannot copy is told there, in the words a folder download tells it with, and left out:
 * a folder below the root that cannot be listed (permission denied), a symlink that leads to no
 * file (one to nowhere, a loop of links), one to a folder (not followed, as walkRemote), and a
 * special file (a named pipe, a socket, a device) or a link to one. Without it, such a folder
 * throws and the rest are left out unsaid. A file that cannot be opened is found only when its
 * turn comes (unopenedFile): opening every file twice would cost a large folder dearly.
 */
export async function walkLocal(root: string, signal: AbortSignal, opts: { unlisted?: (item: Unlisted) => void } = {}): Promise<Tree> {
  const tree: Tree = { dirs: [], files: [], totalBytes: 0 };
  const leaveOut = (item: Unlisted) => opts.unlisted?.(item);
  const queue: string[] = [''];
  const skipped = new Set<string>();
  while (queue.length) {
    if (signal.aborted) throw cancelledError(`Listing ${root}`);
    const rel = queue.shift() ?? '';
    const dir = rel ? join(root, ...rel.split('/')) : root;
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (err) {
      const error = fromLocalError(err, 'list', dir);
      if (!rel || !opts.unlisted || !isItemError(error)) throw error;
      opts.unlisted({ rel, folder: true, error });
      skipped.add(rel);
      continue;
    }
    for (const e of entries) {
      const childRel = rel ? `${rel}/${e.name}` : e.name;
      const abs = join(dir, e.name);
      if (e.isDirectory()) {
        tree.dirs.push(childRel);
        queue.push(childRel);
      } else if (e.isSymbolicLink()) {
        const target = await stat(abs).catch((err: unknown) => err as NodeJS.ErrnoException);
        // A link gone since the folder was listed is simply gone.
        const to = await readlink(abs).catch(() => null);
        if (to === null) continue;
        if (target instanceof Error) {
          leaveOut({ rel: childRel, folder: false, error: localLinkToNowhere(abs, to, target) ?? fromLocalError(target, 'upload', abs) });
        } else if (target.isDirectory()) leaveOut({ rel: childRel, folder: true, error: linkToFolderError(e.name, to, abs, 'upload') });
        else if (!target.isFile()) leaveOut({ rel: childRel, folder: false, error: specialFileError(e.name, target.mode, abs, to) });
        else {
          tree.files.push({ rel: childRel, size: target.size, mode: target.mode & 0o7777 });
          tree.totalBytes += target.size;
        }
      } else {
        // Gone since the folder was listed: simply gone.
        const st = await lstat(abs).catch(() => null);
        if (!st) continue;
        if (st.isFile()) {
          tree.files.push({ rel: childRel, size: st.size, mode: st.mode & 0o7777 });
          tree.totalBytes += st.size;
        } else if (!st.isDirectory() && !st.isSymbolicLink()) leaveOut({ rel: childRel, folder: false, error: specialFileError(e.name, st.mode, abs) });
      }
    }
  }
  // A folder that could not be listed is not one of the tree's: no empty folder stands in for it.
  if (skipped.size) tree.dirs = tree.dirs.filter((d) => !skipped.has(d));
  return tree;
}
