-- The XO: conversations (seed 000), their messages, token usage, full-text search, and the
-- append-only audit log of every tool call.

CREATE TABLE conversations (
  id                      TEXT PRIMARY KEY,
  title                   TEXT NOT NULL DEFAULT '',
  model                   TEXT NOT NULL,
  tokens_in               INTEGER NOT NULL DEFAULT 0,
  tokens_out              INTEGER NOT NULL DEFAULT 0,
  cache_read_tokens       INTEGER NOT NULL DEFAULT 0,
  cache_creation_tokens   INTEGER NOT NULL DEFAULT 0,
  created_at              TEXT NOT NULL,
  updated_at              TEXT NOT NULL
);
CREATE INDEX conversations_updated ON conversations(updated_at);

-- One Messages API message per row, content as the JSON array of blocks sent to the model
-- (already redacted: nothing is stored that could not leave the machine).
CREATE TABLE ai_messages (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  conversation_id  TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
  role             TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
  content          TEXT NOT NULL,
  created_at       TEXT NOT NULL
);
CREATE INDEX ai_messages_conversation ON ai_messages(conversation_id, id);

-- Full-text search over the readable text of each message.
CREATE VIRTUAL TABLE ai_messages_fts USING fts5(
  text,
  conversation_id UNINDEXED,
  message_id UNINDEXED,
  tokenize = 'unicode61'
);

-- One row per model response; per-day and per-month totals are sums over it.
CREATE TABLE ai_usage (
  id                      INTEGER PRIMARY KEY AUTOINCREMENT,
  conversation_id         TEXT,
  run_id                  TEXT,
  model                   TEXT NOT NULL,
  input_tokens            INTEGER NOT NULL DEFAULT 0,
  output_tokens           INTEGER NOT NULL DEFAULT 0,
  cache_read_tokens       INTEGER NOT NULL DEFAULT 0,
  cache_creation_tokens   INTEGER NOT NULL DEFAULT 0,
  day                     TEXT NOT NULL,
  created_at              TEXT NOT NULL
);
CREATE INDEX ai_usage_day ON ai_usage(day);
CREATE INDEX ai_usage_conversation ON ai_usage(conversation_id);

-- XO settings and mode as JSON values per key.
CREATE TABLE ai_state (
  key    TEXT PRIMARY KEY,
  value  TEXT NOT NULL
);

-- Every tool call, written once when it ends. Rows are never updated or deleted.
CREATE TABLE audit_log (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  at               TEXT NOT NULL,
  actor            TEXT NOT NULL,
  conversation_id  TEXT,
  run_id           TEXT,
  tool_use_id      TEXT,
  tool             TEXT NOT NULL,
  effect           TEXT NOT NULL CHECK (effect IN ('read', 'act')),
  session_id       TEXT,
  input            TEXT NOT NULL,
  result_summary   TEXT NOT NULL,
  status           TEXT NOT NULL CHECK (status IN ('ok', 'error', 'denied', 'aborted')),
  decision         TEXT NOT NULL,
  decided_by       TEXT,
  wait_ms          REAL NOT NULL DEFAULT 0,
  duration_ms      REAL NOT NULL DEFAULT 0
);
CREATE INDEX audit_log_conversation ON audit_log(conversation_id, id);
CREATE INDEX audit_log_tool_use ON audit_log(tool_use_id);

CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN
  SELECT RAISE(ABORT, 'audit_log is append-only');
END;

CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
BEGIN
  SELECT RAISE(ABORT, 'audit_log is append-only');
END;
