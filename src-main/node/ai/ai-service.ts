import Anthropic from '@anthropic-ai/sdk';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import {
  AiMode,
  AiSettings,
  type AiSettingsView,
  type ApprovalRequest,
  type ConversationItem,
  type ConversationSummary,
  type TokenUsage,
  type ToolEffect,
} from '../../common/contract/ai.js';
import { WraithError, toSerializedError } from '../../common/errors.js';
import type { AuditLog } from '../audit/audit-log.js';
import type { Db } from '../db/database.js';
import type { CallContext, EventBus, Router } from '../router.js';
import type { PasswordPromptTracker, Redactor } from '../security/redact.js';
import type { SessionRegistry } from '../sessions/session-registry.js';
import type { Vault } from '../vault/vault.js';
import { prepareMessages } from './context.js';
import { ConversationStore, localDay, totalTokens } from './conversation-store.js';
import type { Block, ToolResultBlock, ToolUseBlock } from './messages.js';
import { loadSystemPrompt, systemPromptPath } from './system-prompt.js';
import { type AiTool, type ScreenGeometry, type ToolContext, type ToolOutput, buildTools } from './tools.js';

export interface AiServiceDeps {
  db: Db;
  router: Router;
  bus: EventBus;
  vault: Vault;
  sessions: SessionRegistry;
  audit: AuditLog;
  redactor: Redactor;
  tracker: PasswordPromptTracker;
  dataDir: string;
}

type Decision =
  | { kind: 'approved'; by: string; all: boolean }
  | { kind: 'denied'; by: string; reason: string }
  | { kind: 'aborted' };

interface Run {
  id: string;
  conversationId: string;
  controller: AbortController;
  approveAll: boolean;
  /** Acts waiting for the Commander, by tool use id: what was asked, and how to answer. */
  pending: Map<string, { request: ApprovalRequest; decide: (d: Decision) => void }>;
  done: Promise<void>;
}

const NO_KEY_MESSAGE =
  'The XO has no Anthropic API key. Add one in XO settings (it is stored encrypted in the vault), or set ANTHROPIC_API_KEY in the environment of the Wraith host.';

const ZERO: TokenUsage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0 };

function addUsage(a: TokenUsage, b: TokenUsage): TokenUsage {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheReadTokens: a.cacheReadTokens + b.cacheReadTokens,
    cacheCreationTokens: a.cacheCreationTokens + b.cacheCreationTokens,
  };
}

function escapeAttr(s: string): string {
  return s.replace(/[&"<>]/g, (c) => ({ '&': '&amp;', '"': '&quot;', '<': '&lt;', '>': '&gt;' })[c] ?? c);
}

/** Fences remote content as data; a remote host cannot close the fence by printing the tag. */
export function fenceUntrusted(sessionLabel: string | null, source: string, text: string): string {
  const body = text.replace(/<(\/?)(untrusted-output)/gi, '&lt;$1$2');
  return `<untrusted-output${sessionLabel ? ` session="${escapeAttr(sessionLabel)}"` : ''} source="${escapeAttr(source)}">\n${body}\n</untrusted-output>`;
}

/** Turns an API failure into a stable code and a message that says what to do. */
export function describeApiError(err: unknown): { code: 'EAUTH' | 'EUNAVAILABLE' | 'EIO' | 'EBADARGS' | 'ECANCELLED'; message: string; retryable: boolean } {
  if (err instanceof Anthropic.APIUserAbortError) return { code: 'ECANCELLED', message: 'Stopped by the Commander.', retryable: false };
  if (err instanceof Anthropic.AuthenticationError || err instanceof Anthropic.PermissionDeniedError) {
    return { code: 'EAUTH', message: `The Anthropic API refused the API key (${err.status}). Check the key in XO settings.`, retryable: false };
  }
  if (err instanceof Anthropic.RateLimitError) {
    const after = err.headers?.get('retry-after');
    return { code: 'EUNAVAILABLE', message: `Rate limited by the Anthropic API (429) even after retrying${after ? `; it asks to wait ${after} s` : ''}. Try again shortly.`, retryable: true };
  }
  if (err instanceof Anthropic.APIConnectionError) {
    return { code: 'EIO', message: `Cannot reach the Anthropic API (${err.message}). Check the network (or ANTHROPIC_BASE_URL).`, retryable: true };
  }
  if (err instanceof Anthropic.InternalServerError) {
    return err.status === 529
      ? { code: 'EUNAVAILABLE', message: 'Claude is overloaded right now (529) and retries did not help. Try again in a minute.', retryable: true }
      : { code: 'EUNAVAILABLE', message: `The Anthropic API failed (${err.status}) even after retrying. Try again shortly.`, retryable: true };
  }
  // The API's own words (its JSON body's error.message): err.message is that body as JSON.
  if (err instanceof Anthropic.BadRequestError) {
    return { code: 'EBADARGS', message: `The Anthropic API rejected the request${err.type ? ` (${err.type})` : ''}: ${err.apiMessage ?? err.message}`, retryable: false };
  }
  if (err instanceof Anthropic.APIError) return { code: 'EIO', message: `Anthropic API error${err.status ? ` (${err.status})` : ''}: ${err.apiMessage ?? err.message}`, retryable: false };
  const s = toSerializedError(err);
  return { code: s.code === 'EAUTH' || s.code === 'EUNAVAILABLE' || s.code === 'EBADARGS' ? s.code : 'EIO', message: s.message, retryable: false };
}

function isTerminalData(payload: unknown): payload is { sessionId: string; data: Uint8Array } {
  return typeof payload === 'object' && payload !== null && 'sessionId' in payload && 'data' in payload && typeof payload.sessionId === 'string' && payload.data instanceof Uint8Array;
}

/**
 * The XO. Runs the model loop (stream → tool calls → results → …), enforces the control mode,
 * asks for approvals, fences and redacts what goes out, audits every call, and keeps
 * conversations and token usage in SQLite.
 */
export class AiService {
  readonly store: ConversationStore;
  private readonly tools: AiTool[] = buildTools();
  private readonly toolsByName = new Map(this.tools.map((t) => [t.name, t]));
  private readonly runs = new Map<string, Run>();
  private readonly screens = new Map<string, ScreenGeometry>();
  private readonly unsubscribe: () => void;
  private disposed = false;
  private client: { key: string; client: Anthropic } | null = null;

  constructor(private readonly deps: AiServiceDeps) {
    this.store = new ConversationStore(deps.db);
    this.unsubscribe = deps.bus.subscribe((name, payload) => {
      if (name === 'terminal.data' && isTerminalData(payload)) deps.tracker.noteOutput(payload.sessionId, payload.data);
      else if (name === 'session.changed' && typeof payload === 'object' && payload !== null && 'state' in payload && payload.state === 'closed' && 'id' in payload && typeof payload.id === 'string') {
        deps.tracker.forget(payload.id);
        this.screens.delete(payload.id);
      }
    });
  }

  // ── state: mode and settings ──────────────────────────────────────────────────────────

  private readState(key: string): unknown {
    const row = this.deps.db.prepare('SELECT value FROM ai_state WHERE key = ?').get(key) as { value: string } | undefined;
    return row ? JSON.parse(row.value) : undefined;
  }

  private writeState(key: string, value: unknown): void {
    this.deps.db.prepare('INSERT INTO ai_state (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value').run(key, JSON.stringify(value));
  }

  getMode(): AiMode {
    const m = AiMode.safeParse(this.readState('mode'));
    return m.success ? m.data : 'ask';
  }

  setMode(mode: AiMode): AiMode {
    this.writeState('mode', mode);
    this.deps.bus.emit('ai.mode_changed', { mode });
    return mode;
  }

  getSettings(): AiSettings {
    const stored = this.readState('settings');
    const parsed = AiSettings.safeParse(typeof stored === 'object' && stored !== null ? stored : {});
    return parsed.success ? parsed.data : AiSettings.parse({});
  }

  settingsView(): AiSettingsView {
    const s = this.getSettings();
    let source: 'vault' | 'env' | null = null;
    let hint: string | null = null;
    if (s.apiKeySecretId) {
      source = 'vault';
      try {
        hint = keyHint(this.deps.vault.getSecret(s.apiKeySecretId).value);
      } catch {
        hint = null; // locked vault: the key exists but cannot be shown
      }
    } else if (process.env.ANTHROPIC_API_KEY) {
      source = 'env';
      hint = keyHint(process.env.ANTHROPIC_API_KEY);
    }
    return { ...s, apiKeySource: source, apiKeyHint: hint, systemPromptPath: systemPromptPath(this.deps.dataDir) };
  }

  setSettings(patch: Partial<AiSettings> & { apiKey?: string }): AiSettingsView {
    const { apiKey, ...rest } = patch;
    for (const rule of rest.denyRules ?? []) {
      try {
        new RegExp(rule, 'i');
      } catch (e) {
        throw new WraithError('EBADARGS', `Deny rule ${JSON.stringify(rule)} is not a valid regular expression: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
    const current = this.getSettings();
    const next: AiSettings = { ...current, ...Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined)) };
    if (apiKey !== undefined) {
      if (apiKey.trim() === '') {
        if (current.apiKeySecretId) this.deps.vault.deleteSecret(current.apiKeySecretId);
        next.apiKeySecretId = null;
      } else {
        next.apiKeySecretId = this.deps.vault.setSecret({
          ...(current.apiKeySecretId ? { id: current.apiKeySecretId } : {}),
          kind: 'apiKey',
          label: 'Anthropic API key (XO)',
          value: apiKey.trim(),
        });
      }
    }
    this.writeState('settings', AiSettings.parse(next));
    return this.settingsView();
  }

  /** The API key to use now, or a clear EUNAVAILABLE / ELOCKED. */
  private apiKey(): string {
    const s = this.getSettings();
    if (s.apiKeySecretId) {
      try {
        return this.deps.vault.getSecret(s.apiKeySecretId).value;
      } catch (e) {
        if (e instanceof WraithError && e.code === 'ELOCKED') {
          throw new WraithError('ELOCKED', 'The XO\'s API key is in the vault, which is locked: unlock the vault to talk to the XO.');
        }
        if (!(e instanceof WraithError && e.code === 'ENOTFOUND')) throw e;
      }
    }
    const env = process.env.ANTHROPIC_API_KEY;
    if (env) return env;
    throw new WraithError('EUNAVAILABLE', NO_KEY_MESSAGE);
  }

  // ── conversations and usage ───────────────────────────────────────────────────────────

  listConversations(limit: number, offset: number): ConversationSummary[] {
    return this.store.list(limit, offset);
  }

  getConversation(id: string): ConversationSummary & { items: ConversationItem[] } {
    const summary = this.store.summary(id);
    const audit = this.deps.audit.byToolUse(id);
    const items: ConversationItem[] = [];
    const cards = new Map<string, Extract<ConversationItem, { type: 'tool' }>>();
    for (const m of this.store.messages(id)) {
      for (const b of m.content) {
        if (b.type === 'text') {
          if (b.text.startsWith('<station-context>')) continue;
          items.push({ type: m.role === 'user' ? 'user' : 'assistant', text: b.text });
        } else if (b.type === 'tool_use') {
          const tool = this.toolsByName.get(b.name);
          const a = audit.get(b.id);
          const card: Extract<ConversationItem, { type: 'tool' }> = {
            type: 'tool',
            toolUseId: b.id,
            name: b.name,
            effect: tool?.effect ?? 'act',
            input: b.input,
            summary: this.summarize(b),
            status: a ? a.status : 'pending',
            output: null,
            image: null,
          };
          cards.set(b.id, card);
          items.push(card);
        } else if (b.type === 'tool_result') {
          const card = cards.get(b.tool_use_id);
          if (!card) continue;
          card.output = b.content.flatMap((c) => (c.type === 'text' ? [c.text] : [])).join('\n');
          const img = b.content.find((c) => c.type === 'image');
          // The stored block keeps no size; 0 means "unknown" and the panel shows the image as it is.
          if (img && img.type === 'image') card.image = { mime: img.source.media_type, data: img.source.data, width: 0, height: 0 };
          if (card.status === 'pending') card.status = b.is_error ? 'error' : 'ok';
        }
      }
    }
    return { ...summary, items };
  }

  private summarize(b: ToolUseBlock): string {
    const tool = this.toolsByName.get(b.name);
    if (!tool) return b.name;
    try {
      return tool.prepare(b.input, (id) => this.sessionLabel(id)).summary;
    } catch {
      return b.name;
    }
  }

  usage(conversationId?: string) {
    const now = new Date();
    const day = localDay(now);
    const month = day.slice(0, 7);
    return {
      today: this.store.usageForDay(day),
      month: this.store.usageForMonth(month),
      conversation: conversationId ? this.store.usageForConversation(conversationId) : null,
      days: this.store.usageByDay(month),
      budget: this.budget(),
    };
  }

  private budget() {
    const s = this.getSettings();
    const used = totalTokens(this.store.usageForMonth(localDay(new Date()).slice(0, 7)));
    const state: 'none' | 'ok' | 'warning' | 'exceeded' =
      s.monthlyTokenBudget === 0 ? 'none' : used >= s.monthlyTokenBudget ? 'exceeded' : used >= s.monthlyTokenBudget * s.budgetWarnAt ? 'warning' : 'ok';
    return { monthlyTokens: s.monthlyTokenBudget, usedThisMonth: used, state };
  }

  // ── runs ──────────────────────────────────────────────────────────────────────────────

  send(input: { conversationId?: string; message: string; sessionId?: string }, ctx: CallContext): { conversationId: string; runId: string } {
    if (this.disposed) throw new WraithError('EUNAVAILABLE', 'The XO is shutting down.');
    const apiKey = this.apiKey();
    const settings = this.getSettings();
    let conversationId = input.conversationId;
    if (conversationId) {
      if (!this.store.exists(conversationId)) throw new WraithError('ENOTFOUND', `No conversation with id ${conversationId}; it may have been deleted.`);
      for (const r of this.runs.values()) {
        if (r.conversationId === conversationId) throw new WraithError('EDENIED', 'The XO is still working on this conversation: wait for it, or stop it (Esc) first.');
      }
    } else {
      const title = input.message.replace(/\s+/g, ' ').trim().slice(0, 60);
      conversationId = this.store.create(settings.model, this.deps.redactor.redact(title));
    }
    const run: Run = {
      id: randomUUID(),
      conversationId,
      controller: new AbortController(),
      approveAll: false,
      pending: new Map(),
      done: Promise.resolve(),
    };
    this.runs.set(run.id, run);
    this.deps.bus.emit('ai.run_started', { conversationId, runId: run.id, message: input.message });
    run.done = this.execute(run, apiKey, settings, input.message, input.sessionId ?? null, ctx).finally(() => this.runs.delete(run.id));
    return { conversationId, runId: run.id };
  }

  /** Resolves when the run has ended (tests, shutdown). */
  async waitForRun(runId: string): Promise<void> {
    await this.runs.get(runId)?.done;
  }

  abort(input: { runId?: string; conversationId?: string } | undefined): number {
    let n = 0;
    for (const run of this.runs.values()) {
      if (input?.runId && run.id !== input.runId) continue;
      if (input?.conversationId && run.conversationId !== input.conversationId) continue;
      run.controller.abort();
      for (const { decide } of run.pending.values()) decide({ kind: 'aborted' });
      run.pending.clear();
      n++;
    }
    return n;
  }

  approve(runId: string, toolUseId: string, all: boolean, ctx: CallContext): void {
    const run = this.runs.get(runId);
    const waiting = run?.pending.get(toolUseId);
    if (!run || !waiting) throw new WraithError('ENOTFOUND', 'Nothing is waiting for approval there: the run ended or the act was already decided.');
    const by = `commander (${ctx.origin})`;
    if (all) {
      run.approveAll = true;
      // Approving all covers every act of this run already waiting too.
      for (const [id, w] of run.pending) {
        run.pending.delete(id);
        w.decide({ kind: 'approved', by, all: id !== toolUseId });
      }
    }
    run.pending.delete(toolUseId);
    waiting.decide({ kind: 'approved', by, all: false });
  }

  deny(runId: string, toolUseId: string, reason: string, ctx: CallContext): void {
    const run = this.runs.get(runId);
    const waiting = run?.pending.get(toolUseId);
    if (!run || !waiting) throw new WraithError('ENOTFOUND', 'Nothing is waiting for approval there: the run ended or the act was already decided.');
    run.pending.delete(toolUseId);
    waiting.decide({ kind: 'denied', by: `commander (${ctx.origin})`, reason });
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    this.abort(undefined);
    await Promise.allSettled([...this.runs.values()].map((r) => r.done));
    this.unsubscribe();
  }

  // ── the loop ──────────────────────────────────────────────────────────────────────────

  private toolDefs(mode: AiMode): Anthropic.Tool[] {
    const offered = this.tools.filter((t) => mode !== 'readonly' || t.effect === 'read');
    return offered.map((t, i) => ({
      name: t.name,
      description: `${t.description}${t.effect === 'act' ? ' [act]' : ''}`,
      input_schema: { type: 'object', ...t.inputSchema },
      ...(i === offered.length - 1 ? { cache_control: { type: 'ephemeral' as const } } : {}),
    }));
  }

  private sessionLabel(sessionId: string): string {
    const s = this.deps.sessions.list().find((x) => x.id === sessionId);
    return s ? `${s.title} (${s.kind.toUpperCase()})` : sessionId;
  }

  private async execute(run: Run, apiKey: string, settings: AiSettings, message: string, focused: string | null, callerCtx: CallContext): Promise<void> {
    const { bus, redactor } = this.deps;
    const ids = { conversationId: run.conversationId, runId: run.id };
    const client = this.clientFor(apiKey);
    let usage: TokenUsage = ZERO;
    let stopReason = 'end_turn';
    const budgetBefore = this.budget().state;
    try {
      const system = loadSystemPrompt(this.deps.dataDir);
      const userContent: Block[] = [];
      if (focused) {
        userContent.push({ type: 'text', text: `<station-context>The Commander is looking at session ${focused}: ${redactor.redact(this.sessionLabel(focused))}.</station-context>` });
      }
      userContent.push({ type: 'text', text: redactor.redact(message) });
      this.store.append(run.conversationId, { role: 'user', content: userContent });

      let iteration = 0;
      for (;;) {
        if (run.controller.signal.aborted) {
          stopReason = 'aborted';
          break;
        }
        if (iteration++ >= settings.maxIterations) {
          stopReason = 'max_iterations';
          const note = `(Stopped after ${settings.maxIterations} steps — the per-run limit. Say "continue" to go on.)`;
          bus.emit('ai.text', { ...ids, text: `\n\n${note}` });
          this.store.append(run.conversationId, { role: 'assistant', content: [{ type: 'text', text: note }] });
          break;
        }
        const mode = this.getMode();
        const history = this.store.messages(run.conversationId);
        const stream = client.messages.stream(
          {
            model: settings.model,
            max_tokens: settings.maxTokens,
            system: [{ type: 'text', text: system, cache_control: { type: 'ephemeral' } }],
            tools: this.toolDefs(mode),
            messages: redactor.redactValue(prepareMessages(history, settings.keepScreenshots)),
          },
          { signal: run.controller.signal },
        );
        let streamed = '';
        stream.on('text', (delta) => {
          streamed += delta;
          bus.emit('ai.text', { ...ids, text: delta });
        });
        let final: Anthropic.Message;
        try {
          final = await stream.finalMessage();
        } catch (err) {
          if (run.controller.signal.aborted || err instanceof Anthropic.APIUserAbortError) {
            // Keep what was said, so the conversation stays a valid alternation.
            this.store.append(run.conversationId, { role: 'assistant', content: [{ type: 'text', text: streamed ? `${streamed}\n\n(Interrupted by the Commander.)` : '(Interrupted by the Commander.)' }] });
            stopReason = 'aborted';
            break;
          }
          throw err;
        }
        const u: TokenUsage = {
          inputTokens: final.usage.input_tokens,
          outputTokens: final.usage.output_tokens,
          cacheReadTokens: final.usage.cache_read_input_tokens ?? 0,
          cacheCreationTokens: final.usage.cache_creation_input_tokens ?? 0,
        };
        usage = addUsage(usage, u);
        this.store.recordUsage(run.conversationId, run.id, final.model || settings.model, u);

        const content: Block[] = [];
        const uses: ToolUseBlock[] = [];
        for (const b of final.content) {
          if (b.type === 'text' && b.text.length > 0) content.push({ type: 'text', text: b.text });
          else if (b.type === 'tool_use') {
            const input = z.record(z.string(), z.unknown()).safeParse(b.input);
            const block: ToolUseBlock = { type: 'tool_use', id: b.id, name: b.name, input: input.success ? input.data : {} };
            content.push(block);
            uses.push(block);
          }
        }
        if (content.length === 0) content.push({ type: 'text', text: '(No answer.)' });
        this.store.append(run.conversationId, { role: 'assistant', content });
        stopReason = final.stop_reason ?? 'end_turn';
        if (uses.length === 0) break;

        // Parallel tool calls: each one decides and runs on its own; results keep the model's order.
        const results = await Promise.all(uses.map((u) => this.dispatch(run, u, callerCtx)));
        this.store.append(run.conversationId, { role: 'user', content: results });
        if (run.controller.signal.aborted) {
          stopReason = 'aborted';
          break;
        }
      }
      const budget = this.budget();
      if (budget.state !== budgetBefore && (budget.state === 'warning' || budget.state === 'exceeded')) bus.emit('ai.budget_warning', budget);
      bus.emit('ai.done', { ...ids, stopReason, usage, budget });
    } catch (err) {
      const e = describeApiError(err);
      bus.emit('ai.error', { ...ids, code: e.code, message: redactor.redact(e.message), retryable: e.retryable });
      bus.emit('ai.done', { ...ids, stopReason: 'error', usage, budget: this.budget() });
    }
  }

  /** One SDK client per key (keeps its HTTP connections warm across runs). */
  private clientFor(apiKey: string): Anthropic {
    if (this.client?.key !== apiKey) this.client = { key: apiKey, client: new Anthropic({ apiKey, maxRetries: 3, timeout: 10 * 60 * 1000 }) };
    return this.client.client;
  }

  private matchDenyRule(text: string | null, settings: AiSettings): string | null {
    if (!text) return null;
    for (const rule of settings.denyRules) {
      try {
        if (new RegExp(rule, 'i').test(text)) return rule;
      } catch {
        // An invalid stored rule is skipped; setSettings refuses new ones.
      }
    }
    return null;
  }

  private waitForDecision(run: Run, request: ApprovalRequest): Promise<Decision> {
    if (run.controller.signal.aborted) return Promise.resolve({ kind: 'aborted' });
    return new Promise((decide) => run.pending.set(request.toolUseId, { request, decide }));
  }

  /** Runs in progress, with the acts waiting for the Commander (ai.runs). */
  listRuns(): { conversationId: string; runId: string; approvals: ApprovalRequest[] }[] {
    return [...this.runs.values()].map((r) => ({ conversationId: r.conversationId, runId: r.id, approvals: [...r.pending.values()].map((w) => w.request) }));
  }

  private async dispatch(run: Run, use: ToolUseBlock, callerCtx: CallContext): Promise<ToolResultBlock> {
    const { bus, redactor, audit } = this.deps;
    const ids = { conversationId: run.conversationId, runId: run.id };
    const settings = this.getSettings();
    const mode = this.getMode();
    const tool = this.toolsByName.get(use.name);
    const effect: ToolEffect = tool?.effect ?? 'act';
    const label = (id: string) => this.sessionLabel(id);
    const requestedAt = performance.now();
    let startedAt = requestedAt;
    let decision = 'not_required';
    let decidedBy: string | null = null;
    let status: 'ok' | 'error' | 'denied' | 'aborted' = 'ok';
    let output: ToolOutput = { text: '' };
    let sessionId: string | null = null;
    let summary = use.name;

    const finish = (): ToolResultBlock => {
      const finishedAt = performance.now();
      const text = redactor.redact(output.text);
      const content: ToolResultBlock['content'] = [{ type: 'text', text: text || '(no output)' }];
      if (output.image && status === 'ok') {
        content.push({ type: 'image', source: { type: 'base64', media_type: output.image.mime, data: output.image.data } });
      }
      audit.append({
        actor: 'xo',
        conversationId: run.conversationId,
        runId: run.id,
        toolUseId: use.id,
        tool: use.name,
        effect,
        sessionId,
        input: JSON.stringify(redactor.redactValue(use.input)),
        resultSummary: redactor.redact(`${summary} — ${text.replace(/\s+/g, ' ').slice(0, 300)}`),
        status,
        decision,
        decidedBy,
        waitMs: startedAt - requestedAt,
        durationMs: finishedAt - startedAt,
      });
      bus.emit('ai.tool_result', {
        ...ids,
        toolUseId: use.id,
        name: use.name,
        status,
        output: text.slice(0, 100_000),
        image: output.image && status === 'ok' ? output.image : null,
        durationMs: finishedAt - startedAt,
        decision,
      });
      return status === 'ok' ? { type: 'tool_result', tool_use_id: use.id, content } : { type: 'tool_result', tool_use_id: use.id, content, is_error: true };
    };

    if (!tool) {
      bus.emit('ai.tool_use', { ...ids, toolUseId: use.id, name: use.name, effect, input: use.input, summary, sessionId: null });
      status = 'error';
      output = { text: `Unknown tool "${use.name}". Available: ${this.tools.map((t) => t.name).join(', ')}.` };
      return finish();
    }
    let prepared;
    try {
      prepared = tool.prepare(use.input, label);
      sessionId = prepared.sessionId;
      summary = prepared.summary;
    } catch (err) {
      bus.emit('ai.tool_use', { ...ids, toolUseId: use.id, name: use.name, effect, input: use.input, summary, sessionId: null });
      status = 'error';
      output = { text: toSerializedError(err).message };
      return finish();
    }
    bus.emit('ai.tool_use', { ...ids, toolUseId: use.id, name: use.name, effect, input: use.input, summary, sessionId });

    if (effect === 'act') {
      const rule = this.matchDenyRule(prepared.guarded, settings);
      if (mode === 'readonly') {
        decision = 'readonly';
        decidedBy = 'mode readonly';
        status = 'denied';
        output = { text: `${use.name} is not available: the XO is in read-only mode. Only read tools may be used.` };
        return finish();
      }
      if (mode === 'auto' && rule) {
        decision = 'rule_denied';
        decidedBy = 'policy';
        status = 'denied';
        output = { text: `Refused by the station's deny rules (${rule}). This action needs the Commander; do not try to work around the rule.` };
        return finish();
      }
      if (mode === 'auto') {
        decision = 'auto';
        decidedBy = 'mode auto';
      } else if (run.approveAll && !rule) {
        decision = 'approved_all';
        decidedBy = 'commander (approve all)';
      } else {
        const request: ApprovalRequest = { toolUseId: use.id, name: use.name, summary, details: { ...prepared.details, matchedDenyRule: rule } };
        const wait = this.waitForDecision(run, request);
        bus.emit('ai.approval_request', { ...ids, ...request });
        const got = await wait;
        if (got.kind === 'aborted') {
          decision = 'aborted';
          status = 'aborted';
          output = { text: 'Aborted by the Commander before it ran.' };
          return finish();
        }
        if (got.kind === 'denied') {
          decision = 'denied';
          decidedBy = got.by;
          status = 'denied';
          output = { text: `The Commander denied this action.${got.reason ? ` Reason: ${got.reason}` : ' No reason given.'}` };
          return finish();
        }
        decision = got.all ? 'approved_all' : 'approved';
        decidedBy = got.by;
      }
    }
    if (run.controller.signal.aborted) {
      decision = decision === 'not_required' ? 'aborted' : decision;
      status = 'aborted';
      output = { text: 'Aborted by the Commander before it ran.' };
      return finish();
    }

    startedAt = performance.now();
    const ctx: ToolContext = {
      call: (method, params) => this.deps.router.call(method, params, { clientId: `xo:${callerCtx.clientId}`, origin: 'ai', signal: run.controller.signal }),
      sessionLabel: label,
      settings,
      screens: this.screens,
      fence: (sid, source, text) => fenceUntrusted(sid ? label(sid) : null, source, text),
      noteInput: (sid, text) => {
        this.deps.tracker.noteInput(sid, text);
      },
    };
    try {
      output = await prepared.run(ctx);
    } catch (err) {
      const e = toSerializedError(err);
      status = 'error';
      output = { text: `${e.code}: ${e.message}` };
    }
    return finish();
  }
}

function keyHint(key: string): string {
  return key.length > 12 ? `${key.slice(0, 7)}…${key.slice(-4)}` : '…';
}
