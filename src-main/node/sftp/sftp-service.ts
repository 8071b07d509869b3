import { randomBytes } from 'node:crypto';
import { join, posix } from 'node:path';
import type { SFTPWrapper, Stats } from 'ssh2';
import {
  SFTP_CHUNK_MAX_BYTES,
  SFTP_TEXT_MAX_BYTES,
  type SftpEntry,
  type SftpEntryType,
  type TextEncoding,
  type TransferInfo,
  type TransferProgress,
  type UploadBatch,
} from '../../common/contract/sftp.js';
import { WraithError } from '../../common/errors.js';
import { formatBytes, formatBytesOver } from '../../common/format-bytes.js';
import { callerLocalPath } from '../local-files.js';
import { type ByteSink, RequestSlots, exactLengthSink, refuseEndless, serverChunkLimit, sinkFinished, streamRemoteFile } from './file-copy.js';
import { RemoteFs, channelOpen, entryType, parseMode, toEntry } from './remote-fs.js';
import { isTempBasename, tempNameFor } from './temp-name.js';
import { type StreamedFile, cancelledError, fileOverFolder, pageLeftError, sftpError, stalledError } from './sftp-errors.js';
import { decodeAs, encodeAs } from './text.js';
import { Transfer } from './transfer.js';
import {
  type TransferPlan,
  type TransferTuning,
  copyOptions,
  downloadDestination,
  downloadSource,
  keepOwnership,
  noRoomFor,
  runDownload,
  runUpload,
  uploadDestination,
  uploadSource,
} from './transfer-runner.js';
import { walkRemote } from './tree.js';
import { type LeftOut, leaveOutUnreadable, noteUnlisted } from './left-out.js';
import type { OrphanTempStore } from './orphan-temps.js';
import { ZIP_MAX_ENTRIES, zipRemoteFolder } from './zip-stream.js';

/**
 * The desktop app's native "save as" (Electron's dialog): for one item a save dialog suggesting
 * its name, for several a folder picker. Resolves with the path the user chose, or null.
 */
export type SavePathChooser = (request: { suggestedName: string; several: boolean }) => Promise<string | null>;

/** The SFTP channel of an open SSH session. The SSH service owns it (opens, caches, closes). */
export type SftpProvider = (sessionId: string) => Promise<SFTPWrapper>;

export interface SftpServiceOptions {
  /** Where transfer.progress goes (the app's EventBus). */
  emitProgress?: (progress: TransferProgress) => void;
  tuning?: Partial<TransferTuning>;
  /** Progress events at most this often per transfer (the last one is always sent). */
  progressIntervalMs?: number;
  /** A streamed upload with no chunk for this long fails (ETIMEOUT) and its temp is deleted. */
  streamIdleMs?: number;
  /** Finished transfers kept for sftp.transfers. */
  keepFinished?: number;
  /**
   * Which server a session talks to (the App: its saved connection). Temps a lost connection
   * kept on a server are removed through the next session to the same one. Default: the session.
   */
  siteOf?: (sessionId: string) => string;
  /**
   * Where those temps are remembered beyond this service (the App: its database), so that a
   * restart does not leave them on the server for ever. Without it, in memory only.
   */
  orphanStore?: OrphanTempStore;
}

/** A streamed upload's open remote temp file (sftp.uploadBegin/Chunk/End). */
interface StreamUpload {
  transfer: Transfer;
  rfs: RemoteFs;
  /** The channel's request slots: chunks are written through them like any other transfer's. */
  plan: TransferPlan;
  handle: Buffer;
  temp: string;
  mode: number | null;
  /** Where the file lands: the upload's path, or the file a symlink there points to. */
  dest: string;
  /** What the upload replaces at dest (its stats), or null when it creates the file. */
  replacing: Stats | null;
  received: number;
  writes: Set<Promise<void>>;
  idle: NodeJS.Timeout;
  /** Settle the transfer's work: uploadEnd ends it, a failed chunk or a cancel fails it. */
  end: () => void;
  /** The first uploadEnd's work, which a second call joins. */
  ending?: Promise<SftpEntry>;
  /** Its bytes come as PUT bodies to upload links (sftp.uploadLink), not as uploadChunk calls. */
  linked: boolean;
  /** Ends the PUT body being read now, when a newer link takes over from it. */
  stopBody: (() => void) | null;
  /** A body of it was cut off before its end (uploadCut), and no new one has come since: what its idle end says. */
  cutOff: boolean;
  /** Stops following whoever sends its bytes now (sentBy). */
  unfollowSender: () => void;
  fail: (err: unknown) => void;
}

/** A download waiting for the browser to fetch its link (sftp.downloadLink). */
interface PendingLink {
  transfer: Transfer;
  name: string;
  size: number;
  /** Hands the HTTP response to the transfer's work, which streams the file into it. */
  attach: (sink: ByteSink) => void;
}

/**
 * What sftp.uploadBegin suggests per sftp.uploadChunk: the largest the contract takes. Each chunk
 * is a round trip and a read of the File for the page (bench/sftp-browser.ts: 500 MB through the
 * Files panel went at 70–79 MB/s in 1 MiB chunks, two in flight).
 */
const STREAM_CHUNK_BYTES = SFTP_CHUNK_MAX_BYTES;

/** The most a browser download of a file that does not report its size (/proc's) reads ahead. */
const SIZELESS_LINK_MAX_BYTES = 64 * 1024 * 1024;

/** How long a download link waits to be fetched; the browser fetches it at once. */
const LINK_TTL_MS = 60_000;

/**
 * How long closing a session waits for its transfers to remove their temps over the connection:
 * a few round trips each. A server that stops answering does not hold the close; temps it keeps
 * are noted and removed through the next session to it.
 */
const CLOSE_CLEANUP_MS = 5_000;

/**
 * Defaults measured with bench/sftp-throughput.ts against OpenSSH 9.2 on localhost.
 *
 * Downloads keep 8 MiB of READs in flight (32 of 256 KiB, four times the SSH channel window of
 * 2 MiB): the SFTP server's queue stays full, so it has the next answer ready whenever the window
 * opens instead of waiting a round trip through the host for the next request. 500 MB, six runs
 * of 3–8 rounds: 345–365 MB/s median against 290–339 with 2 MiB.
 * Uploads keep 2 MiB of WRITEs in flight, headers included: the window is their limit, and data
 * beyond it only waits in ssh2's queue. Their throughput was the same either way (217–250 against
 * 214–266 MB/s median), but the host spent more CPU on them with more queued: 2.8–3.1 s/GB with
 * 8 MiB, 3.7 with 16, against 2.6–2.8 with 2 MiB, and an upload is bound by the CPU of both ends.
 * Counting the headers keeps the last request inside OpenSSH's 2 MiB window (8 of 254 KiB, not
 * 9), so every request can go out without a copy (write-packet.ts).
 * 16 transfers cost 13 full mark-compacts with either setting under the host's heap flags
 * (server/host-heap.ts); before those flags, 8 MiB of READs cost 14–19 per transfer.
 */
const DEFAULT_TUNING: TransferTuning = { chunkSize: 256 * 1024, readInFlightBytes: 8 * 1024 * 1024, writeInFlightBytes: 2 * 1024 * 1024, fileConcurrency: 4 };
/** A WRITE request's bytes before its data, for handles of up to 39 bytes (OpenSSH's are 4): write-packet.ts. */
const WRITE_HEADER_BYTES = 64;
/** Requests in flight per channel and direction at most, whatever the budget: OpenSSH sftp's default (-R 64). */
const MAX_REQUESTS_IN_FLIGHT = 64;
/** Symlinks whose targets a listing resolves (two requests each); beyond that, target unknown. */
const MAX_RESOLVED_LINKS = 500;

/**
 * The path's attributes, when it is a regular file (or a link to one); EBADARGS not_a_file
 * otherwise. Asked before anything opens it: opening a named pipe waits for a writer, and the
 * server's SFTP process (every request of the session behind it) waits with it.
 */
async function regularFile(rfs: RemoteFs, path: string, verb: string, how = ''): Promise<Stats> {
  const st = await rfs.statTarget(path, `${verb} ${path}${how ? ` ${how}` : ''}`);
  const type = entryType(st.mode);
  if (type === 'file') return st;
  const what = type === 'dir' ? 'a folder' : 'not a regular file (a named pipe, a socket or a device)';
  throw sftpError('EBADARGS', `Cannot ${verb} ${path}${how ? ` ${how}` : ''}: it is ${what}.`, 'not_a_file', { path });
}

/** sftp.cancel of a transfer that had already ended on its own: nothing was cancelled. */
function alreadyFinished(t: Transfer): WraithError {
  const what = t.direction === 'upload' ? `The upload to ${t.remotePath}` : `The download of ${t.remotePath}`;
  const message =
    t.state === 'done' ? `${what} had already finished, so there was nothing to cancel.` : `${what} had already failed, so there was nothing to cancel: ${t.error?.message ?? 'no reason was given.'}`;
  return sftpError('EBADARGS', message, 'finished', { transferId: t.id, state: t.state });
}

/**
 * SFTP for the side panel, the CLI and the XO: browse, edit small text files, stream transfers.
 * Works on whatever SFTP channel the provider hands out for a session and never closes it.
 */
export class SftpService {
  private readonly transfers = new Map<string, Transfer>();
  private readonly streams = new Map<string, StreamUpload>();
  private readonly links = new Map<string, PendingLink>();
  /** Streamed uploads whose bytes come as the body of an HTTP PUT (sftp.uploadLink): ticket → the transfer and where its body starts. */
  private readonly uploadTickets = new Map<string, { transferId: string; offset: number }>();
  private readonly tuning: TransferTuning;
  private readonly emitProgress: (p: TransferProgress) => void;
  private readonly progressIntervalMs: number;
  private readonly streamIdleMs: number;
  private readonly keepFinished: number;
  private readonly siteOf: (sessionId: string) => string;
  /** Remote temps our cleanup could not remove because the connection was gone, by site (also in orphanStore). */
  private readonly orphans = new Map<string, Set<string>>();
  private readonly orphanStore: OrphanTempStore | null;
  /** A removal of a site's orphans in progress, which concurrent calls wait for. */
  private readonly orphanSweeps = new Map<string, Promise<void>>();
  /** Each SFTP channel's login folder (homeOf). */
  private readonly homes = new WeakMap<SFTPWrapper, Promise<string | null>>();
  /** Sessions being closed (sessionClosing): no new work starts on them. */
  private readonly closing = new Set<string>();
  /** Each SFTP channel's request slots for READs and for WRITEs, shared by all its transfers (file-copy.ts). */
  private readonly slots = new WeakMap<RemoteFs['sftp'], Partial<Record<'read' | 'write', RequestSlots>>>();
  private ticker: NodeJS.Timeout | null = null;
  private disposed = false;

  constructor(
    private readonly provider: SftpProvider,
    options: SftpServiceOptions = {},
  ) {
    this.tuning = { ...DEFAULT_TUNING, ...options.tuning };
    this.emitProgress = options.emitProgress ?? (() => {});
    this.progressIntervalMs = options.progressIntervalMs ?? 150;
    this.streamIdleMs = options.streamIdleMs ?? 5 * 60_000;
    this.keepFinished = options.keepFinished ?? 50;
    this.siteOf = options.siteOf ?? ((sessionId) => sessionId);
    this.orphanStore = options.orphanStore ?? null;
    // Those a lost connection kept before a restart: the next session to their site removes them.
    for (const { site, path } of this.orphanStore?.all() ?? []) this.rememberOrphan(site, path);
  }

  private async fs(sessionId: string): Promise<RemoteFs> {
    if (this.disposed) throw new WraithError('EUNAVAILABLE', 'SFTP is shutting down.');
    if (this.closing.has(sessionId)) throw new WraithError('ESESSIONCLOSED', 'The session is closing; its files can no longer be reached.');
    return this.openFs(sessionId);
  }

  private async openFs(sessionId: string): Promise<RemoteFs> {
    const sftp = await this.provider(sessionId);
    const site = this.siteOf(sessionId);
    const rfs = new RemoteFs(sftp, (path) => this.noteOrphan(site, path), await this.homeOf(sftp));
    await this.sweepOrphans(site, rfs);
    return rfs;
  }

  private rememberOrphan(site: string, path: string): void {
    const paths = this.orphans.get(site) ?? new Set<string>();
    paths.add(path);
    this.orphans.set(site, paths);
  }

  /**
   * A remote path our cleanup could not remove because the connection was gone: noted, here and
   * in the orphan store, for the next session to its site. Only our temps' names: sweepOrphans
   * would remove nothing else, so nothing else is worth remembering (a file inside a folder built
   * under a temp name goes with that folder).
   */
  private noteOrphan(site: string, path: string): void {
    if (!isTempBasename(posix.basename(path))) return;
    this.rememberOrphan(site, path);
    this.keepInStore((store) => store.add({ site, path }));
  }

  /** A noted temp is gone from its server (removed, or not there), or is not ours to remove. */
  private forgetOrphan(site: string, path: string): void {
    const paths = this.orphans.get(site);
    paths?.delete(path);
    if (paths?.size === 0) this.orphans.delete(site);
    this.keepInStore((store) => store.remove({ site, path }));
  }

  /**
   * A change to the orphan store, which never fails the cleanup it comes from: a store that cannot
   * take it (the App's database closing as it shuts down, or refusing a temp of a connection
   * deleted meanwhile) loses only what a restart would have lost without one; this process still
   * has it in memory.
   */
  private keepInStore(change: (store: OrphanTempStore) => void): void {
    if (!this.orphanStore) return;
    try {
      change(this.orphanStore);
    } catch {
      // See above: nothing to tell anyone, nothing more to do.
    }
  }

  /**
   * The login's home folder on this channel (SFTP's realpath of "."), asked once per channel:
   * where `~` leads and relative paths start. Null when the server would not say.
   */
  private homeOf(sftp: SFTPWrapper): Promise<string | null> {
    let home = this.homes.get(sftp);
    if (!home) {
      home = new RemoteFs(sftp).realpath('.').catch(() => null);
      this.homes.set(sftp, home);
    }
    return home;
  }

  /**
   * Removes the temps a lost connection kept on this site (an upload cut off mid-way cannot
   * delete its own temp), before the first operation on a connection that works again. Only
   * paths our own cleanup failed on, and only names our temps have: nothing else is touched.
   */
  private async sweepOrphans(site: string, rfs: RemoteFs): Promise<void> {
    if (!this.orphans.get(site)?.size || !channelOpen(rfs.sftp)) return;
    let sweep = this.orphanSweeps.get(site);
    if (!sweep) {
      sweep = (async () => {
        for (const path of [...(this.orphans.get(site) ?? [])]) {
          if (isTempBasename(posix.basename(path))) {
            // Gone already, or not ours to remove (permissions): either way nothing more to do —
            // unless this connection died too, then the next one tries again.
            const removed = await rfs.removeTree(path).then(
              () => true,
              () => channelOpen(rfs.sftp),
            );
            if (!removed) return;
          }
          this.forgetOrphan(site, path);
        }
      })().finally(() => this.orphanSweeps.delete(site));
      this.orphanSweeps.set(site, sweep);
    }
    await sweep;
  }

  /**
   * A session is about to close (sessions.close), its connection still up: its transfers are
   * cancelled and their temps removed over that connection, and so are temps of the same server
   * a lost channel could not remove before (over a fresh channel), so that closing mid-transfer
   * leaves no partial file. Resolves when that is done, or after CLOSE_CLEANUP_MS: the close goes
   * on, and what is left stays noted for the next session to that server (sessionConnected).
   */
  async sessionClosing(sessionId: string): Promise<void> {
    this.closing.add(sessionId);
    const mine = [...this.transfers.values()].filter((t) => t.sessionId === sessionId && t.running);
    for (const t of mine) t.controller.abort();
    const cleanup = (async () => {
      await Promise.allSettled(mine.map((t) => t.done));
      await this.sweepThrough(sessionId);
    })();
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_CLEANUP_MS)));
    try {
      await Promise.race([cleanup, bound]);
    } finally {
      clearTimeout(timer);
      this.closing.delete(sessionId);
    }
  }

  /**
   * A session connected (opened, or reconnected): temps a lost connection kept on its server go
   * now, not only when SFTP is next used there (which may be never).
   */
  sessionConnected(sessionId: string): Promise<void> {
    return this.sweepThrough(sessionId);
  }

  /** Removes the orphans of the session's server through it, if there are any; never fails. */
  private async sweepThrough(sessionId: string): Promise<void> {
    try {
      if (!this.disposed && this.orphans.get(this.siteOf(sessionId))?.size) await this.openFs(sessionId);
    } catch {
      // No SFTP there now: the orphans stay noted for the next try.
    }
  }

  // ---- browsing ----------------------------------------------------------------------------

  async realpath(sessionId: string, path: string): Promise<{ path: string }> {
    const rfs = await this.fs(sessionId);
    return { path: await rfs.realpath(path) };
  }

  async list(i: { sessionId: string; path: string; showHidden: boolean; limit: number; match?: string | undefined }) {
    const rfs = await this.fs(i.sessionId);
    const dir = await rfs.realpath(i.path);
    const st = await rfs.stat(dir);
    if (entryType(st.mode) !== 'dir') {
      throw sftpError('EBADARGS', `Cannot list ${i.path}: it is not a folder.`, 'not_a_directory', { path: i.path });
    }
    const match = i.match?.toLowerCase();
    const named = (await rfs.readdir(dir)).filter((e) => e.filename !== '.' && e.filename !== '..' && (!match || e.filename.toLowerCase().includes(match)));
    const raw = i.showHidden ? named : named.filter((e) => !e.filename.startsWith('.'));
    let links = 0;
    const entries = await Promise.all(
      raw.map(async (e) => {
        const path = posix.join(dir, e.filename);
        if (entryType(e.attrs.mode) !== 'symlink' || ++links > MAX_RESOLVED_LINKS) return toEntry(path, e.attrs, { longname: e.longname });
        const [target, targetStat] = await Promise.all([rfs.readlink(path).catch(() => null), rfs.stat(path).catch(() => null)]);
        return toEntry(path, e.attrs, { longname: e.longname, linkTarget: target, targetType: targetStat ? entryType(targetStat.mode) : null });
      }),
    );
    const isDir = (e: SftpEntry) => e.type === 'dir' || e.targetType === 'dir';
    entries.sort((a, b) => Number(isDir(b)) - Number(isDir(a)) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return { path: dir, entries: entries.slice(0, i.limit), truncated: entries.length > i.limit, hidden: named.length - raw.length };
  }

  private async describe(rfs: RemoteFs, path: string, st?: Stats): Promise<SftpEntry> {
    const attrs = st ?? (await rfs.lstat(path));
    if (entryType(attrs.mode) !== 'symlink') return toEntry(path, attrs);
    const [target, targetStat] = await Promise.all([rfs.readlink(path).catch(() => null), rfs.stat(path).catch(() => null)]);
    const targetType: SftpEntryType | null = targetStat ? entryType(targetStat.mode) : null;
    return toEntry(path, attrs, { linkTarget: target, targetType });
  }

  async stat(sessionId: string, path: string): Promise<SftpEntry> {
    return this.describe(await this.fs(sessionId), path);
  }

  // ---- small files -------------------------------------------------------------------------

  /**
   * Reads [offset, offset+length) of a file its caller found regular (regularFile), the READs
   * pipelined; returns the bytes, the file size and whether the bytes reach the end of the file.
   */
  private async readRange(rfs: RemoteFs, path: string, offset: number, length: number): Promise<{ data: Uint8Array<ArrayBuffer>; size: number; eof: boolean }> {
    refuseEndless(path);
    const handle = await rfs.open(path, 'r');
    try {
      const st = await rfs.fstat(handle, path);
      const step = serverChunkLimit(rfs.sftp, 32 * 1024);
      if (st.size === 0) {
        // Size 0 says nothing of what /proc's files hold: read on until the end shows.
        const { data, eof } = await rfs.readToEnd(handle, offset, length, step, path);
        // A copy on a plain ArrayBuffer of its own (concat may hand out a slice of Node's pool).
        return { data: new Uint8Array(data), size: eof ? offset + data.length : st.size, eof };
      }
      const want = Math.max(0, Math.min(length, st.size - offset));
      // Backed by a plain ArrayBuffer: the bytes leave as a binary frame without a copy.
      const bytes = new Uint8Array(want);
      const data = Buffer.from(bytes.buffer, 0, want);
      const parts: Promise<number>[] = [];
      for (let at = 0; at < want; at += step) {
        const len = Math.min(step, want - at);
        parts.push(
          // A short read: the file shrank while we read, and is valid up to there.
          rfs.readFully(handle, data, at, len, offset + at, path).then((n) => (n < len ? at + n : want)),
        );
      }
      const got = Math.min(want, ...(await Promise.all(parts)));
      return { data: bytes.subarray(0, got), size: st.size, eof: offset + got >= st.size };
    } finally {
      await rfs.close(handle, path).catch(() => undefined);
    }
  }

  async read(i: { sessionId: string; path: string; maxBytes: number; encoding?: TextEncoding }) {
    const rfs = await this.fs(i.sessionId);
    const st = await regularFile(rfs, i.path, 'open', 'as text');
    const limit = Math.min(i.maxBytes, SFTP_TEXT_MAX_BYTES);
    if (st.size > limit) {
      const shown = formatBytesOver(st.size, limit);
      throw sftpError('EBADARGS', `${i.path} is ${shown.size}, more than the ${shown.limit} the editor opens; download it instead.`, 'too_large', {
        path: i.path,
        size: st.size,
        maxBytes: limit,
      });
    }
    // One byte more than allowed tells us whether the file grew past the limit meanwhile.
    const { data } = await this.readRange(rfs, i.path, 0, limit + 1);
    if (data.length > limit) {
      throw sftpError('EBADARGS', `${i.path} is larger than the ${formatBytes(limit)} the editor opens; download it instead.`, 'too_large', { path: i.path, maxBytes: limit });
    }
    const encoding = i.encoding ?? 'utf-8';
    const text = decodeAs(data, encoding);
    if (text === null && encoding === 'utf-8' && !data.includes(0)) {
      throw sftpError(
        'EBADARGS',
        `${i.path} is not UTF-8 text. It may be in a legacy encoding such as Windows-1252 (Latin-1): open it as that, or download it.`,
        'not_utf8',
        { path: i.path },
      );
    }
    if (text === null) {
      throw sftpError('EBADARGS', `${i.path} looks like a binary file (it has NUL bytes), so it cannot be edited here; download it instead.`, 'binary', { path: i.path });
    }
    return { path: i.path, text, size: data.length, mtime: new Date(st.mtime * 1000).toISOString(), mode: st.mode & 0o7777, encoding };
  }

  async readChunk(i: { sessionId: string; path: string; offset: number; length: number }) {
    const rfs = await this.fs(i.sessionId);
    await regularFile(rfs, i.path, 'read');
    const { data, size, eof } = await this.readRange(rfs, i.path, i.offset, i.length);
    return { data, eof, size };
  }

  async write(i: {
    sessionId: string;
    path: string;
    text?: string;
    encoding?: TextEncoding;
    data?: Uint8Array;
    expectedMtime?: string;
    expectedSize?: number;
    mode?: number | string;
    exclusive?: boolean;
  }): Promise<SftpEntry> {
    const rfs = await this.fs(i.sessionId);
    const alreadyThere = () => sftpError('EBADARGS', `Cannot create ${i.path}: something with that name is already there.`, 'exists', { path: i.path });
    // An exclusive write looks while it creates its temp file (below), in the same round trip.
    const there = i.exclusive ? null : await rfs.lstatOrNull(i.path);
    // Writing through a symlink edits the file it points to, not the link.
    const { path: target, st: existing } = await rfs.writeTarget(i.path, there);
    if (existing && entryType(existing.mode) !== 'file') {
      throw sftpError('EBADARGS', `Cannot write ${i.path}: it is ${entryType(existing.mode) === 'dir' ? 'a folder' : 'not a regular file'}.`, 'not_a_file', { path: i.path });
    }
    const checkUnchanged = async () => {
      if (i.expectedMtime === undefined && i.expectedSize === undefined) return;
      const now = await rfs.lstatOrNull(target);
      const changed =
        !now ||
        (i.expectedMtime !== undefined && Math.floor(Date.parse(i.expectedMtime) / 1000) !== now.mtime) ||
        (i.expectedSize !== undefined && i.expectedSize !== now.size);
      if (changed) {
        throw sftpError(
          'EBADARGS',
          now
            ? `${i.path} changed on the server since it was opened (modified ${new Date(now.mtime * 1000).toISOString()}); reload it before saving, or save under another name.`
            : `${i.path} was deleted on the server since it was opened; save again without the check to recreate it.`,
          'changed',
          { path: i.path, mtime: now ? new Date(now.mtime * 1000).toISOString() : null, size: now?.size ?? null },
        );
      }
    };
    // Said before anything is written: a character the file's encoding has no byte for.
    const bytes = i.data ?? encodeAs(i.text ?? '', i.encoding ?? 'utf-8', i.path);
    await checkUnchanged();

    const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const step = serverChunkLimit(rfs.sftp, 32 * 1024);
    // A new file without a mode gets the server's default, as `touch` there (and an upload) makes it.
    const mode = existing ? existing.mode & 0o7777 : i.mode !== undefined ? parseMode(i.mode) : null;
    // What was written, under the name it was asked by: the file a link leads to, not the link.
    // The editor keeps its size and time for the next save's check against the same file.
    const written = async () => toEntry(i.path, await rfs.lstat(target));
    // An existing file the new one could not stand in for (another owner, no temp file allowed
    // beside it) is written in place instead: the editor still holds the text if that fails.
    const inPlace = async () => {
      await checkUnchanged();
      await rfs.overwriteInPlace(target, buf, step);
      return written();
    };
    const temp = tempNameFor(target);
    const attrs = mode === null ? {} : { mode };
    let handle: Buffer;
    if (i.exclusive) {
      // Both requests in flight at once: the look costs no round trip of its own (a folder's
      // small files come this way), and a name that is taken costs no bytes sent.
      const [seen, made] = await Promise.allSettled([rfs.lstatOrNull(i.path), rfs.createTemp(temp, target, attrs)]);
      const taken = seen.status === 'fulfilled' && seen.value !== null;
      if (made.status === 'fulfilled' && (taken || seen.status === 'rejected')) {
        await rfs.close(made.value, temp).catch(() => undefined);
        await rfs.removeQuietly(temp);
      }
      if (taken) throw alreadyThere();
      if (seen.status === 'rejected') throw seen.reason;
      if (made.status === 'rejected') throw made.reason;
      handle = made.value;
    } else {
      try {
        handle = await rfs.createTemp(temp, target, attrs);
      } catch (err) {
        if (existing && err instanceof WraithError && err.code === 'EDENIED') return inPlace();
        throw err;
      }
    }
    try {
      if (existing) {
        const kept = await rfs.readyToReplace(temp, target, existing, 'save');
        if (!kept.owner || !kept.group) {
          await rfs.close(handle, temp);
          await rfs.removeQuietly(temp);
          return await inPlace();
        }
      }
      const writes: Promise<void>[] = [];
      for (let at = 0; at < buf.length; at += step) writes.push(rfs.write(handle, buf, at, Math.min(step, buf.length - at), at, temp));
      // A new file's entry comes from its handle, asked behind the writes: the server answers
      // in order, so this costs no round trip of its own (an existing one is described below).
      // Awaited with them, so that a failure of both (the connection gone) is never unhandled.
      const [, st] = await Promise.all([Promise.all(writes), existing ? null : rfs.fstat(handle, temp)]);
      await rfs.close(handle, temp);
      // open() applies the server's umask; an existing file keeps exactly its mode.
      if (mode !== null) await rfs.chmod(temp, mode);
      await checkUnchanged();
      if (existing) await rfs.replace(temp, target);
      else {
        // A plain SFTP rename never replaces: a file that appeared meanwhile is kept, and this fails.
        await rfs.rename(temp, target).catch(async (err: unknown) => {
          throw (await rfs.lstatOrNull(target).catch(() => null)) ? alreadyThere() : err;
        });
      }
      if (st) return toEntry(i.path, mode === null ? st : { ...st, mode: (st.mode & ~0o7777) | mode });
    } catch (err) {
      const said = await noRoomFor(rfs, err, { temp, dest: i.path, size: buf.length, replacing: existing });
      await rfs.close(handle, temp).catch(() => undefined);
      await rfs.removeQuietly(temp);
      throw said;
    }
    return written();
  }

  // ---- changes -----------------------------------------------------------------------------

  async mkdir(i: { sessionId: string; path: string; parents: boolean; mode?: number | string }): Promise<SftpEntry> {
    const rfs = await this.fs(i.sessionId);
    const mode = i.mode === undefined ? undefined : parseMode(i.mode);
    if (!i.parents) {
      const existing = await rfs.lstatOrNull(i.path);
      if (existing) throw sftpError('EBADARGS', `Cannot create ${i.path}: something with that name already exists.`, 'exists', { path: i.path });
      await rfs.mkdir(i.path, mode);
      return this.describe(rfs, i.path);
    }
    const absolute = i.path.startsWith('/');
    const parts = i.path.split('/').filter(Boolean);
    let at = absolute ? '/' : '';
    for (const part of parts) {
      at = at ? posix.join(at, part) : part;
      const st = await rfs.lstatOrNull(at);
      if (!st) await rfs.mkdir(at, mode);
      else if (entryType((await rfs.stat(at)).mode) !== 'dir') {
        throw sftpError('EBADARGS', `Cannot create ${i.path}: ${at} exists and is not a folder.`, 'not_a_directory', { path: at });
      }
    }
    return this.describe(rfs, i.path);
  }

  async rename(i: { sessionId: string; from: string; to: string; overwrite: boolean }): Promise<SftpEntry> {
    const rfs = await this.fs(i.sessionId);
    await rfs.lstat(i.from);
    const existing = await rfs.lstatOrNull(i.to);
    if (existing && !i.overwrite) {
      throw sftpError('EBADARGS', `Cannot rename ${i.from} to ${i.to}: ${i.to} already exists.`, 'exists', { path: i.to });
    }
    if (existing) await rfs.replace(i.from, i.to);
    else await rfs.rename(i.from, i.to);
    return this.describe(rfs, i.to);
  }

  async remove(i: { sessionId: string; path: string; recursive: boolean }): Promise<{ ok: true; removed: number }> {
    const rfs = await this.fs(i.sessionId);
    const st = await rfs.lstat(i.path);
    if (entryType(st.mode) !== 'dir') {
      await rfs.unlink(i.path);
      return { ok: true, removed: 1 };
    }
    const real = await rfs.realpath(i.path);
    if (real === '/') throw sftpError('EBADARGS', 'Refusing to delete the root folder /.', 'not_a_file', { path: i.path });
    if (!i.recursive) {
      const children = (await rfs.readdir(i.path)).filter((e) => e.filename !== '.' && e.filename !== '..');
      if (children.length) {
        throw sftpError('EBADARGS', `Cannot delete ${i.path}: the folder is not empty (${children.length} ${children.length === 1 ? 'entry' : 'entries'}); delete recursively to remove it all.`, 'not_empty', {
          path: i.path,
          entries: children.length,
        });
      }
      await rfs.rmdir(i.path);
      return { ok: true, removed: 1 };
    }
    return { ok: true, removed: await rfs.removeTree(i.path) };
  }

  async chmod(i: { sessionId: string; path: string; mode: number | string }): Promise<SftpEntry> {
    const rfs = await this.fs(i.sessionId);
    await rfs.chmod(i.path, parseMode(i.mode));
    return this.describe(rfs, i.path);
  }

  // ---- transfers ---------------------------------------------------------------------------

  /** How a transfer that `kind`s (downloads read, uploads write) runs on this channel. */
  private planFor(rfs: RemoteFs, kind: 'read' | 'write'): TransferPlan {
    const chunkSize = Math.min(this.tuning.chunkSize, serverChunkLimit(rfs.sftp, 32 * 1024));
    const pools = this.slots.get(rfs.sftp) ?? {};
    this.slots.set(rfs.sftp, pools);
    let slots = pools[kind];
    if (!slots) {
      // A server that takes only 32 KiB per request gets 64 of them, as OpenSSH's sftp sends, not more.
      // A WRITE carries its data on the wire, so the budget holds whole requests (with their header, at
      // most WRITE_HEADER_BYTES); a READ's data comes back in its answer.
      const count =
        kind === 'read'
          ? Math.ceil(this.tuning.readInFlightBytes / chunkSize)
          : Math.floor(this.tuning.writeInFlightBytes / (chunkSize + WRITE_HEADER_BYTES));
      slots = new RequestSlots(Math.max(1, Math.min(MAX_REQUESTS_IN_FLIGHT, count)));
      pools[kind] = slots;
    }
    return { chunkSize, fileConcurrency: this.tuning.fileConcurrency, slots };
  }

  private track(t: Transfer, work: () => Promise<void>, cleanup?: () => Promise<void>): void {
    this.transfers.set(t.id, t);
    this.startTicker();
    t.done = (async () => {
      try {
        await work();
        t.finish('done');
      } catch (err) {
        t.finish(t.signal.aborted ? 'cancelled' : 'failed', err);
      } finally {
        await cleanup?.().catch(() => undefined);
        this.report(t);
        this.prune();
      }
    })();
  }

  /**
   * A source that is not there or cannot be read, and a destination it may not go to (a missing
   * folder, a name taken without overwrite), are refused here, before there is a transfer
   * (uploadSource, uploadDestination).
   */
  async upload(i: { sessionId: string; localPath: string; remotePath: string; overwrite: boolean }): Promise<{ transferId: string }> {
    const localPath = callerLocalPath(i.localPath);
    const rfs = await this.fs(i.sessionId);
    const source = await uploadSource(localPath);
    await uploadDestination(rfs, localPath, source, i.remotePath, i.overwrite);
    const plan = this.planFor(rfs, 'write');
    const t = new Transfer(i.sessionId, 'upload', 'file', localPath, i.remotePath);
    this.track(t, () => runUpload(rfs, t, i.overwrite, plan, source));
    return { transferId: t.id };
  }

  /**
   * A source that is not there or cannot be read, and a destination it may not go to, are refused
   * here, before there is a transfer (downloadSource, downloadDestination).
   */
  async download(i: { sessionId: string; remotePath: string; localPath: string; overwrite: boolean }): Promise<{ transferId: string }> {
    const localPath = callerLocalPath(i.localPath);
    const rfs = await this.fs(i.sessionId);
    const source = await downloadSource(rfs, i.remotePath);
    await downloadDestination(i.remotePath, source, localPath, i.overwrite);
    return this.startDownload(rfs, { ...i, localPath }, source);
  }

  /** `source`: the attributes downloadSource found at remotePath. */
  private startDownload(rfs: RemoteFs, i: { sessionId: string; remotePath: string; localPath: string; overwrite: boolean }, source: Stats): { transferId: string } {
    const plan = this.planFor(rfs, 'read');
    const t = new Transfer(i.sessionId, 'download', 'file', i.localPath, i.remotePath);
    this.track(t, () => runDownload(rfs, t, i.overwrite, plan, source));
    return { transferId: t.id };
  }

  /**
   * sftp.saveAs: downloads where the user said, through the desktop's own dialog. One item goes to
   * the path chosen in a save dialog, which has asked before replacing anything there; several go
   * by name into the folder chosen, and never replace what is already in it (those fail as
   * sftp.download does without overwrite).
   */
  async saveAs(i: { sessionId: string; remotePaths: string[] }, choose: SavePathChooser) {
    const rfs = await this.fs(i.sessionId); // no dialog for a session that cannot do SFTP
    const names = i.remotePaths.map((p) => posix.basename(p.replace(/\/+$/, '')));
    const bad = names.find((n) => n === '' || n === '.' || n === '..');
    if (bad !== undefined) throw sftpError('EBADARGS', `Cannot save ${bad || '/'} under its own name: name the file or folder to download.`, 'not_a_file');
    const twice = names.find((n, k) => names.indexOf(n) !== k);
    if (twice !== undefined) throw new WraithError('EBADARGS', `Two of the items to save are called ${twice}; save them one at a time.`);
    // An item that is not there is refused before asking, as sftp.download refuses it.
    const items = await Promise.all(i.remotePaths.map(async (remotePath, k) => ({ remotePath, name: names[k] ?? '', source: await downloadSource(rfs, remotePath) })));
    const one = items.length === 1;
    const chosen = await choose({ suggestedName: one ? (items[0]?.name ?? '') : `${items.length} items`, several: !one });
    if (!chosen) return { localPath: null, transfers: [] };
    const transfers: { transferId: string; remotePath: string; localPath: string }[] = [];
    for (const { remotePath, name, source } of items) {
      const localPath = callerLocalPath(one ? chosen : join(chosen, name));
      const { transferId } = this.startDownload(rfs, { sessionId: i.sessionId, remotePath, localPath, overwrite: one }, source);
      transfers.push({ transferId, remotePath, localPath });
    }
    return { localPath: chosen, transfers };
  }

  /**
   * Stops a transfer; resolves once its temp files are gone. One that had already finished (done
   * or failed, before this call or while it stopped) is not cancelled, and the call says so:
   * EBADARGS with reason `finished` and the transfer's `state`. One already cancelled stays so.
   */
  async cancel(transferId: string): Promise<{ ok: true }> {
    const t = this.transfers.get(transferId);
    if (!t) throw new WraithError('ENOTFOUND', `No transfer with id ${transferId}; it may have finished long ago.`);
    if (t.running) t.controller.abort();
    await t.done;
    if (t.state === 'done' || t.state === 'failed') throw alreadyFinished(t);
    return { ok: true };
  }

  listTransfers(sessionId?: string): TransferInfo[] {
    return [...this.transfers.values()].filter((t) => sessionId === undefined || t.sessionId === sessionId).map((t) => t.info());
  }

  /** Resolves when the transfer has ended (tests, the CLI). */
  async wait(transferId: string): Promise<TransferInfo> {
    const t = this.transfers.get(transferId);
    if (!t) throw new WraithError('ENOTFOUND', `No transfer with id ${transferId}.`);
    await t.done;
    return t.info();
  }

  // ---- streamed uploads (bytes from the page) ----------------------------------------------

  /**
   * `sender`: the caller's CallContext.left. Should it go for good (its page closed or reloaded)
   * before the upload is over, the upload fails at once (sentBy).
   */
  async uploadBegin(
    i: { sessionId: string; remotePath: string; size?: number; overwrite: boolean; mode?: number | string; batch?: UploadBatch | undefined },
    sender?: AbortSignal,
  ) {
    const rfs = await this.fs(i.sessionId);
    const parentDir = posix.dirname(i.remotePath);
    const parent = await rfs.lstatOrNull(parentDir);
    if (!parent || entryType(parent.mode) === 'file') {
      throw sftpError('ENOTFOUND', `Cannot upload to ${i.remotePath}: the folder ${parentDir} does not exist on the server.`, 'not_a_directory', { path: i.remotePath });
    }
    const existing = await rfs.lstatOrNull(i.remotePath);
    // A folder first: asked whether to replace it, the answer could only fail.
    if (existing && entryType(existing.mode) === 'dir') throw fileOverFolder('a file', i.remotePath);
    if (existing && !i.overwrite) {
      throw sftpError('EBADARGS', `Cannot upload to ${i.remotePath}: it already exists on the server (pass overwrite to replace it).`, 'exists', { path: i.remotePath });
    }
    // Over a symlink to a file, the file it points to is replaced and the link stays.
    const into = await rfs.writeTarget(i.remotePath, existing);
    const mode = into.st ? into.st.mode & 0o7777 : i.mode !== undefined ? parseMode(i.mode) : null;
    const temp = tempNameFor(into.path);
    const handle = await rfs.createTemp(temp, into.path, mode === null ? {} : { mode });
    if (into.st && entryType(into.st.mode) === 'file') {
      // Before the page sends a byte: a file this login may not write is not replaced.
      await rfs.readyToReplace(temp, into.path, into.st, 'replace').catch(async (err: unknown) => {
        await rfs.close(handle, temp).catch(() => undefined);
        await rfs.removeQuietly(temp);
        throw err;
      });
    }
    const t = new Transfer(i.sessionId, 'upload', 'file', null, i.remotePath);
    t.totalBytes = i.size ?? null;
    t.filesTotal = 1;
    t.batch = i.batch ?? null;
    // The transfer's work is the caller's chunks: it ends at uploadEnd, on cancel, a failed write,
    // its sender leaving or nothing coming for streamIdleMs.
    let end: () => void = () => {};
    let fail: (err: unknown) => void = () => {};
    const finished = new Promise<void>((resolve, reject) => {
      end = resolve;
      fail = reject;
    });
    const s: StreamUpload = {
      transfer: t,
      rfs,
      plan: this.planFor(rfs, 'write'),
      handle,
      temp,
      mode,
      dest: into.path,
      replacing: into.st,
      received: 0,
      writes: new Set(),
      idle: setTimeout(() => this.giveUp(s), this.streamIdleMs),
      end,
      fail,
      linked: false,
      stopBody: null,
      cutOff: false,
      unfollowSender: () => {},
    };
    s.idle.unref();
    this.streams.set(t.id, s);
    t.signal.addEventListener('abort', () => fail(cancelledError(`Upload of ${i.remotePath}`)), { once: true });
    this.track(
      t,
      () => finished,
      async () => {
        clearTimeout(s.idle);
        s.unfollowSender();
        this.streams.delete(t.id);
        await Promise.allSettled([...s.writes]);
        if (t.state !== 'done') {
          await rfs.close(handle, temp).catch(() => undefined);
          if (!(await rfs.removeQuietly(temp))) t.leftBehind.push(temp);
        }
      },
    );
    this.sentBy(s, sender);
    return { transferId: t.id, chunkBytes: STREAM_CHUNK_BYTES };
  }

  private stream(transferId: string): StreamUpload {
    const s = this.streams.get(transferId);
    if (s?.transfer.running) return s;
    const t = this.transfers.get(transferId);
    if (!t) throw new WraithError('ENOTFOUND', `No streamed upload with id ${transferId}.`);
    if (t.state === 'cancelled') throw cancelledError(`The upload to ${t.remotePath}`);
    if (t.state === 'done') throw new WraithError('EBADARGS', `The upload to ${t.remotePath} has already finished.`);
    // Why, as the transfer says it: a page that resumes after its sender was given up learns that.
    throw new WraithError('EBADARGS', `The upload to ${t.remotePath} has already failed: ${t.error?.message ?? 'no reason was given.'}`);
  }

  /** What a streamed upload's messages say of it: its name, its batch, how far it got. */
  private streamedFile(s: StreamUpload): StreamedFile {
    const t = s.transfer;
    return { remotePath: t.remotePath, batch: t.batch, bytes: t.bytes, totalBytes: t.totalBytes };
  }

  /**
   * `sender` (the CallContext.left of whoever called uploadBegin or, since, uploadLink) sends the
   * upload's bytes now: should it go for good (its page closed or reloaded), nobody will send the
   * rest, and the upload fails at once instead of waiting out streamIdleMs. The one before it no
   * longer counts: a page whose link dropped came back over another connection and resumed.
   */
  private sentBy(s: StreamUpload, sender: AbortSignal | undefined): void {
    s.unfollowSender();
    s.unfollowSender = () => {};
    if (!sender) return;
    const left = () => this.senderLeft(s);
    if (sender.aborted) return left();
    sender.addEventListener('abort', left, { once: true });
    s.unfollowSender = () => sender.removeEventListener('abort', left);
  }

  /** The page sending a streamed upload closed or reloaded: it fails now, unless it was ending (uploadEnd under way). */
  private senderLeft(s: StreamUpload): void {
    if (!s.transfer.running || s.ending) return;
    s.stopBody?.();
    s.fail(pageLeftError(this.streamedFile(s)));
  }

  /** Nothing of a streamed upload came for streamIdleMs: it fails, saying so (nobody cancelled it), and a body still open is let go. */
  private giveUp(s: StreamUpload): void {
    if (!s.transfer.running || s.ending) return;
    s.stopBody?.();
    s.fail(stalledError(this.streamedFile(s), this.streamIdleMs, s.cutOff));
  }

  async uploadChunk(i: { transferId: string; offset: number; data: Uint8Array }): Promise<{ bytes: number }> {
    const s = this.stream(i.transferId);
    if (i.offset !== s.received) {
      throw sftpError('EBADARGS', `Chunk at offset ${i.offset} arrived, but the upload has ${s.received} bytes; send chunks in order.`, 'bad_offset', {
        expected: s.received,
      });
    }
    s.received += i.data.byteLength;
    s.idle.refresh();
    const buf = Buffer.from(i.data.buffer, i.data.byteOffset, i.data.byteLength);
    // In requests of the channel's size, each holding one of its slots (shared with every other
    // transfer on it): a chunk's pieces beyond what the SSH window carries wait here as the chunk
    // itself, not as copies queued in ssh2.
    const { slots, chunkSize } = s.plan;
    const signal = s.transfer.signal;
    const piece = async (at: number) => {
      if (!(await slots.acquire(signal))) throw cancelledError(`Upload to ${s.transfer.remotePath}`);
      try {
        await s.rfs.write(s.handle, buf, at, Math.min(chunkSize, buf.length - at), i.offset + at, s.temp);
      } finally {
        slots.release();
      }
    };
    const parts: Promise<void>[] = [];
    for (let at = 0; at < buf.length; at += chunkSize) parts.push(piece(at));
    const write = Promise.all(parts).then(() => s.transfer.addBytes(buf.length));
    s.writes.add(write);
    try {
      await write;
    } catch (err) {
      // A full disk in the words of this upload (before its temp goes: what it took counts).
      const said = await noRoomFor(s.rfs, err, { temp: s.temp, dest: s.dest, size: s.transfer.totalBytes, replacing: s.replacing });
      s.fail(said);
      throw said;
    } finally {
      s.writes.delete(write);
    }
    return { bytes: s.received };
  }

  /**
   * sftp.uploadLink: a one-time URL (relative to the `wraith serve` address) to PUT a streamed
   * upload's bytes to, all of them as one request body, instead of sending sftp.uploadChunk calls.
   * A browser sends a File as a fetch body from its network process: the page never holds the
   * bytes. The HTTP side hands the body to uploadChunk in order (claimUpload); uploadEnd finishes.
   */
  uploadLink(transferId: string, sender?: AbortSignal): { url: string; offset: number } {
    const s = this.stream(transferId);
    if (s.received > 0 && !s.linked) {
      throw sftpError('EBADARGS', `The upload to ${s.transfer.remotePath} has chunks already; its bytes come one way only.`, 'bad_offset', { expected: 0 });
    }
    s.linked = true;
    // Whoever asks for the link sends the body: a page that closes or reloads ends the upload.
    this.sentBy(s, sender);
    // A body cut off (the network dropped) resumes at what the host has: one link at a time.
    for (const [t, v] of this.uploadTickets) if (v.transferId === transferId) this.uploadTickets.delete(t);
    const ticket = randomBytes(18).toString('base64url');
    this.uploadTickets.set(ticket, { transferId, offset: s.received });
    void s.transfer.done.then(() => this.uploadTickets.delete(ticket));
    return { url: `/upload/${ticket}`, offset: s.received };
  }

  /**
   * The HTTP side of an upload link: valid once. The transfer, where the body starts (`offset`,
   * what the link promised the page) and how many of its first bytes the host has already
   * (`skip`), or null when the ticket is unknown, used or its upload over. `stop` ends this body
   * should a newer link take over (the page resumes after a cut it saw, while this side still
   * waits for bytes). An older body still delivering between the link and this claim got further
   * than the link said: those bytes come again at the head of this body and are dropped.
   */
  claimUpload(ticket: string, stop: () => void): { transferId: string; offset: number; skip: number } | null {
    const link = this.uploadTickets.get(ticket);
    if (link === undefined) return null;
    this.uploadTickets.delete(ticket);
    const s = this.streams.get(link.transferId);
    if (!s?.transfer.running) return null;
    // Stopped first: from here on, s.received moves only by this body.
    s.stopBody?.();
    s.stopBody = stop;
    s.cutOff = false;
    return { transferId: link.transferId, offset: link.offset, skip: s.received - link.offset };
  }

  /**
   * The HTTP side of an upload link: its body was cut off before its end (the request closed).
   * The page may resume it over a new link; if none comes, the idle end says it was cut off.
   * A page that closed or reloaded has ended it already (sentBy).
   */
  uploadCut(transferId: string): void {
    const s = this.streams.get(transferId);
    if (s?.transfer.running) s.cutOff = true;
  }

  /**
   * Renames the temp file into place once every chunk is written. A second call while that runs
   * gets the first one's answer: a page whose link dropped with its call out cannot know whether
   * it arrived, and asks again.
   */
  uploadEnd(transferId: string): Promise<SftpEntry> {
    const s = this.stream(transferId);
    s.ending ??= this.finishUpload(s);
    return s.ending;
  }

  private async finishUpload(s: StreamUpload): Promise<SftpEntry> {
    const t = s.transfer;
    try {
      await Promise.all([...s.writes]);
      if (t.totalBytes !== null && s.received !== t.totalBytes) {
        throw sftpError('EBADARGS', `The upload to ${t.remotePath} announced ${t.totalBytes} bytes but received ${s.received}.`, 'bad_offset', {
          expected: t.totalBytes,
          received: s.received,
        });
      }
      await s.rfs.close(s.handle, s.temp);
      // Owner first: a chown clears the setuid and setgid bits the mode may carry.
      if (s.replacing) await keepOwnership(s.rfs, t, s.temp, s.dest, s.replacing);
      if (s.mode !== null) await s.rfs.chmod(s.temp, s.mode);
      if (s.replacing) await s.rfs.replace(s.temp, s.dest);
      else await s.rfs.rename(s.temp, s.dest);
    } catch (err) {
      s.fail(err);
      await t.done;
      throw err;
    }
    t.totalBytes = s.received;
    t.filesDone = 1;
    s.end();
    await t.done;
    return this.describe(s.rfs, t.remotePath);
  }

  // ---- downloads fetched by a browser (HTTP) ----------------------------------------------

  /**
   * A one-time link (relative to the `wraith serve` address) that streams a remote file as an
   * HTTP download: the browser writes it to disk as it arrives, never the whole file in memory.
   * The transfer reports progress like any other and sftp.cancel ends the response.
   */
  async downloadLink(i: { sessionId: string; remotePath: string }): Promise<{ transferId: string; url: string; name: string; size: number }> {
    const rfs = await this.fs(i.sessionId);
    const st = await rfs.statTarget(i.remotePath, `download ${i.remotePath}`);
    const plan = this.planFor(rfs, 'read');
    if (st.isDirectory()) return this.folderLink(rfs, i, plan);
    if (!st.isFile()) throw new WraithError('EBADARGS', `${i.remotePath} is neither a file nor a folder: there is nothing to download.`);
    const t = new Transfer(i.sessionId, 'download', 'file', null, i.remotePath);
    t.filesTotal = 1;
    if (st.size === 0) return this.sizelessLink(rfs, t);
    t.totalBytes = st.size;
    return this.offerLink(t, posix.basename(i.remotePath), st.size, async (sink) => {
      const handle = await rfs.open(i.remotePath, 'r');
      try {
        const sent = await streamRemoteFile(rfs, handle, i.remotePath, st.size, sink, copyOptions(t, plan));
        if (sent < st.size) throw new WraithError('EIO', `${i.remotePath} shrank while it was downloaded (${sent} of ${st.size} bytes); download it again.`);
      } finally {
        await rfs.close(handle, i.remotePath).catch(() => undefined);
      }
      const finished = sinkFinished(sink, `Download of ${i.remotePath}`);
      sink.end();
      await finished;
      t.filesDone = 1;
    });
  }

  /**
   * A file that says it is empty: /proc's files (and debugfs's, some of /sys's) say so and are not.
   * The response states its length first, so the file is read whole before the link is offered,
   * up to SIZELESS_LINK_MAX_BYTES; a truly empty file costs one read that finds the end.
   */
  private async sizelessLink(rfs: RemoteFs, t: Transfer) {
    const path = t.remotePath;
    const { data } = await this.readRange(rfs, path, 0, SIZELESS_LINK_MAX_BYTES + 1);
    if (data.length > SIZELESS_LINK_MAX_BYTES) {
      throw new WraithError(
        'EBADARGS',
        `${path} does not report its size and holds more than ${formatBytes(SIZELESS_LINK_MAX_BYTES)}, too much to read ahead for a browser download; copy it to a regular file on the server and download that.`,
      );
    }
    t.totalBytes = data.length;
    return this.offerLink(t, posix.basename(path), data.length, async (sink) => {
      const finished = sinkFinished(sink, `Download of ${path}`);
      sink.write(data);
      t.addBytes(data.length);
      sink.end();
      await finished;
      t.filesDone = 1;
    });
  }

  /**
   * A folder goes to the browser as one zip of it, walked first so the size (and progress) is
   * known. What this login cannot read (a folder it may not list, a file it may not open) is left
   * out rather than failing the whole zip: the zip lists those items in a text file of its own,
   * and the transfer's notice names them. A folder that cannot be listed itself fails.
   */
  private async folderLink(rfs: RemoteFs, i: { sessionId: string; remotePath: string }, plan: TransferPlan) {
    const t = new Transfer(i.sessionId, 'download', 'folder', null, i.remotePath);
    const leftOut: LeftOut[] = [];
    const tree = await walkRemote(rfs, i.remotePath, t.signal, { unlisted: noteUnlisted(leftOut) });
    const entries = tree.files.length + tree.dirs.length;
    if (entries > ZIP_MAX_ENTRIES) {
      throw new WraithError('EBADARGS', `${i.remotePath} holds ${entries} files and folders, more than one zip download takes (${ZIP_MAX_ENTRIES}); download a part of it.`);
    }
    const listName = await leaveOutUnreadable(rfs, i.remotePath, tree, leftOut, t.signal);
    t.leftOut(leftOut, listName);
    t.totalBytes = tree.totalBytes;
    t.filesTotal = tree.files.length;
    const zip = zipRemoteFolder(rfs, i.remotePath, tree, {
      ...copyOptions(t, plan),
      onFileDone: () => (t.filesDone += 1),
      ...(listName ? { leftOut: { items: leftOut, listName } } : {}),
    });
    const base = posix.basename(i.remotePath.replace(/\/+$/, '')) || 'folder';
    return this.offerLink(t, `${base}.zip`, zip.size, (sink) => zip.pump(sink));
  }

  /**
   * Parks a download until the browser fetches its link (once, within LINK_TTL_MS), then runs
   * `body` into the response. The browser giving up (its Cancel, a closed tab) cancels the
   * transfer; a failure cuts the response short, which is how HTTP says "failed", and so does a
   * body of another length than `size`, the Content-Length (exactLengthSink).
   */
  private offerLink(t: Transfer, name: string, size: number, body: (sink: ByteSink) => Promise<void>) {
    const ticket = randomBytes(18).toString('base64url');
    let attach: (sink: ByteSink) => void = () => undefined;
    let expire: (err: WraithError) => void = () => undefined;
    const attached = new Promise<ByteSink>((resolve, reject) => {
      attach = resolve;
      expire = reject;
      t.signal.addEventListener('abort', () => reject(cancelledError(`Download of ${t.remotePath}`)), { once: true });
    });
    const timer = setTimeout(() => expire(new WraithError('ETIMEOUT', `Nothing fetched the download of ${name} within a minute; start it again.`)), LINK_TTL_MS);
    timer.unref();
    this.links.set(ticket, { transfer: t, name, size, attach });
    this.track(
      t,
      async () => {
        const sink = await attached;
        const exact = exactLengthSink(sink, size, name);
        const gone = () => {
          // Cut off for a wrong length: failed, not cancelled (the reads still under way stop too).
          const broken = exact.broken();
          if (broken) t.finish('failed', broken);
          t.controller.abort();
        };
        sink.once('close', gone);
        try {
          await body(exact.sink);
          sink.off('close', gone);
        } catch (err) {
          sink.off('close', gone);
          sink.destroy();
          throw exact.broken() ?? err;
        }
        const broken = exact.broken();
        if (broken) throw broken;
      },
      async () => {
        clearTimeout(timer);
        this.links.delete(ticket);
      },
    );
    return { transferId: t.id, url: `/download/${ticket}/${encodeURIComponent(name)}`, name, size };
  }

  /**
   * The HTTP side of a download link: valid once. Null when the ticket is unknown, used, expired
   * or cancelled; otherwise what the response headers need, and `start` to stream the body.
   */
  claimDownload(ticket: string): { transferId: string; name: string; size: number; start: (sink: ByteSink) => void } | null {
    const link = this.links.get(ticket);
    if (!link || !link.transfer.running) return null;
    this.links.delete(ticket);
    return { transferId: link.transfer.id, name: link.name, size: link.size, start: link.attach };
  }

  // ---- progress ----------------------------------------------------------------------------

  private report(t: Transfer): void {
    t.reportedBytes = t.bytes;
    t.reportedAt = Date.now();
    this.emitProgress(t.progressEvent());
  }

  private startTicker(): void {
    if (this.ticker) return;
    this.ticker = setInterval(() => {
      let running = 0;
      const now = Date.now();
      for (const t of this.transfers.values()) {
        if (!t.running) continue;
        running++;
        // Quiet transfers still report once a second so the speed decays and the UI knows they live.
        if (t.bytes !== t.reportedBytes || now - t.reportedAt >= 1000) this.report(t);
      }
      if (running === 0 && this.ticker) {
        clearInterval(this.ticker);
        this.ticker = null;
      }
    }, this.progressIntervalMs);
    this.ticker.unref();
  }

  private prune(): void {
    const finished = [...this.transfers.values()].filter((t) => !t.running);
    for (const t of finished.slice(0, Math.max(0, finished.length - this.keepFinished))) this.transfers.delete(t.id);
  }

  /** Cancels every transfer and waits until their temp files are gone. */
  async dispose(): Promise<void> {
    this.disposed = true;
    const all = [...this.transfers.values()];
    for (const t of all) if (t.running) t.controller.abort();
    await Promise.allSettled(all.map((t) => t.done));
    if (this.ticker) clearInterval(this.ticker);
    this.ticker = null;
  }
}
