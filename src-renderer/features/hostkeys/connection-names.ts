import type { Connection } from '@common/contract/connections.js';
import type { HostKeyEntry } from '@common/contract/hostkeys.js';
import { hostKeyHost } from '@common/host-address.js';
import { knownHostsName } from './hashed-query.js';

/**
 * The saved connections a trusted key serves: a person thinks "web01", not "10.0.0.5:22". A
 * connection uses the key of its own kind trusted for its host and port, its host as it is dialled
 * (the host looks keys up so: an IPv6 address without brackets), or a hashed known_hosts entry that
 * stands for that host and port. A host is the same server in any case ("Web01" uses the key of
 * "web01", "Desk01" the certificate of "desk01"), as the host looks keys up (hostKeyHost).
 */

/** Where a key is trusted, as a connection reaches it (an id, not for display). */
export function serverAt(kind: HostKeyEntry['kind'], host: string, port: number): string {
  return `${kind} ${hostKeyHost(host)} ${port}`;
}

/** The names of the saved connections by the server (serverAt) they connect to, sorted. */
export function connectionNamesByServer(connections: readonly Connection[]): Map<string, string[]> {
  const byServer = new Map<string, string[]>();
  for (const c of connections) {
    const at = serverAt(c.kind, c.host, c.port);
    byServer.set(at, [...(byServer.get(at) ?? []), c.name]);
  }
  for (const names of byServer.values()) names.sort((a, b) => a.localeCompare(b));
  return byServer;
}

/** As hostkeys.matchHashed takes them in one call. */
const BATCH = 64;

/**
 * The names of the saved SSH connections each hashed entry ("|1|…") stands for. Only the host can
 * hash with an entry's salt (hostkeys.matchHashed, which says which entries match, not for which
 * name), so the known_hosts names of the connections are asked in batches, and name by name only
 * in a batch that matched: many connections and no hashed entry for them cost a call per batch.
 */
export async function connectionNamesOfHashed(
  connections: readonly Connection[],
  matchHashed: (names: string[]) => Promise<string[]>,
): Promise<Map<string, string[]>> {
  const byName = new Map<string, string[]>();
  for (const c of connections) {
    if (c.kind !== 'ssh') continue;
    // Lowercased, as OpenSSH hashes a name: connections to "Web01" and "web01" share one name to ask about.
    const name = knownHostsName(hostKeyHost(c.host), c.port);
    byName.set(name, [...(byName.get(name) ?? []), c.name]);
  }
  const names = [...byName.keys()];
  const batches = Array.from({ length: Math.ceil(names.length / BATCH) }, (_, i) => names.slice(i * BATCH, (i + 1) * BATCH));
  const byEntry = new Map<string, string[]>();
  for (const batch of batches) {
    if (!(await matchHashed(batch)).length) continue;
    for (const name of batch) {
      for (const entry of await matchHashed([name])) byEntry.set(entry, [...(byEntry.get(entry) ?? []), ...(byName.get(name) ?? [])]);
    }
  }
  for (const list of byEntry.values()) list.sort((a, b) => a.localeCompare(b));
  return byEntry;
}
