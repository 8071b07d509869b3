-- Trusted SSH host keys and RDP certificates are stored and looked up under the host as
-- hostKeyHost (src-main/common/host-address.ts) writes it: without the brackets an IPv6 address
-- may be written in ("[::1]", as hostkeys.trust stored it when given so, is "::1", the address
-- every connection dials and looks its key up under), and without case for RDP certificates too
-- ("Desk01" is "desk01", as 005 made it for SSH names). The names stored before are made so here.
-- Hashed names ("|1|salt|hash") stay as they are.
--
-- Where two stored names become one, the server keeps one key per type (an RDP server: one
-- certificate), chosen as 005 chose: the one trusted in Wraith over an imported one, then the one
-- added last. The server offering the other is then a changed key, shown and asked about.
DELETE FROM known_hosts
WHERE hashed = 0 AND rowid NOT IN (
  SELECT rowid FROM (
    SELECT rowid, row_number() OVER (
      PARTITION BY kind,
        lower(CASE WHEN host LIKE '[%]' THEN substr(host, 2, length(host) - 2) ELSE host END),
        port,
        CASE WHEN kind = 'rdp' THEN '' ELSE key_type END
      ORDER BY source = 'user' DESC, added_at DESC, rowid DESC
    ) AS place
    FROM known_hosts
    WHERE hashed = 0
  )
  WHERE place = 1
);

UPDATE known_hosts
SET host = lower(CASE WHEN host LIKE '[%]' THEN substr(host, 2, length(host) - 2) ELSE host END)
WHERE hashed = 0 AND host <> lower(CASE WHEN host LIKE '[%]' THEN substr(host, 2, length(host) - 2) ELSE host END);
