import type { AuditEntry } from '../../common/contract/audit.js';
import type { Db } from '../db/database.js';

export type NewAuditEntry = Omit<AuditEntry, 'id' | 'at'> & { at?: string };

interface AuditRow {
  id: number;
  at: string;
  actor: string;
  conversation_id: string | null;
  run_id: string | null;
  tool_use_id: string | null;
  tool: string;
  effect: string;
  session_id: string | null;
  input: string;
  result_summary: string;
  status: string;
  decision: string;
  decided_by: string | null;
  wait_ms: number;
  duration_ms: number;
}

function toEntry(r: AuditRow): AuditEntry {
  return {
    id: r.id,
    at: r.at,
    actor: r.actor,
    conversationId: r.conversation_id,
    runId: r.run_id,
    toolUseId: r.tool_use_id,
    tool: r.tool,
    effect: r.effect === 'act' ? 'act' : 'read',
    sessionId: r.session_id,
    input: r.input,
    resultSummary: r.result_summary,
    status: r.status === 'ok' || r.status === 'denied' || r.status === 'aborted' ? r.status : 'error',
    decision: r.decision,
    decidedBy: r.decided_by,
    waitMs: r.wait_ms,
    durationMs: r.duration_ms,
  };
}

/**
 * The append-only log of every tool call the XO (or an MCP agent) makes. The table refuses
 * UPDATE and DELETE by trigger; callers pass inputs already redacted.
 */
export class AuditLog {
  constructor(private readonly db: Db) {}

  append(e: NewAuditEntry): number {
    const info = this.db
      .prepare(
        `INSERT INTO audit_log (at, actor, conversation_id, run_id, tool_use_id, tool, effect, session_id, input,
           result_summary, status, decision, decided_by, wait_ms, duration_ms)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        e.at ?? new Date().toISOString(),
        e.actor,
        e.conversationId,
        e.runId,
        e.toolUseId,
        e.tool,
        e.effect,
        e.sessionId,
        e.input.slice(0, 20_000),
        e.resultSummary.slice(0, 2_000),
        e.status,
        e.decision,
        e.decidedBy,
        e.waitMs,
        e.durationMs,
      );
    return Number(info.lastInsertRowid);
  }

  list(q: { conversationId?: string; tool?: string; beforeId?: number; limit: number }): AuditEntry[] {
    const where: string[] = [];
    const args: (string | number)[] = [];
    if (q.conversationId !== undefined) {
      where.push('conversation_id = ?');
      args.push(q.conversationId);
    }
    if (q.tool !== undefined) {
      where.push('tool = ?');
      args.push(q.tool);
    }
    if (q.beforeId !== undefined) {
      where.push('id < ?');
      args.push(q.beforeId);
    }
    const sql = `SELECT * FROM audit_log ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT ?`;
    const rows = this.db.prepare(sql).all(...args, q.limit) as AuditRow[];
    return rows.map(toEntry);
  }

  /** The latest entry for a tool call (the panel derives a card's final state from it). */
  byToolUse(conversationId: string): Map<string, AuditEntry> {
    const rows = this.db.prepare('SELECT * FROM audit_log WHERE conversation_id = ? ORDER BY id').all(conversationId) as AuditRow[];
    const map = new Map<string, AuditEntry>();
    for (const r of rows) if (r.tool_use_id) map.set(r.tool_use_id, toEntry(r));
    return map;
  }
}
