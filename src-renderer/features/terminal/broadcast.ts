import { defineStore } from 'pinia';
import { computed, ref } from 'vue';
import { toast } from '../../composables/dialogs.js';
import { asWraithError } from '../../composables/errors.js';
import { tabLabel, useSessionsStore } from '../../stores/sessions.js';
import { useHost } from '../../transport/index.js';

/**
 * Broadcast input (MobaXterm's MultiExec, Termius' broadcast): what the Commander types in one
 * terminal tab of the broadcast goes to every other tab in it, to run the same commands on
 * several servers at once.
 *
 * Which sessions are in it is the host's (broadcast.get|set, broadcast.changed), so every window
 * shows the same broadcast and a reload keeps it. The fan-out is here: only what the user types
 * (useTerminal's onUserInput) or pastes travels, never what a terminal answers by itself (a
 * cursor position report or a mouse click in one tab means nothing in another). Keys go out as
 * the typing terminal encoded them; a paste is pasted into each terminal, so that each wraps it
 * for bracketed paste as its own program asked. A paste is confirmed once, at the tab it was
 * pasted in, naming how many terminals it goes to, and asked about when it would run a line in
 * any of them (one without bracketed paste), not only in the tab it was pasted in.
 */
export type UserInput = { kind: 'key'; data: string } | { kind: 'paste'; text: string };

/** How a terminal tab takes input broadcast from another (registered by its TerminalPane). */
export interface BroadcastReceiver {
  key(data: string): void;
  paste(text: string): void;
  /** Whether its program turned bracketed paste on: without it a pasted line end runs the line. */
  bracketedPaste(): boolean;
}

export const useBroadcastStore = defineStore('broadcast', () => {
  const host = useHost();
  const sessions = useSessionsStore();
  /** The sessions in the broadcast, as the host last said: none, or two and more. */
  const sessionIds = ref<string[]>([]);
  // Not reactive: functions of mounted panes, by tab key.
  const receivers = new Map<string, BroadcastReceiver>();

  host.on('broadcast.changed', (e) => (sessionIds.value = e.sessionIds));

  /** Reads the host's broadcast (App loads it with everything else whenever the link opens). */
  async function load(): Promise<void> {
    sessionIds.value = (await host.call('broadcast.get', {})).sessionIds;
  }

  /** Terminal tabs with a session: the ones that can take part. */
  const terminalTabs = computed(() => sessions.tabs.filter((t) => t.kind !== 'rdp' && t.sessionId !== null));
  const active = computed(() => sessionIds.value.length >= 2);
  /** Whether a broadcast can start: two terminal tabs with a session or more. */
  const available = computed(() => terminalTabs.value.length >= 2);
  /** Tab keys in the broadcast, in the strip's order. */
  const members = computed(() => terminalTabs.value.filter((t) => t.sessionId && sessionIds.value.includes(t.sessionId)).map((t) => t.key));

  function sessionOf(key: string): string | null {
    return terminalTabs.value.find((t) => t.key === key)?.sessionId ?? null;
  }

  function includes(key: string): boolean {
    const id = sessionOf(key);
    return active.value && id !== null && sessionIds.value.includes(id);
  }

  function set(ids: string[]): void {
    sessionIds.value = ids.length >= 2 ? ids : []; // at once; the host's answer confirms it
    host
      .call('broadcast.set', { sessionIds: ids })
      .then((r) => (sessionIds.value = r.sessionIds))
      .catch((err: unknown) => toast(`Could not change the broadcast: ${asWraithError(err).message}`, 'error'));
  }

  /** Every terminal tab open now joins (Ctrl+Shift+B); tabs opened later do not. */
  function startAll(): void {
    set(terminalTabs.value.map((t) => t.sessionId as string));
  }

  function stop(): void {
    set([]);
  }

  /** Ctrl+Shift+B: start with every terminal tab, or stop. */
  function toggleAll(): void {
    if (active.value) stop();
    else startAll();
  }

  /** The terminal tab in front, when `key` may start a broadcast with it (no broadcast yet, another tab). */
  function partnerFor(key: string): string | null {
    const front = sessions.activeKey;
    if (active.value || !front || front === key || !sessionOf(front) || !sessionOf(key)) return null;
    return front;
  }

  /** A tab leaves or joins the broadcast; with none running, it starts one with the tab in front. */
  function toggle(key: string): void {
    const id = sessionOf(key);
    if (!id) return;
    if (includes(key)) set(sessionIds.value.filter((s) => s !== id));
    else if (active.value) set([...sessionIds.value, id]);
    else {
      const front = partnerFor(key);
      const frontId = front ? sessionOf(front) : null;
      if (frontId) set([frontId, id]);
    }
  }

  /** The other tabs input typed in `key` goes to (empty when `key` is not broadcasting). */
  function othersOf(key: string): string[] {
    return includes(key) ? members.value.filter((k) => k !== key) : [];
  }

  function titlesOf(keys: string[]): string[] {
    return keys.map((k) => {
      const tab = sessions.tabs.find((t) => t.key === k);
      return tab ? tabLabel(tab) : k;
    });
  }

  /** Sends what the user typed or pasted in tab `from` to the other tabs of the broadcast. */
  function fanOut(from: string, input: UserInput): void {
    for (const key of othersOf(from)) {
      const r = receivers.get(key);
      if (!r) continue;
      if (input.kind === 'key') r.key(input.data);
      else r.paste(input.text);
    }
  }

  /**
   * The tabs among `from`'s broadcast partners whose program reads a paste as typed keys (no
   * bracketed paste): a paste that only lands on the command line in `from` runs there at once.
   */
  function unbracketedOthersOf(from: string): string[] {
    return othersOf(from).filter((key) => receivers.get(key)?.bracketedPaste() === false);
  }

  function register(key: string, receiver: BroadcastReceiver): () => void {
    receivers.set(key, receiver);
    return () => {
      if (receivers.get(key) === receiver) receivers.delete(key);
    };
  }

  return { load, members, active, available, includes, stop, toggleAll, toggle, partnerFor, othersOf, unbracketedOthersOf, titlesOf, fanOut, register };
});
