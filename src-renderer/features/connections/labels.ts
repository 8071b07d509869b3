/**
 * How connections and groups are named where a person picks or finds one: one spelling for the
 * tree's rows, the jump host list, the group lists and the filter, so what the filter matches is
 * what the rows show.
 */
import type { Connection, Group } from '@common/contract/connections.js';
import { hostAndPort } from '@common/host-address.js';

const DEFAULT_PORT: Record<Connection['kind'], number> = { ssh: 22, rdp: 3389 };

/** "ops@web01.example.com:2222", "ops@[fd00::7]:2200": the port only when it is not the kind's own. */
export function connectionAddress(c: Pick<Connection, 'kind' | 'host' | 'port' | 'username'>): string {
  const user = c.username ? `${c.username}@` : '';
  return c.port === DEFAULT_PORT[c.kind] ? `${user}${c.host}` : `${user}${hostAndPort(c.host, c.port)}`;
}

/**
 * A row's second line: the address, and the jump host it is reached through, by name ("ops@web01
 * via bastion"), so a connection that depends on another says so where it is picked. `byId`:
 * the saved connections by id (a jump host that is not among them is said to be missing).
 */
export function connectionSubtitle(c: Connection, byId: ReadonlyMap<string, Pick<Connection, 'name'>>): string {
  const address = connectionAddress(c);
  if (!c.jumpHostId) return address;
  return `${address} via ${byId.get(c.jumpHostId)?.name ?? 'a missing jump host'}`;
}

/** "Linux / prod": a group by its path, so two "prod" groups in different folders differ. */
export function groupPath(groups: readonly Group[], id: string): string {
  const byId = new Map(groups.map((g) => [g.id, g]));
  const names: string[] = [];
  const seen = new Set<string>();
  for (let g = byId.get(id); g && !seen.has(g.id); g = g.parentId ? byId.get(g.parentId) : undefined) {
    seen.add(g.id);
    names.unshift(g.name);
  }
  return names.join(' / ');
}

/** The groups as a picker lists them: by path, in path order; `except` and everything under it left out. */
export function groupChoices(groups: readonly Group[], except: string | null = null): { id: string; label: string }[] {
  const byId = new Map(groups.map((g) => [g.id, g]));
  const under = (g: Group): boolean => {
    const seen = new Set<string>();
    for (let p: Group | undefined = g; p && !seen.has(p.id); p = p.parentId ? byId.get(p.parentId) : undefined) {
      if (p.id === except) return true;
      seen.add(p.id);
    }
    return false;
  };
  return groups
    .filter((g) => !under(g))
    .map((g) => ({ id: g.id, label: groupPath(groups, g.id) }))
    .sort((a, b) => a.label.localeCompare(b.label));
}
