-- SSH host keys an imported known_hosts file marks @revoked: refused at connect whatever host
-- offers them, and never trusted, until the revocation is lifted deliberately. source is the file
-- whose @revoked line it was; added_at when that import first revoked it.
CREATE TABLE revoked_host_keys (
  fingerprint  TEXT PRIMARY KEY,
  key_type     TEXT NOT NULL,
  source       TEXT NOT NULL,
  added_at     TEXT NOT NULL
);
