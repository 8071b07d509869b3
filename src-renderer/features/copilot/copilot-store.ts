import { defineStore } from 'pinia';
import { computed, ref } from 'vue';
import type { AiMode, AiSettingsView, ApprovalDetails, ConversationItem, ConversationSummary, TokenUsage } from '@common/contract/ai.js';
import type { EventPayload, Output } from '@common/contract/index.js';
import { asWraithError } from '../../composables/errors.js';
import { useHost } from '../../transport/index.js';

export type CardStatus = 'pending' | 'running' | 'ok' | 'error' | 'denied' | 'aborted';

export interface ToolCard {
  kind: 'tool';
  id: string;
  runId: string | null;
  toolUseId: string;
  name: string;
  effect: 'read' | 'act';
  input: unknown;
  summary: string;
  /** The session the tool works in, if any (drives the XO marker on that tab). */
  sessionId: string | null;
  status: CardStatus;
  output: string | null;
  image: { mime: string; data: string; width: number; height: number } | null;
  /** Set while the act waits for the Commander. */
  approval: ApprovalDetails | null;
  decision: string | null;
}

export interface TextItem {
  kind: 'user' | 'assistant' | 'notice';
  id: string;
  runId: string | null;
  text: string;
  tone?: 'info' | 'error';
}

export type Item = TextItem | ToolCard;

const ZERO: TokenUsage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0 };
let seq = 0;
const nid = () => `i${++seq}`;

/**
 * `stored` (the conversation as the host keeps it) with the notices `shown` has put back: the host
 * keeps no record of them ("Stopped.", errors), so each goes after as many stored items as it
 * followed on screen.
 */
function withNotices(shown: Item[], stored: Item[]): Item[] {
  const out: Item[] = [];
  let placed = 0;
  let passed = 0;
  for (const it of shown) {
    if (it.kind !== 'notice') {
      passed += 1;
      continue;
    }
    while (placed < Math.min(passed, stored.length)) out.push(stored[placed++]!);
    out.push(it);
  }
  return out.concat(stored.slice(placed));
}

export function totalOf(u: TokenUsage): number {
  return u.inputTokens + u.outputTokens + u.cacheReadTokens + u.cacheCreationTokens;
}

function fromConversation(items: ConversationItem[]): Item[] {
  return items.map((i): Item => {
    if (i.type === 'tool') {
      return {
        kind: 'tool',
        id: nid(),
        runId: null,
        toolUseId: i.toolUseId,
        name: i.name,
        effect: i.effect,
        input: i.input,
        summary: i.summary,
        sessionId: null,
        status: i.status,
        output: i.output,
        image: i.image,
        approval: null,
        decision: null,
      };
    }
    return { kind: i.type, id: nid(), runId: null, text: i.text };
  });
}

/** The XO panel's state: the open conversation, the run in progress, mode, settings and usage. */
export const useCopilotStore = defineStore('copilot', () => {
  const host = useHost();
  const conversationId = ref<string | null>(null);
  const title = ref<string>('New conversation');
  const items = ref<Item[]>([]);
  const runId = ref<string | null>(null);
  const mode = ref<AiMode>('ask');
  const settings = ref<AiSettingsView | null>(null);
  const usage = ref<Output<'ai.usage'> | null>(null);
  const conversationUsage = ref<TokenUsage>(ZERO);
  const conversations = ref<ConversationSummary[]>([]);
  const loaded = ref(false);

  const running = computed(() => runId.value !== null);
  /**
   * Sessions the XO is working in during the current run: 'waiting' while an act there waits
   * for the Commander, else 'active'. The tab strip marks them so the XO's hand is visible.
   */
  const drivenSessions = computed(() => {
    const driven = new Map<string, 'active' | 'waiting'>();
    if (runId.value === null) return driven;
    for (const it of items.value) {
      if (it.kind !== 'tool' || it.runId !== runId.value || !it.sessionId) continue;
      if (it.status === 'pending') driven.set(it.sessionId, 'waiting');
      else if (!driven.has(it.sessionId)) driven.set(it.sessionId, 'active');
    }
    return driven;
  });
  const hasKey = computed(() => settings.value?.apiKeySource != null);
  const pendingApprovals = computed(() => items.value.filter((i): i is ToolCard => i.kind === 'tool' && i.approval !== null && i.status === 'pending'));

  function mine(p: { conversationId: string; runId: string }): boolean {
    return p.conversationId === conversationId.value || p.runId === runId.value;
  }

  function card(toolUseId: string): ToolCard | undefined {
    return items.value.find((i): i is ToolCard => i.kind === 'tool' && i.toolUseId === toolUseId);
  }

  function notice(text: string, tone: 'info' | 'error' = 'info'): void {
    items.value.push({ kind: 'notice', id: nid(), runId: runId.value, text, tone });
  }

  host.on('ai.text', (p) => {
    if (!mine(p)) return;
    const last = items.value.at(-1);
    if (last && last.kind === 'assistant' && last.runId === p.runId) last.text += p.text;
    else items.value.push({ kind: 'assistant', id: nid(), runId: p.runId, text: p.text });
  });
  host.on('ai.tool_use', (p) => {
    if (!mine(p)) return;
    items.value.push({
      kind: 'tool',
      id: nid(),
      runId: p.runId,
      toolUseId: p.toolUseId,
      name: p.name,
      effect: p.effect,
      input: p.input,
      summary: p.summary,
      sessionId: p.sessionId,
      status: 'running',
      output: null,
      image: null,
      approval: null,
      decision: null,
    });
  });
  host.on('ai.approval_request', (p) => {
    if (!mine(p)) return;
    const c = card(p.toolUseId);
    if (c) {
      c.approval = p.details;
      c.status = 'pending';
    }
  });
  host.on('ai.tool_result', (p: EventPayload<'ai.tool_result'>) => {
    if (!mine(p)) return;
    const c = card(p.toolUseId);
    if (!c) return;
    c.status = p.status;
    c.output = p.output;
    c.image = p.image;
    c.decision = p.decision;
    c.approval = null;
  });
  host.on('ai.done', (p) => {
    if (p.runId !== runId.value) return;
    runId.value = null;
    if (p.stopReason === 'aborted') notice('Stopped.');
    conversationUsage.value = { ...conversationUsage.value };
    void refreshUsage();
  });
  host.on('ai.error', (p) => {
    if (!mine(p)) return;
    notice(p.message, 'error');
  });
  host.on('ai.mode_changed', (p) => {
    mode.value = p.mode;
  });

  /**
   * Events the host sent while the link was down are lost: a run that ended meanwhile would look
   * busy for good, and an act that asked for the Commander meanwhile would wait where nobody sees
   * it. After a reconnect the open conversation is shown as the host keeps it, with its run (if
   * one still goes) and the acts that run waits on.
   */
  async function recover(): Promise<void> {
    const id = conversationId.value;
    if (!id) return;
    let runs: Output<'ai.runs'>;
    let conv: Output<'ai.conversations.get'>;
    try {
      [runs, conv] = await Promise.all([host.call('ai.runs'), host.call('ai.conversations.get', { id })]);
    } catch {
      return; // down again: the next reconnect asks again
    }
    if (conversationId.value !== id) return;
    const run = runs.find((r) => r.conversationId === id) ?? null;
    const next = fromConversation(conv.items);
    if (run) {
      const asking = new Map(run.approvals.map((a) => [a.toolUseId, a]));
      for (const it of next) {
        // Cards without an outcome yet are this run's: waiting for the Commander, or running.
        if (it.kind !== 'tool' || it.status !== 'pending') continue;
        const a = asking.get(it.toolUseId);
        Object.assign(it, { runId: run.runId, status: a ? 'pending' : 'running', approval: a?.details ?? null, sessionId: a?.details.sessionId ?? null });
      }
      // The answer being written is stored only once it is whole: keep what this panel has of it.
      const last = items.value.at(-1);
      if (last?.kind === 'assistant' && last.runId === run.runId && !next.some((i) => i.kind === 'assistant' && i.text === last.text)) next.push(last);
    }
    items.value = withNotices(items.value, next);
    conversationUsage.value = conv.usage;
    const ended = runId.value !== null && run === null;
    runId.value = run?.runId ?? null;
    if (ended) void refreshUsage();
  }
  host.onOpen((reconnected) => {
    if (reconnected) void recover();
  });

  async function load(): Promise<void> {
    const [m, s] = await Promise.all([host.call('ai.mode.get'), host.call('ai.settings.get')]);
    mode.value = m.mode;
    settings.value = s;
    loaded.value = true;
    await refreshUsage();
  }

  async function refreshUsage(): Promise<void> {
    usage.value = await host.call('ai.usage', conversationId.value ? { conversationId: conversationId.value } : {});
    conversationUsage.value = usage.value.conversation ?? ZERO;
  }

  async function send(message: string, sessionId: string | null): Promise<void> {
    const text = message.trim();
    if (!text || running.value) return;
    items.value.push({ kind: 'user', id: nid(), runId: null, text });
    try {
      const r = await host.call('ai.send', {
        message: text,
        ...(conversationId.value ? { conversationId: conversationId.value } : {}),
        ...(sessionId ? { sessionId } : {}),
      });
      if (!conversationId.value) title.value = text.slice(0, 60);
      conversationId.value = r.conversationId;
      runId.value = r.runId;
    } catch (err) {
      const e = asWraithError(err);
      notice(e.message, 'error');
      if (e.code === 'EUNAVAILABLE') settings.value = await host.call('ai.settings.get');
    }
  }

  async function abort(): Promise<void> {
    if (runId.value) await host.call('ai.abort', { runId: runId.value });
  }

  async function approve(c: ToolCard, all = false): Promise<void> {
    if (!c.runId) return;
    c.status = 'running';
    c.approval = null;
    await host.call('ai.approve', { runId: c.runId, toolUseId: c.toolUseId, all });
  }

  async function deny(c: ToolCard, reason: string): Promise<void> {
    if (!c.runId) return;
    c.approval = null;
    await host.call('ai.deny', { runId: c.runId, toolUseId: c.toolUseId, reason });
  }

  async function setMode(m: AiMode): Promise<void> {
    mode.value = (await host.call('ai.mode.set', { mode: m })).mode;
  }

  async function saveSettings(patch: Parameters<typeof host.call<'ai.settings.set'>>[1]): Promise<void> {
    settings.value = await host.call('ai.settings.set', patch);
    await refreshUsage();
  }

  function newConversation(): void {
    if (running.value) return;
    conversationId.value = null;
    title.value = 'New conversation';
    items.value = [];
    conversationUsage.value = ZERO;
  }

  async function open(id: string): Promise<void> {
    if (running.value) return;
    const c = await host.call('ai.conversations.get', { id });
    conversationId.value = c.id;
    title.value = c.title || 'Untitled';
    items.value = fromConversation(c.items);
    conversationUsage.value = c.usage;
  }

  async function listConversations(query: string): Promise<void> {
    if (query.trim()) {
      const found = await host.call('ai.conversations.search', { query });
      const all = await host.call('ai.conversations.list', { limit: 500 });
      conversations.value = found.flatMap((f) => all.filter((c) => c.id === f.conversationId));
    } else conversations.value = await host.call('ai.conversations.list', { limit: 100 });
  }

  async function rename(id: string, newTitle: string): Promise<void> {
    const s = await host.call('ai.conversations.rename', { id, title: newTitle });
    if (id === conversationId.value) title.value = s.title;
    conversations.value = conversations.value.map((c) => (c.id === id ? s : c));
  }

  async function remove(id: string): Promise<void> {
    await host.call('ai.conversations.delete', { id });
    conversations.value = conversations.value.filter((c) => c.id !== id);
    if (id === conversationId.value) newConversation();
  }

  return {
    conversationId,
    title,
    items,
    runId,
    running,
    drivenSessions,
    mode,
    settings,
    usage,
    conversationUsage,
    conversations,
    loaded,
    hasKey,
    pendingApprovals,
    load,
    refreshUsage,
    send,
    abort,
    approve,
    deny,
    setMode,
    saveSettings,
    newConversation,
    open,
    listConversations,
    rename,
    remove,
  };
});
