import { existsSync, readFileSync } from 'node:fs';
import { homedir, userInfo } from 'node:os';
import { join } from 'node:path';
import SSHConfig from 'ssh-config';
import type { Connection } from '../../common/contract/connections.js';
import { WraithError } from '../../common/errors.js';
import type { ConnectionsService } from './connections-service.js';
import { forwardsFromSshConfig } from './ssh-config-forwards.js';

export interface ImportResult {
  created: Connection[];
  skipped: { host: string; reason: string }[];
  /** What of a created connection's entry was left out (a forward Wraith cannot run). */
  notes: { host: string; note: string }[];
}

/**
 * The user name ssh logs in as when neither the entry nor its ProxyJump spec gives a User: the
 * local login name, that of the account Wraith runs as. Null when this account has none (no
 * passwd entry, no USER): the entry is then skipped, saying why, rather than saved without one.
 */
export function localLoginName(): string | null {
  try {
    const name = userInfo().username;
    if (name) return name;
  } catch {
    // No passwd entry for this uid (a container started with an arbitrary uid): fall back to the environment.
  }
  return process.env.USER || process.env.LOGNAME || null;
}

function first(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

function expandHome(p: string): string {
  return p === '~' ? homedir() : p.startsWith('~/') ? join(homedir(), p.slice(2)) : p;
}

/** "user@host:port" / "host" / "[::1]:22" → parts. */
function parseJumpSpec(spec: string): { user?: string; host: string; port?: number } {
  let rest = spec.trim();
  let user: string | undefined;
  const at = rest.lastIndexOf('@');
  if (at >= 0) {
    user = rest.slice(0, at);
    rest = rest.slice(at + 1);
  }
  const bracket = /^\[(.+)\](?::(\d+))?$/.exec(rest);
  if (bracket?.[1]) return { user, host: bracket[1], port: bracket[2] ? Number(bracket[2]) : undefined };
  const colon = rest.lastIndexOf(':');
  if (colon > 0 && rest.indexOf(':') === colon) {
    return { user, host: rest.slice(0, colon), port: Number(rest.slice(colon + 1)) };
  }
  return { user, host: rest };
}

/**
 * Imports concrete `Host` entries (no wildcards) from an OpenSSH client config: the effective
 * HostName, User, Port and IdentityFile (so `Host *` defaults apply), ProxyJump chains as
 * jump-host links, and LocalForward, RemoteForward and DynamicForward as saved port forwards. Entries that already exist (same name, host and port) are skipped.
 */
export function importSshConfig(
  connections: ConnectionsService,
  opts: { path?: string; text?: string; groupId?: string | null } = {},
): ImportResult {
  let text = opts.text;
  if (text === undefined) {
    const path = expandHome(opts.path ?? '~/.ssh/config');
    if (!existsSync(path)) throw new WraithError('ENOTFOUND', `No SSH config at ${path}.`);
    text = readFileSync(path, 'utf8');
  }
  let config: SSHConfig;
  try {
    config = SSHConfig.parse(text);
  } catch (err) {
    throw new WraithError('EBADARGS', `The SSH config cannot be read: ${err instanceof Error ? err.message : String(err)}`);
  }

  const aliases: string[] = [];
  for (const line of config) {
    if (line.type !== SSHConfig.DIRECTIVE || line.param.toLowerCase() !== 'host') continue;
    const values = typeof line.value === 'string' ? line.value.split(/\s+/) : line.value.map((v) => v.val);
    for (const v of values) if (v && !/[*?!]/.test(v)) aliases.push(v);
  }

  const existing = connections.list().connections;
  const byName = new Map(existing.filter((c) => c.kind === 'ssh').map((c) => [c.name, c]));
  const result: ImportResult = { created: [], skipped: [], notes: [] };
  const computed = new Map(aliases.map((a) => [a, config.compute(a)]));

  const ensure = (alias: string, depth: number): Connection | null => {
    const have = byName.get(alias);
    if (have) return have;
    if (depth > 8) {
      result.skipped.push({ host: alias, reason: 'ProxyJump chain is longer than 8 hops or loops' });
      return null;
    }
    const params = computed.get(alias);
    const jumpSpec = params ? first(params.ProxyJump) : parseJumpSpec(alias).host;
    let jumpHostId: string | null = null;
    if (params && jumpSpec && jumpSpec.toLowerCase() !== 'none') {
      // ProxyJump a,b: the target hops through b, which hops through a.
      const hops = jumpSpec.split(',').map((s) => s.trim()).filter(Boolean);
      for (const hop of hops) {
        const hopConn = ensureJump(hop, jumpHostId, depth + 1);
        if (!hopConn) return null;
        jumpHostId = hopConn.id;
      }
    }
    const spec = params ? null : parseJumpSpec(alias);
    const identity = params ? first(params.IdentityFile) : undefined;
    const portText = params ? first(params.Port) : spec?.port?.toString();
    const port = portText ? Number(portText) : 22;
    if (!Number.isInteger(port) || port < 1 || port > 65535) {
      result.skipped.push({ host: alias, reason: `Port "${portText}" is not a valid port` });
      return null;
    }
    // A jump host named only inside a ProxyJump has no entry, so no forwards of its own.
    const { forwards, notes } = params ? forwardsFromSshConfig(params) : { forwards: [], notes: [] };
    let username = ((params ? first(params.User) : spec?.user) ?? '').trim();
    if (!username) {
      // As ssh does: no User means the local login name.
      const local = localLoginName();
      if (!local) {
        result.skipped.push({ host: alias, reason: 'No User is given, and the account Wraith runs as has no login name to use instead: add a User line' });
        return null;
      }
      username = local;
      notes.push(`No User is given: the user name is ${local}, the account Wraith runs as, as ssh would use. Edit the connection if the server expects another.`);
    }
    try {
      const created = connections.create({
        name: alias,
        kind: 'ssh',
        // HostName may use %h (the alias) and %% (a literal %), as OpenSSH expands them.
        host: ((params ? first(params.HostName) : spec?.host) ?? alias).replace(/%(%|h)/g, (_m, c: string) => (c === 'h' ? alias : '%')),
        port,
        username,
        groupId: opts.groupId ?? null,
        tags: ['ssh-config'],
        authMethod: identity ? 'key' : 'agent',
        keyPath: identity ? expandHome(identity) : null,
        jumpHostId,
        sshOptions: forwards.length > 0 ? { forwards } : {},
        rdpOptions: {},
        notes: '',
      });
      byName.set(alias, created);
      result.created.push(created);
      for (const note of notes) result.notes.push({ host: alias, note });
      return created;
    } catch (err) {
      result.skipped.push({ host: alias, reason: err instanceof Error ? err.message : String(err) });
      return null;
    }
  };

  const ensureJump = (hop: string, previous: string | null, depth: number): Connection | null => {
    const conn = ensure(hop, depth);
    // A literal "user@host" hop in a chain inherits the previous hop as its own jump host.
    if (conn && previous && conn.jumpHostId === null && !computed.has(hop)) {
      return connections.update(conn.id, { jumpHostId: previous });
    }
    return conn;
  };

  for (const alias of aliases) {
    const before = byName.get(alias);
    if (before && !result.created.includes(before)) {
      result.skipped.push({ host: alias, reason: 'A connection with this name already exists' });
      continue;
    }
    ensure(alias, 0);
  }
  return result;
}
