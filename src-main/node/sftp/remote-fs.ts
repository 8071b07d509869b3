import { posix } from 'node:path';
import type { FileEntryWithStats, InputAttributes, SFTPWrapper, Stats } from 'ssh2';
import { type SftpEntry, type SftpEntryType, linkToNowhere } from '../../common/contract/sftp.js';
import { WraithError } from '../../common/errors.js';
import { fromSftpError, isItemError, isSftpStatus, noSpaceError, partlyDeleted, sftpError } from './sftp-errors.js';
import { expandHome } from './home-path.js';
import { isTempBasename, shownPath } from './temp-name.js';
import { writeWithHeadroom } from './write-packet.js';

/** Bits of st_mode (POSIX). */
const S_IFMT = 0o170000;
const S_IFDIR = 0o040000;
const S_IFREG = 0o100000;
const S_IFLNK = 0o120000;
const S_IFIFO = 0o010000;
const S_IFSOCK = 0o140000;
const S_IFCHR = 0o020000;
const S_IFBLK = 0o060000;

export function entryType(mode: number): SftpEntryType {
  switch (mode & S_IFMT) {
    case S_IFDIR:
      return 'dir';
    case S_IFREG:
      return 'file';
    case S_IFLNK:
      return 'symlink';
    default:
      return 'other';
  }
}

/**
 * What a special file (entryType 'other') is, in a person's words, and why a copy of it has no
 * contents to give: a folder download leaves it out and says so (walkRemote).
 */
export function specialFile(mode: number): { what: string; why: string } {
  switch (mode & S_IFMT) {
    case S_IFIFO:
      return { what: 'a named pipe (FIFO)', why: 'one program passes data through it to another while both run, so it has no contents of its own to copy' };
    case S_IFSOCK:
      return { what: 'a socket', why: 'programs talk to each other through it while they run, so it has no contents of its own to copy' };
    case S_IFCHR:
      return { what: 'a character device (a terminal, /dev/null and the like)', why: 'reading it talks to the device, so it has no contents of its own to copy' };
    case S_IFBLK:
      return { what: 'a block device (a disk or a partition)', why: 'reading it would read the whole device, not a file, so it is not copied' };
    default:
      return { what: `a special file (type ${((mode & S_IFMT) >>> 12).toString(8)})`, why: 'it is not a regular file, so it has no contents of its own to copy' };
  }
}

export function octal(mode: number): string {
  return (mode & 0o7777).toString(8).padStart(4, '0');
}

export function parseMode(mode: number | string): number {
  return typeof mode === 'number' ? mode : parseInt(mode, 8);
}

/** OpenSSH longname: "drwxr-xr-x    2 root     root         4096 Jan  1 00:00 name". */
function ownerFromLongname(longname: string): { owner: string | null; group: string | null } {
  const parts = longname.trim().split(/\s+/);
  if (parts.length < 9 || !/^[-dlcbps]/.test(parts[0] ?? '')) return { owner: null, group: null };
  return { owner: parts[2] ?? null, group: parts[3] ?? null };
}

export function toEntry(
  path: string,
  attrs: Stats,
  extra: { longname?: string; linkTarget?: string | null; targetType?: SftpEntryType | null } = {},
): SftpEntry {
  const names = extra.longname ? ownerFromLongname(extra.longname) : { owner: null, group: null };
  const mode = attrs.mode ?? 0;
  return {
    name: posix.basename(path) || path,
    path,
    type: entryType(mode),
    size: Math.max(0, attrs.size ?? 0),
    mode: mode & 0o7777,
    modeOctal: octal(mode),
    mtime: new Date((attrs.mtime ?? 0) * 1000).toISOString(),
    uid: attrs.uid ?? 0,
    gid: attrs.gid ?? 0,
    owner: names.owner,
    group: names.group,
    linkTarget: extra.linkTarget ?? null,
    targetType: extra.targetType ?? null,
  };
}

/**
 * ssh2 accepts requests on a closed SFTP channel and never answers them, so every request
 * first checks that the channel is still open both ways (`incoming`/`outgoing.state`, not in
 * the typings; after a dropped connection only `incoming` says "closed").
 */
export function channelOpen(sftp: SFTPWrapper): boolean {
  return sideOpen(sftp, 'incoming') && sideOpen(sftp, 'outgoing');
}

function sideOpen(sftp: SFTPWrapper, side: 'incoming' | 'outgoing'): boolean {
  if (!(side in sftp)) return true;
  const state: unknown = Reflect.get(sftp, side);
  if (typeof state !== 'object' || state === null || !('state' in state)) return true;
  return side === 'incoming' ? state.state !== 'closed' : state.state === 'open';
}

/** The bytes a statvfs answer says are free for users (f_bavail blocks of f_frsize), or null when it does not say. */
function availableBytes(fs: unknown): number | null {
  if (typeof fs !== 'object' || fs === null || !('f_bavail' in fs) || !('f_frsize' in fs)) return null;
  const bytes = Number(fs.f_bavail) * Number(fs.f_frsize);
  return Number.isFinite(bytes) && bytes >= 0 ? bytes : null;
}

/**
 * What a failed rename is said to do, to what: moving our temp file into place is, to the person
 * reading it, creating or replacing the file it becomes.
 */
function renaming(from: string, to: string, intoPlace: 'create' | 'replace'): { action: string; path: string; to?: string } {
  return isTempBasename(posix.basename(from)) ? { action: intoPlace, path: to } : { action: 'rename', path: from, to };
}

/**
 * Promise-shaped SFTP calls on one channel. Every failure becomes a WraithError naming the
 * action and path. The channel belongs to the SSH session; this never closes it.
 */
export class RemoteFs {
  /** Handles a close was sent for: see close(). */
  private readonly closed = new WeakSet<Buffer>();

  constructor(
    readonly sftp: SFTPWrapper,
    /** Told about a path removeQuietly() could not remove because the connection was gone. */
    private readonly onOrphan?: (path: string) => void,
    /** The login's home folder (realpath of "."), where `~` leads and relative paths start; null: unknown. */
    readonly home: string | null = null,
  ) {}

  /**
   * `path` as the server is asked for it: a leading `~` expanded (expandHome). Every request that
   * names a path goes through here; messages and results keep the path as the caller gave it.
   */
  private remote(path: string): string {
    return expandHome(path, this.home);
  }

  /** A failure of `action` on `path` in our words (fromSftpError), relative paths said from home. */
  private failure(err: unknown, action: string, path: string, to?: string): WraithError {
    return fromSftpError(err, action, path, { home: this.home, ...(to === undefined ? {} : { to }) });
  }

  /** One request on `path`; `fn` sends it for the path as the server is to read it (remote()). */
  private call<T>(action: string, path: string, fn: (remotePath: string, cb: (err: Error | undefined | null, value: T) => void) => void, to?: string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (!channelOpen(this.sftp)) {
        reject(new WraithError('ESESSIONCLOSED', `Cannot ${action} ${shownPath(path)}${to === undefined ? '' : ` to ${shownPath(to)}`}: the SSH connection was closed.`, { path }));
        return;
      }
      try {
        fn(this.remote(path), (err, value) => (err ? reject(this.failure(err, action, path, to)) : resolve(value)));
      } catch (err) {
        // ssh2 throws synchronously when the channel is already closed.
        reject(this.failure(err, action, path, to));
      }
    });
  }

  private done(action: string, path: string, fn: (remotePath: string, cb: (err: Error | undefined | null) => void) => void, to?: string): Promise<void> {
    return this.call<void>(action, path, (p, cb) => fn(p, (err) => cb(err, undefined)), to);
  }

  stat(path: string): Promise<Stats> {
    return this.call('reach', path, (p, cb) => this.sftp.stat(p, cb));
  }

  lstat(path: string): Promise<Stats> {
    return this.call('reach', path, (p, cb) => this.sftp.lstat(p, cb));
  }

  /**
   * stat (which follows symlinks) of a path about to be opened or downloaded: `what` is that, for
   * the message ("open /etc/x as text"). A symlink that leads to no file is said to be one, in the
   * words the permissions dialog uses, and not "no such file" of a link the listing shows.
   */
  async statTarget(path: string, what: string): Promise<Stats> {
    try {
      return await this.stat(path);
    } catch (err) {
      if (!(err instanceof WraithError) || err.code !== 'ENOTFOUND') throw err;
      const link = await this.danglingLink(path).catch(() => null);
      if (!link) throw err;
      throw sftpError('ENOTFOUND', `Cannot ${what}: ${linkToNowhere(posix.basename(path) || path, link.target, link.loop)}.`, 'broken_link', { path, ...link });
    }
  }

  /**
   * Where the symlink at `path` (which stat found nothing behind) points, and whether its links
   * lead round in a loop (the server says "no such file" of both); null when it is no symlink.
   * Follows as many links as Linux does (40).
   */
  private async danglingLink(path: string): Promise<{ target: string; loop: boolean } | null> {
    const st = await this.lstatOrNull(path);
    if (!st || entryType(st.mode) !== 'symlink') return null;
    const target = await this.readlink(path);
    let at = posix.normalize(path);
    let to = target;
    const seen = new Set([at]);
    for (let hop = 0; hop < 40; hop++) {
      // Relative paths stay relative (to the login folder), as the server resolves them.
      at = posix.isAbsolute(to) ? posix.normalize(to) : posix.join(posix.dirname(at), to);
      if (seen.has(at)) return { target, loop: true };
      seen.add(at);
      const next = await this.lstatOrNull(at);
      if (!next || entryType(next.mode) !== 'symlink') return { target, loop: false };
      to = await this.readlink(at);
    }
    return { target, loop: true };
  }

  /** lstat, or null when nothing is there. */
  async lstatOrNull(path: string): Promise<Stats | null> {
    if (!channelOpen(this.sftp)) return this.lstat(path); // fails with ESESSIONCLOSED
    return new Promise((resolve, reject) => {
      try {
        this.sftp.lstat(this.remote(path), (err, st) => {
          if (!err) resolve(st);
          else if (isSftpStatus(err, 'NO_SUCH_FILE')) resolve(null);
          else reject(this.failure(err, 'reach', path));
        });
      } catch (err) {
        reject(this.failure(err, 'reach', path));
      }
    });
  }

  readdir(path: string): Promise<FileEntryWithStats[]> {
    return this.call('list', path, (p, cb) => this.sftp.readdir(p, cb));
  }

  readlink(path: string): Promise<string> {
    return this.call('read link', path, (p, cb) => this.sftp.readlink(p, cb));
  }

  realpath(path: string): Promise<string> {
    return this.call('resolve', path, (p, cb) => this.sftp.realpath(p, cb));
  }

  open(path: string, flags: 'r' | 'r+' | 'w' | 'wx', attrs: InputAttributes = {}): Promise<Buffer> {
    const action = flags.startsWith('r') ? 'open' : 'create';
    return this.call(action, path, (p, cb) => this.sftp.open(p, flags, attrs, cb));
  }

  /**
   * Creates `temp`, the file a write or an upload of `dest` goes to before it is renamed into
   * place. Its failures are said of `dest` and its folder: the temp's name would mean nothing to
   * the person who reads them.
   */
  async createTemp(temp: string, dest: string, attrs: InputAttributes = {}): Promise<Buffer> {
    try {
      return await this.open(temp, 'wx', attrs);
    } catch (err) {
      const dir = posix.dirname(dest);
      if (err instanceof WraithError && err.code === 'EDENIED') {
        throw new WraithError('EDENIED', `Cannot write ${dest}: the folder ${dir} is not writable, and a file arrives under a temp name beside it first.`, { path: dest });
      }
      if (err instanceof WraithError && err.code === 'ENOTFOUND') {
        throw sftpError('ENOTFOUND', `Cannot write ${dest}: the folder ${dir} does not exist on the server.`, 'not_a_directory', { path: dest });
      }
      throw err;
    }
  }

  close(handle: Buffer, path: string): Promise<void> {
    // Once only, whatever the first answer was (the server lets the handle go either way). A
    // second close would reach the file the server has since opened under the same handle (OpenSSH
    // hands out the lowest free one) and close that one under another transfer's feet.
    if (this.closed.has(handle)) return Promise.resolve();
    this.closed.add(handle);
    return this.done('close', path, (_, cb) => this.sftp.close(handle, cb));
  }

  fstat(handle: Buffer, path: string): Promise<Stats> {
    return this.call('reach', path, (_, cb) => this.sftp.fstat(handle, cb));
  }

  /** One READ (ssh2 splits it into server-sized requests); resolves to bytes read, 0 at EOF. */
  read(handle: Buffer, buf: Buffer, off: number, len: number, position: number, path: string): Promise<number> {
    return this.call('read', path, (_, cb) => this.sftp.read(handle, buf, off, len, position, (err, n) => cb(err, n ?? 0)));
  }

  /** READs until `len` bytes are in `buf` or the file ends; resolves to the bytes read (fewer only at EOF). */
  async readFully(handle: Buffer, buf: Buffer, off: number, len: number, position: number, path: string): Promise<number> {
    let got = 0;
    while (got < len) {
      const n = await this.read(handle, buf, off + got, len - got, position + got, path);
      if (n === 0) break;
      got += n;
    }
    return got;
  }

  /**
   * READs from `position` one after another until the file ends or `max` bytes are in, for files
   * whose size says nothing of their content (the kernel's /proc reports 0 for files that are
   * not empty). `eof`: the end was seen (with `max` bytes in, it may not have been).
   */
  async readToEnd(handle: Buffer, position: number, max: number, step: number, path: string): Promise<{ data: Buffer; eof: boolean }> {
    const parts: Buffer[] = [];
    let got = 0;
    while (got < max) {
      const buf = Buffer.allocUnsafe(Math.min(step, max - got));
      const n = await this.read(handle, buf, 0, buf.length, position + got, path);
      if (n === 0) return { data: Buffer.concat(parts, got), eof: true };
      parts.push(n < buf.length ? buf.subarray(0, n) : buf);
      got += n;
    }
    return { data: Buffer.concat(parts, got), eof: false };
  }

  write(handle: Buffer, buf: Buffer, off: number, len: number, position: number, path: string): Promise<void> {
    return this.writing(path, len, (cb) => this.sftp.write(handle, buf, off, len, position, cb));
  }

  /**
   * write() of `packet[writeHeaderLength(handle), …+dataLength)`, sent without copying it into a
   * new request when ssh2 allows (write-packet.ts). The buffer may be reused once this settles.
   */
  writeWithHeadroom(handle: Buffer, packet: Buffer, dataLength: number, position: number, path: string): Promise<void> {
    return this.writing(path, dataLength, (cb) => {
      writeWithHeadroom(this.sftp, handle, packet, dataLength, position, cb);
    });
  }

  /**
   * One WRITE of `len` bytes to `path`. SFTP v3 has no status for a full disk: OpenSSH answers
   * ENOSPC (and EDQUOT, EFBIG) with a bare FAILURE. A WRITE refused so asks how much room the file
   * system has left (freeSpace): less than the refused bytes is a full disk, said as one (reason
   * no_space), which stops what could only fail the same way (the rest of a folder upload).
   */
  private async writing(path: string, len: number, send: (cb: (err?: Error | null) => void) => void): Promise<void> {
    let refusal: unknown = null;
    try {
      await this.done('write', path, (_, cb) =>
        send((err) => {
          refusal = err;
          cb(err);
        }),
      );
    } catch (err) {
      if (!isSftpStatus(refusal, 'FAILURE')) throw err;
      const free = await this.freeSpace(path);
      if (free === null || free >= len) throw err;
      throw noSpaceError(path, free);
    }
  }

  /**
   * Bytes free for this login on the file system that holds `path` (statvfs@openssh.com), or null
   * when the server does not say (it is not OpenSSH, or the connection is gone).
   */
  freeSpace(path: string): Promise<number | null> {
    return new Promise((resolve) => {
      if (!channelOpen(this.sftp)) return resolve(null);
      try {
        this.sftp.ext_openssh_statvfs(this.remote(path), (err, fs: unknown) => resolve(err ? null : availableBytes(fs)));
      } catch {
        resolve(null); // extension not offered by this server
      }
    });
  }

  mkdir(path: string, mode?: number): Promise<void> {
    return this.done('create directory', path, (p, cb) => this.sftp.mkdir(p, mode === undefined ? {} : { mode }, cb));
  }

  rmdir(path: string): Promise<void> {
    return this.done('remove directory', path, (p, cb) => this.sftp.rmdir(p, cb));
  }

  unlink(path: string): Promise<void> {
    return this.done('delete', path, (p, cb) => this.sftp.unlink(p, cb));
  }

  chmod(path: string, mode: number): Promise<void> {
    return this.done('change mode of', path, (p, cb) => this.sftp.chmod(p, mode, cb));
  }

  /**
   * Where writing to `path` (whose lstat is `st`) lands: through a symlink to a regular file, to
   * that file, as scp, sftp and editors write, so that a link such as sites-enabled/default stays
   * a link; otherwise `path` itself.
   */
  async writeTarget(path: string, st: Stats | null): Promise<{ path: string; st: Stats | null }> {
    if (!st || entryType(st.mode) !== 'symlink') return { path, st };
    const real = await this.realpath(path).catch(() => null);
    const target = real === null ? null : await this.lstatOrNull(real);
    return real !== null && target && entryType(target.mode) === 'file' ? { path: real, st: target } : { path, st };
  }

  chown(path: string, uid: number, gid: number): Promise<void> {
    return this.done('change owner of', path, (p, cb) => this.sftp.chown(p, uid, gid, cb));
  }

  /**
   * Gives `path` (a temp file about to replace `original`) the original's owner and group, so
   * that replacing a file does not hand it to the user who is logged in: a config file owned by
   * www-data stays www-data's when root saves it. Only root may give a file to another user; a
   * member of the original's group may still set the group. Says which of the two now match.
   * A refusal of any kind (denied, or a server that does not do owners) is an answer, not a
   * failure; only a lost connection throws.
   */
  async adoptOwnership(path: string, original: Stats): Promise<{ owner: boolean; group: boolean }> {
    const now = await this.lstat(path);
    if (now.uid === original.uid && now.gid === original.gid) return { owner: true, group: true };
    const denied = (err: unknown) => {
      if (err instanceof WraithError && err.code !== 'ESESSIONCLOSED') return false;
      throw err;
    };
    if (await this.chown(path, original.uid, original.gid).then(() => true, denied)) return { owner: true, group: true };
    const group = now.gid === original.gid || (await this.chown(path, now.uid, original.gid).then(() => true, denied));
    return { owner: now.uid === original.uid, group };
  }

  /**
   * Readies `temp`, a new file about to take the place of `original` (the file at `path`), before
   * anything is written to it: it takes the original's owner and group where the server allows
   * (adoptOwnership). One whose owner it cannot take is another user's file, which only a login
   * that may write it may change: renaming over it needs only the folder's permission, and would
   * hand the file to this login. The server says, by opening it for writing (and writing
   * nothing), as it does to a save in place; a login it refuses is refused with EDENIED, as
   * OpenSSH's sftp and scp, which write into the file, are. `verb` says what was asked ("replace").
   */
  async readyToReplace(temp: string, path: string, original: Stats, verb: string): Promise<{ owner: boolean; group: boolean }> {
    const kept = await this.adoptOwnership(temp, original);
    if (kept.owner) return kept;
    let handle: Buffer;
    try {
      handle = await this.open(path, 'r+');
    } catch (err) {
      if (!(err instanceof WraithError) || err.code !== 'EDENIED') throw err;
      throw new WraithError('EDENIED', `Cannot ${verb} ${path}: it belongs to ${await this.ownerName(path, original.uid)} and you may not write it.`, { path });
    }
    await this.close(handle, path).catch(() => undefined);
    return kept;
  }

  /** Who owns `path`, by name as its folder's listing says (OpenSSH's long names), else by number. */
  private async ownerName(path: string, uid: number): Promise<string> {
    const name = posix.basename(path);
    const listed = (await this.readdir(posix.dirname(path)).catch(() => [])).find((e) => e.filename === name);
    const owner = listed ? ownerFromLongname(listed.longname).owner : null;
    return owner && !/^\d+$/.test(owner) ? owner : `user ${uid}`;
  }

  /**
   * Writes `data` over the file at `path` in place (what vim and nano do when a file cannot be
   * replaced by another): its owner, group, mode and hard links stay. The old bytes are
   * overwritten first and the file cut to length last, so it is never empty on the way.
   */
  async overwriteInPlace(path: string, data: Buffer, chunk: number): Promise<void> {
    const handle = await this.open(path, 'r+');
    try {
      const writes: Promise<void>[] = [];
      for (let at = 0; at < data.length; at += chunk) writes.push(this.write(handle, data, at, Math.min(chunk, data.length - at), at, path));
      await Promise.all(writes);
      await this.done('truncate', path, (_, cb) => this.sftp.fsetstat(handle, { size: data.length }, cb));
    } finally {
      await this.close(handle, path).catch(() => undefined);
    }
  }

  /** Plain SFTP rename: fails when `to` exists. */
  rename(from: string, to: string): Promise<void> {
    const said = renaming(from, to, 'create');
    return this.done(said.action, said.path, (_, cb) => this.sftp.rename(this.remote(from), this.remote(to), cb), said.to);
  }

  /**
   * Renames over an existing file: posix-rename@openssh.com when the server has it (atomic),
   * else remove the target and rename (a short window without the file, never a partial one).
   */
  async replace(from: string, to: string): Promise<void> {
    const posixRename = await new Promise<boolean | Error>((resolve) => {
      if (!channelOpen(this.sftp)) return resolve(false);
      try {
        this.sftp.ext_openssh_rename(this.remote(from), this.remote(to), (err) => resolve(err ?? true));
      } catch {
        resolve(false); // extension not offered by this server
      }
    });
    if (posixRename === true) return;
    if (posixRename instanceof Error && !isSftpStatus(posixRename, 'OP_UNSUPPORTED')) {
      const said = renaming(from, to, 'replace');
      throw this.failure(posixRename, said.action, said.path, said.to);
    }
    const existing = await this.lstatOrNull(to);
    if (existing) await this.unlink(to);
    await this.rename(from, to);
  }

  /**
   * Deletes a file, or a directory tree, bottom-up; returns how many entries went. An entry that
   * will not go (permission denied, say) does not stop the rest, as `rm -r` goes on past it: what
   * can be deleted is, and then this fails with reason partly_deleted naming what could not be.
   * A lost connection stops it at once.
   */
  async removeTree(path: string): Promise<number> {
    const st = await this.lstat(path);
    const failures: WraithError[] = [];
    const { removed } = await this.removeAll(path, entryType(st.mode) === 'dir', failures);
    if (failures.length) throw partlyDeleted(path, removed, failures);
    return removed;
  }

  /**
   * removeTree's walk: how many entries under and at `path` went, and whether it is gone. What
   * would not go is added to `failures`; a folder that still holds some of it is left alone (its
   * rmdir could only fail, "not empty").
   */
  private async removeAll(path: string, isDir: boolean, failures: WraithError[]): Promise<{ removed: number; gone: boolean }> {
    const kept = (err: unknown) => {
      if (!isItemError(err)) throw err;
      // Gone meanwhile is gone; a name that is not UTF-8 is there still (SFTP cannot reach it).
      if (err.code === 'ENOTFOUND' && err.details?.reason !== 'name_not_utf8') return { removed: 0, gone: true };
      failures.push(err);
      return { removed: 0, gone: false };
    };
    if (!isDir) return this.unlink(path).then(() => ({ removed: 1, gone: true }), kept);
    let children: FileEntryWithStats[];
    try {
      children = await this.readdir(path);
    } catch (err) {
      return kept(err);
    }
    let removed = 0;
    let emptied = true;
    // A few at a time: requests pipeline on the channel without flooding it.
    for (let i = 0; i < children.length; i += 16) {
      const batch = children.slice(i, i + 16).filter((c) => c.filename !== '.' && c.filename !== '..');
      const results = await Promise.all(batch.map((c) => this.removeAll(posix.join(path, c.filename), entryType(c.attrs.mode) === 'dir', failures)));
      for (const r of results) {
        removed += r.removed;
        emptied &&= r.gone;
      }
    }
    if (!emptied) return { removed, gone: false };
    const self = await this.rmdir(path).then(() => ({ removed: 1, gone: true }), kept);
    return { removed: removed + self.removed, gone: self.gone };
  }

  /**
   * Best effort, for cleanup paths: never throws. When the connection is gone the path stays on
   * the server; onOrphan hears of it, so that a later connection can remove it. False then (the
   * path stays for now), else true.
   */
  async removeQuietly(path: string): Promise<boolean> {
    try {
      await this.removeTree(path);
    } catch {
      // Already gone, or the connection is gone with it.
      if (!channelOpen(this.sftp)) {
        this.onOrphan?.(path);
        return false;
      }
    }
    return true;
  }
}
