import { defineStore } from 'pinia';
import { computed, ref, watch } from 'vue';
import { useSessionsStore } from '../../stores/sessions.js';

/**
 * Broadcast input (MobaXterm's MultiExec, Termius' broadcast): what the Commander types in one
 * terminal tab of the broadcast goes to every other tab in it, to run the same commands on
 * several servers at once.
 *
 * Only what the user types or pastes travels (useTerminal's onUserInput), never what a terminal
 * answers by itself: a cursor position report or a mouse click in one tab means nothing in
 * another. Keys go out as the typing terminal encoded them; a paste is pasted into each terminal,
 * so that each wraps it for bracketed paste as its own program asked. A multi-line paste is
 * confirmed once, at the tab it was pasted in, naming how many terminals it goes to.
 */
export type UserInput = { kind: 'key'; data: string } | { kind: 'paste'; text: string };

/** How a terminal tab takes input broadcast from another (registered by its TerminalPane). */
export interface BroadcastReceiver {
  key(data: string): void;
  paste(text: string): void;
}

export const useBroadcastStore = defineStore('broadcast', () => {
  const sessions = useSessionsStore();
  /** Tab keys in the broadcast, in the order they joined: none, or two and more. */
  const members = ref<string[]>([]);
  // Not reactive: functions of mounted panes.
  const receivers = new Map<string, BroadcastReceiver>();

  const terminalTabs = computed(() => sessions.tabs.filter((t) => t.kind !== 'rdp'));
  /** A broadcast needs two terminals; one left alone is no broadcast. */
  const active = computed(() => members.value.length >= 2);

  // Closed tabs leave; a broadcast down to one tab ends.
  watch(
    () => terminalTabs.value.map((t) => t.key),
    (keys) => {
      const open = new Set(keys);
      const left = members.value.filter((k) => open.has(k));
      members.value = left.length >= 2 ? left : [];
    },
  );

  function includes(key: string): boolean {
    return active.value && members.value.includes(key);
  }

  /** Every terminal tab open now joins (Ctrl+Shift+B); tabs opened later do not. */
  function startAll(): void {
    const keys = terminalTabs.value.map((t) => t.key);
    members.value = keys.length >= 2 ? keys : [];
  }

  function stop(): void {
    members.value = [];
  }

  /** Ctrl+Shift+B: start with every terminal tab, or stop. */
  function toggleAll(): void {
    if (active.value) stop();
    else startAll();
  }

  /** The terminal tab in front, when `key` may start a broadcast with it (no broadcast yet, another tab). */
  function partnerFor(key: string): string | null {
    const front = sessions.activeKey;
    if (active.value || !front || front === key || !terminalTabs.value.some((t) => t.key === front)) return null;
    return terminalTabs.value.some((t) => t.key === key) ? front : null;
  }

  /** A tab leaves or joins the broadcast; with none running, it starts one with the tab in front. */
  function toggle(key: string): void {
    if (members.value.includes(key)) {
      const left = members.value.filter((k) => k !== key);
      members.value = left.length >= 2 ? left : [];
    } else if (active.value) {
      members.value = [...members.value, key];
    } else {
      const front = partnerFor(key);
      if (front) members.value = [front, key];
    }
  }

  /** The other tabs input typed in `key` goes to (empty when `key` is not broadcasting). */
  function othersOf(key: string): string[] {
    return includes(key) ? members.value.filter((k) => k !== key) : [];
  }

  function titlesOf(keys: string[]): string[] {
    return keys.map((k) => sessions.tabs.find((t) => t.key === k)?.title ?? k);
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

  function register(key: string, receiver: BroadcastReceiver): () => void {
    receivers.set(key, receiver);
    return () => {
      if (receivers.get(key) === receiver) receivers.delete(key);
    };
  }

  return { members, active, includes, startAll, stop, toggleAll, toggle, partnerFor, othersOf, titlesOf, fanOut, register };
});
