/**
 * The known_hosts names a filter query may stand for, to find hashed entries ("|1|salt|hash"),
 * which no text filter can read: the host hashes these names with each entry's salt
 * (hostkeys.matchHashed).
 *
 * As `ssh-keygen -F`: "host" is that host on port 22, "[host]:port" (or "host:port") that port,
 * and OpenSSH lowercases a host name before hashing it. A bare host is also tried on every port
 * Wraith knows it by (saved connections, keys trusted by name): a person types the name they
 * connect to, and a hashed entry for another port would stay hidden otherwise.
 */
export function knownHostsNamesFor(query: string, knownPorts: (host: string) => Iterable<number>): string[] {
  const q = query.trim().toLowerCase();
  // No host name is longer than 255 characters or has a space (a key type with its fingerprint does).
  if (!q || q.length > 255 || /\s/.test(q)) return [];
  const withPort = /^\[(.+)\]:(\d{1,5})$/.exec(q) ?? /^([^:[\]]+):(\d{1,5})$/.exec(q);
  const port = withPort ? Number(withPort[2]) : null;
  if (withPort?.[1] && port && port <= 65535) return [knownHostsName(withPort[1], port)];
  // "[::1]" as the dialog shows an IPv6 host.
  const host = /^\[(.+)\]$/.exec(q)?.[1] ?? q;
  return [...new Set([host, ...[...knownPorts(host)].map((p) => knownHostsName(host, p))])];
}

/** How OpenSSH writes a host in known_hosts: bare on port 22, "[host]:port" otherwise. */
export function knownHostsName(host: string, port: number): string {
  return port === 22 ? host : `[${host}]:${port}`;
}
