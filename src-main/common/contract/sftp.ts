import { z } from 'zod';
import { Bytes, Id, Ok, event, method } from './define.js';

/**
 * SFTP over an open SSH session: browsing, small text edits, and streamed transfers.
 *
 * Paths are remote POSIX paths (relative ones, and `~` or `~/…`, resolve against the login directory) or, for
 * `localPath`, paths on the machine running Wraith. Nothing is ever half-written: writes and
 * transfers go to a temp name (`.name.wraith-part-XXXX`) beside the destination and are renamed
 * into place at the end; a cancelled or failed transfer deletes its temp.
 *
 * Failures carry the usual codes (ENOTFOUND, EDENIED, EIO, ESESSIONCLOSED, ECANCELLED, EBADARGS);
 * when the code alone does not say what went wrong, `details.reason` is one of `SftpErrorReason`.
 */
export const SFTP_TEXT_MAX_BYTES = 5 * 1024 * 1024;
/** Largest `data` of one `sftp.uploadChunk` and largest `length` of one `sftp.readChunk`. */
export const SFTP_CHUNK_MAX_BYTES = 4 * 1024 * 1024;

export const SftpErrorReason = z.enum([
  /** sftp.read: the file is not text (it has NUL bytes). */
  'binary',
  /** sftp.read as UTF-8: the file is text, but not UTF-8 (read it with encoding "windows-1252"). */
  'not_utf8',
  /** sftp.write: the text has a character its encoding cannot hold. */
  'unencodable',
  /** sftp.read: the file is larger than maxBytes (at most 5 MB). */
  'too_large',
  /** sftp.write: the file changed (mtime/size) or vanished since it was read. */
  'changed',
  /** The destination exists and overwrite was not asked for. */
  'exists',
  /** A file was expected, something else found (e.g. a directory). */
  'not_a_file',
  /** A directory was expected, something else found. */
  'not_a_directory',
  /** sftp.remove of a non-empty directory without recursive. */
  'not_empty',
  /** sftp.uploadChunk out of order. */
  'bad_offset',
  /**
   * Not found, and the path has U+FFFD in it: most likely a name on the server that is not UTF-8
   * (Latin-1 and the like), which the listing could only show with � and SFTP cannot reach by it.
   */
  'name_not_utf8',
  /**
   * sftp.remove of a folder: some of what it holds could not be deleted and the rest was.
   * `details`: `path`, `removed` (entries deleted), `notRemoved` (how many could not be) and
   * `failures` (up to 100 of them, by path: `{ path, code, message }`).
   */
  'partly_deleted',
  /**
   * sftp.read, readChunk, download: the path is a symlink whose target does not exist, or
   * links that lead round in a loop (`details.target`: where it points; `details.loop`).
   */
  'broken_link',
  /**
   * sftp.cancel of a transfer that had already ended on its own, before the cancel could stop it:
   * nothing was cancelled. `details.state`: how it ended ('done' or 'failed').
   */
  'finished',
  /**
   * A write the server refused because the file system it goes to has no room left (it said so
   * when asked: statvfs@openssh.com). `details.free`: the bytes it had free, the unfinished copy
   * counted in; `details.needed`: the size of the file, when known.
   */
  'no_space',
  /**
   * A streamed upload (sftp.uploadBegin) ended because the page sending its bytes was closed or
   * reloaded before all of them came: nobody was left to send the rest (a transfer's `error.reason`).
   */
  'page_left',
]);
export type SftpErrorReason = z.infer<typeof SftpErrorReason>;

const RemotePath = z
  .string()
  .min(1)
  .max(4096)
  .refine((p) => !p.includes('\0'), 'Path must not contain NUL');
const LocalPath = RemotePath;

/** How a text file's bytes are read and written: UTF-8, or Windows-1252 (what "Latin-1" files are, in practice). */
export const TextEncoding = z.enum(['utf-8', 'windows-1252']);
export type TextEncoding = z.infer<typeof TextEncoding>;

export const SftpEntryType = z.enum(['file', 'dir', 'symlink', 'other']);
export type SftpEntryType = z.infer<typeof SftpEntryType>;

export const SftpEntry = z.object({
  name: z.string(),
  /** Full remote path (the listed directory's resolved path joined with name). */
  path: z.string(),
  type: SftpEntryType,
  size: z.number().int().nonnegative(),
  /** Permission bits (incl. setuid/setgid/sticky), e.g. 493. */
  mode: z.number().int().nonnegative(),
  /** The same as 4 octal digits, e.g. "0755". */
  modeOctal: z.string(),
  /** Modification time, ISO 8601 (SFTP gives whole seconds). */
  mtime: z.string(),
  uid: z.number().int(),
  gid: z.number().int(),
  /** User and group names when the server's listing gives them (OpenSSH does), else null. */
  owner: z.string().nullable(),
  group: z.string().nullable(),
  /** Symlinks: where the link points, and what kind of thing is there (null when dangling). */
  linkTarget: z.string().nullable(),
  targetType: SftpEntryType.nullable(),
});
export type SftpEntry = z.infer<typeof SftpEntry>;

/**
 * What is said of a symlink that leads to no file (an SftpEntry with `targetType` null): the
 * permissions dialog, the editor and a download say it in these words. `name` is the link's,
 * `target` where it points (null: unknown); `loop`: the target is a link that leads back round.
 */
export function linkToNowhere(name: string, target: string | null, loop = false): string {
  return loop ? `${name} points to ${target ?? 'nothing'}, a loop of links that never reaches a file` : `${name} points to ${target ?? 'nothing'}, which does not exist`;
}

export const TransferDirection = z.enum(['upload', 'download']);
export const TransferState = z.enum(['running', 'done', 'failed', 'cancelled']);

/** An item a folder transfer could not copy (TransferProgress.leftOut). */
export const LeftOutItem = z.object({ path: z.string(), folder: z.boolean(), reason: z.string() });
export type LeftOutItem = z.infer<typeof LeftOutItem>;

export const TransferProgress = z.object({
  transferId: Id,
  sessionId: Id,
  direction: TransferDirection,
  /** Bytes moved so far and the total (the sum of every file for folders; null while unknown). */
  bytes: z.number().int().nonnegative(),
  totalBytes: z.number().int().nonnegative().nullable(),
  /** Recent speed (a moving window) and the time left at that speed (null while unknown). */
  bytesPerSecond: z.number().nonnegative(),
  etaSeconds: z.number().nonnegative().nullable(),
  filesDone: z.number().int().nonnegative(),
  filesTotal: z.number().int().nonnegative().nullable(),
  state: TransferState,
  /** Why it failed; `reason` where the code alone does not say (no_space, page_left…). */
  error: z.object({ code: z.string(), message: z.string(), reason: SftpErrorReason.optional() }).nullable(),
  /** Something the user should know about a transfer that went through (a replaced file changed owner). */
  notice: z.string().nullable(),
  /**
   * Partial copies (our temps, by remote path) that a cancelled or failed transfer could not
   * remove because its connection was gone (the server stopped answering): they stay on the server
   * until Wraith next connects to it, which removes them first. Absent when none stayed.
   */
  leftBehind: z.array(z.string()).optional(),
  /**
   * What a folder transfer left out, all of it (the notice names the first few), each with why:
   * its path in the folder ('/'-separated) and the reason, in the words a folder download's list
   * file has. sftp.transfers always has it; a transfer.progress event only when it changed since
   * the transfer's last one (it can be long, and events come several times a second).
   */
  leftOut: z.array(LeftOutItem).optional(),
});
export type TransferProgress = z.infer<typeof TransferProgress>;

/**
 * The upload of several files (a folder) that a streamed upload is one file of, as the page that
 * sends them counts them: its name ("site"), and which of how many files this one is.
 */
export const UploadBatch = z
  .object({
    name: z.string().min(1).max(4096),
    index: z.number().int().min(1),
    total: z.number().int().min(1),
  })
  .refine((b) => b.index <= b.total, 'index is at most total');
export type UploadBatch = z.infer<typeof UploadBatch>;

export const TransferInfo = TransferProgress.extend({
  /** Source and destination; localPath is null for uploads streamed from the page. */
  localPath: z.string().nullable(),
  remotePath: z.string(),
  kind: z.enum(['file', 'folder']),
  /** A streamed upload that is one file of a page's folder upload: that upload (sftp.uploadBegin's `batch`); else null. */
  batch: UploadBatch.nullable(),
  startedAt: z.string(),
  endedAt: z.string().nullable(),
});
export type TransferInfo = z.infer<typeof TransferInfo>;

const Session = { sessionId: Id };
/**
 * Permission bits, always as octal text: "755", "0644", "4755". A JSON number is refused: 755 sent
 * as a number was taken for what it is, decimal 755 (0o1363, --wxrw--wt with the sticky bit), and
 * no rule for numbers reads both 755 and 493 (0o755, as sftp.stat's `mode` gives it) as people mean
 * them. The description is what a refusal says the field needs.
 */
const Mode = z
  .string()
  .regex(/^0?[0-7]{3,4}$/)
  .describe('octal text such as "755" or "0644", never a number');

export const sftpMethods = {
  'sftp.list': method(
    z.object({
      ...Session,
      path: RemotePath,
      showHidden: z.boolean().default(false),
      /** Listing stops after this many entries (`truncated` says so). */
      limit: z.number().int().min(1).max(100_000).default(20_000),
      /** Only the entries whose names contain this text, any case: finds names beyond `limit` in a huge folder. */
      match: z.string().min(1).max(255).optional(),
    }),
    z.object({
      path: z.string(),
      entries: z.array(SftpEntry),
      truncated: z.boolean(),
      /** Entries left out because their names start with a dot (0 with showHidden), `match` applied. */
      hidden: z.number().int().nonnegative(),
    }),
    'Lists a remote directory (resolved path, entries sorted directories first, then by name).',
  ),
  'sftp.stat': method(
    z.object({ ...Session, path: RemotePath }),
    SftpEntry,
    'Describes one remote path (a symlink is described as itself, with its target).',
  ),
  'sftp.realpath': method(
    z.object({ ...Session, path: RemotePath.default('.') }),
    z.object({ path: z.string() }),
    'Resolves a remote path to an absolute one ("." is the login directory).',
  ),
  'sftp.read': method(
    z.object({
      ...Session,
      path: RemotePath,
      maxBytes: z.number().int().min(1).max(SFTP_TEXT_MAX_BYTES).default(SFTP_TEXT_MAX_BYTES),
      encoding: TextEncoding.default('utf-8'),
    }),
    z.object({ path: z.string(), text: z.string(), size: z.number().int(), mtime: z.string(), mode: z.number().int(), encoding: TextEncoding }),
    'Reads a remote text file (at most 5 MB) for editing, as UTF-8 or as `encoding`. Refuses binary files (details.reason "binary"), text that is not ' +
      'UTF-8 when read as UTF-8 ("not_utf8": it may be Windows-1252) and larger files ("too_large").',
  ),
  'sftp.write': method(
    z
      .object({
        ...Session,
        path: RemotePath,
        text: z.string().max(64 * 1024 * 1024).optional(),
        /** How `text` is written: as sftp.read read it. Characters it cannot hold are refused (details.reason "unencodable"). */
        encoding: TextEncoding.default('utf-8'),
        data: Bytes.optional(),
        /** The mtime sftp.read returned: refuse (details.reason "changed") if the file changed since. */
        expectedMtime: z.string().datetime({ offset: true }).optional(),
        /** The size sftp.read returned, checked alongside expectedMtime. */
        expectedSize: z.number().int().nonnegative().optional(),
        /** For a new file, as octal text ("644"); an existing file keeps its mode. Default: the server's for new files (0666 less its umask, as `touch` there). */
        mode: Mode.optional(),
        /** Only create: refuse (details.reason "exists") when something is already at path. */
        exclusive: z.boolean().optional(),
      })
      .refine((i) => (i.text === undefined) !== (i.data === undefined), 'Give either text or data'),
    SftpEntry,
    'Writes a whole remote file atomically (temp name, then rename over the original).',
  ),
  'sftp.mkdir': method(
    z.object({ ...Session, path: RemotePath, parents: z.boolean().default(false), mode: Mode.optional() }),
    SftpEntry,
    'Creates a remote directory (with parents: also missing parents, and no error if it exists). `mode`, as octal text ("755"), as sftp.chmod takes it.',
  ),
  'sftp.rename': method(
    z.object({ ...Session, from: RemotePath, to: RemotePath, overwrite: z.boolean().default(false) }),
    SftpEntry,
    'Renames or moves a remote file or directory.',
  ),
  'sftp.remove': method(
    z.object({ ...Session, path: RemotePath, recursive: z.boolean().default(false) }),
    z.object({ ok: z.literal(true), removed: z.number().int() }),
    'Deletes a remote file, symlink or directory (non-empty directories need recursive). A recursive delete deletes all it can; what it could not fails it with reason partly_deleted.',
  ),
  'sftp.chmod': method(
    z.object({ ...Session, path: RemotePath, mode: Mode }),
    SftpEntry,
    'Changes the permission bits of a remote path. `mode` is octal text ("755", "0644", "4755"); a JSON number is refused (EBADARGS), ' +
      'since 755 could be meant as octal or as decimal. sftp.stat gives the mode as text too: modeOctal.',
  ),

  'sftp.upload': method(
    z.object({ ...Session, localPath: LocalPath, remotePath: RemotePath, overwrite: z.boolean().default(false) }),
    z.object({ transferId: Id }),
    'Starts uploading a local file or folder (recursively) to remotePath (the path it will have). Progress arrives as transfer.progress. ' +
      'A local source that is not there or cannot be read, a remote folder that is not there (ENOTFOUND) and a name already taken ' +
      'without overwrite (EBADARGS, reason exists) are refused by the call, before there is a transfer.',
  ),
  'sftp.download': method(
    z.object({ ...Session, remotePath: RemotePath, localPath: LocalPath, overwrite: z.boolean().default(false) }),
    z.object({ transferId: Id }),
    'Starts downloading a remote file or folder (recursively) to localPath (the path it will have). Progress arrives as transfer.progress. ' +
      'A remote source that is not there or that this login may not read (ENOTFOUND, EDENIED), a local folder that is not there and a ' +
      'name already taken without overwrite (EBADARGS, reason exists) are refused by the call, before there is a transfer. ' +
      "What a folder holds that this login cannot read is left out, listed in a text file in the folder and named in the transfer's notice.",
  ),
  'sftp.cancel': method(
    z.object({ transferId: Id }),
    Ok,
    'Cancels a transfer; its temp files are deleted and nothing partial is left. A transfer that had already finished ' +
      '(done or failed) is not cancelled: EBADARGS with details.reason "finished" and details.state.',
  ),
  'sftp.transfers': method(z.object({ sessionId: Id.optional() }).optional(), z.array(TransferInfo), 'Running and recently finished transfers.'),

  'sftp.uploadBegin': method(
    z.object({
      ...Session,
      remotePath: RemotePath,
      /** Total size when known (for progress and ETA). */
      size: z.number().int().nonnegative().optional(),
      overwrite: z.boolean().default(false),
      mode: Mode.optional(),
      /** The folder upload this file is one of: the transfer carries it, and its messages name it. */
      batch: UploadBatch.optional(),
    }),
    z.object({ transferId: Id, chunkBytes: z.number().int() }),
    'Starts an upload streamed from the caller (a file dropped on the page): send sftp.uploadChunk in order, then sftp.uploadEnd. ' +
      'It fails at once (reason page_left) when the page sending it is closed or reloaded, and after 5 minutes with nothing new (ETIMEOUT).',
  ),
  'sftp.uploadChunk': method(
    z.object({
      transferId: Id,
      /** Byte offset of this chunk: must equal the bytes sent so far. */
      offset: z.number().int().nonnegative(),
      data: Bytes.refine((b) => b.byteLength <= SFTP_CHUNK_MAX_BYTES, 'A chunk is at most 4 MiB'),
    }),
    z.object({ bytes: z.number().int() }),
    'Appends one chunk (up to 4 MiB; sftp.uploadBegin suggests a size) to a streamed upload; resolves once this chunk is written. `bytes`: what the upload has received so far.',
  ),
  'sftp.uploadEnd': method(
    z.object({ transferId: Id }),
    SftpEntry,
    'Finishes a streamed upload: the temp file is renamed into place.',
  ),
  'sftp.uploadLink': method(
    z.object({ transferId: Id }),
    /** `offset`: where the body must start: 0, or, asked again after a body was cut off, the bytes the host has. */
    z.object({ url: z.string(), offset: z.number().int().nonnegative() }),
    'A one-time URL (relative to the `wraith serve` address, with its cookie) to PUT all the bytes of a streamed upload to, ' +
      'as one request body, instead of sftp.uploadChunk calls: a browser sends a File that way without the page holding it. ' +
      'The response is {bytes} once they are written, or {code, message}; then sftp.uploadEnd. A body cut off (the network ' +
      'dropped) resumes: a new link starts at `offset`, and ends the old body if the host still reads it. A body cut off because ' +
      'the page that asked for the link was closed or reloaded ends the upload at once, failed with reason page_left. ' +
      'EUNAVAILABLE outside `wraith serve`.',
  ),
  'sftp.downloadLink': method(
    z.object({ ...Session, remotePath: RemotePath }),
    z.object({ transferId: Id, url: z.string(), name: z.string(), size: z.number().int().nonnegative() }),
    'A one-time link (relative to the `wraith serve` address; fetched within a minute, with its cookie) that streams a remote file ' +
      'as an HTTP download: the browser saves it as it arrives. A folder comes as `name.zip` (stored entries, so `size`, the exact ' +
      'length of the response, is known up front). Progress arrives as transfer.progress; sftp.cancel cuts the response. ' +
      'EUNAVAILABLE outside `wraith serve`.',
  ),
  'sftp.saveAs': method(
    z.object({ ...Session, remotePaths: z.array(RemotePath).min(1).max(1000) }),
    z.object({
      /** Where the user chose to save (the file or folder itself for one path, the folder they go into for several); null: cancelled. */
      localPath: z.string().nullable(),
      transfers: z.array(z.object({ transferId: Id, remotePath: RemotePath, localPath: z.string() })),
    }),
    'Desktop app: asks the user where to save (a save dialog for one file or folder, a folder picker for several), then downloads ' +
      'each as sftp.download does, replacing only what the save dialog confirmed. EUNAVAILABLE without a native dialog ' +
      '(`wraith serve`: use sftp.downloadLink).',
  ),
  'sftp.readChunk': method(
    z.object({
      ...Session,
      path: RemotePath,
      offset: z.number().int().nonnegative(),
      length: z.number().int().min(1).max(SFTP_CHUNK_MAX_BYTES),
    }),
    z.object({ data: Bytes, eof: z.boolean(), size: z.number().int() }),
    'Reads a byte range of a remote file (downloads to the page, chunk by chunk).',
  ),
};

export const sftpEvents = {
  'transfer.progress': event(TransferProgress, 'A transfer moved bytes or ended (throttled to a few per second, always sent at the end).'),
};

/**
 * How several files or items, of which some went and some did not, say which did not: a folder
 * upload of the host's (a CLI or XO upload) and the Files panel's uploads and downloads alike.
 * The first three are named, in the order given.
 */
function notAllMoved(failed: readonly { name: string; message: string }[], total: number, what: 'file' | 'item', verb: 'upload' | 'download'): string {
  const first = failed.slice(0, 3).map((f) => `${f.name}: ${f.message}`).join('; ');
  return `${failed.length} of ${total} ${total === 1 ? what : `${what}s`} did not ${verb}. ${first}${failed.length > 3 ? '; …' : ''}`;
}

/** A folder upload (or several files) that sent some: which did not, and why. */
export function filesNotUploaded(failed: readonly { name: string; message: string }[], total: number): string {
  return notAllMoved(failed, total, 'file', 'upload');
}

/** Several files and folders downloaded at once, some of which could not be: which, and why. */
export function itemsNotDownloaded(failed: readonly { name: string; message: string }[], total: number): string {
  return notAllMoved(failed, total, 'item', 'download');
}
