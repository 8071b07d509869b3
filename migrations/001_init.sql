-- Connections with groups and tags, vault-encrypted credentials, settings, known hosts.

CREATE TABLE groups (
  id         TEXT PRIMARY KEY,
  name       TEXT NOT NULL,
  parent_id  TEXT REFERENCES groups(id) ON DELETE SET NULL,
  position   INTEGER NOT NULL DEFAULT 0
);

-- Encrypted secrets: AES-256-GCM under the vault data key, the record id as AAD.
CREATE TABLE credentials (
  id          TEXT PRIMARY KEY,
  kind        TEXT NOT NULL,
  label       TEXT NOT NULL DEFAULT '',
  nonce       BLOB NOT NULL,
  ciphertext  BLOB NOT NULL,
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL
);

-- The wrapped data key and how it is wrapped. Never the data key itself.
CREATE TABLE vault_meta (
  key    TEXT PRIMARY KEY,
  value  BLOB NOT NULL
);

CREATE TABLE connections (
  id                     TEXT PRIMARY KEY,
  name                   TEXT NOT NULL,
  kind                   TEXT NOT NULL CHECK (kind IN ('ssh', 'rdp')),
  host                   TEXT NOT NULL,
  port                   INTEGER NOT NULL,
  username               TEXT NOT NULL DEFAULT '',
  group_id               TEXT REFERENCES groups(id) ON DELETE SET NULL,
  auth_method            TEXT NOT NULL DEFAULT 'password',
  key_path               TEXT,
  jump_host_id           TEXT REFERENCES connections(id) ON DELETE SET NULL,
  ssh_options            TEXT NOT NULL DEFAULT '{}',
  rdp_options            TEXT NOT NULL DEFAULT '{}',
  notes                  TEXT NOT NULL DEFAULT '',
  password_secret_id     TEXT REFERENCES credentials(id) ON DELETE SET NULL,
  passphrase_secret_id   TEXT REFERENCES credentials(id) ON DELETE SET NULL,
  private_key_secret_id  TEXT REFERENCES credentials(id) ON DELETE SET NULL,
  created_at             TEXT NOT NULL,
  updated_at             TEXT NOT NULL
);
CREATE INDEX connections_group ON connections(group_id);

CREATE TABLE connection_tags (
  connection_id  TEXT NOT NULL REFERENCES connections(id) ON DELETE CASCADE,
  tag            TEXT NOT NULL,
  PRIMARY KEY (connection_id, tag)
);
CREATE INDEX connection_tags_tag ON connection_tags(tag);

CREATE TABLE settings (
  key    TEXT PRIMARY KEY,
  value  TEXT NOT NULL
);

-- SSH host keys and RDP certificates. host is the name as the user typed it, or for a hashed
-- OpenSSH known_hosts entry the "|1|salt|hash" token (matched by HMAC at lookup).
CREATE TABLE known_hosts (
  kind         TEXT NOT NULL CHECK (kind IN ('ssh', 'rdp')),
  host         TEXT NOT NULL,
  port         INTEGER NOT NULL,
  key_type     TEXT NOT NULL,
  fingerprint  TEXT NOT NULL,
  hashed       INTEGER NOT NULL DEFAULT 0,
  source       TEXT NOT NULL DEFAULT 'user',
  added_at     TEXT NOT NULL,
  PRIMARY KEY (kind, host, port, key_type)
);
