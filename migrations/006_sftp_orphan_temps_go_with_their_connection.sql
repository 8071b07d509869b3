-- The temps an upload cut off by a lost connection left on a server are noted by site, which the
-- App makes the saved connection they were written through (004), and removed through the next
-- session to it. A connection deleted has no next session: its rows stayed for ever. Now they go
-- with it (ON DELETE CASCADE, as its tags do), and those of connections deleted before go here.
-- A temp noted for a connection deleted while a session of it was still open is not stored (that
-- session still removes it, from memory, while it lasts).
CREATE TABLE sftp_orphan_temps_new (
  site      TEXT NOT NULL REFERENCES connections(id) ON DELETE CASCADE,
  path      TEXT NOT NULL,
  noted_at  TEXT NOT NULL,
  PRIMARY KEY (site, path)
);
INSERT INTO sftp_orphan_temps_new (site, path, noted_at)
  SELECT site, path, noted_at FROM sftp_orphan_temps WHERE site IN (SELECT id FROM connections);
DROP TABLE sftp_orphan_temps;
ALTER TABLE sftp_orphan_temps_new RENAME TO sftp_orphan_temps;
