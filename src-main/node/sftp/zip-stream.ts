import { createRequire } from 'node:module';
import { posix } from 'node:path';
import { PassThrough } from 'node:stream';
import { crc32 } from 'node:zlib';
import { type EndOptions, ZipFile } from 'yazl';
import { WraithError } from '../../common/errors.js';
import { type ByteSink, type CopyOptions, sinkFinished, streamRemoteFile } from './file-copy.js';
import type { RemoteFs } from './remote-fs.js';
import { type LeftOut, leftOutList } from './left-out.js';
import type { Tree } from './tree.js';

/**
 * yazl checksums every byte with buffer-crc32, a table loop in JavaScript: 380 MiB/s here, which
 * made a folder's zip cost the host 4.1–4.5 CPU s/GB against 1.5–2.2 for the same bytes as one
 * file. Node's zlib.crc32 computes the same CRC natively (3.2 GiB/s). yazl calls
 * `unsigned(chunk, previous)` on the CommonJS module object it required, so that one function is
 * replaced there, with the same contract (previous as a number or a 4-byte big-endian Buffer).
 */
const bufferCrc32 = createRequire(createRequire(import.meta.url).resolve('yazl'))('buffer-crc32') as {
  unsigned: (buf: Buffer | string, previous?: number | Buffer) => number;
};
bufferCrc32.unsigned = (buf, previous) => {
  const prev = Buffer.isBuffer(previous) ? previous.readUInt32BE(0) : (previous ?? 0);
  return crc32(buf, prev) >>> 0;
};

/** More entries than this in one zip is a mistake (a home folder with a node_modules), not a download. */
export const ZIP_MAX_ENTRIES = 200_000;

export interface ZipOptions extends CopyOptions {
  onFileDone: () => void;
  /** Items of the folder left out (leaveOutUnreadable), listed in a text file of the zip named `listName`. */
  leftOut?: { items: LeftOut[]; listName: string };
}

export interface RemoteFolderZip {
  /** Exact size of the zip in bytes, known before the first byte (entries are stored, not deflated). */
  size: number;
  /**
   * Streams the zip into `sink`, one file after another, each read ahead within the channel's
   * request slots and held back by the sink's back pressure. Resolves once the sink has finished;
   * rejects on the first read error, a file that shrank, or a cancel (the caller destroys the sink).
   */
  pump(sink: ByteSink): Promise<void>;
}

/**
 * A remote folder (walked beforehand into `tree`) as a zip for a browser download. Stored rather
 * than deflated: the host's CPU goes to SSH, not zlib, and the size is exact, so the response has
 * a Content-Length and the browser a progress bar and a total. ZIP64 end records always, and ZIP64
 * entries where sizes need them (yazl).
 */
export function zipRemoteFolder(rfs: RemoteFs, root: string, tree: Tree, opts: ZipOptions): RemoteFolderZip {
  const zip = new ZipFile();
  // No file is opened before the browser fetches the link: yazl asks for the first one at once.
  let begin: () => void = () => undefined;
  const started = new Promise<void>((resolve) => (begin = resolve));
  let fail: (err: unknown) => void = () => undefined;
  const failed = new Promise<never>((_resolve, reject) => (fail = reject));
  failed.catch(() => undefined);

  for (const rel of tree.dirs) zip.addEmptyDirectory(rel);
  for (const f of tree.files) {
    const path = posix.join(root, f.rel);
    const mtime = f.mtime !== undefined ? new Date(f.mtime * 1000) : new Date();
    zip.addReadStreamLazy(f.rel, { size: f.size, compress: false, mode: 0o100000 | (f.mode & 0o7777), mtime }, (cb) => {
      void started
        .then(async () => {
          const data = new PassThrough({ highWaterMark: opts.chunkSize });
          cb(null, data);
          const handle = await rfs.open(path, 'r');
          try {
            const sent = await streamRemoteFile(rfs, handle, path, f.size, data, opts);
            if (sent < f.size) throw new WraithError('EIO', `${path} shrank while it was zipped (${sent} of ${f.size} bytes); download the folder again.`);
          } finally {
            await rfs.close(handle, path).catch(() => undefined);
          }
          data.end();
          opts.onFileDone();
        })
        .catch(fail);
    });
  }
  if (opts.leftOut?.items.length) {
    zip.addBuffer(leftOutList(root, opts.leftOut.items, 'zip'), opts.leftOut.listName, { compress: false, mode: 0o100644, mtime: new Date() });
  }
  let size = -1;
  // @types/yazl types this callback as () => void; yazl passes it the total size (its README, "end()").
  const end = zip.end.bind(zip) as (options: EndOptions, calculatedTotalSizeCallback: (total: number) => void) => void;
  // ZIP64 end records always: yazl 3.3.1 counts them in the size it predicts once the central
  // directory reaches 64 KiB (about 1,100 files), but writes them only from 4 GiB, so a folder of
  // 1,200 files came 76 bytes short of its Content-Length and the browser threw the download away.
  // Forced, prediction and output agree at every size. Info-ZIP's unzip, Python's zipfile and yauzl
  // read them (tests/integration/sftp-download-link.test.ts); yazl wrote them for large zips already.
  end({ forceZip64Format: true, comment: '' }, (total) => (size = total));
  zip.on('error', fail);
  if (size < 0) throw new WraithError('EIO', `Could not size the zip of ${root}.`); // stored entries with sizes always have one

  return {
    size,
    pump(sink) {
      begin();
      const out = zip.outputStream;
      const done = sinkFinished(sink, `Download of ${root}`);
      out.on('data', (chunk: Buffer) => {
        if (!sink.write(chunk)) {
          out.pause();
          sink.once('drain', () => out.resume());
        }
      });
      out.once('end', () => sink.end());
      return Promise.race([done, failed]).finally(() => out.removeAllListeners('data'));
    },
  };
}
