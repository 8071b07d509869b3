import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { type LeftOutItem, SftpErrorReason, type TransferInfo, type TransferProgress, type UploadBatch } from '../../common/contract/sftp.js';
import { toSerializedError } from '../../common/errors.js';
import type { LeftOut } from './left-out.js';

type Direction = TransferProgress['direction'];
type State = TransferProgress['state'];

/** How far back the speed looks: long enough to smooth bursts, short enough to follow changes. */
const SPEED_WINDOW_MS = 3000;

/**
 * The abort switch of a transfer. Each of its copy workers waiting for a request slot listens on
 * it (RequestSlots.acquire): up to slots × files at once, well past Node's warning at 11.
 */
function transferController(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}

/**
 * One upload or download: its counters, its abort switch and its speed meter. The service
 * owns the work; this object is what `sftp.transfers` lists and `transfer.progress` reports.
 */
export class Transfer {
  readonly id = randomUUID();
  readonly controller = transferController();
  readonly startedAt = new Date();
  endedAt: Date | null = null;
  bytes = 0;
  totalBytes: number | null = null;
  filesDone = 0;
  filesTotal: number | null = null;
  state: State = 'running';
  error: TransferProgress['error'] = null;
  /** The page's folder upload that this streamed upload is one file of (sftp.uploadBegin's `batch`). */
  batch: UploadBatch | null = null;
  /**
   * The partial copies (temps) its cleanup could not remove, the connection being gone (a server
   * that stopped answering): they stay on the server until the next connection to it removes them.
   */
  readonly leftBehind: string[] = [];
  /** Replaced files whose owner or group the server would not let the new file keep. */
  private readonly ownershipChanged: { path: string; was: string; now: string }[] = [];
  /** Items of a folder download or upload that could not be read and were left out, and where the download lists them (an upload lists them nowhere). */
  private omitted: { items: LeftOut[]; listedIn: string | null } | null = null;
  /** How many times `omitted` changed, and how many of those the last progress event told of. */
  private omittedChanges = 0;
  private omittedReported = 0;
  /** Settles when the work and its cleanup are over (never rejects). */
  done: Promise<void> = Promise.resolve();
  /** Bytes at the last progress event, to skip events when nothing moved. */
  reportedBytes = -1;
  reportedAt = 0;
  private readonly samples: { t: number; bytes: number }[] = [];

  constructor(
    readonly sessionId: string,
    readonly direction: Direction,
    /** Set to 'folder' once the source turns out to be one. */
    public kind: 'file' | 'folder',
    readonly localPath: string | null,
    readonly remotePath: string,
  ) {}

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get running(): boolean {
    return this.state === 'running';
  }

  addBytes(n: number): void {
    this.bytes += n;
  }

  /** Ends the transfer once; later calls (a cancel racing a failure) change nothing. */
  finish(state: Exclude<State, 'running'>, err?: unknown): void {
    if (!this.running) return;
    this.state = state;
    this.endedAt = new Date();
    if (state === 'failed' && err !== undefined) {
      const e = toSerializedError(err);
      const reason = SftpErrorReason.safeParse(e.details?.reason);
      this.error = { code: e.code, message: e.message, ...(reason.success ? { reason: reason.data } : {}) };
    } else if (state === 'cancelled') {
      this.error = { code: 'ECANCELLED', message: 'The transfer was cancelled.' };
    }
  }

  private bytesPerSecond(now: number): number {
    this.samples.push({ t: now, bytes: this.bytes });
    while (this.samples.length > 2 && (this.samples[0]?.t ?? now) < now - SPEED_WINDOW_MS) this.samples.shift();
    const first = this.samples[0];
    if (!first || now - first.t < 50) {
      const elapsed = (now - this.startedAt.getTime()) / 1000;
      return elapsed > 0 ? this.bytes / elapsed : 0;
    }
    return (this.bytes - first.bytes) / ((now - first.t) / 1000);
  }

  /** Where the transfer is; `withLeftOut`: with the whole list of what it left out, if it left anything out. */
  progress(now = Date.now(), withLeftOut = true): TransferProgress {
    const bps = this.running ? this.bytesPerSecond(now) : this.averageSpeed();
    const left = this.totalBytes === null ? null : Math.max(0, this.totalBytes - this.bytes);
    return {
      transferId: this.id,
      sessionId: this.sessionId,
      direction: this.direction,
      bytes: this.bytes,
      totalBytes: this.totalBytes,
      bytesPerSecond: bps,
      etaSeconds: !this.running ? 0 : left === null || bps <= 0 ? null : left / bps,
      filesDone: this.filesDone,
      filesTotal: this.filesTotal,
      state: this.state,
      error: this.error,
      notice: this.notice(),
      ...(this.leftBehind.length ? { leftBehind: [...this.leftBehind] } : {}),
      ...(withLeftOut && this.omitted ? { leftOut: this.omitted.items.map((i): LeftOutItem => ({ path: i.rel, folder: i.folder, reason: i.reason })) } : {}),
    };
  }

  /**
   * The transfer.progress event: progress(), with the list of what was left out only when it
   * changed since the last event (the notice names the first few items every time).
   */
  progressEvent(now = Date.now()): TransferProgress {
    const changed = this.omittedReported !== this.omittedChanges;
    this.omittedReported = this.omittedChanges;
    return this.progress(now, changed);
  }

  /** Records that the file now at `path` replaced one the server would not let it fully stand in for. */
  ownershipNotKept(path: string, was: { uid: number; gid: number }, now: { uid: number; gid: number }): void {
    this.ownershipChanged.push({ path, was: `${was.uid}:${was.gid}`, now: `${now.uid}:${now.gid}` });
  }

  /**
   * Records the items of a folder download or upload that could not be read (permission denied,
   * gone meanwhile, nothing to copy) and were left out, and the name of the file in the download
   * that lists them (null for an upload, which adds nothing to the server's folder).
   */
  leftOut(items: LeftOut[], listedIn: string | null): void {
    this.omitted = items.length ? { items, listedIn } : null;
    this.omittedChanges++;
  }

  private notice(): string | null {
    if (this.omitted) return this.omittedNotice(this.omitted);
    const [first] = this.ownershipChanged;
    if (!first) return null;
    const why = 'only root may give a file to another user, so it now has yours';
    if (this.ownershipChanged.length === 1) {
      return `${first.path} had owner:group ${first.was} and now has ${first.now}: ${why}.`;
    }
    return `${this.ownershipChanged.length} replaced files did not keep their owner or group (${first.path} had ${first.was}, now ${first.now}): ${why}.`;
  }

  /** "2 items could not be read and were left out: secret.txt, locked/. The zip lists them in WRAITH-NOT-INCLUDED.txt." */
  private omittedNotice(o: { items: LeftOut[]; listedIn: string | null }): string {
    const n = o.items.length;
    const shown = o.items.slice(0, 5).map((i) => (i.folder ? `${i.rel}/` : i.rel));
    const names = shown.join(', ') + (n > shown.length ? ` and ${n - shown.length} more` : '');
    const what = this.localPath === null ? 'The zip' : 'The folder';
    const where = o.listedIn ? ` ${what} lists ${n === 1 ? 'it' : 'them'}, with the server's reasons, in ${o.listedIn}.` : '';
    return `${n} ${n === 1 ? 'item' : 'items'} could not be read and ${n === 1 ? 'was' : 'were'} left out: ${names}.${where}`;
  }

  private averageSpeed(): number {
    const ms = (this.endedAt ?? new Date()).getTime() - this.startedAt.getTime();
    return ms > 0 ? this.bytes / (ms / 1000) : 0;
  }

  info(): TransferInfo {
    return {
      ...this.progress(),
      localPath: this.localPath,
      remotePath: this.remotePath,
      kind: this.kind,
      batch: this.batch,
      startedAt: this.startedAt.toISOString(),
      endedAt: this.endedAt?.toISOString() ?? null,
    };
  }
}
