import { lstat, readdir, stat } from 'node:fs/promises';
import { join, posix } from 'node:path';
import type { RemoteFs } from './remote-fs.js';
import { entryType } from './remote-fs.js';
import { cancelledError, fromLocalError } from './sftp-errors.js';

/**
 * What a folder transfer will copy, found before any byte moves (so progress has a total).
 * Paths are relative to the folder, '/'-separated. Symlinks to files are copied as the file
 * they point to; symlinks to directories and special files are skipped (no loops, no devices).
 */
export interface Tree {
  dirs: string[];
  /** mtime in seconds since the epoch, where the walk knows it (remote folders). */
  files: { rel: string; size: number; mode: number; mtime?: number }[];
  totalBytes: number;
}

/** Walks a remote directory, a few READDIRs in flight at a time. */
export async function walkRemote(rfs: RemoteFs, root: string, signal: AbortSignal): Promise<Tree> {
  const tree: Tree = { dirs: [], files: [], totalBytes: 0 };
  const queue: string[] = [''];
  while (queue.length) {
    if (signal.aborted) throw cancelledError(`Listing ${root}`);
    const batch = queue.splice(0, 8);
    const listings = await Promise.all(batch.map(async (rel) => ({ rel, entries: await rfs.readdir(rel ? posix.join(root, rel) : root) })));
    for (const { rel, entries } of listings) {
      for (const e of entries) {
        if (e.filename === '.' || e.filename === '..') continue;
        const childRel = rel ? `${rel}/${e.filename}` : e.filename;
        let type = entryType(e.attrs.mode);
        let attrs = e.attrs;
        if (type === 'symlink') {
          const target = await rfs.stat(posix.join(root, childRel)).catch(() => null);
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
        }
      }
    }
  }
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
