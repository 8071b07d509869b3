import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import { isAbsolute } from 'node:path';
import { WraithError } from '../common/errors.js';
import { expandHome } from './paths.js';

/**
 * Files on this machine that a caller names (a known_hosts file, an ssh_config, a key file, an
 * upload): the caller may name anything, and a device or a FIFO read as a file would never end
 * (/dev/zero) or never start (a FIFO nobody writes to), freezing or killing the host.
 */

/**
 * How a caller-named file is opened: O_NONBLOCK so a FIFO opens at once (to be refused) instead of
 * waiting for a writer; O_NOCTTY so a terminal device never becomes the host's. Neither changes
 * how a regular file reads.
 */
export const OPEN_LOCAL_FOR_READING = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY;

/**
 * A local path as a caller gave it, made absolute: "~" and "~/…" are expanded; anything else
 * relative is refused, as it would be taken from the host's working directory, not the caller's.
 */
export function callerLocalPath(path: string, what: 'file' | 'folder' = 'file'): string {
  const full = expandHome(path);
  if (!isAbsolute(full)) throw new WraithError('EBADARGS', `Give the full path of the local ${what}: ${path} is relative.`, { path });
  return full;
}

/**
 * Why what `path` opened cannot be read as `what` (e.g. "an OpenSSH known_hosts file"), or null;
 * a folder is told by `details.reason` 'folder', for callers that say more of it.
 */
function notARegularFile(path: string, st: Stats, what: string): WraithError | null {
  if (st.isFile()) return null;
  if (st.isDirectory()) return new WraithError('EBADARGS', `${path} is a folder: give ${what}.`, { path, reason: 'folder' });
  return new WraithError('EBADARGS', `${path} is not a regular file: give ${what}.`, { path });
}

export interface LocalFileLimit {
  /** Largest file taken: anything larger is not what is asked for. */
  maxBytes: number;
  /** What the file should be, for messages: "an OpenSSH known_hosts file". */
  what: string;
}

/**
 * The bytes of a regular file on this machine named by a caller (`path`: absolute or "~/…"),
 * reading at most `maxBytes`. The open descriptor is checked, not the path, so a file swapped
 * for a device in between is still refused. Errors: EBADARGS (relative, not a regular file,
 * over the limit), ENOTFOUND, EDENIED, EIO.
 */
export function readLocalFileSync(path: string, limit: LocalFileLimit): Buffer {
  const full = callerLocalPath(path);
  let fd: number;
  try {
    fd = openSync(full, OPEN_LOCAL_FOR_READING);
  } catch (err) {
    throw localFileError(err, path);
  }
  try {
    const st = fstatSync(fd);
    const refused = notARegularFile(path, st, limit.what);
    if (refused) throw refused;
    const tooLarge = () => new WraithError('EBADARGS', `${path} is over ${formatLimit(limit.maxBytes)}: not ${limit.what}.`, { path });
    if (st.size > limit.maxBytes) throw tooLarge();
    // Reads one byte past the size, and on up to one past the limit: a file that grew since is still bounded.
    let buf = Buffer.alloc(st.size + 1);
    let got = 0;
    for (;;) {
      if (got === buf.length) buf = Buffer.concat([buf, Buffer.alloc(Math.min(buf.length, limit.maxBytes + 1 - buf.length))]);
      const n = readSync(fd, buf, got, buf.length - got, null);
      if (n === 0) break;
      got += n;
      if (got > limit.maxBytes) throw tooLarge();
    }
    return buf.subarray(0, got);
  } catch (err) {
    throw localFileError(err, path);
  } finally {
    closeSync(fd);
  }
}

/** A failure to open or read a caller-named local file, as a WraithError. */
function localFileError(err: unknown, path: string): WraithError {
  if (err instanceof WraithError) return err;
  const code = (err as NodeJS.ErrnoException).code ?? 'EIO';
  if (code === 'ENOENT' || code === 'ENOTDIR') return new WraithError('ENOTFOUND', `There is no file at ${path}.`, { path });
  if (code === 'EACCES' || code === 'EPERM') return new WraithError('EDENIED', `Wraith may not read ${path} (permission denied).`, { path });
  return new WraithError('EIO', `${path} cannot be read (${code}).`, { path });
}

function formatLimit(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${Math.round(bytes / (1024 * 1024))} MB` : `${Math.round(bytes / 1024)} KB`;
}
