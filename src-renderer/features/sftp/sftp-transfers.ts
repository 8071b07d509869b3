import { SFTP_CHUNK_MAX_BYTES, type TransferProgress, type UploadBatch, filesNotUploaded } from '@common/contract/sftp.js';
import { WraithError, fromSerializedError } from '@common/errors.js';
import { asWraithError } from '../../composables/errors.js';
import { useHost } from '../../transport/index.js';
import { relativePathOf } from './relative-path.js';
import { runPool } from './run-pool.js';
import { type TransferRow, reportedOnRow, useSftpStore } from './sftp-store.js';

/*
 * Bytes per sftp.uploadChunk (a File without a path on the host's disk, in the desktop app):
 * what the host suggests in uploadBegin, at most the contract's SFTP_CHUNK_MAX_BYTES. Each chunk is
 * a round trip and a read of the File, so fewer, larger ones go faster: 500 MB through `wraith
 * serve` went at 76 MB/s in 1 MiB chunks, two in flight, and at 138 MB/s in 4 MiB ones, four in
 * flight (bench/sftp-browser.ts, before uploads there went as PUTs).
 */
/**
 * Chunks sent and not yet written. The host writes them in order through the channel's request
 * slots, so at most this many chunks (16 MiB) wait in its memory per upload.
 */
const IN_FLIGHT = 4;

/** Files of one batch sent at once at most (uploadBatch): small files cost round trips, not bytes. */
const FILES_AT_ONCE = 16;
/**
 * A new file of a batch up to this size goes in one sftp.write (exclusive): one round trip page ↔
 * host instead of three (uploadBegin, uploadChunk, uploadEnd), and the host still writes a temp
 * file and renames it into place. Larger files, and files that replace others (whose owner the
 * streamed upload keeps and reports), stream.
 */
const WHOLE_FILE_BYTES = 1024 * 1024;
/**
 * How long the end of an upload waits for a dropped link to the host to come back. The host keeps
 * an upload with nothing new for 5 minutes (SftpService.streamIdleMs), so it is still there.
 */
const LINK_WAIT_MS = 120_000;
/** PUTs of one file's body at most: the first, and resumes after it was cut off. */
const PUT_ATTEMPTS = 6;
/** How often a batch's row shows its progress, ms. */
const SHOW_MS = 250;

/** A file of a batch upload, where it goes, and how messages name it (its path in the folder). */
export interface BatchItem {
  file: File;
  remotePath: string;
  label: string;
}

let batchCount = 0;

/** How every upload path says its file was stopped. */
function uploadCancelled(file: File): WraithError {
  return new WraithError('ECANCELLED', `The upload of ${file.name} was cancelled.`);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** Bytes per second over the last few seconds, from samples of a growing count. */
class SpeedMeter {
  private samples: { at: number; bytes: number }[] = [];
  sample(bytes: number): number {
    const now = performance.now();
    this.samples.push({ at: now, bytes });
    while (this.samples.length > 2 && now - (this.samples[0]?.at ?? now) > 3000) this.samples.shift();
    const first = this.samples[0];
    if (!first || now - first.at < 250) return 0;
    return ((bytes - first.bytes) * 1000) / (now - first.at);
  }
}

/**
 * How an upload's caller follows it: `begun` hears the host's transfer id and answers with the
 * signal that stops the file; `landed` hears how far the file is on the server.
 */
interface UploadHooks {
  begun: (transferId: string, chunkBytes: number) => AbortSignal;
  landed: (bytes: number) => void;
  /** The folder upload the file is one of: the host's transfer carries it, and names it so when it fails out of sight. */
  batch?: UploadBatch;
}

/** A file to upload and where it goes, relative to the target folder ("dir/sub/name.txt"). */
export interface UploadItem {
  file: File;
  relPath: string;
}

/** Reads a dropped folder tree (webkitGetAsEntry) into files with relative paths, and its folders. */
export async function collectDropped(items: DataTransferItemList): Promise<{ files: UploadItem[]; dirs: string[] }> {
  const files: UploadItem[] = [];
  const dirs: string[] = [];
  const entries: FileSystemEntry[] = [];
  // Items are only readable during the drop event: take them all before the first await.
  for (const item of Array.from(items)) {
    if (item.kind !== 'file') continue;
    const entry = item.webkitGetAsEntry();
    const file = entry ? null : item.getAsFile();
    if (entry) entries.push(entry);
    else if (file) files.push({ file, relPath: file.name });
  }
  const fileOf = (e: FileSystemFileEntry) => new Promise<File>((resolve, reject) => e.file(resolve, reject));
  const readAll = async (dir: FileSystemDirectoryEntry): Promise<FileSystemEntry[]> => {
    const reader = dir.createReader();
    const out: FileSystemEntry[] = [];
    // readEntries returns batches (100 in Chromium) until an empty one.
    for (;;) {
      const batch = await new Promise<FileSystemEntry[]>((resolve, reject) => reader.readEntries(resolve, reject));
      if (!batch.length) return out;
      out.push(...batch);
    }
  };
  const walk = async (entry: FileSystemEntry, rel: string): Promise<void> => {
    if (isFileEntry(entry)) files.push({ file: await fileOf(entry), relPath: rel });
    else if (isDirEntry(entry)) {
      dirs.push(rel);
      for (const child of await readAll(entry)) await walk(child, `${rel}/${child.name}`);
    }
  };
  for (const e of entries) await walk(e, e.name);
  return { files, dirs };
}

function isFileEntry(e: FileSystemEntry): e is FileSystemFileEntry {
  return e.isFile && 'file' in e;
}
function isDirEntry(e: FileSystemEntry): e is FileSystemDirectoryEntry {
  return e.isDirectory && 'createReader' in e;
}

/** Files chosen in an <input type=file> (webkitdirectory gives each its path inside the folder). */
export function fromInput(list: FileList): { files: UploadItem[]; dirs: string[] } {
  const files: UploadItem[] = [];
  const dirs = new Set<string>();
  for (const file of Array.from(list)) {
    const rel = relativePathOf(file);
    files.push({ file, relPath: rel });
    const parts = rel.split('/');
    for (let i = 1; i < parts.length; i++) dirs.add(parts.slice(0, i).join('/'));
  }
  return { files, dirs: [...dirs].sort() };
}

/** Uploads, downloads and the bookkeeping of their rows in the transfers list. */
export function useSftpTransfers(sessionId: () => string | null) {
  const host = useHost();
  const store = useSftpStore();

  function requireSession(): string {
    const id = sessionId();
    if (!id) throw new WraithError('ESESSIONCLOSED', 'The SSH session is not connected.');
    return id;
  }

  /**
   * Sends one browser File to remotePath, the fastest way the page has: a File with a path on the
   * host's disk (the desktop app) is read by the host itself (hostReads); served by `wraith serve`,
   * it goes as one PUT body (putFile); otherwise as slices of the host's chunk size, read one ahead
   * (never the whole file), sent in order with IN_FLIGHT unanswered. Then uploadEnd renames the
   * temp into place. On any failure after uploadBegin the host's transfer is cancelled (its temp
   * removed) before the error goes on.
   */
  async function streamFile(
    file: File,
    remotePath: string,
    overwrite: boolean,
    hooks: UploadHooks,
  ): Promise<void> {
    const sid = requireSession();
    const localPath = window.wraith?.pathForFile?.(file) ?? '';
    if (localPath) return hostReads(file, localPath, remotePath, overwrite, hooks);
    const begin = await host.call('sftp.uploadBegin', { sessionId: sid, remotePath, size: file.size, overwrite, ...(hooks.batch ? { batch: hooks.batch } : {}) });
    const id = begin.transferId;
    const chunk = Math.min(SFTP_CHUNK_MAX_BYTES, begin.chunkBytes || SFTP_CHUNK_MAX_BYTES);
    const signal = hooks.begun(id, chunk);
    try {
      if (host.kind === 'websocket') {
        await putFile(file, id, signal, hooks.landed);
        await endAcrossDrops(sid, id);
        return;
      }
      const pending: Promise<unknown>[] = [];
      // A file of one chunk is read whole: File.slice costs the page about 1 ms a call.
      const read = (offset: number) => (file.size <= chunk ? file.arrayBuffer() : file.slice(offset, Math.min(file.size, offset + chunk)).arrayBuffer());
      // One slice read ahead: the next one comes off the disk while this one is sent. Marked
      // handled at once: a cancel leaves the last one unread.
      let next = read(0);
      next.catch(() => undefined);
      for (let offset = 0; offset < file.size; offset += chunk) {
        if (signal.aborted) throw uploadCancelled(file);
        const data = new Uint8Array(await next);
        if (offset + chunk < file.size) {
          next = read(offset + chunk);
          next.catch(() => undefined);
        }
        // Resolves once this chunk is on the server: its end is what the bar may show. (The reply's
        // `bytes` counts what the host received, up to IN_FLIGHT - 1 chunks more than it wrote.)
        const end = offset + data.byteLength;
        const sent = host.call('sftp.uploadChunk', { transferId: id, offset, data }).then(() => hooks.landed(end));
        // Marked handled at once: after a cancel the chunks still in flight fail, and the loop that
        // would await them has already left. A chunk that fails first still reaches it below.
        sent.catch(() => undefined);
        pending.push(sent);
        if (pending.length >= IN_FLIGHT) await pending.shift();
      }
      await Promise.all(pending);
      if (signal.aborted) throw uploadCancelled(file);
      await host.call('sftp.uploadEnd', { transferId: id });
    } catch (err) {
      // Resolves once the host has removed the temp file, and is harmless when the transfer ended.
      await host.call('sftp.cancel', { transferId: id }).catch(() => undefined);
      throw err;
    }
  }

  /**
   * The desktop app: a File the user picked or dropped is a file on the host's own disk, so the
   * host reads it itself (sftp.upload), as fast as a download, and the page only follows the
   * transfer's progress. Same outcome as a streamed upload: 'exists' unless replacing, a temp file
   * renamed into place, Cancel through the signal.
   */
  async function hostReads(
    file: File,
    localPath: string,
    remotePath: string,
    overwrite: boolean,
    hooks: UploadHooks,
  ): Promise<void> {
    const sessionId = requireSession();
    if (!overwrite) {
      const there = await host.call('sftp.stat', { sessionId, path: remotePath }).catch(() => null);
      // A folder there: the host's own refusal says it cannot be replaced (no question to ask).
      if (there && there.type !== 'dir') throw new WraithError('EBADARGS', `Cannot upload to ${remotePath}: it already exists on the server.`, { reason: 'exists', path: remotePath });
    }
    // Events that come before the call's answer names the transfer are kept, by transfer.
    const early = new Map<string, TransferProgress>();
    let mine: string | null = null;
    let ended: (p: TransferProgress) => void = () => {};
    const end = new Promise<TransferProgress>((resolve) => (ended = resolve));
    const follow = (p: TransferProgress) => {
      hooks.landed(p.bytes);
      if (p.state !== 'running') ended(p);
    };
    const off = store.onProgress((p) => {
      if (mine === null) early.set(p.transferId, p);
      else if (p.transferId === mine) follow(p);
    });
    let unwatch = () => {};
    try {
      const { transferId } = await host.call('sftp.upload', { sessionId, localPath, remotePath, overwrite });
      mine = transferId;
      // Its end may come while the link is down: a reconnect then asks the host for it.
      unwatch = store.watch(transferId);
      const signal = hooks.begun(transferId, 0);
      const stop = () => void host.call('sftp.cancel', { transferId }).catch(() => undefined);
      // A batch cancelled while this file was being started has its signal aborted already.
      if (signal.aborted) stop();
      else signal.addEventListener('abort', stop, { once: true });
      const seen = early.get(transferId);
      if (seen) follow(seen);
      const last = await end;
      if (last.state === 'cancelled') throw uploadCancelled(file);
      if (last.state === 'failed') throw fromSerializedError(last.error ?? { code: 'EIO', message: `The upload of ${file.name} failed.` });
    } finally {
      off();
      unwatch();
    }
  }

  /**
   * sftp.uploadEnd for a file whose bytes went by another way than the link (a PUT), which may
   * have dropped meanwhile: waits for the link to be back, and when it drops with the call out
   * (the host may have ended the upload, or never heard), asks the host where the upload is and
   * ends it if it still runs (a second uploadEnd joins one under way).
   */
  async function endAcrossDrops(sessionId: string, transferId: string): Promise<void> {
    await host.whenOpen(LINK_WAIT_MS);
    try {
      await host.call('sftp.uploadEnd', { transferId });
    } catch (err) {
      const e = asWraithError(err);
      if (e.code !== 'ESESSIONCLOSED' && e.code !== 'EUNAVAILABLE') throw e;
      await host.whenOpen(LINK_WAIT_MS);
      const t = (await host.call('sftp.transfers', { sessionId })).find((x) => x.transferId === transferId);
      if (t?.state === 'done') return;
      if (t?.state !== 'running') throw t?.error ? fromSerializedError(t.error) : e;
      await host.call('sftp.uploadEnd', { transferId });
    }
  }

  /**
   * Served by `wraith serve`, a File goes as the body of one PUT to the upload's link: the
   * browser reads it from disk and sends it without the page, which neither reads nor holds its
   * bytes (the bar is the host's transfer's progress). 500 MB on one machine: 98–116 MB/s against
   * 74–87 in 4 MiB chunks through the page (bench/sftp-browser.ts). A body the network cut off
   * goes on from where the host's copy stands, over a new link, up to PUT_ATTEMPTS times.
   */
  async function putFile(file: File, transferId: string, signal: AbortSignal, landed: (bytes: number) => void): Promise<void> {
    // How far the file is on the server: the host's progress of its transfer (a batch's row counts it).
    const off = store.onProgress((p) => {
      if (p.transferId === transferId) landed(p.bytes);
    });
    try {
      for (let attempt = 1; ; attempt++) {
        // A body cut off (the network dropped) goes on from what the host has, over a new link.
        await host.whenOpen(LINK_WAIT_MS);
        const { url, offset } = await host.call('sftp.uploadLink', { transferId });
        let r: Response;
        try {
          const body = offset > 0 ? file.slice(offset) : file;
          r = await fetch(url, { method: 'PUT', body, signal, headers: { 'content-type': 'application/octet-stream' }, credentials: 'same-origin' });
        } catch (err) {
          if (signal.aborted) throw uploadCancelled(file);
          if (attempt >= PUT_ATTEMPTS) {
            throw new WraithError('EIO', `The upload of ${file.name} was cut off ${attempt} times; last: ${err instanceof Error ? err.message : String(err)}`);
          }
          await new Promise((resolve) => setTimeout(resolve, 1000 * attempt));
          if (signal.aborted) throw uploadCancelled(file);
          continue;
        }
        if (r.ok) return;
        // {code, message} from the host; plain text from the HTTP layer (an expired link, say).
        const text = await r.text().catch(() => '');
        const e = parseJson(text) as { code?: unknown; message?: unknown } | null;
        if (typeof e?.code === 'string' && typeof e.message === 'string') throw fromSerializedError({ code: e.code, message: e.message });
        throw new WraithError('EIO', `The upload of ${file.name} failed: ${text.trim() || `HTTP ${r.status}`}`);
      }
    } finally {
      off();
    }
  }

  /** One file as a row of its own in the transfers list, with Cancel and Retry. */
  async function uploadFile(file: File, remotePath: string, overwrite: boolean): Promise<void> {
    const sid = requireSession();
    /** The row, once the host has given the transfer an id (set in `begun`). */
    const mine: { row: TransferRow | null } = { row: null };
    let id = '';
    try {
      await streamFile(file, remotePath, overwrite, {
        begun: (transferId) => {
          id = transferId;
          mine.row = store.add({ id, sessionId: sid, direction: 'upload', name: file.name, remotePath, bytes: 0, totalBytes: file.size });
          store.setRetry(id, () => uploadFile(file, remotePath, overwrite));
          return store.abortController(id).signal;
        },
        landed: (end) => {
          if (mine.row && mine.row.bytes < end) mine.row.bytes = end;
        },
      });
      store.update(id, { state: 'done', bytes: file.size, bytesPerSecond: 0, etaSeconds: null, filesDone: 1 });
    } catch (err) {
      const e = asWraithError(err);
      // The row ends only now that the host has removed the temp file: "Cancelled — nothing was
      // left behind" must be true when it shows, whoever cancelled.
      if (mine.row?.state === 'running') {
        const cancelled = e.code === 'ECANCELLED';
        store.update(id, { state: cancelled ? 'cancelled' : 'failed', error: cancelled ? null : e.message, errorCode: cancelled ? null : e.code });
      }
      // Once the file has a row, the row tells how it ended: the caller says nothing more.
      throw mine.row ? reportedOnRow(e) : e;
    } finally {
      if (id) store.settle(id);
    }
  }

  /**
   * Several files (a folder, a multi-file pick) as one row of the transfers list, "N of M files":
   * FILES_AT_ONCE at a time, since a small file costs round trips more than bytes; at most one
   * file of a chunk or more among them, so the host holds no more than one large upload's chunks
   * for it. Cancel stops every file (those under way remove their temps first); Retry sends the
   * files that did not arrive. When a file exists, `askReplace` is asked once (while the others
   * wait for the answer) and the answer holds for the rest of the batch. `landed` hears each file
   * that arrived (the panel lists the folder again, now and then). Files of the upload that were
   * never sent (`notSent`: their folder could not be made) count among its files, and a row that
   * sent all the others still says they did not upload, and why: one count for the upload.
   */
  async function uploadBatch(
    items: BatchItem[],
    opts: {
      name: string;
      remotePath: string;
      askReplace: (item: BatchItem) => Promise<boolean>;
      replace?: boolean | null;
      landed?: () => void;
      /** The folders made for this upload (not there before it): they stay if it is cancelled. */
      madeFolders?: string[];
      /** Files of this upload kept back before it began, named as `label`s are, and why. */
      notSent?: { label: string; message: string }[];
    },
  ): Promise<{ failed: { item: BatchItem; message: string }[]; kept: number }> {
    const sid = requireSession();
    const id = `batch-${++batchCount}`;
    const totalBytes = items.reduce((n, it) => n + it.file.size, 0);
    const notSent = opts.notSent ?? [];
    const r = store.add({
      id,
      sessionId: sid,
      direction: 'upload',
      name: opts.name,
      remotePath: opts.remotePath,
      bytes: 0,
      totalBytes,
      batch: true,
      filesTotal: items.length + notSent.length,
      madeFolders: opts.madeFolders ?? [],
    });
    const signal = store.abortController(id).signal;
    let replace: Promise<boolean> | null = opts.replace === undefined || opts.replace === null ? null : Promise.resolve(opts.replace);
    const left: BatchItem[] = [];
    const failed: { item: BatchItem; message: string; code: string }[] = [];
    let kept = 0;
    let doneBytes = 0;
    const under = new Map<BatchItem, number>();
    const speed = new SpeedMeter();
    let filesDone = 0;
    // The row changes at most every SHOW_MS: each change costs the page a frame (style, layout,
    // paint), and a file landing every millisecond or two would take the page's thread from the
    // uploads themselves (400 small files: 4.7 s instead of 5.8, one run each).
    let shown: ReturnType<typeof setTimeout> | null = null;
    const flush = () => {
      shown = null;
      let bytes = doneBytes;
      for (const b of under.values()) bytes += b;
      const bps = speed.sample(bytes);
      Object.assign(r, { bytes, filesDone, bytesPerSecond: bps, etaSeconds: bps > 0 ? (totalBytes - bytes) / bps : null });
    };
    const show = () => {
      shown ??= setTimeout(flush, SHOW_MS);
    };
    /** Each file's place in the batch (1…), for the host to name it by. */
    const place = new Map(items.map((it, k) => [it, k + 1]));
    const send = async (it: BatchItem, overwrite: boolean): Promise<void> => {
      if (!overwrite && it.file.size <= WHOLE_FILE_BYTES) {
        // Too small to be worth stopping halfway: a cancel lets it land whole.
        const data = new Uint8Array(await it.file.arrayBuffer());
        await host.call('sftp.write', { sessionId: sid, path: it.remotePath, data, exclusive: true });
        return;
      }
      under.set(it, 0);
      try {
        await streamFile(it.file, it.remotePath, overwrite, {
          begun: (transferId) => {
            store.claim(transferId, id);
            return signal;
          },
          landed: (end) => {
            under.set(it, end);
            show();
          },
          batch: { name: opts.name, index: place.get(it) ?? 1, total: items.length },
        });
      } finally {
        under.delete(it);
      }
    };
    /**
     * The first write the server refused for lack of room (set as the files run): the files after
     * it are not sent, since each could only be refused the same way, and the row says it once.
     */
    const stop: { full: WraithError | null } = { full: null };
    /** A file that did not arrive: stopped (cancel, a full disk), or refused for a reason of its own. */
    const didNotArrive = (it: BatchItem, e: WraithError) => {
      if (e.code === 'ECANCELLED' || signal.aborted) left.push(it);
      else if (e.details?.reason === 'no_space') {
        stop.full ??= e;
        left.push(it);
      } else failed.push({ item: it, message: e.message, code: e.code });
    };
    const one = async (it: BatchItem): Promise<void> => {
      if (signal.aborted || stop.full) {
        left.push(it);
        return;
      }
      try {
        await send(it, (await replace) === true);
      } catch (err) {
        const e = asWraithError(err);
        if (e.details?.reason !== 'exists' || signal.aborted) {
          didNotArrive(it, e);
          return;
        }
        // The first file that exists asks; the others that exist meanwhile wait for the answer.
        replace ??= opts.askReplace(it).catch(() => false);
        if (!(await replace)) {
          kept++;
          return;
        }
        try {
          await send(it, true);
        } catch (again) {
          didNotArrive(it, asWraithError(again));
          return;
        }
      }
      doneBytes += it.file.size;
      filesDone += 1;
      show();
      opts.landed?.();
    };
    try {
      // A file holds at most IN_FLIGHT chunks in the host's memory, a small one just its size (and
      // a 4 KiB floor, for the work each costs): the batch keeps one large file's worth in flight.
      const weight = (it: BatchItem) => Math.max(4096, Math.min(it.file.size, IN_FLIGHT * SFTP_CHUNK_MAX_BYTES));
      await runPool(items, one, { weight, budget: IN_FLIGHT * SFTP_CHUNK_MAX_BYTES, maxAtOnce: FILES_AT_ONCE });
    } finally {
      store.settle(id);
      if (shown) clearTimeout(shown);
      flush();
    }
    const answer = replace === null ? null : await replace;
    const retryable = [...left, ...failed.map((f) => f.item)];
    // A retry makes no folder: those this upload made are there by then, and the files kept back
    // for one it could not make are not sent again (their row names them again).
    if (retryable.length) store.setRetry(id, () => uploadBatch(retryable, { ...opts, replace: answer, madeFolders: [] }).then(() => undefined));
    // Files kept, else what the host said of a file (an owner that changed).
    const note = (kept ? `${kept} ${kept === 1 ? 'file that was' : 'files that were'} already there ${kept === 1 ? 'was' : 'were'} kept.` : null) ?? r.notice;
    // Files kept back before the upload began (their folder could not be made), then those refused.
    const notUploaded = [...notSent.map((n) => ({ name: n.label, message: n.message })), ...failed.map((f) => ({ name: f.item.label, message: f.message }))];
    const filesTotal = items.length + notSent.length;
    if (signal.aborted) store.update(id, { state: 'cancelled', bytesPerSecond: 0, etaSeconds: null, notice: note });
    else if (stop.full) {
      const stopped = stop.full;
      const others = notUploaded.length ? ` Besides, ${filesNotUploaded(notUploaded, filesTotal)}` : '';
      store.update(id, {
        state: 'failed',
        bytesPerSecond: 0,
        etaSeconds: null,
        notice: note,
        error: `${stopped.message} The upload stopped there: ${filesDone} of ${filesTotal} files had arrived and stay; the other ${left.length} were not sent.${others}`,
        errorCode: stopped.code,
      });
    } else if (notUploaded.length) {
      store.update(id, {
        state: 'failed',
        bytesPerSecond: 0,
        etaSeconds: null,
        notice: note,
        error: filesNotUploaded(notUploaded, filesTotal),
        // Every file cut off by the dropped connection: the batch was (files never sent were not).
        errorCode: !notSent.length && failed.every((f) => f.code === failed[0]?.code) ? (failed[0]?.code ?? null) : 'EIO',
      });
    } else store.update(id, { state: 'done', bytesPerSecond: 0, etaSeconds: null, notice: note });
    return { failed, kept };
  }

  /**
   * Downloads remote files and folders. Served by `wraith serve`, each is a one-time link the host
   * streams as the browser saves it (a folder as a zip of it). In the desktop app the host asks
   * where (a save dialog for one item, a folder for several) and streams to disk. Either way the
   * bytes never gather in the page, and progress and Cancel are the host's transfer. Resolves
   * with the items whose link the host refused (gone meanwhile, a link to nowhere) and why, once
   * the others are under way.
   */
  async function download(items: { path: string; name: string; size: number }[]): Promise<{ name: string; error: WraithError }[]> {
    if (host.kind === 'electron') {
      await saveAs(items);
      return [];
    }
    // One that cannot be downloaded (gone meanwhile, a link to nowhere) does not keep the others.
    const failed: { name: string; error: WraithError }[] = [];
    for (const it of items) {
      await downloadByLink(it.path).catch((err: unknown) => {
        failed.push({ name: it.name, error: asWraithError(err) });
      });
    }
    return failed;
  }

  async function downloadByLink(remotePath: string): Promise<void> {
    const sid = requireSession();
    const link = await host.call('sftp.downloadLink', { sessionId: sid, remotePath });
    // Until its first progress event a folder's row shows the zip's size; then the files' bytes.
    store.add({ id: link.transferId, sessionId: sid, direction: 'download', name: link.name, remotePath, bytes: 0, totalBytes: link.size });
    store.setRetry(link.transferId, () => downloadByLink(remotePath));
    const a = document.createElement('a');
    a.href = link.url;
    a.download = link.name;
    a.click();
  }

  async function saveAs(items: { path: string; name: string; size: number }[]): Promise<void> {
    const sid = requireSession();
    const r = await host.call('sftp.saveAs', { sessionId: sid, remotePaths: items.map((it) => it.path) });
    for (const [k, t] of r.transfers.entries()) {
      const it = items[k];
      // Size 0 (a folder, or a file of /proc that is not empty) says nothing: unknown until the host reports.
      const guess = it && it.size > 0 ? it.size : null;
      store.add({ id: t.transferId, sessionId: sid, direction: 'download', name: it?.name ?? t.remotePath, remotePath: t.remotePath, bytes: 0, totalBytes: guess });
      if (it) store.setRetry(t.transferId, () => saveAs([it]));
    }
  }

  /** A browser gets a folder as one zip; the desktop app saves the folder itself. */
  const foldersAsZip = host.kind !== 'electron';

  return { uploadFile, uploadBatch, download, foldersAsZip };
}
