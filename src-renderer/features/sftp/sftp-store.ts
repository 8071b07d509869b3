import { defineStore } from 'pinia';
import { computed, ref } from 'vue';
import type { LeftOutItem, TransferInfo, TransferProgress } from '@common/contract/sftp.js';
import { confirmDialog, toast } from '../../composables/dialogs.js';
import { asWraithError } from '../../composables/errors.js';
import { useSessionsStore } from '../../stores/sessions.js';
import { useSettingsStore } from '../../stores/settings.js';
import { useHost } from '../../transport/index.js';

export type TransferState = TransferProgress['state'];

/** One row of the transfers list: a transfer the host runs (uploads, downloads), as the page last heard of it. */
export interface TransferRow {
  id: string;
  sessionId: string;
  direction: 'upload' | 'download';
  name: string;
  remotePath: string;
  bytes: number;
  totalBytes: number | null;
  bytesPerSecond: number;
  etaSeconds: number | null;
  filesDone: number;
  filesTotal: number | null;
  state: TransferState;
  error: string | null;
  /** The error's stable code (ESESSIONCLOSED: the SSH connection dropped), with `error`. */
  errorCode: string | null;
  /**
   * It failed out of sight and nothing said so (the tab's own "Disconnected" banner told of the
   * dropped connection): the Files button marks it until the transfers list is seen.
   */
  unseen: boolean;
  /** What the host wants the user to know about a transfer that went through (sftp TransferProgress.notice). */
  notice: string | null;
  /** All a folder transfer left out, with why (the notice names the first few): TransferProgress.leftOut. */
  leftOut: LeftOutItem[];
  /** Partial copies the host could not remove as it ended (the connection was gone): TransferProgress.leftBehind. */
  leftBehind: string[];
  /** Whether this page can start the transfer again (it started it, and kept what it needs). */
  retryable: boolean;
  /**
   * Several files the page uploads as one row (uploadBatch): its id is the page's own, the
   * host's transfers of its files report to it (claim), and its runner ends it.
   */
  batch: boolean;
  /**
   * A batch's folders that were not on the server before it (the top ones: "site" of a folder
   * upload), made for it: they stay if it is cancelled, and its row says so.
   */
  madeFolders: string[];
}

const KEEP_FINISHED = 30;

/**
 * Failures a transfer's row already shows: whoever awaited the transfer says nothing more (one
 * report per failure, not a row and a toast over it).
 */
const onRow = new WeakSet<object>();

/** Marks `err` as told by a row of the transfers list. */
export function reportedOnRow<E extends object>(err: E): E {
  onRow.add(err);
  return err;
}

/** Whether a row of the transfers list already tells of `err`. */
export function isReportedOnRow(err: unknown): boolean {
  return typeof err === 'object' && err !== null && onRow.has(err);
}

/**
 * The SFTP side panels: which SSH tabs show theirs, where each was browsing, how wide the panel
 * is, and every transfer (reported by transfer.progress; uploads from the page count their chunks).
 */
export const useSftpStore = defineStore('sftp', () => {
  const host = useHost();
  const settings = useSettingsStore();
  const open = ref<Record<string, boolean>>({});
  const cwd = ref<Record<string, string>>({});
  /** Whether the panels list dot-files: kept in settings (sftp.showHidden), across hide/show and reloads. */
  const showHidden = computed({
    get: () => settings.values['sftp.showHidden'],
    set: (on: boolean) => void settings.set({ 'sftp.showHidden': on }),
  });
  /** Tabs whose panel follows the terminal's folder (follow-terminal.ts). */
  const following = ref<Record<string, boolean>>({});
  /** The panels' width: kept in settings (sftp.panelWidth), so a reload or another tab keeps it. */
  const width = computed(() => settings.values['sftp.panelWidth']);
  const transfers = ref<TransferRow[]>([]);
  /** Cancels for uploads the page streams (it stops sending); the host's side stops through sftp.cancel. */
  const aborts = new Map<string, AbortController>();
  /** How to start a transfer this page began again (the File, the paths); by row id. */
  const retries = new Map<string, () => Promise<void>>();

  /** The tab whose files panel, opened from the keyboard (Ctrl+Shift+E), takes the keys when it shows. */
  let focusOnOpen: string | null = null;

  /**
   * Shows or hides a tab's files panel. `focus` (the shortcut): a panel that opens takes the
   * keyboard (its file list); one that closes gives it back to the terminal (SftpSplit), as it
   * does whenever the panel goes with the focus in it.
   */
  function toggle(tabKey: string, show?: boolean, opts: { focus?: boolean } = {}): void {
    const next = show ?? !open.value[tabKey];
    focusOnOpen = next && opts.focus ? tabKey : null;
    open.value = { ...open.value, [tabKey]: next };
  }

  /** Whether the panel of `tabKey`, just shown, should take the keys (asked once). */
  function takeFocusOnOpen(tabKey: string): boolean {
    const yes = focusOnOpen === tabKey;
    if (yes) focusOnOpen = null;
    return yes;
  }

  /** Dragging updates the view at once; the host stores the width when the drag ends (`commit`). */
  function resize(px: number, commit: boolean): void {
    const v = Math.max(260, Math.min(900, Math.round(px)));
    if (commit) void settings.set({ 'sftp.panelWidth': v });
    else settings.values['sftp.panelWidth'] = v;
  }

  function row(id: string): TransferRow | undefined {
    return transfers.value.find((t) => t.id === id);
  }

  function add(
    t: Omit<TransferRow, 'bytesPerSecond' | 'etaSeconds' | 'filesDone' | 'filesTotal' | 'error' | 'errorCode' | 'unseen' | 'notice' | 'leftOut' | 'leftBehind' | 'state' | 'retryable' | 'batch' | 'madeFolders'> &
      Partial<TransferRow>,
  ): TransferRow {
    const existing = row(t.id);
    if (existing) {
      Object.assign(existing, { name: t.name, remotePath: t.remotePath, direction: t.direction });
      return existing;
    }
    const fresh: TransferRow = {
      bytesPerSecond: 0,
      etaSeconds: null,
      filesDone: 0,
      filesTotal: 1,
      error: null,
      errorCode: null,
      unseen: false,
      notice: null,
      leftOut: [],
      leftBehind: [],
      state: 'running',
      retryable: false,
      batch: false,
      madeFolders: [],
      ...t,
    };
    transfers.value.unshift(fresh);
    const finished = transfers.value.filter((r) => r.state !== 'running');
    if (finished.length > KEEP_FINISHED) drop(new Set(finished.slice(KEEP_FINISHED).map((r) => r.id)));
    // The reactive proxy of the row, so later changes reach the view.
    return row(t.id) ?? fresh;
  }

  function update(id: string, patch: Partial<TransferRow>): void {
    const r = row(id);
    if (!r) return;
    const was = r.state;
    Object.assign(r, patch);
    if (was === 'running' && r.state !== 'running') ended(r);
  }

  /** Whether the transfers list of `sessionId` is on screen: its tab in front, with its files panel open. */
  function inSight(sessionId: string): boolean {
    const sessions = useSessionsStore();
    const tab = sessions.tabs.find((t) => t.sessionId === sessionId);
    return !!tab && sessions.activeKey === tab.key && open.value[tab.key] === true;
  }

  /**
   * A transfer ended out of sight (its tab is not shown, or its files panel is closed): say so,
   * a failure above all. In sight, the transfers list says it already. A transfer cut off because
   * the SSH connection dropped is not toasted over the tab that says "Disconnected — Reconnect"
   * (one report of the drop, its Reconnect button uncovered): the Files button marks the failure
   * instead, and the row offers Retry once the tab is back.
   */
  function ended(r: TransferRow): void {
    // Told once its name has come (startedElsewhere): what ended, and where.
    if (naming.has(r.id)) return;
    for (const f of endFollowers) f(r);
    if (r.state === 'cancelled') return;
    if (inSight(r.sessionId)) return;
    if (r.state === 'failed' && r.errorCode === 'ESESSIONCLOSED' && useSessionsStore().tabs.some((t) => t.sessionId === r.sessionId)) {
      r.unseen = true;
      return;
    }
    const what = r.name || r.remotePath;
    if (r.state === 'failed') toast(`${r.direction === 'upload' ? 'Upload' : 'Download'} of ${what} failed: ${r.error ?? 'unknown error'}`, 'error');
    else toast(`${r.direction === 'upload' ? 'Uploaded' : 'Downloaded'} ${what}.${r.notice ? ` ${r.notice}` : ''}`);
  }

  /** Who hears of every transfer that ends (the Files panel lists its folder again). */
  const endFollowers = new Set<(r: TransferRow) => void>();

  /** Hears each transfer once as it ends (done, failed or cancelled), its row named. */
  function onEnded(follower: (r: TransferRow) => void): () => void {
    endFollowers.add(follower);
    return () => endFollowers.delete(follower);
  }

  /** The host's transfers of a batch's files, by transfer id → the batch's row id. */
  const members = new Map<string, string>();

  /** The host's transfer `transferId` is one file of batch row `batchId`: it gets no row of its own. */
  function claim(transferId: string, batchId: string): void {
    // The host's first progress event can come before the uploadBegin reply that names the
    // transfer, and has made it a row of its own by then.
    if (row(transferId)) transfers.value = transfers.value.filter((r) => r.id !== transferId);
    retries.delete(transferId);
    members.set(transferId, batchId);
  }

  /** Who follows transfers besides the rows (a file of an upload waiting for its end), and the ids they wait on. */
  const followers = new Set<(p: TransferProgress) => void>();
  const watched = new Map<string, number>();

  /** Rows of transfers started elsewhere whose name the host's list has not given yet: their end is told once it has. */
  const naming = new Set<string>();

  /**
   * A row for a transfer this page did not start (the CLI's, the XO's, another window's), or whose
   * start it has not heard answered yet. What it moves comes from the host's list, unless the
   * page's own start names it first. An upload from the host's disk can be retried from its row
   * (sftp.upload of the same local file or folder), as the page's own uploads can.
   */
  function startedElsewhere(p: TransferProgress): TransferRow {
    const r = add({ id: p.transferId, sessionId: p.sessionId, direction: p.direction, name: '', remotePath: '', bytes: 0, totalBytes: p.totalBytes });
    naming.add(p.transferId);
    void host
      .call('sftp.transfers', { sessionId: p.sessionId })
      .then((list) => {
        const t = list.find((x) => x.transferId === p.transferId);
        const named = row(p.transferId);
        if (!t || !named || named.name) return;
        // Named as the page names its own: by the server's side, where an upload goes ("deploy.sh"
        // sent as deploy-cli.sh is deploy-cli.sh) and what a download takes; its last path segment.
        named.name = t.remotePath.replace(/\/+$/, '').split('/').pop() || t.remotePath;
        named.remotePath = t.remotePath;
        // Events carry the left-out list only when it changes: it may have changed before this page heard of the transfer.
        if (t.leftOut && !named.leftOut.length) named.leftOut = t.leftOut;
        const { localPath } = t;
        if (t.direction === 'upload' && localPath) setRetry(t.transferId, () => uploadAgain(t.sessionId, localPath, t.remotePath, named.name));
      })
      .catch(() => undefined) // the link went down: the row stays unnamed, its figures still right
      .finally(() => {
        naming.delete(p.transferId);
        const now = row(p.transferId);
        if (now && now.state !== 'running') ended(now);
      });
    return r;
  }

  /**
   * An upload another client started from the host's disk, again: sftp.upload of the same local
   * file or folder. Whether it was meant to replace what was there is not known here, so a
   * destination that is there now is asked about, as the page's own uploads ask.
   */
  async function uploadAgain(sessionId: string, localPath: string, remotePath: string, name: string): Promise<void> {
    const start = (overwrite: boolean) => host.call('sftp.upload', { sessionId, localPath, remotePath, overwrite });
    try {
      await start(false);
    } catch (err) {
      const e = asWraithError(err);
      if (e.details?.reason !== 'exists') throw e;
      const replace = await confirmDialog({ title: `Replace ${name}?`, message: `${remotePath} already exists on the server.`, confirmLabel: 'Replace', danger: true });
      if (replace) await start(true);
    }
  }

  /** What the host said of a transfer: an event, or what it answered after a reconnect. */
  function heard(p: TransferProgress): void {
    for (const f of followers) f(p);
    const batchId = members.get(p.transferId);
    if (batchId !== undefined) {
      // Its batch counts the file's bytes itself; what the host wants said (an owner that
      // changed) is said on the batch's row, the first time.
      const b = row(batchId);
      if (b && p.notice && !b.notice) b.notice = p.notice;
      // A file's partial copy the host could not remove stays: the batch's row names it.
      if (b && p.leftBehind) b.leftBehind = [...new Set([...b.leftBehind, ...p.leftBehind])];
      return;
    }
    const r = row(p.transferId) ?? startedElsewhere(p);
    // A streamed upload counts its own chunks too; never go backwards.
    const was = r.state;
    Object.assign(r, {
      bytes: Math.max(r.bytes, p.bytes),
      totalBytes: p.totalBytes ?? r.totalBytes,
      bytesPerSecond: p.bytesPerSecond,
      etaSeconds: p.etaSeconds,
      filesDone: p.filesDone,
      filesTotal: p.filesTotal,
      state: r.state === 'running' ? p.state : r.state,
      error: p.error?.message ?? r.error,
      errorCode: p.error?.code ?? r.errorCode,
      notice: p.notice ?? r.notice,
      leftOut: p.leftOut ?? r.leftOut,
      leftBehind: p.leftBehind ?? r.leftBehind,
    });
    if (was === 'running' && r.state !== 'running') ended(r);
  }

  host.on('transfer.progress', heard);

  /**
   * Events the host sent while the link was down are lost: a transfer that ended meanwhile would
   * show "running" for good, and whoever waits for its end would wait for ever. After a reconnect
   * the host's own list says where each is; one it no longer has (it was restarted) has failed.
   */
  async function recover(): Promise<void> {
    const open = new Map<string, { sessionId: string; direction: TransferRow['direction'] }>();
    for (const r of transfers.value) if (r.state === 'running' && !r.batch) open.set(r.id, r);
    for (const id of watched.keys()) {
      const batch = row(members.get(id) ?? '');
      if (!open.has(id)) open.set(id, { sessionId: batch?.sessionId ?? '', direction: batch?.direction ?? 'upload' });
    }
    if (!open.size) return;
    let list: TransferProgress[];
    try {
      list = await host.call('sftp.transfers');
    } catch {
      return; // down again: the next reconnect asks again
    }
    const known = new Set(list.map((t) => t.transferId));
    for (const t of list) if (open.has(t.transferId)) heard(t);
    for (const [id, t] of open) {
      if (known.has(id)) continue;
      const message = 'The Wraith host no longer has this transfer (it was restarted while the page was away). Start it again.';
      heard({ transferId: id, ...t, bytes: 0, totalBytes: null, bytesPerSecond: 0, etaSeconds: null, filesDone: 0, filesTotal: null, state: 'failed', error: { code: 'ENOTFOUND', message }, notice: null });
    }
  }
  /**
   * A page that loads (or reloads) heard nothing of what ended before it. An upload the page before
   * it was sending ended when that page went (reason page_left, the host's words say how far it
   * got and that nothing was left behind): it would show nowhere. The host still lists it: it gets
   * a failed row, and the Files button marks it until the transfers list is seen.
   */
  async function showLeftBehind(): Promise<void> {
    let list: TransferInfo[];
    try {
      list = await host.call('sftp.transfers');
    } catch {
      return; // the link went down again: the next page load asks again
    }
    for (const t of list) {
      if (t.state !== 'failed' || t.error?.reason !== 'page_left' || row(t.transferId)) continue;
      const name = t.remotePath.replace(/\/+$/, '').split('/').pop() || t.remotePath;
      // Added as it ended, not ended here: no toast at every load while the host lists it.
      add({
        id: t.transferId,
        sessionId: t.sessionId,
        direction: t.direction,
        name,
        remotePath: t.remotePath,
        bytes: t.bytes,
        totalBytes: t.totalBytes,
        filesDone: t.filesDone,
        filesTotal: t.filesTotal,
        state: 'failed',
        error: t.error.message,
        errorCode: t.error.code,
        unseen: true,
      });
    }
  }
  host.onOpen((reconnected) => {
    if (reconnected) void recover();
    else void showLeftBehind();
  });

  /** Hears every transfer's progress, from events and from what a reconnect recovered. */
  function onProgress(follower: (p: TransferProgress) => void): () => void {
    followers.add(follower);
    return () => followers.delete(follower);
  }

  /** Keeps `transferId` in what a reconnect asks the host about, while the returned function is not called. */
  function watch(transferId: string): () => void {
    watched.set(transferId, (watched.get(transferId) ?? 0) + 1);
    return () => {
      const n = (watched.get(transferId) ?? 1) - 1;
      if (n > 0) watched.set(transferId, n);
      else watched.delete(transferId);
    };
  }

  function abortController(id: string): AbortController {
    const c = new AbortController();
    aborts.set(id, c);
    return c;
  }

  function settle(id: string): void {
    aborts.delete(id);
  }

  async function cancel(id: string): Promise<void> {
    const r = row(id);
    if (!r || r.state !== 'running') return;
    aborts.get(id)?.abort();
    if (r.batch) return; // its runner ends the row once the files under way have removed their temps
    const finished = await host.call('sftp.cancel', { transferId: id }).then(
      () => false,
      (err: unknown) => asWraithError(err).details?.reason === 'finished',
    );
    if (finished) {
      // It ended on its own before the cancel reached it: the row shows how, as the host has it
      // (its last progress event may have been lost to a dropped link).
      const t = (await host.call('sftp.transfers', { sessionId: r.sessionId }).catch(() => [])).find((x) => x.transferId === id);
      if (t) heard(t);
      return;
    }
    update(id, { state: 'cancelled', bytesPerSecond: 0, etaSeconds: null });
  }

  function clearFinished(sessionId: string): void {
    drop(new Set(transfers.value.filter((r) => r.sessionId === sessionId && r.state !== 'running').map((r) => r.id)));
  }

  /** One finished row leaves the list (its ✕). */
  function dismiss(id: string): void {
    if (row(id)?.state !== 'running') drop(new Set([id]));
  }

  /** The failures of `sessionId` marked on the Files button have been seen in its transfers list. */
  function markSeen(sessionId: string): void {
    for (const r of transfers.value) if (r.unseen && r.sessionId === sessionId) r.unseen = false;
  }

  /** Rows leave the list, with what a retry of them would have held on to (a File). */
  function drop(ids: Set<string>): void {
    transfers.value = transfers.value.filter((r) => !ids.has(r.id));
    for (const id of ids) retries.delete(id);
    for (const [member, batchId] of members) if (ids.has(batchId)) members.delete(member);
  }

  /** How to start the transfer of row `id` again, should it fail or be cancelled. */
  function setRetry(id: string, again: () => Promise<void>): void {
    retries.set(id, again);
    const r = row(id);
    if (r) r.retryable = true;
  }

  /**
   * Why a transfer of `sessionId` cannot start now: its tab is not connected (dropped, or still
   * reconnecting). Null when it can, or when no tab here shows the session (the host says then).
   */
  function cannotStart(sessionId: string): string | null {
    const tab = useSessionsStore().tabs.find((t) => t.sessionId === sessionId);
    if (!tab || tab.kind === 'rdp' || tab.phase === 'open') return null;
    const when = tab.phase === 'disconnected' ? 'Reconnect the tab, then Retry.' : 'Retry once it is connected.';
    return `${tab.title} is not connected, so nothing can be sent or fetched through it. ${when}`;
  }

  /**
   * Starts a failed or cancelled transfer again: its row gives way to the new transfer's. A retry
   * that cannot start (its tab is not connected, or the start was refused before a new row told of
   * it) says why and keeps its row, with what a later Retry needs (a File): nothing is lost.
   */
  async function retry(id: string): Promise<void> {
    const r = row(id);
    const again = retries.get(id);
    if (!r || r.state === 'running' || r.state === 'done' || !again) return;
    const what = r.name || r.remotePath;
    const offline = cannotStart(r.sessionId);
    if (offline) {
      toast(`The ${r.direction} of ${what} cannot start again yet: ${offline}`, 'error');
      return;
    }
    const at = transfers.value.indexOf(r);
    drop(new Set([id]));
    try {
      await again();
    } catch (err) {
      const e = asWraithError(err);
      if (isReportedOnRow(e)) return;
      // Nothing started (no row tells of it): the row comes back where it was, Retry and all.
      if (!row(id)) transfers.value.splice(Math.max(0, Math.min(at, transfers.value.length)), 0, r);
      setRetry(id, again);
      if (e.code !== 'ECANCELLED') toast(`Could not ${r.direction} ${what} again: ${e.message}`, 'error');
    }
  }

  return {
    open,
    cwd,
    showHidden,
    following,
    width,
    transfers,
    toggle,
    takeFocusOnOpen,
    resize,
    add,
    update,
    row,
    claim,
    cancel,
    clearFinished,
    dismiss,
    markSeen,
    inSight,
    abortController,
    settle,
    setRetry,
    retry,
    onProgress,
    onEnded,
    watch,
  };
});
