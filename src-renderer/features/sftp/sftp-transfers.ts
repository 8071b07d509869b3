import { SFTP_CHUNK_MAX_BYTES } from '@common/contract/sftp.js';
import { WraithError } from '@common/errors.js';
import { asWraithError } from '../../composables/errors.js';
import { useHost } from '../../transport/index.js';
import { type TransferRow, useSftpStore } from './sftp-store.js';

/*
 * Bytes per sftp.uploadChunk: what the host suggests in uploadBegin, at most the contract's
 * SFTP_CHUNK_MAX_BYTES. Each chunk is a round trip and a read of the File, so fewer, larger ones go
 * faster: 500 MB through `wraith serve` went at 76 MB/s in 1 MiB chunks, two in flight, and at
 * 138 MB/s in 4 MiB ones, four in flight (bench/sftp-browser.ts).
 */
/**
 * Chunks sent and not yet written. The host writes them in order through the channel's request
 * slots, so at most this many chunks (16 MiB) wait in its memory per upload.
 */
const IN_FLIGHT = 4;

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
    const rel = file.webkitRelativePath || file.name;
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
   * Streams one browser File to remotePath: slices of the host's chunk size, read one ahead
   * (never the whole file), sent in order with IN_FLIGHT unanswered, then uploadEnd renames the
   * temp into place.
   */
  async function uploadFile(file: File, remotePath: string, overwrite: boolean): Promise<void> {
    const sid = requireSession();
    const begin = await host.call('sftp.uploadBegin', { sessionId: sid, remotePath, size: file.size, overwrite });
    const id = begin.transferId;
    const chunk = Math.min(SFTP_CHUNK_MAX_BYTES, begin.chunkBytes || SFTP_CHUNK_MAX_BYTES);
    const r: TransferRow = store.add({ id, sessionId: sid, direction: 'upload', name: file.name, remotePath, bytes: 0, totalBytes: file.size });
    store.setRetry(id, () => uploadFile(file, remotePath, overwrite));
    const abort = store.abortController(id);
    try {
      const pending: Promise<unknown>[] = [];
      const read = (offset: number) => file.slice(offset, Math.min(file.size, offset + chunk)).arrayBuffer();
      // One slice read ahead: the next one comes off the disk while this one is sent. Marked
      // handled at once: a cancel leaves the last one unread.
      let next = read(0);
      next.catch(() => undefined);
      for (let offset = 0; offset < file.size; offset += chunk) {
        if (abort.signal.aborted) throw new WraithError('ECANCELLED', `The upload of ${file.name} was cancelled.`);
        const data = new Uint8Array(await next);
        if (offset + chunk < file.size) {
          next = read(offset + chunk);
          next.catch(() => undefined);
        }
        // Resolves once this chunk is on the server: its end is what the bar may show. (The reply's
        // `bytes` counts what the host received, up to IN_FLIGHT - 1 chunks more than it wrote.)
        const end = offset + data.byteLength;
        const sent = host.call('sftp.uploadChunk', { transferId: id, offset, data }).then(() => {
          if (r.bytes < end) r.bytes = end;
        });
        // Marked handled at once: after a cancel the chunks still in flight fail, and the loop that
        // would await them has already left. A chunk that fails first still reaches it below.
        sent.catch(() => undefined);
        pending.push(sent);
        if (pending.length >= IN_FLIGHT) await pending.shift();
      }
      await Promise.all(pending);
      await host.call('sftp.uploadEnd', { transferId: id });
      store.update(id, { state: 'done', bytes: file.size, bytesPerSecond: 0, etaSeconds: null, filesDone: 1 });
    } catch (err) {
      const e = asWraithError(err);
      if (r.state === 'running') {
        // The row ends only once the host has removed the temp file (sftp.cancel resolves then, and
        // is harmless when the transfer already ended): "Cancelled — nothing was left behind" must
        // be true when it shows, whoever cancelled.
        await host.call('sftp.cancel', { transferId: id }).catch(() => undefined);
        if (r.state === 'running') store.update(id, { state: e.code === 'ECANCELLED' ? 'cancelled' : 'failed', error: e.code === 'ECANCELLED' ? null : e.message });
      }
      throw e;
    } finally {
      store.settle(id);
    }
  }

  /**
   * Downloads remote files and folders. Served by `wraith serve`, each is a one-time link the host
   * streams as the browser saves it (a folder as a zip of it). In the desktop app the host asks
   * where (a save dialog for one item, a folder for several) and streams to disk. Either way the
   * bytes never gather in the page, and progress and Cancel are the host's transfer.
   */
  async function download(items: { path: string; name: string; size: number }[]): Promise<void> {
    if (host.kind === 'electron') return saveAs(items);
    for (const it of items) await downloadByLink(it.path);
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
      store.add({ id: t.transferId, sessionId: sid, direction: 'download', name: it?.name ?? t.remotePath, remotePath: t.remotePath, bytes: 0, totalBytes: it?.size ?? 0 });
      if (it) store.setRetry(t.transferId, () => saveAs([it]));
    }
  }

  /** A browser gets a folder as one zip; the desktop app saves the folder itself. */
  const foldersAsZip = host.kind !== 'electron';

  return { uploadFile, download, foldersAsZip };
}
