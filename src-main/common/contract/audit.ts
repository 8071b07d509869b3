import { z } from 'zod';
import { Id, method } from './define.js';

/** One tool call, as written (once, never changed) to the append-only audit log. */
export const AuditEntry = z.object({
  id: z.number().int(),
  at: z.string(),
  /** Who ran the tool: the XO, an MCP agent. */
  actor: z.string(),
  conversationId: z.string().nullable(),
  runId: z.string().nullable(),
  toolUseId: z.string().nullable(),
  tool: z.string(),
  effect: z.enum(['read', 'act']),
  sessionId: z.string().nullable(),
  /** The tool input, secrets redacted. */
  input: z.string(),
  resultSummary: z.string(),
  status: z.enum(['ok', 'error', 'denied', 'aborted']),
  /** not_required (read tool) | auto | approved | approved_all | denied | rule_denied | readonly | aborted */
  decision: z.string(),
  /** Who decided: "commander (ui)", "policy", "mode auto". */
  decidedBy: z.string().nullable(),
  /** Time waiting for the Commander, then time running. */
  waitMs: z.number(),
  durationMs: z.number(),
});
export type AuditEntry = z.infer<typeof AuditEntry>;

export const auditMethods = {
  'audit.list': method(
    z
      .object({
        conversationId: Id.optional(),
        tool: z.string().max(100).optional(),
        /** Entries older than this id (paging backwards). */
        beforeId: z.number().int().optional(),
        limit: z.number().int().min(1).max(1000).default(100),
      })
      .optional(),
    z.array(AuditEntry),
    'The audit log of tool calls, newest first.',
  ),
};
