-- Remote temp files (".name.wraith-part-1a2b3c4d") that an upload or save cut off by a lost
-- connection left on a server: our own cleanup could not remove them then. site is what the SFTP
-- service keys them by (the App: the saved connection they were written through); the next session
-- to it removes them on the server, then their rows, also after Wraith restarted. noted_at: when
-- the cleanup failed.
CREATE TABLE sftp_orphan_temps (
  site      TEXT NOT NULL,
  path      TEXT NOT NULL,
  noted_at  TEXT NOT NULL,
  PRIMARY KEY (site, path)
);
