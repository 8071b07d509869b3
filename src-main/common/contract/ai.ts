import { z } from 'zod';
import { Empty, Id, Ok, event, method, patchOf } from './define.js';

/**
 * The XO: an AI copilot (Claude) that operates the Commander's sessions through the same
 * methods the UI uses. Modes decide what it may do: `ask` (every act waits for approval),
 * `auto` (acts run, deny rules still hold), `readonly` (act tools are not offered at all).
 */
export const AiMode = z.enum(['ask', 'auto', 'readonly']);
export type AiMode = z.infer<typeof AiMode>;

export const ToolEffect = z.enum(['read', 'act']);
export type ToolEffect = z.infer<typeof ToolEffect>;

export const DEFAULT_AI_MODEL = 'claude-sonnet-5-5';

/** Built-in deny rules (regular expressions, case-insensitive) for commands the XO types or runs. */
export const DEFAULT_DENY_RULES: string[] = [
  String.raw`\brm\s+(-[a-z]*\s+)*-[a-z]*[rf][a-z]*\s+(-[a-z-]+\s+)*(/|/\*|~|~/|\$HOME/?)(\s|;|&|\||$)`,
  String.raw`\bmkfs(\.[a-z0-9]+)?\b`,
  String.raw`\bshutdown\b`,
  String.raw`\breboot\b`,
  String.raw`\b(halt|poweroff)\b`,
  String.raw`\bdd\b[^\n;|&]*\bof=/dev/`,
  String.raw`>\s*/dev/(sd[a-z]|nvme\d|vd[a-z]|xvd[a-z])`,
  String.raw`:\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:`,
];

export const AiSettings = z.object({
  model: z.string().min(1).max(100).default(DEFAULT_AI_MODEL),
  maxTokens: z.number().int().min(256).max(128_000).default(4096),
  /** The vault secret (kind apiKey) holding the Anthropic API key. */
  apiKeySecretId: Id.nullable().default(null),
  /** Monthly token budget (input + output + cache); 0 = none. A warning only, never a block. */
  monthlyTokenBudget: z.number().int().min(0).max(1e12).default(0),
  /** Warn when this fraction of the budget is used. */
  budgetWarnAt: z.number().min(0.1).max(1).default(0.8),
  /** Model round trips per run before the XO stops and reports. */
  maxIterations: z.number().int().min(1).max(200).default(25),
  screenshotMaxWidth: z.number().int().min(320).max(3840).default(1280),
  screenshotMaxHeight: z.number().int().min(240).max(2160).default(720),
  /** Screenshots kept in the context sent to the model; older ones become a note. */
  keepScreenshots: z.number().int().min(0).max(20).default(3),
  /** Characters of one tool output sent to the model before it is truncated with a note. */
  toolOutputMaxChars: z.number().int().min(1000).max(500_000).default(20_000),
  /** Regular expressions refused in auto mode and flagged in ask mode. */
  denyRules: z.array(z.string().min(1).max(1000)).max(200).default(DEFAULT_DENY_RULES),
});
export type AiSettings = z.infer<typeof AiSettings>;

export const AiSettingsView = AiSettings.extend({
  /** Where the API key comes from now; null when there is none. */
  apiKeySource: z.enum(['vault', 'env']).nullable(),
  /** A short human hint about the key (e.g. "sk-ant-…x4Qa"), never the key. */
  apiKeyHint: z.string().nullable(),
  /** The system prompt file the Commander can edit. */
  systemPromptPath: z.string(),
});
export type AiSettingsView = z.infer<typeof AiSettingsView>;

export const AiSettingsPatch = patchOf(AiSettings)
  .extend({
    /** Stores this key in the vault (kind apiKey) and points apiKeySecretId at it. Empty string removes it. */
    apiKey: z.string().max(500).optional(),
  })
  .strict();

export const TokenUsage = z.object({
  inputTokens: z.number().int(),
  outputTokens: z.number().int(),
  cacheReadTokens: z.number().int(),
  cacheCreationTokens: z.number().int(),
});
export type TokenUsage = z.infer<typeof TokenUsage>;

export const BudgetState = z.object({
  monthlyTokens: z.number().int(),
  usedThisMonth: z.number().int(),
  /** none: no budget set; ok; warning: past budgetWarnAt; exceeded: past the budget (never blocks). */
  state: z.enum(['none', 'ok', 'warning', 'exceeded']),
});

export const ConversationSummary = z.object({
  id: Id,
  title: z.string(),
  model: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  messageCount: z.number().int(),
  usage: TokenUsage,
});
export type ConversationSummary = z.infer<typeof ConversationSummary>;

export const ToolCallStatus = z.enum(['pending', 'running', 'ok', 'error', 'denied', 'aborted']);

export const ImageView = z.object({ mime: z.string(), data: z.string(), width: z.number().int(), height: z.number().int() });

/** A conversation as the panel shows it: text turns and tool cards, in order. */
export const ConversationItem = z.discriminatedUnion('type', [
  z.object({ type: z.literal('user'), text: z.string() }),
  z.object({ type: z.literal('assistant'), text: z.string() }),
  z.object({
    type: z.literal('tool'),
    toolUseId: z.string(),
    name: z.string(),
    effect: ToolEffect,
    input: z.unknown(),
    summary: z.string(),
    status: ToolCallStatus,
    output: z.string().nullable(),
    image: ImageView.nullable(),
  }),
]);
export type ConversationItem = z.infer<typeof ConversationItem>;

export const ApprovalDetails = z.object({
  /** What the act will do, in words: "Type into web01 (SSH)". */
  action: z.string(),
  sessionId: z.string().nullable(),
  sessionTitle: z.string().nullable(),
  /** Exactly what will be typed / run / written / clicked. */
  text: z.string().nullable(),
  command: z.string().nullable(),
  path: z.string().nullable(),
  content: z.string().nullable(),
  point: z.object({ x: z.number(), y: z.number() }).nullable(),
  key: z.string().nullable(),
  /** A deny rule this act matches; approving runs it anyway (the Commander decides). */
  matchedDenyRule: z.string().nullable(),
});
export type ApprovalDetails = z.infer<typeof ApprovalDetails>;

const RunRef = { conversationId: Id, runId: Id };

/** An act of the XO waiting for the Commander (as ai.approval_request announced it). */
export const ApprovalRequest = z.object({ toolUseId: z.string(), name: z.string(), summary: z.string(), details: ApprovalDetails });
export type ApprovalRequest = z.infer<typeof ApprovalRequest>;

export const aiMethods = {
  'ai.send': method(
    z.object({
      conversationId: Id.optional(),
      message: z.string().min(1, 'Say something to the XO').max(200_000),
      /** The session the Commander is looking at; the XO is told about it. */
      sessionId: Id.optional(),
    }),
    z.object({ conversationId: Id, runId: Id }),
    'Sends the Commander\'s message to the XO; the answer streams as ai.* events. Fails with EUNAVAILABLE without an API key.',
  ),
  'ai.abort': method(
    z.object({ runId: Id.optional(), conversationId: Id.optional() }).optional(),
    z.object({ aborted: z.number().int() }),
    'Stops a run (or every run) now: the stream is cut and pending approvals are dropped.',
  ),
  'ai.approve': method(
    z.object({ runId: Id, toolUseId: Id, all: z.boolean().default(false) }),
    Ok,
    'Approves one pending act of the XO; `all` approves every act for the rest of this run.',
  ),
  'ai.deny': method(
    z.object({ runId: Id, toolUseId: Id, reason: z.string().max(2000).default('') }),
    Ok,
    'Refuses one pending act; the reason is passed to the XO.',
  ),
  'ai.runs': method(
    Empty.optional(),
    z.array(z.object({ ...RunRef, approvals: z.array(ApprovalRequest) })),
    'Runs in progress and the acts each waits on the Commander for: what a panel that missed events (its link to the host dropped) shows again.',
  ),
  'ai.mode.get': method(Empty.optional(), z.object({ mode: AiMode }), 'The XO\'s control mode.'),
  'ai.mode.set': method(z.object({ mode: AiMode }), z.object({ mode: AiMode }), 'Changes the control mode (takes effect for the next tool call).'),
  'ai.conversations.list': method(
    z.object({ limit: z.number().int().min(1).max(500).default(50), offset: z.number().int().min(0).default(0) }).optional(),
    z.array(ConversationSummary),
    'Past conversations, most recent first.',
  ),
  'ai.conversations.get': method(
    z.object({ id: Id }),
    ConversationSummary.extend({ items: z.array(ConversationItem) }),
    'One conversation with its messages and tool cards.',
  ),
  'ai.conversations.rename': method(z.object({ id: Id, title: z.string().min(1).max(200) }), ConversationSummary, 'Renames a conversation.'),
  'ai.conversations.delete': method(z.object({ id: Id }), Ok, 'Deletes a conversation and its messages (the audit log keeps its entries).'),
  'ai.conversations.search': method(
    z.object({ query: z.string().min(1).max(500), limit: z.number().int().min(1).max(200).default(20) }),
    z.array(z.object({ conversationId: Id, title: z.string(), snippet: z.string(), updatedAt: z.string() })),
    'Full-text search over past conversations.',
  ),
  'ai.usage': method(
    z.object({ conversationId: Id.optional() }).optional(),
    z.object({
      today: TokenUsage,
      month: TokenUsage,
      conversation: TokenUsage.nullable(),
      days: z.array(TokenUsage.extend({ day: z.string() })),
      budget: BudgetState,
    }),
    'Token usage today, this month (per day), and for one conversation; budget state.',
  ),
  'ai.settings.get': method(Empty.optional(), AiSettingsView, 'XO settings (the API key itself is never returned).'),
  'ai.settings.set': method(AiSettingsPatch, AiSettingsView, 'Changes XO settings; `apiKey` goes into the vault.'),
};

export const aiEvents = {
  'ai.run_started': event(z.object({ ...RunRef, message: z.string() }), 'The XO started working on a message.'),
  'ai.text': event(z.object({ ...RunRef, text: z.string() }), 'A piece of the XO\'s answer (append it).'),
  'ai.tool_use': event(
    z.object({ ...RunRef, toolUseId: z.string(), name: z.string(), effect: ToolEffect, input: z.unknown(), summary: z.string(), sessionId: z.string().nullable() }),
    'The XO calls a tool (a card appears, pending).',
  ),
  'ai.approval_request': event(
    ApprovalRequest.extend(RunRef),
    'An act waits for the Commander: ai.approve or ai.deny.',
  ),
  'ai.tool_result': event(
    z.object({
      ...RunRef,
      toolUseId: z.string(),
      name: z.string(),
      status: ToolCallStatus,
      output: z.string(),
      image: ImageView.nullable(),
      durationMs: z.number(),
      decision: z.string(),
    }),
    'A tool call finished (ok, error, denied, aborted).',
  ),
  'ai.done': event(
    z.object({ ...RunRef, stopReason: z.string(), usage: TokenUsage, budget: BudgetState }),
    'The run ended: the XO finished, hit the iteration cap, or was aborted.',
  ),
  'ai.error': event(
    z.object({ ...RunRef, code: z.string(), message: z.string(), retryable: z.boolean() }),
    'The run failed (API key, rate limit, overload, network); the message says what to do.',
  ),
  'ai.mode_changed': event(z.object({ mode: AiMode }), 'The control mode changed (every panel shows the Auto indicator).'),
  'ai.budget_warning': event(BudgetState, 'Token use passed the warning threshold of the monthly budget.'),
};
