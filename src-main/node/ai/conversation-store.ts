import { randomUUID } from 'node:crypto';
import type { ConversationSummary, TokenUsage } from '../../common/contract/ai.js';
import { WraithError } from '../../common/errors.js';
import type { Db } from '../db/database.js';
import { StoredMessage, plainText } from './messages.js';

interface ConversationRow {
  id: string;
  title: string;
  model: string;
  tokens_in: number;
  tokens_out: number;
  cache_read_tokens: number;
  cache_creation_tokens: number;
  created_at: string;
  updated_at: string;
  message_count: number;
}

const ZERO: TokenUsage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0 };

function summary(r: ConversationRow): ConversationSummary {
  return {
    id: r.id,
    title: r.title,
    model: r.model,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    messageCount: r.message_count,
    usage: { inputTokens: r.tokens_in, outputTokens: r.tokens_out, cacheReadTokens: r.cache_read_tokens, cacheCreationTokens: r.cache_creation_tokens },
  };
}

interface UsageSums {
  i: number | null;
  o: number | null;
  cr: number | null;
  cc: number | null;
}
function usageOf(r: UsageSums | undefined): TokenUsage {
  return r ? { inputTokens: r.i ?? 0, outputTokens: r.o ?? 0, cacheReadTokens: r.cr ?? 0, cacheCreationTokens: r.cc ?? 0 } : ZERO;
}

export function totalTokens(u: TokenUsage): number {
  return u.inputTokens + u.outputTokens + u.cacheReadTokens + u.cacheCreationTokens;
}

/** FTS5 query from free text: each word quoted, so operators in what the user typed are plain text. */
function ftsQuery(q: string): string {
  const words = q.match(/[\p{L}\p{N}_-]+/gu) ?? [];
  return words.map((w) => `"${w.replace(/"/g, '')}"`).join(' ');
}

/** Conversations, their messages (as sent to the model), token usage and search, in SQLite. */
export class ConversationStore {
  constructor(private readonly db: Db) {}

  create(model: string, title: string): string {
    const id = randomUUID();
    const now = new Date().toISOString();
    this.db.prepare('INSERT INTO conversations (id, title, model, created_at, updated_at) VALUES (?, ?, ?, ?, ?)').run(id, title, model, now, now);
    return id;
  }

  exists(id: string): boolean {
    return this.db.prepare('SELECT 1 FROM conversations WHERE id = ?').get(id) !== undefined;
  }

  summary(id: string): ConversationSummary {
    const row = this.db
      .prepare(
        `SELECT c.*, (SELECT COUNT(*) FROM ai_messages m WHERE m.conversation_id = c.id) AS message_count
         FROM conversations c WHERE c.id = ?`,
      )
      .get(id) as ConversationRow | undefined;
    if (!row) throw new WraithError('ENOTFOUND', `No conversation with id ${id}; it may have been deleted.`);
    return summary(row);
  }

  list(limit: number, offset: number): ConversationSummary[] {
    const rows = this.db
      .prepare(
        `SELECT c.*, (SELECT COUNT(*) FROM ai_messages m WHERE m.conversation_id = c.id) AS message_count
         FROM conversations c ORDER BY c.updated_at DESC, c.rowid DESC LIMIT ? OFFSET ?`,
      )
      .all(limit, offset) as ConversationRow[];
    return rows.map(summary);
  }

  rename(id: string, title: string): ConversationSummary {
    const r = this.db.prepare('UPDATE conversations SET title = ?, updated_at = ? WHERE id = ?').run(title, new Date().toISOString(), id);
    if (r.changes === 0) throw new WraithError('ENOTFOUND', `No conversation with id ${id}; it may have been deleted.`);
    return this.summary(id);
  }

  delete(id: string): void {
    this.db.transaction(() => {
      const r = this.db.prepare('DELETE FROM conversations WHERE id = ?').run(id);
      if (r.changes === 0) throw new WraithError('ENOTFOUND', `No conversation with id ${id}; it may have been deleted.`);
      this.db.prepare('DELETE FROM ai_messages_fts WHERE conversation_id = ?').run(id);
    })();
  }

  append(conversationId: string, message: StoredMessage): void {
    const now = new Date().toISOString();
    this.db.transaction(() => {
      const info = this.db
        .prepare('INSERT INTO ai_messages (conversation_id, role, content, created_at) VALUES (?, ?, ?, ?)')
        .run(conversationId, message.role, JSON.stringify(message.content), now);
      const text = plainText(message);
      if (text) this.db.prepare('INSERT INTO ai_messages_fts (text, conversation_id, message_id) VALUES (?, ?, ?)').run(text, conversationId, Number(info.lastInsertRowid));
      this.db.prepare('UPDATE conversations SET updated_at = ? WHERE id = ?').run(now, conversationId);
    })();
  }

  messages(conversationId: string): StoredMessage[] {
    const rows = this.db.prepare('SELECT role, content FROM ai_messages WHERE conversation_id = ? ORDER BY id').all(conversationId) as {
      role: string;
      content: string;
    }[];
    const out: StoredMessage[] = [];
    for (const r of rows) {
      const parsed = StoredMessage.safeParse({ role: r.role, content: JSON.parse(r.content) });
      if (parsed.success) out.push(parsed.data);
    }
    return out;
  }

  search(query: string, limit: number): { conversationId: string; title: string; snippet: string; updatedAt: string }[] {
    const q = ftsQuery(query);
    if (!q) return [];
    const rows = this.db
      .prepare(
        `SELECT f.conversation_id AS cid, snippet(ai_messages_fts, 0, '[', ']', '…', 12) AS snippet, c.title, c.updated_at
         FROM ai_messages_fts f JOIN conversations c ON c.id = f.conversation_id
         WHERE ai_messages_fts MATCH ? ORDER BY rank LIMIT ?`,
      )
      .all(q, limit * 5) as { cid: string; snippet: string; title: string; updated_at: string }[];
    const seen = new Set<string>();
    const out: { conversationId: string; title: string; snippet: string; updatedAt: string }[] = [];
    for (const r of rows) {
      if (seen.has(r.cid)) continue;
      seen.add(r.cid);
      out.push({ conversationId: r.cid, title: r.title, snippet: r.snippet, updatedAt: r.updated_at });
      if (out.length >= limit) break;
    }
    return out;
  }

  recordUsage(conversationId: string, runId: string, model: string, u: TokenUsage): void {
    const now = new Date();
    this.db.transaction(() => {
      this.db
        .prepare(
          `INSERT INTO ai_usage (conversation_id, run_id, model, input_tokens, output_tokens, cache_read_tokens, cache_creation_tokens, day, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(conversationId, runId, model, u.inputTokens, u.outputTokens, u.cacheReadTokens, u.cacheCreationTokens, localDay(now), now.toISOString());
      this.db
        .prepare(
          `UPDATE conversations SET tokens_in = tokens_in + ?, tokens_out = tokens_out + ?, cache_read_tokens = cache_read_tokens + ?,
             cache_creation_tokens = cache_creation_tokens + ? WHERE id = ?`,
        )
        .run(u.inputTokens, u.outputTokens, u.cacheReadTokens, u.cacheCreationTokens, conversationId);
    })();
  }

  usageForDay(day: string): TokenUsage {
    return usageOf(this.db.prepare(SUMS + ' WHERE day = ?').get(day) as UsageSums | undefined);
  }

  usageForMonth(month: string): TokenUsage {
    return usageOf(this.db.prepare(SUMS + ' WHERE day LIKE ?').get(`${month}-%`) as UsageSums | undefined);
  }

  usageByDay(month: string): (TokenUsage & { day: string })[] {
    const rows = this.db.prepare(SUMS.replace('SELECT', 'SELECT day,') + ' WHERE day LIKE ? GROUP BY day ORDER BY day').all(`${month}-%`) as (UsageSums & {
      day: string;
    })[];
    return rows.map((r) => ({ day: r.day, ...usageOf(r) }));
  }

  usageForConversation(id: string): TokenUsage {
    return this.summary(id).usage;
  }
}

const SUMS =
  'SELECT SUM(input_tokens) AS i, SUM(output_tokens) AS o, SUM(cache_read_tokens) AS cr, SUM(cache_creation_tokens) AS cc FROM ai_usage';

/** YYYY-MM-DD in local time: "today" is the Commander's day. */
export function localDay(d: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}`;
}
