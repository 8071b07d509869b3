import type { Stats as LocalStats } from 'node:fs';
import { lstat, mkdir, open, readdir, readlink, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join, posix } from 'node:path';
import type { Stats } from 'ssh2';
import { filesNotUploaded } from '../../common/contract/sftp.js';
import { WraithError } from '../../common/errors.js';
import { OPEN_LOCAL_FOR_READING } from '../local-files.js';
import { type CopyOptions, type RequestSlots, downloadFile, refuseEndless, uploadFile } from './file-copy.js';
import { type LeftOut, leaveOutUnreadable, leftOutList, listNameFor, noteUnlisted, sortLeftOut, unopenedFile } from './left-out.js';
import { type RemoteFs, entryType } from './remote-fs.js';
import { tempBasename, tempNameFor } from './temp-name.js';
import { cancelledError, fileOverFolder, fromLocalError, noSpaceForCopy, sftpError } from './sftp-errors.js';
import type { Transfer } from './transfer.js';
import { type Tree, localLinkToNowhere, walkLocal, walkRemote } from './tree.js';

export interface TransferTuning {
  /** Bytes per READ/WRITE request (capped at what the server accepts in one request). */
  chunkSize: number;
  /** READ data in flight per SFTP channel (all its downloads together). */
  readInFlightBytes: number;
  /** WRITE data in flight per SFTP channel (all its uploads together). */
  writeInFlightBytes: number;
  /** Files copied at once in a folder transfer. */
  fileConcurrency: number;
}

/** What one transfer runs with: the tuning, and its channel's request slots. */
export interface TransferPlan {
  chunkSize: number;
  fileConcurrency: number;
  slots: RequestSlots;
}

function localTempFor(path: string): string {
  return join(dirname(path), tempBasename(basename(path)));
}

async function localLstatOrNull(path: string) {
  try {
    return await lstat(path);
  } catch (err) {
    if (err instanceof Error && 'code' in err && err.code === 'ENOENT') return null;
    throw fromLocalError(err, 'stat', path);
  }
}

/** Runs fn over items, n at a time; the first failure stops new work and is rethrown after the rest settle. */
async function pool<T>(items: readonly T[], n: number, signal: AbortSignal, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (!failed && !signal.aborted && next < items.length) {
      const item = items[next++];
      if (item === undefined) return;
      await fn(item).catch((err: unknown) => {
        failed = true;
        throw err;
      });
    }
  };
  const results = await Promise.allSettled(Array.from({ length: Math.max(1, Math.min(n, items.length)) }, worker));
  if (signal.aborted) throw cancelledError('The transfer');
  const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failure) throw failure.reason;
}

/** How one transfer's copies run: its plan's chunks and slots, its cancel signal, its byte count. */
export function copyOptions(t: Transfer, plan: TransferPlan): CopyOptions {
  return {
    chunkSize: plan.chunkSize,
    slots: plan.slots,
    signal: t.signal,
    onBytes: (n) => t.addBytes(n),
  };
}

function setTotals(t: Transfer, tree: Tree): void {
  t.totalBytes = tree.totalBytes;
  t.filesTotal = tree.files.length;
}

// ---- download ----------------------------------------------------------------------------

/** One remote file to `dest` through a temp beside it; the temp is gone whatever happens. */
async function downloadOne(rfs: RemoteFs, t: Transfer, plan: TransferPlan, remote: string, dest: string, mode: number, direct: boolean) {
  const target = direct ? dest : localTempFor(dest);
  try {
    await downloadFile(rfs, remote, target, mode, copyOptions(t, plan));
    if (!direct) {
      await rename(target, dest).catch((err: unknown) => {
        throw fromLocalError(err, 'rename into', dest);
      });
    }
    t.filesDone += 1;
  } catch (err) {
    await rm(target, { force: true }).catch(() => undefined);
    throw err;
  }
}

/**
 * What a download is to copy, looked at before its transfer starts, so a source that is not
 * there is refused by the call itself (`wraith call sftp.download` fails) instead of by a
 * transfer that fails later: ENOTFOUND (missing, or a link to nothing), EDENIED (a file this
 * login may not read), EBADARGS not_a_file (neither a file nor a folder, or a file that never
 * ends). Its attributes.
 */
export async function downloadSource(rfs: RemoteFs, remote: string): Promise<Stats> {
  const st = await rfs.statTarget(remote, `download ${remote}`);
  const type = entryType(st.mode);
  if (type !== 'file' && type !== 'dir') {
    throw sftpError('EBADARGS', `Cannot download ${remote}: it is neither a file nor a folder.`, 'not_a_file', { path: remote });
  }
  if (type === 'file') {
    refuseEndless(remote);
    // Whether this login may read it, only opening tells (as uploadSource does for a local file).
    await rfs.close(await rfs.open(remote, 'r'), remote);
  }
  return st;
}

/**
 * Where a download of `remote` (attributes `st`, from downloadSource) is to land: refused when the
 * local folder is missing (ENOTFOUND), the name is taken and `overwrite` was not asked (EBADARGS
 * exists), or a file would replace a folder or a folder a file (EBADARGS). sftp.download asks
 * before its transfer starts, so the call itself fails; the transfer asks again as it starts.
 * What is at `dest` now.
 */
export async function downloadDestination(remote: string, st: Stats, dest: string, overwrite: boolean): Promise<LocalStats | null> {
  const parent = await localLstatOrNull(dirname(dest));
  if (!parent?.isDirectory()) {
    throw sftpError('ENOTFOUND', `Cannot download to ${dest}: the local folder ${dirname(dest)} does not exist.`, 'not_a_directory', { path: dest });
  }
  const existing = await localLstatOrNull(dest);
  if (existing && !overwrite) {
    throw sftpError('EBADARGS', `Cannot download to ${dest}: it already exists (pass overwrite to replace it).`, 'exists', { path: dest });
  }
  if (entryType(st.mode) === 'file' && existing?.isDirectory()) {
    throw sftpError('EBADARGS', `Cannot download the file ${remote} over the local folder ${dest}.`, 'not_a_file', { path: dest });
  }
  if (entryType(st.mode) === 'dir' && existing && !existing.isDirectory()) {
    throw sftpError('EBADARGS', `Cannot download the folder ${remote} over the local file ${dest}.`, 'not_a_directory', { path: dest });
  }
  return existing;
}

/**
 * A file of a folder transfer left out when its turn came (unopenedFile), before a byte of it
 * moved: named with the rest of what was left out, and no longer counted in the totals.
 */
function leaveOutFile(t: Transfer, leftOut: LeftOut[], listName: string | null, f: Tree['files'][number], reason: string): void {
  leftOut.push({ rel: f.rel, folder: false, reason });
  sortLeftOut(leftOut);
  t.leftOut(leftOut, listName);
  if (t.totalBytes !== null) t.totalBytes -= f.size;
  if (t.filesTotal !== null) t.filesTotal -= 1;
}

/** `st`: the source's attributes, from downloadSource. */
export async function runDownload(rfs: RemoteFs, t: Transfer, overwrite: boolean, plan: TransferPlan, st: Stats): Promise<void> {
  const remote = t.remotePath;
  const dest = t.localPath ?? '';
  const type = entryType(st.mode);
  const existing = await downloadDestination(remote, st, dest, overwrite);

  if (type === 'file') {
    // Size 0 may not mean empty (/proc's files, read to their end): unknown until the end.
    t.totalBytes = st.size === 0 ? null : st.size;
    t.filesTotal = 1;
    await downloadOne(rfs, t, plan, remote, dest, st.mode & 0o777, false);
    t.totalBytes ??= t.bytes;
    return;
  }

  t.kind = 'folder';
  // What this login cannot read (a folder it may not list, a file it may not open) is left out
  // rather than failing the whole download, as scp -r goes on past it; the folder gets a list of
  // those items and the transfer's notice names them, as a browser's zip does.
  const leftOut: LeftOut[] = [];
  const tree = await walkRemote(rfs, remote, t.signal, { unlisted: noteUnlisted(leftOut) });
  // Into a folder that is already there (overwrite), the list replaces none of its files either.
  const alsoTaken = async () => (existing ? await readdir(dest).catch(() => []) : []);
  let listName = await leaveOutUnreadable(rfs, remote, tree, leftOut, t.signal, alsoTaken);
  t.leftOut(leftOut, listName);
  setTotals(t, tree);
  // A file that cannot be opened when its turn comes is left out then, as it would have been before
  // (its list is named once the rest is in).
  const leaveOutLate = (f: Tree['files'][number], err: unknown) => {
    if (!unopenedFile(err, posix.join(remote, f.rel))) throw err;
    leaveOutFile(t, leftOut, listName, f, err.message);
  };
  // A new folder is built under a temp name and renamed at the end; into an existing one
  // (overwrite) each file goes through its own temp.
  const staging = existing ? null : localTempFor(dest);
  const root = staging ?? dest;
  try {
    await mkdir(root, { recursive: true, mode: st.mode & 0o777 });
    for (const rel of tree.dirs) await mkdir(join(root, ...rel.split('/')), { recursive: true });
    await pool(tree.files, plan.fileConcurrency, t.signal, (f) =>
      downloadOne(rfs, t, plan, posix.join(remote, f.rel), join(root, ...f.rel.split('/')), f.mode & 0o777, staging !== null).catch((err: unknown) =>
        leaveOutLate(f, err),
      ),
    );
    if (leftOut.length) {
      const name = (listName ??= listNameFor(tree, await alsoTaken()));
      t.leftOut(leftOut, name);
      await writeFile(join(root, name), leftOutList(remote, leftOut, 'folder'), { mode: 0o644 }).catch((err: unknown) => {
        throw fromLocalError(err, 'write', join(dest, name));
      });
    }
    if (staging) {
      await rename(staging, dest).catch((err: unknown) => {
        throw fromLocalError(err, 'rename into', dest);
      });
    }
  } catch (err) {
    if (staging) await rm(staging, { recursive: true, force: true }).catch(() => undefined);
    throw err;
  }
}

// ---- upload ------------------------------------------------------------------------------

/**
 * A temp file about to replace `original` at `dest` takes the original's owner and group where
 * the server allows it (as root, always); what it could not keep goes into the transfer's notice.
 * A replaced symlink or other non-file is not a file's owner to keep.
 */
export async function keepOwnership(rfs: RemoteFs, t: Transfer, temp: string, dest: string, original: Stats): Promise<void> {
  if (entryType(original.mode) !== 'file') return;
  const kept = await rfs.adoptOwnership(temp, original);
  if (kept.owner && kept.group) return;
  const now = await rfs.lstat(temp);
  t.ownershipNotKept(dest, original, now);
}

/**
 * A write of a new copy of `dest` into `temp` that the server refused for lack of room (reason
 * no_space, from RemoteFs.write) in the words of what was being done: the room the disk had for
 * the file (what is free now and what the unfinished copy took), and, when it was to replace a
 * file, that the old one stays beside the new copy until that is complete. Asked before the temp
 * is removed. Any other failure comes back as it is.
 */
export async function noRoomFor(rfs: RemoteFs, err: unknown, copy: { temp: string; dest: string; size: number | null; replacing: Stats | null }): Promise<unknown> {
  if (!(err instanceof WraithError) || err.details?.reason !== 'no_space' || err.details.path !== copy.temp) return err;
  const free = typeof err.details.free === 'number' ? err.details.free : 0;
  const taken = (await rfs.lstatOrNull(copy.temp).catch(() => null))?.size ?? 0;
  const replacing = copy.temp !== copy.dest && copy.replacing && entryType(copy.replacing.mode) === 'file' ? copy.replacing.size : null;
  return noSpaceForCopy(copy.dest, free + taken, copy.size, replacing);
}

/** The failure of a folder upload whose other files arrived: which did not and why, in the Files panel's words for its folder uploads. */
function notAllUploaded(dest: string, refused: { rel: string; message: string }[], total: number): WraithError {
  const named = [...refused].sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0)).map((r) => ({ name: r.rel, message: r.message }));
  return new WraithError('EDENIED', filesNotUploaded(named, total), { path: dest });
}

/** `replacing`: what is at `dest` now (its stats), or null when the upload creates it. */
async function uploadOne(rfs: RemoteFs, t: Transfer, plan: TransferPlan, local: string, dest: string, mode: number, direct: boolean, replacing: Stats | null) {
  const target = direct ? dest : tempNameFor(dest);
  const original = !direct && replacing && entryType(replacing.mode) === 'file' ? replacing : null;
  // A file this login may not write is refused before a byte is sent (readyToReplace).
  const ready = original ? () => rfs.readyToReplace(target, dest, original, 'replace') : undefined;
  try {
    await uploadFile(rfs, local, target, dest, mode, copyOptions(t, plan), ready);
    if (!direct) {
      if (replacing) {
        await keepOwnership(rfs, t, target, dest, replacing);
        await rfs.replace(target, dest);
      } else await rfs.rename(target, dest);
    }
    t.filesDone += 1;
  } catch (err) {
    const size = (await stat(local).catch(() => null))?.size ?? null;
    const said = await noRoomFor(rfs, err, { temp: target, dest, size, replacing: original });
    // A file of a staging folder goes with that folder (runUpload): only a temp of its own is named.
    if (!(await rfs.removeQuietly(target)) && !direct) t.leftBehind.push(target);
    throw said;
  }
}

/**
 * The local file or folder an upload is to send, looked at before its transfer starts, so a
 * source that is not there or cannot be read is refused by the call itself (`wraith call
 * sftp.upload` fails) instead of by a transfer that fails later: ENOTFOUND (broken_link for a
 * link that leads to no file), EDENIED, EBADARGS not_a_file (a device, a FIFO, a socket). Its stats.
 */
export async function uploadSource(local: string): Promise<LocalStats> {
  const st = await stat(local).catch(async (err: unknown) => {
    // A link that leads to no file is said to be one, as a folder upload says it of one inside:
    // "no such file" of a name the user sees in the folder would not say what is wrong.
    const to = await readlink(local).catch(() => null);
    throw (to === null ? null : localLinkToNowhere(local, to, err)) ?? fromLocalError(err, 'upload', local);
  });
  if (!st.isFile() && !st.isDirectory()) {
    throw sftpError('EBADARGS', `Cannot upload ${local}: it is neither a file nor a folder.`, 'not_a_file', { path: local });
  }
  // Whether it may be read, only opening tells (the mode bits do not say what ACLs or root may do).
  const opened = await open(local, OPEN_LOCAL_FOR_READING).catch((err: unknown) => {
    throw fromLocalError(err, 'upload', local);
  });
  await opened.close();
  return st;
}

/**
 * Where an upload of `local` (stats `st`, from uploadSource) is to land on the server: refused
 * when the folder is missing there (ENOTFOUND), a file would replace a folder, the name is taken
 * and `overwrite` was not asked (EBADARGS exists), or a folder would replace something else.
 * sftp.upload asks before its transfer starts, so the call itself fails; the transfer asks again
 * as it starts. What is at `dest` now.
 */
export async function uploadDestination(rfs: RemoteFs, local: string, st: LocalStats, dest: string, overwrite: boolean): Promise<Stats | null> {
  const parentDir = posix.dirname(dest);
  const parent = await rfs.lstatOrNull(parentDir);
  if (!parent || entryType(parent.mode) === 'file') {
    throw sftpError('ENOTFOUND', `Cannot upload to ${dest}: the folder ${parentDir} does not exist on the server.`, 'not_a_directory', { path: dest });
  }
  const existing = await rfs.lstatOrNull(dest);
  const existingType = existing ? entryType(existing.mode) : null;
  // A folder first: asked whether to replace it, the answer could only fail.
  if (st.isFile() && existingType === 'dir') throw fileOverFolder(`the file ${local}`, dest);
  if (existing && !overwrite) {
    throw sftpError('EBADARGS', `Cannot upload to ${dest}: it already exists on the server (pass overwrite to replace it).`, 'exists', { path: dest });
  }
  if (!st.isFile() && existing && existingType !== 'dir') {
    throw sftpError('EBADARGS', `Cannot upload the folder ${local} over ${dest}, which is not a folder.`, 'not_a_directory', { path: dest });
  }
  return existing;
}

/** `st`: the source's stats, from uploadSource. */
export async function runUpload(rfs: RemoteFs, t: Transfer, overwrite: boolean, plan: TransferPlan, st: LocalStats): Promise<void> {
  const local = t.localPath ?? '';
  const dest = t.remotePath;
  const existing = await uploadDestination(rfs, local, st, dest, overwrite);

  if (st.isFile()) {
    t.totalBytes = st.size;
    t.filesTotal = 1;
    // Over a symlink to a file, the file it points to is replaced and the link stays.
    const into = await rfs.writeTarget(dest, existing);
    // Replacing a file keeps its permissions; a new one takes the local file's.
    const mode = into.st && entryType(into.st.mode) === 'file' ? into.st.mode : st.mode;
    await uploadOne(rfs, t, plan, local, into.path, mode & 0o777, false, into.st);
    return;
  }

  t.kind = 'folder';
  // What cannot be copied (a special file, a link to no file or to a folder, a folder or a file
  // this user may not read) is left out and the rest go on, as a folder download does; the
  // transfer's notice names it in the same words. No list of them is added to the server's folder:
  // the upload puts there what the local folder holds, and nothing else.
  const leftOut: LeftOut[] = [];
  const tree = await walkLocal(local, t.signal, { unlisted: noteUnlisted(leftOut) });
  sortLeftOut(leftOut);
  t.leftOut(leftOut, null);
  setTotals(t, tree);
  const staging = existing ? null : tempNameFor(dest);
  const root = staging ?? dest;
  // A file the server refuses (one of another user's this login may not write) is left out and
  // the rest go on, as the Files panel's folder uploads do; the transfer then names it.
  const refused: { rel: string; message: string }[] = [];
  try {
    if (staging) await rfs.mkdir(staging, st.mode & 0o777);
    // Parents come before children in the walk, so one pass creates them in order.
    for (const rel of tree.dirs) {
      if (t.signal.aborted) throw cancelledError('The transfer');
      const dir = posix.join(root, rel);
      if (staging || !(await rfs.lstatOrNull(dir))) await rfs.mkdir(dir);
    }
    await pool(tree.files, plan.fileConcurrency, t.signal, async (f) => {
      const remoteFile = posix.join(root, f.rel);
      const localFile = join(local, ...f.rel.split('/'));
      const into = staging === null ? await rfs.writeTarget(remoteFile, await rfs.lstatOrNull(remoteFile)) : { path: remoteFile, st: null };
      await uploadOne(rfs, t, plan, localFile, into.path, f.mode & 0o777, staging !== null, into.st).catch((err: unknown) => {
        // One this user may not read (or gone since the walk): nothing of it was sent.
        if (unopenedFile(err, localFile)) return leaveOutFile(t, leftOut, null, f, err.message);
        if (!(err instanceof WraithError && err.code === 'EDENIED' && err.details?.path === into.path)) throw err;
        refused.push({ rel: f.rel, message: err.message });
      });
    });
    if (staging) await rfs.rename(staging, dest);
    if (refused.length) throw notAllUploaded(dest, refused, tree.files.length);
  } catch (err) {
    if (staging && !(await rfs.removeQuietly(staging))) t.leftBehind.push(staging);
    throw err;
  }
}
