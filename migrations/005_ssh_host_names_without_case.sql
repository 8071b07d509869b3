-- SSH host names have no case, as in OpenSSH (ssh.c lowercases the host before it reads
-- known_hosts): keys are now stored and looked up under the lowercased name, so a name stored
-- with upper case before ("Web01.Example.com", as a connection had it) is lowercased here, and
-- keeps serving every connection to that server, whatever case each has the host in.
-- Hashed names ("|1|salt|hash", base64: case matters) and RDP certificates (looked up by the name
-- as the connection has it) stay as they are.
--
-- Two names that differed only in case may each have had a key of one type: one server would then
-- have two keys of that type, which the store never holds (it would accept either unasked). One is
-- kept, as trusting does: a key trusted in Wraith over an imported one, then the one added last.
-- The server offering the other key is then a changed key, shown and asked about.
DELETE FROM known_hosts
WHERE kind = 'ssh' AND hashed = 0 AND rowid NOT IN (
  SELECT rowid FROM (
    SELECT rowid, row_number() OVER (
      PARTITION BY lower(host), port, key_type
      ORDER BY source = 'user' DESC, added_at DESC, rowid DESC
    ) AS place
    FROM known_hosts
    WHERE kind = 'ssh' AND hashed = 0
  )
  WHERE place = 1
);

UPDATE known_hosts SET host = lower(host) WHERE kind = 'ssh' AND hashed = 0 AND host <> lower(host);
