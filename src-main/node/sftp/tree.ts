import { lstat, readdir, stat } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { WraithError } from '../../common/errors.js';
import type { RemoteFs } from './remote-fs.js';
import { entryType, specialFile } from './remote-fs.js';
import { cancelledError, fromLocalError, isItemError, sftpError } from './sftp-errors.js';

/**
 * What a folder transfer will copy, found before any byte moves (so progress has a total).
 * Paths are relative to the folder, '/'-separated. Symlinks to files are copied as the file
 * they point to; symlinks to directories and special files are skipped (no loops, no devices),
 * and so are symlinks that lead to no file (walkRemote tells `unlisted` of all of those).
 */
export interface Tree {
  dirs: string[];
  /** mtime in seconds since the epoch, where the walk knows it (remote folders). */
  files: { rel: string; size: number; mode: number; mtime?: number }[];
  totalBytes: number;
}

/**
 * An item below the root that the walk could not take in, and the server's reason: a folder it
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
 * Walks a remote directory, a few READDIRs in flight at a time. A failure to list the root
 * always throws. With `unlisted`, a folder below it that cannot be listed (permission denied,
 * removed meanwhile) is told there and left out, its contents unknown; without it, that throws too.
 * A symlink that leads to no file it can reach is told there too (a download of it alone fails
 * in the same words), and so is one to a folder, and so is a special file or a link to one; all
 * of those are left out either way.
 */
export async function walkRemote(rfs: RemoteFs, root: string, signal: AbortSignal, opts: { unlisted?: (item: Unlisted) => void } = {}): Promise<Tree> {
  const tree: Tree = { dirs: [], files: [], totalBytes: 0 };
  /** A special file, or a link (to `to`) to one: nothing to copy, and not left out unsaid. */
  const special = (rel: string, name: string, mode: number, to?: string | null) => {
    const { what, why } = specialFile(mode);
    const is = to === undefined ? what : to === null ? `a link to ${what}` : `a link to ${to}, ${what}`;
    const path = posix.join(root, rel);
    opts.unlisted?.({ rel, folder: false, error: sftpError('EBADARGS', `${name} is ${is}: ${why}.`, 'not_a_file', { path }) });
  };
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
            const message = `${e.filename} is a link to the folder ${to ?? 'it points to'}, and a folder download does not follow links to folders (they can lead round in a loop); download that folder on its own.`;
            opts.unlisted({ rel: childRel, folder: true, error: new WraithError('EBADARGS', message, { path }) });
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

/** Walks a local directory. */
export async function walkLocal(root: string, signal: AbortSignal): Promise<Tree> {
  const tree: Tree = { dirs: [], files: [], totalBytes: 0 };
  const queue: string[] = [''];
  while (queue.length) {
    if (signal.aborted) throw cancelledError(`Listing ${root}`);
    const rel = queue.shift() ?? '';
    const dir = rel ? join(root, ...rel.split('/')) : root;
    const entries = await readdir(dir, { withFileTypes: true }).catch((err: unknown) => {
      throw fromLocalError(err, 'list', dir);
    });
    for (const e of entries) {
      const childRel = rel ? `${rel}/${e.name}` : e.name;
      const abs = join(dir, e.name);
      if (e.isDirectory()) {
        tree.dirs.push(childRel);
        queue.push(childRel);
      } else if (e.isFile() || e.isSymbolicLink()) {
        const st = await (e.isSymbolicLink() ? stat(abs) : lstat(abs)).catch(() => null);
        if (!st || !st.isFile()) continue;
        tree.files.push({ rel: childRel, size: st.size, mode: st.mode & 0o7777 });
        tree.totalBytes += st.size;
      }
    }
  }
  return tree;
}
