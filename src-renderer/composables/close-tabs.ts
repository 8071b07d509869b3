import { type TransferRow, useSftpStore } from '../features/sftp/sftp-store.js';
import { transfersStopped, transfersWillStop } from '../features/sftp/transfer-text.js';
import { type SessionTab, tabLabel, useSessionsStore } from '../stores/sessions.js';
import { useSettingsStore } from '../stores/settings.js';
import { confirmDialog, dialogState, toast } from './dialogs.js';

/**
 * A tab whose session is connected or running: closing it ends an SSH session, a local shell or a
 * remote desktop. One that ended, failed, dropped, or waits on a question has nothing to lose.
 */
export function isLiveTab(t: SessionTab): boolean {
  return t.sessionId !== null && (t.phase === 'open' || t.phase === 'starting');
}

/** What closing this tab ends, in words. */
function whatEnds(t: SessionTab): string {
  if (t.kind === 'ssh') return `The SSH session to ${t.title} is running: closing the tab disconnects it, and what runs in its shell gets a hang-up and may stop.`;
  if (t.kind === 'pty') return `The local shell ${t.title} is running: closing the tab ends it and what runs in it.`;
  return `The remote desktop ${t.title} is connected: closing the tab disconnects it.`;
}

const TURN_OFF = 'Settings → "Ask before closing a tab whose session is running" turns this question off.';

/**
 * Closing tabs the way every close path does it (Ctrl+W, the ×, a middle click, Delete on the
 * strip, the tab menu): a running session is not ended by one stray key without a question,
 * whose Cancel has the keys (DialogHost focuses Cancel for a danger confirm). The question can be
 * turned off in Settings; closing a tab that ended, failed or dropped never asks. An upload or a
 * download of an SSH tab stops with its session: the question names them with how far each is,
 * and when no question was asked a toast says afterwards what stopped.
 */
export function useTabClosing() {
  const sessions = useSessionsStore();
  const settings = useSettingsStore();
  const sftp = useSftpStore();

  /** The transfers running in these tabs' sessions (any client's: the page's, the CLI's, the XO's). */
  function runningTransfers(list: SessionTab[]): TransferRow[] {
    const ids = new Set(list.map((t) => t.sessionId).filter((id) => id !== null));
    return sftp.transfers.filter((r) => r.state === 'running' && ids.has(r.sessionId));
  }

  /** Closes the tabs; what their transfers were, stopped without a question, is said afterwards. */
  async function close(list: SessionTab[], asked: boolean): Promise<void> {
    const stopping = asked ? [] : runningTransfers(list).map((r) => ({ ...r }));
    for (const t of list) await sessions.close(t.key);
    if (stopping.length) toast(transfersStopped(list.length === 1 && list[0] ? `Closing ${tabLabel(list[0])}` : `Closing ${list.length} tabs`, stopping), 'error');
  }

  /** Closes the tab, after asking when its session runs; false when the person kept it. */
  async function closeTab(key: string): Promise<boolean> {
    const tab = sessions.tabs.find((t) => t.key === key);
    // Ctrl+Shift+W again while a question is open answers nothing (the open one keeps its answer).
    if (!tab || dialogState.current) return false;
    const asks = isLiveTab(tab) && settings.values['ui.confirmCloseRunningTab'];
    if (asks) {
      const stopping = transfersWillStop(runningTransfers([tab]));
      const ok = await confirmDialog({ title: `Close ${tabLabel(tab)}?`, message: `${whatEnds(tab)}${stopping ? ` ${stopping}` : ''} ${TURN_OFF}`, confirmLabel: 'Close tab', danger: true });
      if (!ok) return false;
    }
    // A tab that went while the question was open is simply not there to close.
    await close([tab], asks);
    return true;
  }

  /**
   * Closes these tabs (Close other tabs, Close tabs to the right); asks first when that ends
   * running sessions, naming those that end. Ending several always asks, as it did before the
   * setting existed; ending one asks as closing its tab would.
   */
  async function closeTabs(list: SessionTab[]): Promise<boolean> {
    const ending = list.filter(isLiveTab);
    if (ending.length === 1 && list.length === 1 && list[0]) return closeTab(list[0].key);
    const asks = ending.length > 1 || (ending.length === 1 && settings.values['ui.confirmCloseRunningTab']);
    if (asks) {
      const named = ending.slice(0, 8).map(tabLabel).join(', ') + (ending.length > 8 ? ` and ${ending.length - 8} more` : '');
      const rest = list.length - ending.length;
      const sessionsEnd = ending.length === 1 ? `1 running session will end: ${named}.` : `${ending.length} running sessions will end: ${named}.`;
      const stopping = transfersWillStop(runningTransfers(ending));
      const ok = await confirmDialog({
        title: `Close ${list.length} tab${list.length === 1 ? '' : 's'}?`,
        message: `${sessionsEnd}${stopping ? ` ${stopping}` : ''}${rest ? ` ${rest} other tab${rest === 1 ? '' : 's'} (ended, failed or disconnected) close${rest === 1 ? 's' : ''} too.` : ''}`,
        confirmLabel: `Close ${list.length} tab${list.length === 1 ? '' : 's'}`,
        danger: true,
      });
      if (!ok) return false;
    }
    await close(list, asks);
    return true;
  }

  return { closeTab, closeTabs };
}
