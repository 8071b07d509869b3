import { defineStore } from 'pinia';
import { computed, reactive, ref, watch, watchEffect } from 'vue';
import { CredentialNeed, type EventPayload, type OneTimeCredential, type Output, TAB_PROMPT_TAG_PREFIX } from '@common/contract/index.js';
import type { SessionInfo, SessionOpener } from '@common/contract/sessions.js';
import { WraithError } from '@common/errors.js';
import { toast } from '../composables/dialogs.js';
import { asWraithError } from '../composables/errors.js';
import { shellQuote } from '../composables/shell-quote.js';
import { useHost } from '../transport/index.js';
import { useConnectionsStore } from './connections.js';
import { useVaultStore } from './vault.js';

export type TerminalBackend = 'ssh' | 'pty';

/**
 * starting: opening; hostkey-unknown / hostkey-changed: waiting for the user's decision;
 * hostkey-revoked: refused, the server offered a key a known_hosts import marked @revoked (its card says so);
 * credential: waiting for a password or key passphrase that is not saved, or was refused (problem
 * details: a CredentialNeed); failed: could not open (problem says why); open; disconnected: SSH
 * dropped (Reconnect keeps the scrollback); ended: the shell exited or the session was closed.
 */
export type TabPhase = 'starting' | 'hostkey-unknown' | 'hostkey-changed' | 'hostkey-revoked' | 'credential' | 'failed' | 'open' | 'disconnected' | 'ended';

/** As OpenSSH (NumberOfPasswordPrompts 3): after this many refused secrets the tab stops asking. */
export const MAX_CREDENTIAL_TRIES = 3;

/**
 * The question card a failed connect asks, by its code: an SSH host key (the server's, or a jump
 * host's on the way to it, an RDP desktop's too) or an RDP certificate that is not known yet, has
 * changed, or (SSH) is revoked. Null for any other failure.
 */
export function questionPhase(code: string): 'hostkey-unknown' | 'hostkey-changed' | 'hostkey-revoked' | null {
  if (code === 'EHOSTKEY_UNKNOWN' || code === 'ECERT_UNKNOWN') return 'hostkey-unknown';
  if (code === 'EHOSTKEY_CHANGED' || code === 'ECERT_CHANGED') return 'hostkey-changed';
  if (code === 'EHOSTKEY_REVOKED') return 'hostkey-revoked';
  return null;
}

export interface Problem {
  code: string;
  message: string;
  details: Record<string, unknown>;
}

/** A terminal the UI shows: an SSH tab, a local shell tab, or the local shell panel. */
export interface TerminalTab {
  key: string;
  kind: TerminalBackend;
  title: string;
  connectionId: string | null;
  shell: string | null;
  sessionId: string | null;
  phase: TabPhase;
  problem: Problem | null;
  /** The session was already running when this page loaded: show its recent output first. */
  reattach: boolean;
  /** What happened while the tab was not shown (cleared when it is): new output, or the bell. */
  attention: 'activity' | 'bell' | null;
  /** Typed into the shell once its session is open (a tab opened "in" a folder), then cleared. */
  startInput: string | null;
  /**
   * What the shell calls its window (OSC 0/2, e.g. Debian's bash: "user@host: ~/dir"). A local
   * shell's tab reads it (tabLabel); an SSH tab keeps its connection's name and shows it in the tooltip.
   */
  shellTitle: string | null;
  /** The shell's folder, as it last said with OSC 7 (a local tab without a title reads "bash — src"). */
  cwd: string | null;
  /** Kill was asked and the shell has not exited yet (it may be ignoring the hang-up): "Stopping…". */
  stopping: boolean;
  /** Secrets typed into this tab's credential card that the server refused, in a row. */
  credentialTries: number;
  /** The title was given with Rename tab (kept across a page reload). */
  renamed?: boolean;
  /** Who opened its session, where the host says: the tab marks one the CLI or the XO opened. */
  openedBy?: SessionOpener;
  /**
   * The server whose trusted key or certificate this tab's changed-identity card forgot ("Forget
   * old host key…"): the question that follows about it is no first connection, and does not say so.
   */
  forgotten?: ForgottenIdentity;
}

/**
 * An RDP desktop tab. The session lifecycle (open, certificate trust, reconnect) lives in
 * features/rdp; the store keeps the tab so the strip, shortcuts and session.changed treat it
 * like any other tab. Phases reuse TabPhase (hostkey-* = certificate questions, or the SSH host
 * key questions of a jump host on the way).
 */
export interface RdpTab {
  key: string;
  kind: 'rdp';
  title: string;
  connectionId: string;
  sessionId: string | null;
  phase: TabPhase;
  problem: Problem | null;
  reattach: boolean;
  /** Passwords typed into this tab's card for a jump host on the way that the server refused, in a row. */
  credentialTries: number;
  /** The title was given with Rename tab (kept across a page reload). */
  renamed?: boolean;
  /** Who opened its session, where the host says: the tab marks one the CLI or the XO opened. */
  openedBy?: SessionOpener;
  /**
   * The server whose trusted key or certificate this tab's changed-identity card forgot ("Forget
   * old host key…"): the question that follows about it is no first connection, and does not say so.
   */
  forgotten?: ForgottenIdentity;
}

export type SessionTab = TerminalTab | RdpTab;

/** A server whose key (ssh) or certificate (rdp) a tab's card forgot. */
export interface ForgottenIdentity {
  kind: 'ssh' | 'rdp';
  host: string;
  port: number;
}

export type SshPrompt = EventPayload<'ssh.prompt'>;

/** Where a login prompt's card says it comes from: "web01 (10.0.0.5)", the hop that asks. */
export function promptAsker(p: SshPrompt): string {
  return `${p.connectionName} (${p.host})`;
}

/**
 * A fresh tag for one connect of a tab's login prompts (ssh.open's `promptTag`): marked as a tab's
 * (TAB_PROMPT_TAG_PREFIX), so other windows leave its prompts to this one, and random, so no other
 * window's connect has it. getRandomValues, not randomUUID: a page served over plain HTTP to
 * another machine (`--host 0.0.0.0`) is not a secure context, and has no randomUUID.
 */
function newPromptTag(): string {
  return TAB_PROMPT_TAG_PREFIX + Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * Whether a tab asks the prompt in place: this window's tab that waits for it, or another
 * window's. Nobody's tab asks one without a tag or with a tag of another shape (the CLI's, the XO's).
 */
function askedInATab(p: SshPrompt): boolean {
  return p.promptTag?.startsWith(TAB_PROMPT_TAG_PREFIX) ?? false;
}

let nextKey = 1;

function newTab(kind: TerminalBackend, title: string, extra: Partial<TerminalTab> = {}): TerminalTab {
  return { key: `tab-${nextKey++}`, kind, title, connectionId: null, shell: null, sessionId: null, phase: 'starting', problem: null, reattach: false, attention: null, startInput: null, shellTitle: null, cwd: null, stopping: false, credentialTries: 0, ...extra };
}

/** The last name of a folder ("/" for the root). */
function folderName(path: string): string {
  return path.replace(/\/+$/, '').split('/').pop() || '/';
}

/**
 * What a tab reads on the strip. A name given with Rename tab stays. A local shell's tab follows
 * its terminal: the title the shell sets (OSC 0/2), else its program and the folder it is in
 * (OSC 7), so twenty local tabs are not twenty "bash". SSH and RDP tabs keep their connection's name.
 */
export function tabLabel(tab: SessionTab): string {
  if (tab.renamed || tab.kind !== 'pty') return tab.title;
  if (tab.shellTitle) return tab.shellTitle;
  return tab.cwd ? `${tab.title} — ${folderName(tab.cwd)}` : tab.title;
}

function exitReason(p: EventPayload<'terminal.exit'>): string {
  if (p.reason) return p.reason;
  if (p.signal) return `Ended by signal ${p.signal}.`;
  if (p.code !== null) return `Exited with code ${p.code}.`;
  return 'Session ended.';
}

/** sessionStorage key of the local shell panel's session id. */
const PANEL_SESSION_KEY = 'wraith.panelSession';
/** sessionStorage key of the titles given with Rename tab, by session id. */
const TAB_TITLES_KEY = 'wraith.tabTitles';
/** sessionStorage key of the session of the tab in front. */
const ACTIVE_SESSION_KEY = 'wraith.activeSession';

/** A tab title as Rename tab keeps it: one line, trimmed, at most 80 characters ('' when blank). */
function cleanTitle(title: string): string {
  return title.replace(/\s+/g, ' ').trim().slice(0, 80);
}

/** The renamed tabs' titles this browser tab remembered, by session id; anything else there is ignored. */
function storedTitles(): Map<string, string> {
  try {
    const parsed: unknown = JSON.parse(sessionStorage.getItem(TAB_TITLES_KEY) ?? '{}');
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return new Map();
    return new Map(
      Object.entries(parsed)
        .map(([id, title]) => [id, typeof title === 'string' ? cleanTitle(title) : ''] as const)
        .filter(([, title]) => title !== ''),
    );
  } catch {
    return new Map();
  }
}

/** Open sessions (from the host) and the terminal tabs the window shows. */
export const useSessionsStore = defineStore('sessions', () => {
  const host = useHost();
  const vault = useVaultStore();
  const connections = useConnectionsStore();
  const infos = ref<Record<string, SessionInfo>>({});
  const tabs = ref<SessionTab[]>([]);
  const activeKey = ref<string | null>(null);
  /** The local shell of the bottom panel (Ctrl+Shift+G); not a tab. */
  const panelShell = ref<TerminalTab | null>(null);
  // The panel's session is remembered for this browser tab (sessionStorage survives a reload and
  // is not shared with other windows), so a reload gives the panel its shell back instead of
  // turning it into a tab.
  watch(
    () => panelShell.value?.sessionId,
    (id) => {
      if (id) sessionStorage.setItem(PANEL_SESSION_KEY, id);
      else sessionStorage.removeItem(PANEL_SESSION_KEY);
    },
  );
  // Titles given with Rename tab are remembered the same way, by session id: a reload re-attaches
  // the sessions as tabs with the titles the person gave them. Only running tabs' titles are kept,
  // so a closed tab's is forgotten with it.
  watch(
    () => JSON.stringify(Object.fromEntries(allTabs().filter((t) => t.renamed && t.sessionId).map((t) => [t.sessionId, t.title]))),
    (titles) => {
      if (titles === '{}') sessionStorage.removeItem(TAB_TITLES_KEY);
      else sessionStorage.setItem(TAB_TITLES_KEY, titles);
    },
  );
  // A tab of a saved connection goes by the connection's name, and follows it when the connection
  // is renamed (the host's messages about it already use the new one): one tab, one name. A name
  // given with Rename tab stays; the tabs of a deleted connection keep the last one.
  watchEffect(() => {
    for (const tab of tabs.value) {
      const name = tab.connectionId && !tab.renamed ? connections.byId.get(tab.connectionId)?.name : undefined;
      if (name && tab.title !== name) tab.title = name;
    }
  });
  const prompts = ref<SshPrompt[]>([]);
  /**
   * The connects of this window's tabs under way (ssh.open, ssh.reconnect, and rdp.open,
   * rdp.reconnect for the jump hosts on the way): their prompt tag and the tab that asked. A login
   * prompt of one is asked in that tab, where closing the tab gives the connect up; one of a tab
   * closed meanwhile is shown nowhere (the host withdraws it), nor is one of another window's tab,
   * which that window asks (closing it gives its connects up: their prompts are withdrawn too).
   * A prompt no tab asks (a connect the XO or the CLI started) is asked over the whole window.
   * Kept until the connect answers: the host withdraws its prompts before that.
   */
  const loginTags = reactive(new Map<string, string>());
  /** The prompt the tab's connect waits on, if any. */
  function promptOf(key: string): SshPrompt | null {
    return prompts.value.find((p) => p.promptTag !== undefined && loginTags.get(p.promptTag) === key) ?? null;
  }
  /** The first prompt no tab, of this window or another, is waiting for: asked over the window. */
  const windowPrompt = computed(() => prompts.value.find((p) => !askedInATab(p)) ?? null);
  /** Runs one connect of a tab with a prompt tag of its own, which its login prompts carry. */
  async function tagged<T>(key: string, connect: (promptTag: string) => Promise<T>): Promise<T> {
    const promptTag = newPromptTag();
    loginTags.set(promptTag, key);
    try {
      return await connect(promptTag);
    } finally {
      loginTags.delete(promptTag);
      // Withdrawn by the host before it answered (ssh.prompt_closed); a card of it must not linger.
      if (prompts.value.some((p) => p.promptTag === promptTag)) prompts.value = prompts.value.filter((p) => p.promptTag !== promptTag);
    }
  }
  /**
   * Passwords and passphrases typed into a tab's card during one connect, one per hop, sent
   * together: a jump host's is not asked for again when its target then asks for its own. Kept out
   * of reactive state (never rendered, never persisted) and dropped once the connect ends: open,
   * given up, cancelled, or the tab closed. One the server refused is dropped at once.
   */
  const typedSecrets = new Map<string, OneTimeCredential[]>();
  const typedFor = (key: string) => {
    const list = typedSecrets.get(key) ?? [];
    return list.length > 0 ? { credentials: list } : {};
  };
  /**
   * The SSH and RDP opens still connecting, by tab: closing the tab gives its open up on the host
   * (the login stops, a login prompt it showed is withdrawn), rather than letting it log in for a
   * tab that is gone and closing the session afterwards.
   */
  const openCancels = new Map<string, AbortController>();

  /**
   * Runs the open of tab `key` with a signal its tab's close aborts (the call is then given up
   * on the host). Null when it was given up so: there is nobody to tell.
   */
  async function untilClosed<T>(key: string, open: (signal: AbortSignal) => Promise<T>): Promise<T | null> {
    const cancel = new AbortController();
    openCancels.set(key, cancel);
    try {
      return await open(cancel.signal);
    } catch (err) {
      if (cancel.signal.aborted) return null;
      throw err;
    } finally {
      if (openCancels.get(key) === cancel) openCancels.delete(key);
    }
  }

  const activeTab = computed(() => tabs.value.find((t) => t.key === activeKey.value) ?? null);
  // The tab in front is remembered the same way, by its session: a reload brings that tab to the
  // front again (load), not the first one. A tab with no session yet has nothing a reload keeps.
  watch(
    () => activeTab.value?.sessionId ?? null,
    (id) => {
      if (id) sessionStorage.setItem(ACTIVE_SESSION_KEY, id);
      else sessionStorage.removeItem(ACTIVE_SESSION_KEY);
    },
  );
  // A tab being shown has been seen: whatever it was marked with is cleared, however it got shown.
  watch(activeKey, () => {
    const tab = activeTab.value;
    if (tab && tab.kind !== 'rdp') tab.attention = null;
  });
  /**
   * Sessions with something running on the host: open, or connecting. A local shell that exited
   * and an SSH or RDP session that dropped are kept for their scrollback and a relaunch or
   * reconnect, but run nothing: "Sessions: N" does not count them, nor does leaving the page ask
   * about them (the host keeps them, and a reload shows them again). Another window's local shell
   * panel is that window's only: this one neither shows it nor loses it when it goes.
   */
  const runningCount = computed(
    () =>
      Object.values(infos.value).filter(
        (s) => (s.state === 'open' || s.state === 'connecting') && !(s.panel && s.id !== panelShell.value?.sessionId),
      ).length,
  );

  function allTabs(): SessionTab[] {
    return panelShell.value ? [...tabs.value, panelShell.value] : tabs.value;
  }

  function allTerminals(): TerminalTab[] {
    return allTabs().filter((t): t is TerminalTab => t.kind !== 'rdp');
  }

  function bySession(sessionId: string): SessionTab | undefined {
    return allTabs().find((t) => t.sessionId === sessionId);
  }

  function terminalBySession(sessionId: string): TerminalTab | undefined {
    return allTerminals().find((t) => t.sessionId === sessionId);
  }

  function applyInfo(info: SessionInfo): void {
    const before = infos.value[info.id];
    if (info.state === 'closed') {
      const { [info.id]: _gone, ...rest } = infos.value;
      infos.value = rest;
    } else {
      infos.value = { ...infos.value, [info.id]: info };
    }
    const tab = bySession(info.id);
    if (!tab) {
      if (!before) openedElsewhere(info);
      // Another window's panel shell that no window claimed since that window went (closed for
      // good): every window's now, a tab here as a load would show it.
      else if (before.panel && !info.panel && loaded) showSession(info);
      return;
    }
    if (info.panel && tab !== panelShell.value) {
      panelTookBack(tab);
      return;
    }
    if (info.state === 'open') {
      tab.phase = 'open';
      tab.problem = null;
    } else if (info.state === 'disconnected') {
      // A local shell that exited cannot reconnect: it ended, and may be relaunched.
      tab.phase = tab.kind === 'pty' ? 'ended' : 'disconnected';
      tab.problem = { code: 'ESESSIONCLOSED', message: info.reason ?? (tab.kind === 'pty' ? 'The shell exited.' : 'The connection dropped.'), details: {} };
    } else if (info.state === 'closed' && tab.phase !== 'ended') {
      tab.phase = 'ended';
      tab.problem = { code: 'ESESSIONCLOSED', message: info.reason ?? 'Session ended.', details: {} };
    }
  }

  /**
   * Sessions this window did not open appear as tabs as they open, as a reload would show them:
   * the Commander sees, and can take over, what the CLI, the XO or another window started. The tab
   * comes in the back; the one in front keeps the keys.
   *
   * A session this page asked for itself is announced before the answer that names it arrives, so
   * one of unknown origin, or opened by a window (maybe this one), waits until this page's own
   * opens have answered (`opening`), and becomes a tab only if none of them was it.
   */
  let loaded = false;
  let opensOut = 0;
  /** Sessions that opened while this page's own opens were out, and the ids those opens answered. */
  const undecided = new Set<string>();
  const openedHere = new Set<string>();

  function openedElsewhere(info: SessionInfo): void {
    // Before the first load its list has them all; after a reload, load() shows them.
    if (!loaded || (info.state !== 'open' && info.state !== 'connecting')) return;
    // A window's local shell panel (this one's own as it starts, or another's): that window's only.
    if (info.panel) return;
    const surelyNotMine = info.openedBy !== undefined && info.openedBy !== 'ui';
    if (opensOut > 0 && !surelyNotMine) undecided.add(info.id);
    else showSession(info);
  }

  /**
   * A shell this window shows as a tab went back into a window's local shell panel (that window
   * claimed it, after it had become everyone's tab). The tab goes, its session left running: the
   * panel shows it now, and a tab here would end the shell under that panel when closed. The
   * window's reload would not show it either.
   */
  function panelTookBack(tab: SessionTab): void {
    const index = tabs.value.indexOf(tab);
    if (index < 0) return;
    removeTab(index);
    toast(`${tabLabel(tab)} went back to the local shell panel of the window it was started in.`);
  }

  /**
   * Runs one of this page's own opens (ssh.open, pty.spawn, rdp.open): the session it answers with
   * is this page's, and a session that opened meanwhile is decided once no open is out.
   */
  async function opening<T extends { sessionId: string }>(open: () => Promise<T>): Promise<T> {
    opensOut += 1;
    try {
      const r = await open();
      openedHere.add(r.sessionId);
      return r;
    } finally {
      opensOut -= 1;
      if (opensOut === 0) {
        for (const id of undecided) {
          const info = infos.value[id];
          if (info && !openedHere.has(id)) showSession(info);
        }
        undecided.clear();
        openedHere.clear();
      }
    }
  }

  /**
   * A tab for a session this window has no view of: one running when the page loaded, or one
   * opened elsewhere since. Phase and problem (why it dropped or exited) come from its state.
   */
  function showSession(s: SessionInfo, renamedTo?: string): void {
    if (s.state === 'closed' || bySession(s.id)) return;
    const title = renamedTo ? { title: renamedTo, renamed: true } : { title: s.title };
    const openedBy = s.openedBy ? { openedBy: s.openedBy } : {};
    if (s.kind === 'ssh' || s.kind === 'pty') {
      tabs.value.push(newTab(s.kind, s.title, { ...title, ...openedBy, sessionId: s.id, connectionId: s.connectionId, shell: s.shell ?? null, reattach: true, phase: 'open' }));
      applyInfo(s);
    } else if (s.connectionId) {
      const phase = s.state === 'disconnected' ? 'disconnected' : 'open';
      const problem = s.state === 'disconnected' ? { code: 'ESESSIONCLOSED', message: s.reason ?? 'The connection dropped.', details: {} } : null;
      tabs.value.push({ key: `tab-${nextKey++}`, kind: 'rdp', ...title, ...openedBy, connectionId: s.connectionId, sessionId: s.id, phase, problem, reattach: true, credentialTries: 0 });
    }
    // With no tab in front, the new one comes forward (the welcome would otherwise hide it); it
    // takes no keys (a view that opens focuses nothing until its phase changes or it is shown).
    activeKey.value ??= tabs.value[0]?.key ?? null;
  }

  host.on('session.changed', applyInfo);
  // SSH sessions report through session.changed (disconnected: Reconnect); a local shell's exit ends it.
  host.on('terminal.exit', (p) => {
    const tab = terminalBySession(p.sessionId);
    if (!tab || tab.kind !== 'pty') return;
    tab.phase = 'ended';
    tab.problem = { code: 'ESESSIONCLOSED', message: exitReason(p), details: {} };
  });
  host.on('ssh.prompt', (p) => {
    prompts.value = [...prompts.value, p];
  });
  // Answered in another window, timed out, or its login given up (the open was cancelled): its card goes.
  host.on('ssh.prompt_closed', ({ promptId }) => {
    prompts.value = prompts.value.filter((p) => p.promptId !== promptId);
  });

  /**
   * Loads the host's sessions; running terminals this page does not show yet become tabs, except
   * the local shell panels' (this window's own goes back in its panel; other windows' are theirs).
   */
  async function load(): Promise<void> {
    const list = await host.call('sessions.list');
    infos.value = Object.fromEntries(list.map((s) => [s.id, s]));
    // After a reconnect: a session that dropped (or came back) while the link was down said so in
    // an event this page never got. Its tab takes the state the host has now.
    for (const s of list) if (bySession(s.id)) applyInfo(s);
    for (const tab of allTabs()) {
      if (tab.sessionId && !infos.value[tab.sessionId] && tab.phase !== 'ended') {
        tab.phase = 'ended';
        tab.problem = { code: 'ESESSIONCLOSED', message: 'The host no longer has this session (it may have restarted).', details: {} };
      }
    }
    const panelId = sessionStorage.getItem(PANEL_SESSION_KEY);
    const titles = storedTitles();
    const firstLoad = !loaded;
    const inFront = sessionStorage.getItem(ACTIVE_SESSION_KEY);
    // A local shell keeps the program it was started from, so a Relaunch once its session is gone
    // (Kill, or closed elsewhere) starts that shell again. A re-attached tab takes the title it
    // was renamed to, else the host's.
    for (const s of list) {
      if (s.kind === 'pty' && s.id === panelId && s.state !== 'closed' && !bySession(s.id)) {
        panelShell.value = newTab('pty', s.title, { sessionId: s.id, shell: s.shell ?? null, reattach: true, phase: 'open', ...(s.openedBy ? { openedBy: s.openedBy } : {}) });
        applyInfo(s);
      } else if (!s.panel) {
        showSession(s, titles.get(s.id));
      }
    }
    // After a reload, the tab that was in front is again, if its session is still there.
    const wasInFront = firstLoad && inFront ? tabs.value.find((t) => t.sessionId === inFront) : undefined;
    if (wasInFront) activeKey.value = wasInFront.key;
    loaded = true;
    await claimPanelShell();
  }

  /**
   * Tells the host this window's panel shows its shell (pty.panel), after a reload or a reconnect:
   * the host keeps a window's panel shell for a while after its connection went, for this, and
   * makes it every window's tab if no window claims it. One that has become a tab meanwhile comes
   * back into the panel (other windows drop their tab of it). One gone meanwhile: its tab says so.
   */
  async function claimPanelShell(): Promise<void> {
    const sessionId = panelShell.value?.sessionId;
    if (!sessionId || !infos.value[sessionId]) return;
    try {
      await host.call('pty.panel', { sessionId });
    } catch (err) {
      const code = asWraithError(err).code;
      if (code !== 'ENOTFOUND' && code !== 'ESESSIONCLOSED') throw err;
    }
  }

  /**
   * The saved connection this tab was opened from has been deleted. Its session, while it runs,
   * runs on; but nothing can open it again: no Reconnect, Connect again, Try again or Duplicate.
   */
  function connectionDeleted(tab: SessionTab): boolean {
    return tab.kind !== 'pty' && tab.connectionId !== null && connections.loaded && !connections.byId.has(tab.connectionId);
  }

  /** Why a tab of a deleted connection cannot connect, by the name the tab has (not the connection's id). */
  function deletedProblem(tab: SessionTab): Problem {
    return { code: 'ENOTFOUND', message: `The saved connection ${tab.title} was deleted, so this tab cannot connect again.`, details: {} };
  }

  /**
   * After a connect failed with ENOTFOUND: the connection may have been deleted elsewhere (the CLI,
   * another window, the XO), which this window's list does not know yet. The list is loaded again,
   * and the tab then knows it, and says so, instead of showing the host's "No connection with id …".
   */
  async function learnDeleted(tab: SessionTab, err: unknown): Promise<boolean> {
    if (asWraithError(err).code !== 'ENOTFOUND' || !tab.connectionId) return false;
    await connections.load().catch(() => undefined);
    return connectionDeleted(tab);
  }

  function find(key: string): TerminalTab | undefined {
    return allTerminals().find((t) => t.key === key);
  }

  function findRdp(key: string): RdpTab | undefined {
    const tab = tabs.value.find((t) => t.key === key);
    return tab?.kind === 'rdp' ? tab : undefined;
  }

  function openRdp(connectionId: string, title: string): RdpTab {
    const tab: RdpTab = { key: `tab-${nextKey++}`, kind: 'rdp', title, connectionId, sessionId: null, phase: 'starting', problem: null, reattach: false, credentialTries: 0 };
    tabs.value.push(tab);
    activeKey.value = tab.key;
    // The reactive proxy, so the caller's changes reach the view.
    return findRdp(tab.key) ?? tab;
  }

  function openSsh(connectionId: string, title: string): TerminalTab {
    const tab = newTab('ssh', title, { connectionId });
    tabs.value.push(tab);
    activeKey.value = tab.key;
    return tab;
  }

  function openShellTab(shell: string, title: string): TerminalTab {
    const tab = newTab('pty', title, { shell });
    tabs.value.push(tab);
    activeKey.value = tab.key;
    return tab;
  }

  /** Whether the panel's shell is running (or starting): replacing it would end a live process. */
  function panelShellRunning(): boolean {
    const tab = panelShell.value;
    return tab?.phase === 'open' || tab?.phase === 'starting';
  }

  /**
   * Ends the panel's session on the host, if it still has one (a shell that exited stays there,
   * to be relaunched). The panel is the only view of it: a session it let go of would run on
   * unseen (and count in "Sessions: N") until a reload turned it into a tab. It is asked to close
   * whatever this page has heard of it (its session.changed may still be on the way); one it no
   * longer has is fine. On any other failure the panel keeps it, and the error says why.
   */
  async function endPanelSession(): Promise<void> {
    const id = panelShell.value?.sessionId;
    if (!id) return;
    try {
      await host.call('sessions.close', { sessionId: id });
    } catch (err) {
      if (asWraithError(err).code !== 'ENOTFOUND') throw err;
    }
  }

  /** A new shell in the panel, in place of the one it had, which is ended (ask the user first: panelShellRunning). */
  async function setPanelShell(shell: string, title: string): Promise<TerminalTab> {
    await endPanelSession();
    panelShell.value = newTab('pty', title, { shell });
    return panelShell.value;
  }

  /** Empties the panel (its Close button), ending its session. */
  async function closePanelShell(): Promise<void> {
    await endPanelSession();
    panelShell.value = null;
  }

  /**
   * Opens the session of a terminal at the size its view measured, with the passwords typed into
   * its card so far (`fromCard`: this connect follows one being typed).
   */
  async function start(key: string, cols: number, rows: number, fromCard = false): Promise<void> {
    const tab = find(key);
    if (!tab || tab.sessionId) return;
    tab.phase = 'starting';
    tab.problem = null;
    if (!fromCard) tab.credentialTries = 0;
    try {
      if (tab.kind === 'ssh') {
        const connectionId = tab.connectionId;
        if (!connectionId) throw new Error('This tab has no saved connection to open.');
        if (connectionDeleted(tab)) {
          tab.phase = 'failed';
          tab.problem = deletedProblem(tab);
          return;
        }
        const r: Output<'ssh.open'> | null = await untilClosed(key, (signal) =>
          vault.withUnlocked(`Connect to ${tab.title}`, () => opening(() => tagged(key, (promptTag) => host.call('ssh.open', { connectionId, cols, rows, promptTag, ...typedFor(key) }, { signal })))),
        );
        // Given up because its tab closed: there is nobody to tell.
        if (!r) return;
        // It had opened before the cancel reached the host: closedMeanwhile ends it.
        if (await closedMeanwhile(key, r.sessionId)) return;
        connectedWithTyped(tab);
        tab.sessionId = r.sessionId;
        // The session is open; a saved port forward that could not start is news, not a failure.
        for (const message of r.forwardErrors ?? []) toast(`${tab.title}: ${message}`, 'error');
        if (tab.startInput) {
          // The shell reads it once it has started (the pty holds it until then).
          host.notify('terminal.write', { sessionId: r.sessionId, data: tab.startInput });
          tab.startInput = null;
        }
      } else {
        // A tab that does not know its shell (re-attached from a host that did not say) takes the default one.
        tab.shell ??= await defaultShell();
        const shell = tab.shell;
        // The panel's shell is this window's own: other windows show no tab of it.
        const panel = panelShell.value?.key === key;
        const r = await opening(() => host.call('pty.spawn', { shell, cols, rows, ...(panel ? { panel } : {}) }));
        if (await closedMeanwhile(key, r.sessionId)) return;
        tab.sessionId = r.sessionId;
      }
      const info = tab.sessionId ? infos.value[tab.sessionId] : undefined;
      if (info) applyInfo(info);
      else if (tab.phase === 'starting') tab.phase = 'open';
    } catch (err) {
      if (await learnDeleted(tab, err)) {
        tab.phase = 'failed';
        tab.problem = deletedProblem(tab);
        return;
      }
      fail(tab, err, 'failed');
    }
  }

  /** The host's default local shell (pty.shells), or the first it found. */
  async function defaultShell(): Promise<string> {
    const shells = await host.call('pty.shells');
    const shell = shells.find((s) => s.isDefault) ?? shells[0];
    if (!shell) throw new WraithError('ENOTFOUND', 'No shell was found on this machine (looked for bash, zsh, sh, fish and $SHELL).');
    return shell.path;
  }

  /**
   * A tab closed (or, the panel's shell, replaced by "New shell") while its session opened: no
   * view will ever show that session, which would run on unseen and count in "Sessions: N" until
   * a reload turned it into a tab. It is ended instead. RDP tabs ask the same (rdp-session.ts).
   */
  async function closedMeanwhile(key: string, sessionId: string): Promise<boolean> {
    if (allTabs().some((t) => t.key === key)) return false;
    await host.call('sessions.close', { sessionId }).catch(() => undefined);
    return true;
  }

  /**
   * Records why connecting failed. A host key question becomes its card (the person decides,
   * whether the tab was opening or reconnecting), and so does a password or passphrase to type
   * (an SSH tab's own, or a jump host's on the way to it or to an RDP desktop); anything else
   * leaves the tab `otherwise`.
   */
  function fail(tab: SessionTab, err: unknown, otherwise: 'failed' | 'disconnected'): void {
    const e = asWraithError(err);
    tab.problem = { code: e.code, message: e.message, details: e.details ?? {} };
    const need = e.code === 'EAUTH' ? CredentialNeed.safeParse(e.details).data : undefined;
    if (need?.reason === 'credential-rejected') tab.credentialTries += 1;
    // A missing or refused password is asked for in the tab (its card), as ssh asks at its
    // prompt — up to MAX_CREDENTIAL_TRIES refusals, then the tab says it failed (Try again asks anew).
    const ask = need && tab.credentialTries < MAX_CREDENTIAL_TRIES;
    tab.phase = questionPhase(e.code) ?? (ask ? 'credential' : otherwise);
    // What was typed stays for the rest of this connect (a host key question or another hop's
    // password may come between), except a refused one; a connect given up forgets it all.
    if (tab.phase === 'credential' && need?.reason === 'credential-rejected') {
      typedSecrets.set(tab.key, (typedSecrets.get(tab.key) ?? []).filter((c) => c.connectionId !== need.connectionId));
    } else if (tab.phase === otherwise) {
      typedSecrets.delete(tab.key);
    }
  }

  /** What the tab's credential card asks for: the secret, the hop it is for, and whether one was refused. */
  function credentialNeed(tab: SessionTab): CredentialNeed | null {
    return tab.phase === 'credential' && tab.problem?.code === 'EAUTH' ? (CredentialNeed.safeParse(tab.problem.details).data ?? null) : null;
  }

  /**
   * Connects with the password or passphrase typed into the tab's card (saved in the vault only
   * when `save`): a dropped session reconnects, a tab that never opened opens. A refusal brings
   * the card back with the server's answer.
   */
  async function connectWithCredential(key: string, secret: string, save: boolean, cols: number, rows: number): Promise<void> {
    const tab = find(key);
    if (!tab || !keepTyped(tab, secret, save)) return;
    if (tab.sessionId) await reconnect(tab.key, true);
    else await start(tab.key, cols, rows, true);
  }

  /**
   * Keeps the secret typed into the tab's card, for the hop the card asked about, for the rest of
   * this connect (in place of one typed for that hop before). False: the tab asks for none.
   */
  function keepTyped(tab: SessionTab, secret: string, save: boolean): boolean {
    const need = credentialNeed(tab);
    if (!need) return false;
    const others = (typedSecrets.get(tab.key) ?? []).filter((c) => c.connectionId !== need.connectionId);
    typedSecrets.set(tab.key, [...others, { connectionId: need.connectionId, secret, save }]);
    return true;
  }

  /** The tab connected: what was typed for it, and its refusals, are forgotten. */
  function connectedWithTyped(tab: SessionTab): void {
    tab.credentialTries = 0;
    typedSecrets.delete(tab.key);
  }

  /**
   * Connects again after a host key decision: a tab whose session dropped reconnects that session
   * (keeping its scrollback, as Reconnect does); a tab that never opened opens one.
   */
  async function connectAfterDecision(tab: TerminalTab, cols: number, rows: number): Promise<void> {
    if (tab.sessionId) await reconnect(tab.key);
    else await start(tab.key, cols, rows);
  }

  function hostKeyTarget(tab: SessionTab): { host: string; port: number; keyType: string; fingerprint: string } | null {
    const d = tab.problem?.details ?? {};
    const { host: h, port, keyType, fingerprint } = d;
    if (typeof h !== 'string' || typeof port !== 'number' || typeof keyType !== 'string' || typeof fingerprint !== 'string') return null;
    return { host: h, port, keyType, fingerprint };
  }

  /**
   * What a tab's question is about, as Known hosts keeps it: an RDP certificate (ECERT_*), else
   * an SSH host key — the server's, or a jump host's on the way (an RDP tab's too).
   */
  function identityKind(tab: SessionTab): 'ssh' | 'rdp' {
    return tab.problem?.code.startsWith('ECERT_') ? 'rdp' : 'ssh';
  }

  /**
   * Trusts the fingerprint the tab's question showed (false: the tab asks nothing). SSH and RDP
   * tabs both call it, whichever hop the question was about; they then connect again.
   */
  async function trustShownIdentity(tab: SessionTab): Promise<boolean> {
    const target = hostKeyTarget(tab);
    if (!target) return false;
    await host.call('hostkeys.trust', { kind: identityKind(tab), ...target });
    delete tab.forgotten;
    return true;
  }

  /** After a changed key or certificate, deliberately: forgets the trusted one, so the next connect asks about the new one. */
  async function forgetShownIdentity(tab: SessionTab): Promise<boolean> {
    const target = hostKeyTarget(tab);
    if (!target) return false;
    await host.call('hostkeys.forget', { kind: identityKind(tab), host: target.host, port: target.port });
    tab.forgotten = { kind: identityKind(tab), host: target.host, port: target.port };
    return true;
  }

  /**
   * Whether the tab's "not known yet" question is about the server whose old key or certificate
   * its card forgot: Wraith knew that server, so the card does not call it a first connection.
   */
  function askedAfterForget(tab: SessionTab): boolean {
    const target = tab.phase === 'hostkey-unknown' ? hostKeyTarget(tab) : null;
    const f = tab.forgotten;
    return !!target && !!f && f.kind === identityKind(tab) && f.host === target.host && f.port === target.port;
  }

  /** Trusts the fingerprint the user was shown, then connects again. */
  async function trustAndConnect(key: string, cols: number, rows: number): Promise<void> {
    const tab = find(key);
    if (tab && (await trustShownIdentity(tab))) await connectAfterDecision(tab, cols, rows);
  }

  /** The deliberate path after a changed key: forget the old one, then see (and judge) the new one. */
  async function forgetAndRetry(key: string, cols: number, rows: number): Promise<void> {
    const tab = find(key);
    if (tab && (await forgetShownIdentity(tab))) await connectAfterDecision(tab, cols, rows);
  }

  /** Reconnects a dropped session (`fromCard`: this follows a password typed into its card). */
  async function reconnect(key: string, fromCard = false): Promise<void> {
    const tab = find(key);
    if (!tab?.sessionId) return;
    if (!fromCard) tab.credentialTries = 0;
    // Nothing left to reconnect to (the host would answer with the connection's id): the tab stays
    // as it is, and says why where Reconnect was.
    if (connectionDeleted(tab)) return;
    // The tab stays "disconnected" (typing goes nowhere) until the host reports it open again.
    try {
      const sessionId = tab.sessionId;
      await vault.withUnlocked(`Reconnect to ${tab.title}`, () => tagged(key, (promptTag) => host.call('ssh.reconnect', { sessionId, promptTag, ...typedFor(key) })));
      connectedWithTyped(tab);
      const info = tab.sessionId ? infos.value[tab.sessionId] : undefined;
      if (info) applyInfo(info);
    } catch (err) {
      // Deleted meanwhile: the tab stays as it was, and its banner says why it cannot reconnect.
      if (await learnDeleted(tab, err)) return;
      // A server whose host key changed, or whose key was forgotten, asks the same question a new
      // tab asks (its card); Reconnect alone would only fail the same way again.
      fail(tab, err, 'disconnected');
    }
  }

  /**
   * Cancel on a question a Reconnect asked (a host key, a password or passphrase): the tab goes
   * back to "Disconnected — Reconnect" with its scrollback, as it was before Reconnect, rather
   * than closing. The host keeps the session disconnected meanwhile; one it no longer has ended.
   * An RDP tab's certificate question (asked by its Reconnect) goes back the same way.
   */
  function cancelReconnect(key: string): void {
    const tab = find(key) ?? findRdp(key);
    if (!tab?.sessionId) return;
    // An RDP tab's question may be about its jump host's SSH key rather than its certificate.
    const identity = identityKind(tab) === 'rdp' ? 'certificate' : 'host key';
    const server = typeof tab.problem?.details.jumpHostFor === 'string' ? 'jump host' : 'server';
    const what =
      tab.phase === 'hostkey-unknown' ? `the ${server}'s ${identity} was not trusted` :
      tab.phase === 'hostkey-changed' ? `the ${server}'s ${identity} has changed` :
      tab.phase === 'hostkey-revoked' ? `the ${server} offered a revoked ${identity}` :
      tab.phase === 'credential' ? `no ${credentialNeed(tab)?.credential ?? 'password'} was given` : null;
    if (!what) return;
    tab.credentialTries = 0;
    typedSecrets.delete(key);
    if (!infos.value[tab.sessionId]) {
      tab.phase = 'ended';
      tab.problem = { code: 'ESESSIONCLOSED', message: 'The host no longer has this session.', details: {} };
      return;
    }
    tab.phase = 'disconnected';
    tab.problem = { code: 'ECANCELLED', message: `Not reconnected: ${what}.`, details: {} };
  }

  /**
   * Starts the shell again in the same view, keeping the scrollback: a local shell whose process
   * exited is relaunched in place (same session); a session the host no longer has is opened anew.
   * A relaunch the host refuses (the shell was moved or removed) fails as a new shell would: the
   * tab's card says why, where "Relaunch?" would only ask again for what cannot work.
   */
  async function relaunch(key: string, cols: number, rows: number): Promise<void> {
    const tab = find(key);
    if (!tab) return;
    const sessionId = tab.sessionId;
    if (tab.kind === 'pty' && sessionId && infos.value[sessionId]) {
      tab.problem = null;
      try {
        await host.call('pty.relaunch', { sessionId });
        const info = infos.value[sessionId];
        if (info) applyInfo(info);
      } catch (err) {
        fail(tab, err, 'failed');
      }
      return;
    }
    tab.sessionId = null;
    tab.reattach = false;
    await start(key, cols, rows);
  }

  /**
   * Ends a terminal's session and keeps the tab, ended, for its output. The host hangs up on the
   * shell and, if it stays (it may ignore SIGHUP), sends SIGTERM and then SIGKILL: a few seconds
   * in which the tab says "Stopping…" rather than nothing.
   */
  async function kill(key: string): Promise<void> {
    const tab = find(key);
    if (!tab?.sessionId || tab.phase === 'ended' || tab.stopping) return;
    tab.stopping = true;
    try {
      await host.call('sessions.close', { sessionId: tab.sessionId });
    } catch (err) {
      // Gone already: its tab ends as the host's news says. Anything else: it still runs.
      if (asWraithError(err).code !== 'ENOTFOUND') toast(`${tabLabel(tab)} was not stopped: ${asWraithError(err).message}`, 'error');
    } finally {
      tab.stopping = false;
    }
  }

  /** Takes the tab at `index` off the strip (its neighbour comes forward in its place); its session is left as it is. */
  function removeTab(index: number): void {
    const [tab] = tabs.value.splice(index, 1);
    if (!tab) return;
    typedSecrets.delete(tab.key);
    openCancels.get(tab.key)?.abort();
    if (activeKey.value === tab.key) activeKey.value = (tabs.value[index] ?? tabs.value[index - 1])?.key ?? null;
  }

  async function close(key: string): Promise<void> {
    const index = tabs.value.findIndex((t) => t.key === key);
    const tab = tabs.value[index];
    if (!tab) return;
    removeTab(index);
    if (tab.sessionId && tab.phase !== 'ended') {
      await host.call('sessions.close', { sessionId: tab.sessionId }).catch(() => undefined);
    }
  }

  /** Whether the tab knows what to open again: a saved connection, or the shell's path. */
  function canDuplicate(tab: SessionTab): boolean {
    if (connectionDeleted(tab)) return false;
    return tab.kind === 'rdp' || (tab.kind === 'ssh' && tab.connectionId !== null) || (tab.kind === 'pty' && tab.shell !== null);
  }

  /** Another tab on the same connection or shell, right after this one (a new session, not a view of this one). */
  function duplicate(key: string): SessionTab | null {
    const tab = tabs.value.find((t) => t.key === key);
    let copy: SessionTab | null = null;
    if (tab?.kind === 'rdp') copy = openRdp(tab.connectionId, tab.title);
    else if (tab?.kind === 'ssh' && tab.connectionId) copy = openSsh(tab.connectionId, tab.title);
    else if (tab?.kind === 'pty' && tab.shell) copy = openShellTab(tab.shell, tab.title);
    if (copy) move(copy.key, tabs.value.findIndex((t) => t.key === key) + 1);
    // A copy of a renamed tab has the name it was given, and keeps it across a reload too.
    const shown = copy && tabs.value.find((t) => t.key === copy.key);
    if (shown && tab?.renamed) shown.renamed = true;
    return shown ?? copy;
  }

  /**
   * A new SSH tab on the same connection whose shell starts in `dir`: it types `cd '<dir>'` once
   * the session is open (with a leading space, which bash and zsh keep out of the history).
   */
  function openSshIn(key: string, dir: string): SessionTab | null {
    const copy = duplicate(key);
    const tab = copy && find(copy.key);
    if (!tab || tab.kind !== 'ssh') return copy;
    tab.startInput = ` cd ${shellQuote(dir)}\r`;
    return tab;
  }

  /** The title shown on the tab (this window only, kept across a reload); blank keeps the old one. */
  function rename(key: string, title: string): void {
    const tab = tabs.value.find((t) => t.key === key);
    const clean = cleanTitle(title);
    if (!tab || !clean) return;
    tab.title = clean;
    tab.renamed = true;
  }

  /**
   * The title the program in a terminal set. It comes from the remote side, so it is made plain
   * text of sane length before the window and the tab's tooltip show it.
   */
  function setShellTitle(key: string, title: string): void {
    const tab = allTerminals().find((t) => t.key === key);
    const clean = title.replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ').replace(/\s+/g, ' ').trim().slice(0, 200);
    if (tab) tab.shellTitle = clean || null;
  }

  /** The folder the shell in a terminal said it is in (OSC 7), already a plain path. */
  function setShellCwd(key: string, cwd: string): void {
    const tab = allTerminals().find((t) => t.key === key);
    if (tab) tab.cwd = cwd;
  }

  /** Puts a tab at `index` of the strip (dragging, duplicates). */
  function move(key: string, index: number): void {
    const from = tabs.value.findIndex((t) => t.key === key);
    const [tab] = from >= 0 ? tabs.value.splice(from, 1) : [];
    if (tab) tabs.value.splice(Math.max(0, Math.min(tabs.value.length, index)), 0, tab);
  }

  function activate(key: string): void {
    if (tabs.value.some((t) => t.key === key)) activeKey.value = key;
  }

  /**
   * Marks a tab that is not shown: output came, or the bell rang (which outranks output). The
   * panel's shell too, while the panel is hidden (the status bar's Local shell button shows it).
   */
  function markAttention(key: string, what: 'activity' | 'bell'): void {
    if (key === activeKey.value) return;
    const tab = tabs.value.find((t) => t.key === key) ?? (panelShell.value?.key === key ? panelShell.value : undefined);
    if (tab && tab.kind !== 'rdp' && tab.attention !== 'bell') tab.attention = what;
  }

  function cycle(step: 1 | -1): void {
    const n = tabs.value.length;
    if (!n) return;
    const i = tabs.value.findIndex((t) => t.key === activeKey.value);
    activeKey.value = tabs.value[(i + step + n) % n]?.key ?? null;
  }

  async function answerPrompt(promptId: string, answers: string[] | null): Promise<void> {
    prompts.value = prompts.value.filter((p) => p.promptId !== promptId);
    await host.call('ssh.answer', { promptId, answers });
  }

  return {
    infos, tabs, activeKey, activeTab, panelShell, prompts, windowPrompt, promptOf, runningCount,
    load, opening, untilClosed, openSsh, openShellTab, openRdp, findRdp, setPanelShell, panelShellRunning, closePanelShell, start, trustAndConnect, forgetAndRetry, connectWithCredential, credentialNeed, reconnect, cancelReconnect, relaunch, kill, close, activate, cycle,
    fail, typedFor, keepTyped, connectedWithTyped, tagged,
    canDuplicate, connectionDeleted, deletedProblem, learnDeleted, closedMeanwhile, duplicate, openSshIn, rename, setShellTitle, setShellCwd, move, markAttention,
    answerPrompt, hostKeyTarget, trustShownIdentity, forgetShownIdentity, askedAfterForget,
  };
});
