import { posix } from 'node:path';
import type { SftpErrorReason, UploadBatch } from '../../common/contract/sftp.js';
import { type ErrorCode, WraithError } from '../../common/errors.js';
import { formatBytes } from '../../common/format-bytes.js';
import { expandHome } from './home-path.js';
import { shownPath } from './temp-name.js';

/** SFTP v3 status codes (draft-ietf-secsh-filexfer-02, as ssh2 reports them in `err.code`). */
const SFTP_STATUS = {
  EOF: 1,
  NO_SUCH_FILE: 2,
  PERMISSION_DENIED: 3,
  FAILURE: 4,
  BAD_MESSAGE: 5,
  NO_CONNECTION: 6,
  CONNECTION_LOST: 7,
  OP_UNSUPPORTED: 8,
} as const;

function errCode(err: unknown): unknown {
  return err instanceof Error && 'code' in err ? err.code : undefined;
}

export function isSftpStatus(err: unknown, status: keyof typeof SFTP_STATUS): boolean {
  return errCode(err) === SFTP_STATUS[status];
}

/** A failure with one of our codes and, where the code alone is vague, a stable reason. */
export function sftpError(code: ErrorCode, message: string, reason?: SftpErrorReason, details: Record<string, unknown> = {}): WraithError {
  return new WraithError(code, message, reason ? { reason, ...details } : Object.keys(details).length ? details : undefined);
}

/** What a listing shows for bytes of a name that are not UTF-8 (ssh2 decodes every name as UTF-8). */
const REPLACEMENT_CHAR = '\uFFFD';

/**
 * A name that is not UTF-8 (a file saved under Latin-1, say) reaches us with its odd bytes
 * replaced by U+FFFD, and a path built from that names no file: "no such file" beside a file the
 * listing shows would be a riddle, so say why and how to get at it.
 */
function notUtf8NameError(where: string, path: string): WraithError {
  return sftpError(
    'ENOTFOUND',
    `Cannot ${where}: no file on the server has this name. Its ${REPLACEMENT_CHAR} stands for bytes that are not UTF-8 (a name ` +
      'saved in an older encoding such as Latin-1), and SFTP reaches a file only by its exact name. Rename it in the ' +
      "terminal to work with it here (ls -b shows those bytes as escapes: mv $'caf\\351.txt' café.txt).",
    'name_not_utf8',
    { path },
  );
}

/** Actions whose path is new: the server finding "no such file" means a folder on the way is missing. */
const MAKES_PATH = new Set(['create', 'create directory']);

/**
 * What the server's FAILURE means, by what was asked. SFTP v3 has no code for most errors
 * (OpenSSH sends every errno but a few as FAILURE, its text just "Failure"), so these name the
 * causes that action meets.
 */
const FAILURE_CAUSES: Record<string, string> = {
  'create directory': 'something with that name is already there, or the folder it goes in cannot take it (a full disk, a read-only file system)',
  create: 'something with that name is already there, or the folder it goes in cannot take it (a full disk, a read-only file system)',
  rename: 'something with the new name is already there, or the two are on different file systems',
  replace: 'a folder with that name is there and is not empty, or the two are on different file systems',
  'remove directory': 'the folder is not empty',
  delete: 'it is a folder',
  write: "the server's disk is full, or the file is larger than it allows",
};

/** The same for BAD_MESSAGE, which OpenSSH sends for EINVAL and ENAMETOOLONG. */
const BAD_REQUEST_CAUSES: Record<string, string> = {
  rename: 'a folder cannot move into itself, or a name is too long',
  'read link': 'it is not a symbolic link',
};
const BAD_REQUEST_CAUSE = 'a name in the path is too long for the server';

/** Where a remote path is: its name, and the folder it is in (absolute where the home is known). */
function placeOf(path: string, home: string | null): { name: string; folder: string } {
  const trimmed = expandHome(path.length > 1 ? path.replace(/\/+$/, '') : path, home);
  const absolute = posix.isAbsolute(trimmed) ? trimmed : home !== null ? posix.join(home, trimmed) : null;
  const name = posix.basename(trimmed) || trimmed;
  if (absolute === null) return { name, folder: posix.dirname(trimmed) === '.' ? 'the login folder' : posix.dirname(trimmed) };
  return { name, folder: posix.dirname(posix.normalize(absolute)) };
}

/** "x does not exist in /a/b" for `path`, or for the folder it goes in when `action` creates it. */
function notThere(action: string, path: string, home: string | null, to?: string): string {
  const shown = (p: string) => placeOf(shownPath(p), home);
  if (to !== undefined) {
    const from = shown(path);
    return `${from.name} is not in ${from.folder}, or the folder ${shown(to).folder} does not exist`;
  }
  if (MAKES_PATH.has(action)) {
    const at = shown(path).folder;
    return `the folder ${at} does not exist`;
  }
  const { name, folder } = shown(path);
  return `${name} does not exist in ${folder}`;
}

/**
 * Turns an ssh2 SFTP error into ours: the one place a server's status becomes a code and a
 * sentence naming what was being done and to which path. NO_SUCH_FILE → ENOTFOUND ("x does not
 * exist in /a/b"), PERMISSION_DENIED → EDENIED, a lost channel → ESESSIONCLOSED, anything else
 * EIO: FAILURE and BAD_MESSAGE with their likely cause for the action rather than the server's
 * bare word.
 * `home` (the login folder) places relative paths; `to` is a rename's destination. The message
 * names a temp file by the name it stands for; `details.path` is the path itself.
 */
export function fromSftpError(err: unknown, action: string, path: string, context: { home?: string | null; to?: string } = {}): WraithError {
  if (err instanceof WraithError) return err;
  const code = errCode(err);
  const home = context.home ?? null;
  const text = shownPath(err instanceof Error ? err.message : String(err));
  const where = `${action} ${shownPath(path)}${context.to === undefined ? '' : ` to ${shownPath(context.to)}`}`;
  const details = context.to === undefined ? { path } : { path, to: context.to };
  switch (code) {
    case SFTP_STATUS.NO_SUCH_FILE:
      if (path.includes(REPLACEMENT_CHAR)) return notUtf8NameError(where, path);
      if (MAKES_PATH.has(action) || context.to !== undefined) return new WraithError('ENOTFOUND', `Cannot ${where}: ${notThere(action, path, home, context.to)}.`, details);
      // What is missing is what was named: said plainly, whichever step of the operation asked.
      return new WraithError('ENOTFOUND', `${notThere(action, path, home)}.`, details);
    case SFTP_STATUS.PERMISSION_DENIED:
      return new WraithError('EDENIED', `Cannot ${where}: permission denied on the server.`, details);
    case SFTP_STATUS.NO_CONNECTION:
    case SFTP_STATUS.CONNECTION_LOST:
      return new WraithError('ESESSIONCLOSED', `Cannot ${where}: the SSH connection was lost.`, details);
    case SFTP_STATUS.OP_UNSUPPORTED:
      return new WraithError('EIO', `Cannot ${where}: the server does not support this operation.`, details);
    case SFTP_STATUS.BAD_MESSAGE:
      // EIO, as before: one item's bad name leaves it out of a folder's walk (isItemError), as every refusal does.
      return new WraithError('EIO', `Cannot ${where}: the server refused the request as invalid. Most likely ${BAD_REQUEST_CAUSES[action] ?? BAD_REQUEST_CAUSE}.`, details);
    case SFTP_STATUS.FAILURE: {
      const cause = FAILURE_CAUSES[action];
      return new WraithError('EIO', `Cannot ${where}: the server refused it without saying why${cause ? `. Most likely ${cause}` : ''}.`, details);
    }
    default:
      // ssh2 fails every pending request with this text when the channel closes.
      if (/No response from server|Not connected|channel.*clos/i.test(text)) {
        return new WraithError('ESESSIONCLOSED', `Cannot ${where}: the SSH connection was lost.`, details);
      }
      return new WraithError('EIO', `Cannot ${where}: ${text || 'the server reported a failure'}.`, details);
  }
}

/** The same for local files (Node's fs errors). */
export function fromLocalError(err: unknown, action: string, path: string): WraithError {
  if (err instanceof WraithError) return err;
  const code = errCode(err);
  const text = shownPath(err instanceof Error ? err.message : String(err));
  const where = `${action} local ${shownPath(path)}`;
  switch (code) {
    case 'ENOENT':
      return new WraithError('ENOTFOUND', `Cannot ${where}: no such file or directory.`, { path });
    case 'EACCES':
    case 'EPERM':
      return new WraithError('EDENIED', `Cannot ${where}: permission denied.`, { path });
    case 'EISDIR':
      return sftpError('EBADARGS', `Cannot ${where}: it is a directory.`, 'not_a_file', { path });
    case 'ENOTDIR':
      return sftpError('EBADARGS', `Cannot ${where}: a part of the path is not a directory.`, 'not_a_directory', { path });
    case 'ENOSPC':
      return new WraithError('EIO', `Cannot ${where}: the disk is full.`, { path });
    default:
      return new WraithError('EIO', `Cannot ${where}: ${text}.`, { path });
  }
}

export function cancelledError(what: string): WraithError {
  return new WraithError('ECANCELLED', `${what} was cancelled.`);
}

/** A streamed upload, as its messages name it: "big1g", or "f309.bin (file 309 of 5000 of many)". */
export interface StreamedFile {
  remotePath: string;
  batch: UploadBatch | null;
  /** Bytes written on the server, and the size the upload announced (null: not said). */
  bytes: number;
  totalBytes: number | null;
}

function streamedName(f: StreamedFile): string {
  const name = posix.basename(f.remotePath) || f.remotePath;
  return f.batch ? `${name} (file ${f.batch.index} of ${f.batch.total} of ${f.batch.name})` : name;
}

/** "277 MB of 1.0 GB", or "277 MB" when the size was not announced. */
function howFar(f: StreamedFile): string {
  return f.totalBytes === null ? formatBytes(f.bytes) : `${formatBytes(f.bytes)} of ${formatBytes(f.totalBytes)}`;
}

/** "5 minutes", "30 seconds", "300 ms". */
function span(ms: number): string {
  if (ms >= 60_000) return `${Math.round(ms / 60_000)} ${Math.round(ms / 60_000) === 1 ? 'minute' : 'minutes'}`;
  if (ms >= 1000) return `${Math.round(ms / 1000)} ${Math.round(ms / 1000) === 1 ? 'second' : 'seconds'}`;
  return `${ms} ms`;
}

/**
 * A streamed upload whose page was closed or reloaded before it sent every byte: nobody is left
 * to send the rest. Said when it happens, with how far it got; its temp goes with it.
 */
export function pageLeftError(f: StreamedFile): WraithError {
  return sftpError('EIO', `The page sending ${streamedName(f)} was closed or reloaded at ${howFar(f)}; nothing was left behind.`, 'page_left', {
    path: f.remotePath,
  });
}

/**
 * A streamed upload given up after `idleMs` with no byte of it coming: its body cut off (`cut`,
 * the connection dropped and the page never came back to resume it) or just stalled.
 */
export function stalledError(f: StreamedFile, idleMs: number, cut: boolean): WraithError {
  const message = cut
    ? `The sending of ${streamedName(f)} was cut off at ${howFar(f)} and did not resume within ${span(idleMs)}, so the upload was given up; nothing was left behind.`
    : `Nothing more of ${streamedName(f)} came for ${span(idleMs)}, at ${howFar(f)}, so the upload was given up; nothing was left behind.`;
  return new WraithError('ETIMEOUT', message, { path: f.remotePath });
}

/** A WRITE to `path` the server refused with `free` bytes left on its file system: too few for it. */
export function noSpaceError(path: string, free: number): WraithError {
  return sftpError('EIO', `Cannot write ${shownPath(path)}: the server's disk is full (${formatBytes(free)} free).`, 'no_space', { path, free });
}

/**
 * A new copy of `dest` (`size` bytes, when known) that did not fit: the disk had `had` bytes free
 * for it (what is free now and what the copy took before it was refused). One that was to replace
 * a file (`replacing`, its size) is written beside it, and the old one stays until the new one is
 * complete: both need room at once, which is why the disk can show room for the file once the
 * unfinished copy is gone.
 */
export function noSpaceForCopy(dest: string, had: number, size: number | null, replacing: number | null): WraithError {
  // Numbers only where they add up: other files written meanwhile can take the room too.
  const short = size !== null && had < size;
  const details = { path: dest, free: had, ...(size === null ? {} : { needed: size }) };
  if (replacing === null) {
    const numbers = short ? `: it had ${formatBytes(had)} free, and the file is ${formatBytes(size)}` : '';
    return sftpError('EIO', `Cannot write ${dest}: the server's disk is full${numbers}.`, 'no_space', details);
  }
  const numbers = short ? `: the disk had ${formatBytes(had)} free for the new copy's ${formatBytes(size)}` : '';
  return sftpError(
    'EIO',
    `Cannot replace ${dest}: the server's disk has no room for the new copy beside the old one (${formatBytes(replacing)}). The old file ` +
      `stays whole until the new copy is complete, so both need room at once${numbers}. Make room on the server (or delete the old file first), then try again.`,
    'no_space',
    details,
  );
}

/** An upload of a file onto a folder's name: nothing to ask, it cannot be replaced by a file. */
export function fileOverFolder(what: string, path: string): WraithError {
  return sftpError('EBADARGS', `Cannot upload ${what} to ${path}: a folder of that name is there, and a file cannot replace it. Rename one of them first.`, 'not_a_file', { path });
}

/**
 * Whether a failure to list or read one item is the item's own (permission denied, gone
 * meanwhile, a server-side failure), not the connection's: the item can be left out and the rest
 * go on. A lost connection or a cancel stops everything.
 */
export function isItemError(err: unknown): err is WraithError {
  return err instanceof WraithError && (err.code === 'EDENIED' || err.code === 'ENOTFOUND' || err.code === 'EIO');
}

/** What a partly done delete names in its message, and lists in its details. */
const NAMED_FAILURES = 3;
const LISTED_FAILURES = 100;

/** The server's reason in one of our messages ("Cannot delete /a/b: permission denied on the server."). */
function reasonIn(err: WraithError, path: string): string {
  if (err.details?.reason === 'name_not_utf8') return 'a name that is not UTF-8, which SFTP cannot reach: rename it in the terminal';
  const lead = `${shownPath(path)}: `;
  const at = err.message.indexOf(lead);
  return (at < 0 ? err.message : err.message.slice(at + lead.length)).replace(/\.$/, '');
}

/**
 * A recursive delete of `root` that deleted what it could (`removed` entries) and not what failed
 * (`failures`, one per entry, each naming its path): says how much went, and what did not and why,
 * by paths under `root`. One failure of `root` itself with nothing deleted is just that failure.
 */
export function partlyDeleted(root: string, removed: number, failures: WraithError[]): WraithError {
  const pathOf = (e: WraithError) => (typeof e.details?.path === 'string' ? e.details.path : root);
  const items = failures
    .map((e) => ({ path: pathOf(e), code: e.code, message: e.message, why: reasonIn(e, pathOf(e)) }))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const [first] = failures;
  if (first && failures.length === 1 && removed === 0 && pathOf(first) === root) return first;
  const nameOf = (p: string) => (p === root ? `${posix.basename(root) || root} itself` : posix.relative(root, p));
  const n = items.length;
  const sameWhy = items.every((f) => f.why === items[0]?.why);
  const named = items.slice(0, NAMED_FAILURES).map((f) => (sameWhy ? nameOf(f.path) : `${nameOf(f.path)} (${f.why})`));
  const list = `${named.join(', ')}${n > named.length ? ` and ${n - named.length} more` : ''}`;
  const head = removed > 0 ? `Deleted ${removed} ${removed === 1 ? 'entry' : 'entries'} in ${root}, but ${n}` : `Deleted nothing in ${root}: ${n} ${n === 1 ? 'entry' : 'entries'}`;
  const tail = items.some((f) => f.path !== root) ? ` The folders holding ${n === 1 ? 'it' : 'them'} are still there.` : '';
  const codes = new Set(items.map((f) => f.code));
  const code = codes.size === 1 && first ? first.code : 'EIO';
  return sftpError(code, `${head} could not be deleted${sameWhy ? ` (${items[0]?.why ?? ''})` : ''}: ${list}.${tail}`, 'partly_deleted', {
    path: root,
    removed,
    notRemoved: n,
    failures: items.slice(0, LISTED_FAILURES).map(({ path, code, message }) => ({ path, code, message })),
  });
}
