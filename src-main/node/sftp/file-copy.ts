import { open as openLocal } from 'node:fs/promises';
import type { SFTPWrapper } from 'ssh2';
import { WraithError } from '../../common/errors.js';
import { formatBytes } from '../../common/format-bytes.js';
import { OPEN_LOCAL_FOR_READING } from '../local-files.js';
import type { RemoteFs } from './remote-fs.js';
import { cancelledError, fromLocalError, sftpError } from './sftp-errors.js';
import { writeHeaderLength } from './write-packet.js';

/**
 * Pipelined single-file copies between the SFTP channel and the local disk.
 *
 * Up to `slots.size` workers each own one buffer; a worker takes a request slot, claims the
 * next chunk offset, reads it, writes it, gives the slot back and claims again. The slots belong
 * to the SFTP channel (RequestSlots), so however many files and transfers share a channel, it
 * has a fixed number of requests in flight (what OpenSSH's sftp does with its 64 outstanding
 * requests). Memory is bounded by slots.size × chunkSize per file.
 * Cancellation is checked before every chunk: the in-flight ones finish (or fail) and stop.
 * Callers write to a temp name and rename; these functions never decide about final names.
 */
export interface CopyOptions {
  chunkSize: number;
  /** The channel's request slots, shared by every copy on it. */
  slots: RequestSlots;
  signal: AbortSignal;
  /** Called after each chunk lands at its destination. */
  onBytes: (n: number) => void;
}

/** OpenSSH's limit is 255 KiB per READ/WRITE; ssh2 learns it (limits@openssh.com). Bigger requests are split serially. */
export function serverChunkLimit(sftp: SFTPWrapper, fallback: number): number {
  if ('_maxReadLen' in sftp && typeof sftp._maxReadLen === 'number' && sftp._maxReadLen > 0) return sftp._maxReadLen;
  return fallback;
}

/**
 * At most `size` READ/WRITE requests in flight on one SFTP channel, whatever number of files
 * and transfers share it; waiters are served in arrival order.
 */
export class RequestSlots {
  private free: number;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly size: number) {
    this.free = Math.max(1, size);
  }

  /**
   * Resolves true with a slot (give it back with release()), or false without one when `signal`
   * aborts first: a cancelled transfer must not wait for slots another transfer holds.
   */
  acquire(signal?: AbortSignal): Promise<boolean> {
    if (signal?.aborted) return Promise.resolve(false);
    if (this.free > 0) {
      this.free -= 1;
      return Promise.resolve(true);
    }
    return new Promise<boolean>((resolve) => {
      const grant = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve(true);
      };
      const onAbort = () => {
        const i = this.waiting.indexOf(grant);
        if (i >= 0) this.waiting.splice(i, 1);
        resolve(false);
      };
      this.waiting.push(grant);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** A slot now if one is free and nobody is waiting for one; never waits. */
  tryAcquire(): boolean {
    if (this.free <= 0 || this.waiting.length > 0) return false;
    this.free -= 1;
    return true;
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.free += 1;
  }
}

function throwIfAborted(signal: AbortSignal, what: string): void {
  if (signal.aborted) throw cancelledError(what);
}

/**
 * Runs workers until all chunks of [0, size) are claimed; the first failure stops the rest. Each
 * worker's buffer has `headroom` bytes in front of a chunk, for a request header (uploads).
 */
async function pipeline(
  size: number,
  opts: CopyOptions,
  what: string,
  work: (buf: Buffer, offset: number, length: number) => Promise<number>,
  headroom = 0,
): Promise<number> {
  if (size === 0) return copyToEnd(opts, what, work, headroom);
  let next = 0;
  let failed = false;
  let eofAt = size;
  const workers = Math.max(1, Math.min(opts.slots.size, Math.ceil(size / opts.chunkSize)));
  const worker = async () => {
    let buf: Buffer | null = null;
    while (!failed) {
      throwIfAborted(opts.signal, what);
      if (next >= eofAt) return;
      // Without a slot only when cancelled while waiting for one.
      if (!(await opts.slots.acquire(opts.signal))) throwIfAborted(opts.signal, what);
      try {
        // Waiting for a slot took time: the copy may have been cancelled, failed or finished meanwhile.
        throwIfAborted(opts.signal, what);
        if (failed || next >= eofAt) return;
        const offset = next;
        const length = Math.min(opts.chunkSize, eofAt - offset);
        next += length;
        buf ??= Buffer.allocUnsafe(headroom + opts.chunkSize);
        const n = await work(buf, offset, length).catch((err: unknown) => {
          failed = true;
          throw err;
        });
        if (n < length) eofAt = Math.min(eofAt, offset + n); // the source shrank while we copied
        if (n > 0) opts.onBytes(n);
      } finally {
        opts.slots.release();
      }
    }
  };
  const results = await Promise.allSettled(Array.from({ length: workers }, worker));
  // A cancel that lands while a chunk fails is still a cancel.
  throwIfAborted(opts.signal, what);
  const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failure) throw failure.reason;
  return eofAt;
}

/**
 * Files of size 0 that never end, and whose reading takes what it reads from their owner: the
 * kernel's log (the system logger reads /proc/kmsg) and tracefs's pipes. Read to their end they
 * would wait for new messages for ever, and the SFTP server, which answers one request at a time,
 * would answer nothing else on that session meanwhile.
 */
const ENDLESS_FILE = /^\/proc\/kmsg$|\/trace_pipe(_raw)?$/;

/** Throws, before anything is opened, for a file that reading to its end would never finish (ENDLESS_FILE). */
export function refuseEndless(path: string): void {
  if (!ENDLESS_FILE.test(path)) return;
  throw sftpError(
    'EBADARGS',
    `${path} never ends: reading it waits for new kernel messages and takes them from whoever else reads them (the system log). Use \`dmesg\` or \`journalctl -k\` in the terminal instead.`,
    'not_a_file',
    { path },
  );
}

/**
 * A file that says it is empty is copied one chunk after another until a read comes back short:
 * the kernel's /proc (and debugfs, and some of /sys) report size 0 for files that are not empty,
 * and OpenSSH's sftp and scp copy them whole. A truly empty file costs one read that finds the end.
 */
async function copyToEnd(
  opts: CopyOptions,
  what: string,
  work: (buf: Buffer, offset: number, length: number) => Promise<number>,
  headroom: number,
): Promise<number> {
  const buf = Buffer.allocUnsafe(headroom + opts.chunkSize);
  let at = 0;
  for (;;) {
    if (!(await opts.slots.acquire(opts.signal))) throwIfAborted(opts.signal, what);
    let n: number;
    try {
      throwIfAborted(opts.signal, what);
      n = await work(buf, at, opts.chunkSize);
    } finally {
      opts.slots.release();
    }
    if (n > 0) opts.onBytes(n);
    at += n;
    if (n < opts.chunkSize) return at;
  }
}

/** Remote file → new local file `localTemp` (created exclusively). Returns the bytes copied. */
export async function downloadFile(
  rfs: RemoteFs,
  remotePath: string,
  localTemp: string,
  mode: number,
  opts: CopyOptions,
): Promise<number> {
  throwIfAborted(opts.signal, `Download of ${remotePath}`);
  refuseEndless(remotePath);
  const handle = await rfs.open(remotePath, 'r');
  try {
    const size = (await rfs.fstat(handle, remotePath)).size ?? 0;
    const local = await openLocal(localTemp, 'wx', mode & 0o777).catch((err: unknown) => {
      throw fromLocalError(err, 'create', localTemp);
    });
    try {
      const copied = await pipeline(size, opts, `Download of ${remotePath}`, async (buf, offset, length) => {
        const got = await rfs.readFully(handle, buf, 0, length, offset, remotePath);
        let put = 0;
        while (put < got) {
          const { bytesWritten } = await local.write(buf, put, got - put, offset + put).catch((err: unknown) => {
            throw fromLocalError(err, 'write', localTemp);
          });
          put += bytesWritten;
        }
        return got;
      });
      if (copied < size) await local.truncate(copied);
      await local.close().catch((err: unknown) => {
        throw fromLocalError(err, 'write', localTemp);
      });
      return copied;
    } catch (err) {
      await local.close().catch(() => undefined);
      throw err;
    }
  } finally {
    await rfs.close(handle, remotePath).catch(() => undefined);
  }
}

/**
 * Local file → new remote file `remoteTemp` (created exclusively), which is `dest` itself or the
 * temp that becomes it (failures to create a temp are said of `dest`). `ready` runs once it is
 * created, before any byte is sent, and may refuse it. Returns the bytes copied.
 */
export async function uploadFile(
  rfs: RemoteFs,
  localPath: string,
  remoteTemp: string,
  dest: string,
  mode: number,
  opts: CopyOptions,
  ready?: () => Promise<unknown>,
): Promise<number> {
  throwIfAborted(opts.signal, `Upload of ${localPath}`);
  const local = await openLocal(localPath, OPEN_LOCAL_FOR_READING).catch((err: unknown) => {
    throw fromLocalError(err, 'open', localPath);
  });
  try {
    // The open file is what is sent: one swapped for a FIFO or a device since the walk would never end.
    const st = await local.stat();
    if (!st.isFile()) throw sftpError('EBADARGS', `Cannot upload ${localPath}: it is not a regular file.`, 'not_a_file', { path: localPath });
    const size = st.size;
    const attrs = { mode: mode & 0o777 };
    const handle = remoteTemp === dest ? await rfs.open(dest, 'wx', attrs) : await rfs.createTemp(remoteTemp, dest, attrs);
    // File data is read in behind room for the WRITE request's header, which is then sent as it
    // stands (one copy of every byte fewer: write-packet.ts).
    const header = writeHeaderLength(handle);
    try {
      await ready?.();
      const copied = await pipeline(
        size,
        opts,
        `Upload of ${localPath}`,
        async (buf, offset, length) => {
          let got = 0;
          while (got < length) {
            const { bytesRead } = await local.read(buf, header + got, length - got, offset + got).catch((err: unknown) => {
              throw fromLocalError(err, 'read', localPath);
            });
            if (bytesRead === 0) break;
            got += bytesRead;
          }
          if (got > 0) await rfs.writeWithHeadroom(handle, buf, got, offset, remoteTemp);
          return got;
        },
        header,
      );
      // The server may report a failed flush only here.
      await rfs.close(handle, remoteTemp);
      return copied;
    } catch (err) {
      await rfs.close(handle, remoteTemp).catch(() => undefined);
      throw err;
    }
  } finally {
    await local.close().catch(() => undefined);
  }
}

/** Where a streamed download goes: an HTTP response, or any Writable with back pressure. */
export interface ByteSink {
  /** False when the sink's buffer is full: wait for 'drain' before writing more. */
  write(chunk: Uint8Array): boolean;
  end(): unknown;
  destroy(): unknown;
  once(event: 'drain' | 'close' | 'finish', listener: () => void): unknown;
  off(event: 'drain' | 'close' | 'finish', listener: () => void): unknown;
  readonly destroyed: boolean;
}

/**
 * Resolves once `sink` has flushed everything (its 'finish'); rejects with ECANCELLED when it closes
 * first (the browser went away). Call before ending the sink, or the finish may already be past.
 */
export function sinkFinished(sink: ByteSink, what: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    sink.once('finish', resolve);
    sink.once('close', () => reject(cancelledError(what)));
  });
}

/**
 * `sink` held to the length a download link's Content-Length announced (`size`). A body that
 * would run past it, or ends short of it, is a fault of ours (every body is sized before its
 * first byte), and Node's HTTP would end such a response as if it were whole: the page's
 * transfer said "Downloaded" while the browser threw away a file with bytes missing. Here the
 * response is cut off instead, the browser fails the download, and `broken` says why, for the
 * transfer to fail with.
 */
export function exactLengthSink(sink: ByteSink, size: number, name: string): { sink: ByteSink; broken: () => WraithError | null } {
  let written = 0;
  let broken: WraithError | null = null;
  const cut = (sent: string): void => {
    broken ??= new WraithError(
      'EIO',
      `Wraith had ${sent} the ${formatBytes(size)} (${size} bytes) it announced for ${name}, so it cut the download off rather than let the browser keep a damaged file. This is a fault in Wraith, not on the server; please report it.`,
    );
    sink.destroy();
  };
  return {
    broken: () => broken,
    sink: {
      write(chunk) {
        if (broken) return false;
        if (written + chunk.byteLength > size) {
          cut('more to send than');
          return false;
        }
        written += chunk.byteLength;
        return sink.write(chunk);
      },
      end() {
        if (broken) return undefined;
        if (written < size) {
          cut(`sent ${written} bytes of`);
          return undefined;
        }
        return sink.end();
      },
      destroy: () => sink.destroy(),
      once: (event, listener) => sink.once(event, listener),
      off: (event, listener) => sink.off(event, listener),
      get destroyed() {
        return sink.destroyed;
      },
    },
  };
}

/**
 * Remote file → `sink`, in order: the first `length` bytes of an open handle. Reads run ahead up to
 * the channel's request slots (the same budget as every other copy on it), and the sink's back
 * pressure holds them, so memory stays at slots × chunkSize however large the file. Resolves with
 * the bytes written; throws ECANCELLED on abort (and when the sink goes away), or the read error.
 * A file that shrank while being read ends early: the caller sees fewer bytes than `length`.
 */
export async function streamRemoteFile(
  rfs: RemoteFs,
  handle: Buffer,
  remotePath: string,
  length: number,
  sink: ByteSink,
  opts: CopyOptions,
): Promise<number> {
  const what = `Download of ${remotePath}`;
  // Chunks in offset order; each holds its slot until its read completes.
  const ahead: { size: number; data: Promise<Buffer> }[] = [];
  let claimed = 0;
  let written = 0;
  let eof = false;
  const readChunk = async (offset: number, size: number): Promise<Buffer> => {
    try {
      const buf = Buffer.allocUnsafe(size);
      const got = await rfs.readFully(handle, buf, 0, size, offset, remotePath);
      return got < size ? buf.subarray(0, got) : buf;
    } finally {
      opts.slots.release();
    }
  };
  const waitFor = (event: 'drain', signal: AbortSignal) =>
    new Promise<void>((resolve) => {
      const done = () => {
        sink.off(event, done);
        sink.off('close', done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      sink.once(event, done);
      sink.once('close', done);
      signal.addEventListener('abort', done, { once: true });
    });
  try {
    while (written < length && !eof) {
      // Keep reads running ahead while slots are free; wait for a slot only with nothing ahead
      // (other copies on the channel may hold them all), never while there is data to write.
      while (claimed < length && ahead.length < opts.slots.size) {
        if (ahead.length > 0) {
          if (!opts.slots.tryAcquire()) break;
        } else if (!(await opts.slots.acquire(opts.signal))) {
          throwIfAborted(opts.signal, what);
        }
        const size = Math.min(opts.chunkSize, length - claimed);
        const data = readChunk(claimed, size);
        data.catch(() => undefined); // awaited below, in order; a later chunk may fail first
        ahead.push({ size, data });
        claimed += size;
      }
      const head = ahead.shift();
      if (!head) break;
      const chunk = await head.data;
      throwIfAborted(opts.signal, what);
      if (sink.destroyed) throw cancelledError(what);
      if (chunk.length > 0 && !sink.write(chunk)) await waitFor('drain', opts.signal);
      written += chunk.length;
      if (chunk.length > 0) opts.onBytes(chunk.length);
      if (chunk.length < head.size) eof = true;
      throwIfAborted(opts.signal, what);
      if (sink.destroyed) throw cancelledError(what);
    }
    return written;
  } finally {
    // Reads still in flight finish on their own and give their slots back.
    await Promise.allSettled(ahead.map((a) => a.data));
  }
}
