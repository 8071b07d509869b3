import { homedir, userInfo } from 'node:os';
import { join } from 'node:path';
import SSHConfig, { type ComputeOptions, type Line, type Match, type MatchOptions } from 'ssh-config';
import type { Connection } from '../../common/contract/connections.js';
import { WraithError } from '../../common/errors.js';
import type { ConnectionsService } from './connections-service.js';
import { forwardsFromSshConfig } from './ssh-config-forwards.js';
import { callerLocalPath } from '../local-files.js';
import { identityFromSshConfig } from './ssh-config-identity.js';
import { displayPath, expandIncludes, readSshConfigText, show } from './ssh-config-include.js';

export interface ImportResult {
  created: Connection[];
  skipped: { host: string; reason: string }[];
  /**
   * What of a created connection's entry was left out or filled in (a forward Wraith cannot run,
   * a ProxyCommand), and Includes not followed, under the file they are written in.
   */
  notes: { host: string; note: string }[];
}

/**
 * How settings are looked up. Keywords are case-insensitive in OpenSSH ("hostname" is HostName),
 * so every key comes back in lower case. Match exec is not run: importing, above all pasted text,
 * must not run commands; a host it could have changed gets a note instead.
 */
const LOOKUP: ComputeOptions = { ignoreCase: true, matchExec: false };

type Settings = Record<string, string | string[]>;

/**
 * Settings that change where a connection goes or how it logs in, which a Wraith connection has
 * no place for: each one found becomes a note on the connection, with why. ProxyCommand and
 * IdentityFile lines not kept are noted where the rest are read.
 */
const NOT_KEPT: [key: string, directive: string, why: string][] = [
  ['bindaddress', 'BindAddress', 'Wraith connects from the address the system picks'],
  ['bindinterface', 'BindInterface', 'Wraith connects from the interface the system picks'],
  ['certificatefile', 'CertificateFile', 'Wraith logs in with the key alone, without a certificate'],
  ['identityagent', 'IdentityAgent', 'Wraith uses the agent at SSH_AUTH_SOCK'],
  ['pkcs11provider', 'PKCS11Provider', 'Wraith does not load PKCS#11 providers'],
  ['securitykeyprovider', 'SecurityKeyProvider', 'Wraith does not load security key providers'],
  ['remotecommand', 'RemoteCommand', 'a session opens a shell: run the command in it'],
];

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

function all(v: string | string[] | undefined): string[] {
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}

/** "user@host:port" / "host" / "[::1]:22" / "ssh://user@host:port" → parts. */
function parseJumpSpec(spec: string): { user?: string; host: string; port?: number } {
  let rest = spec.trim().replace(/^ssh:\/\//i, '');
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

/** The config as read from disk (Includes followed) or pasted (Includes noted). */
function readConfig(opts: { path?: string; text?: string }, notes: ImportResult['notes']): SSHConfig {
  let text = opts.text;
  let path: string | null = null;
  if (text === undefined) {
    path = callerLocalPath(opts.path ?? '~/.ssh/config');
    try {
      text = readSshConfigText(path);
    } catch (err) {
      if (err instanceof WraithError && err.code === 'ENOTFOUND') throw new WraithError('ENOTFOUND', `No SSH config at ${path}.`);
      throw err;
    }
  }
  let config: SSHConfig;
  try {
    config = SSHConfig.parse(text);
  } catch (err) {
    throw new WraithError('EBADARGS', `The SSH config cannot be read: ${err instanceof Error ? err.message : String(err)}`);
  }
  // As ssh: a relative Include is looked up in ~/.ssh from a user's config, in /etc/ssh from the system's.
  const includeDir = path === null ? null : path.startsWith('/etc/ssh/') ? '/etc/ssh' : join(homedir(), '.ssh');
  const expanded = expandIncludes(config, path === null ? 'pasted text' : displayPath(path), includeDir, notes);
  for (const line of expanded) {
    spellForMatch(line);
    if ('config' in line) for (const sub of line.config) spellForMatch(sub);
  }
  return expanded;
}

/**
 * The ssh-config package follows HostName and User for `Match host` and `Match user` only when
 * spelled so, even with ignoreCase: written "hostname", a Match would test the alias instead.
 */
function spellForMatch(line: Line): void {
  if (line.type !== SSHConfig.DIRECTIVE) return;
  const lower = line.param.toLowerCase();
  if (lower === 'hostname') line.param = 'HostName';
  else if (lower === 'user') line.param = 'User';
}

function isMatchExec(line: Line): line is Match {
  return line.type === SSHConfig.DIRECTIVE && 'criteria' in line && Object.keys(line.criteria).some((k) => k.toLowerCase() === 'exec');
}

/**
 * Imports concrete `Host` entries (no wildcards) from an OpenSSH client config, with the files it
 * Includes: the effective HostName, User, Port, IdentityFile and ForwardAgent (so `Host *`
 * defaults apply), ProxyJump chains as jump-host links, and LocalForward, RemoteForward and
 * DynamicForward as saved port forwards. Entries that already exist (same name) are skipped.
 */
export function importSshConfig(
  connections: ConnectionsService,
  opts: { path?: string; text?: string; groupId?: string | null } = {},
): ImportResult {
  const result: ImportResult = { created: [], skipped: [], notes: [] };
  const config = readConfig(opts, result.notes);

  const aliases = new Set<string>();
  for (const line of config) {
    if (line.type !== SSHConfig.DIRECTIVE || line.param.toLowerCase() !== 'host') continue;
    const values = typeof line.value === 'string' ? line.value.split(/\s+/) : line.value.map((v) => v.val);
    for (const v of values) if (v && !/[*?!]/.test(v)) aliases.add(v);
  }

  const existing = connections.list().connections;
  const byName = new Map(existing.filter((c) => c.kind === 'ssh').map((c) => [c.name, c]));
  const computed = new Map([...aliases].map((a) => [a, config.compute(a, LOOKUP)]));
  const execMatches = config.filter(isMatchExec);
  /** Names that could not be imported, so one met again as a hop is not reported twice. */
  const failed = new Set<string>();
  const skip = (host: string, reason: string): null => {
    if (!failed.has(host)) result.skipped.push({ host, reason });
    failed.add(host);
    return null;
  };

  /** A note for each Match exec that, had its command succeeded, would have changed these settings. */
  const unrunMatches = (lookup: MatchOptions, settings: Settings): string[] =>
    execMatches.flatMap((m) => {
      const criteria = Object.fromEntries(Object.entries(m.criteria).filter(([k]) => k.toLowerCase() !== 'exec'));
      const asIfRun = new SSHConfig();
      asIfRun.push(...config.map((l) => (l === m ? { ...m, criteria } : l)));
      const other = asIfRun.compute(lookup, LOOKUP);
      const same = Object.keys({ ...other, ...settings }).every((k) => JSON.stringify(other[k]) === JSON.stringify(settings[k]));
      return same ? [] : [`${show(m)}: not run, Wraith runs no command from an SSH config, so what it would set is left out.`];
    });

  /**
   * The connection for `target` (a Host alias, or a "user@host:port" hop of a ProxyJump), made if
   * need be. `via` is the hop before it in a ProxyJump chain: ssh reaches the target through it,
   * whatever the target's own entry says, so that is a connection of its own, named for the route.
   */
  const ensure = (target: string, depth: number, via: Connection | null = null): Connection | null => {
    const name = via ? `${target} via ${via.name}` : target;
    const have = byName.get(name);
    if (have) return have;
    if (failed.has(name)) return null;
    if (depth > 8) return skip(name, 'ProxyJump chain is longer than 8 hops or loops');
    const entry = computed.get(target);
    const spec = entry ? { host: target } : parseJumpSpec(target);
    // A hop named only inside a ProxyJump takes the settings ssh would look up for its host name
    // (Host *, patterns); the user and port written in the spec win, as ssh -l and -p do.
    const lookup: MatchOptions = spec.user ? { Host: spec.host, User: spec.user } : { Host: spec.host };
    const settings = entry ?? config.compute(lookup, LOOKUP);
    const notes: string[] = [];
    // HostName may use %h (the host as given) and %% (a literal %), as OpenSSH expands them.
    const host = (first(settings.hostname) ?? spec.host).replace(/%(%|h)/g, (_m, c: string) => (c === 'h' ? spec.host : '%'));

    let jumpHostId = via?.id ?? null;
    if (via) {
      notes.push(`Made for a ProxyJump chain that reaches ${target} through ${via.name}: a connection has one jump host, so this route is a connection of its own.`);
    } else {
      // Of ProxyJump and ProxyCommand, the one met first is used (as ssh does); keys keep that order.
      const route = Object.keys(settings).find((k) => k === 'proxyjump' || k === 'proxycommand');
      const routeValue = route ? (first(settings[route]) ?? '') : '';
      if (route === 'proxyjump' && routeValue.toLowerCase() !== 'none') {
        // ProxyJump a,b: the target hops through b, which is reached through a.
        let previous: Connection | null = null;
        for (const hop of routeValue.split(',').map((s) => s.trim()).filter(Boolean)) {
          const hopConn = ensureHop(hop, previous, depth + 1);
          if (!hopConn) return skip(name, `ProxyJump ${routeValue}: the jump host ${hop} could not be imported`);
          previous = hopConn;
        }
        jumpHostId = previous?.id ?? null;
      } else if (route === 'proxycommand' && routeValue.toLowerCase() !== 'none') {
        notes.push(
          `ProxyCommand ${routeValue}: not imported, Wraith runs no proxy command, so it connects to ${host} directly. Give the connection a jump host if the command went through one.`,
        );
      }
    }

    const portText = spec.port?.toString() ?? first(settings.port);
    const port = portText ? Number(portText) : 22;
    if (!Number.isInteger(port) || port < 1 || port > 65535) return skip(name, `Port "${portText}" is not a valid port`);
    // As ssh does: no User means the local login name.
    const givenUser = (first(settings.user) ?? '').trim();
    const localUser = localLoginName();
    const username = givenUser || localUser;
    if (!username) return skip(name, 'No User is given, and the account Wraith runs as has no login name to use instead: add a User line');

    // The %-tokens in IdentityFile stand for this host's values (%h, %p, %r...), so they are expanded here, per host.
    const identity = identityFromSshConfig(all(settings.identityfile), {
      host,
      given: spec.host,
      hostKeyAlias: first(settings.hostkeyalias),
      port,
      user: username,
      localUser,
    });
    notes.push(...identity.notes);
    for (const [key, directive, why] of NOT_KEPT) {
      for (const value of all(settings[key])) {
        if (value.toLowerCase() === 'none' || (key === 'identityagent' && /^\$?SSH_AUTH_SOCK$/.test(value))) continue;
        notes.push(`${directive} ${value}: not imported, ${why}.`);
      }
    }
    const forwardAgent = first(settings.forwardagent)?.toLowerCase();
    if (forwardAgent && forwardAgent !== 'yes' && forwardAgent !== 'no') {
      notes.push(`ForwardAgent ${first(settings.forwardagent)}: not imported, Wraith forwards the agent at SSH_AUTH_SOCK only; turn agent forwarding on in the connection if that one will do.`);
    }
    notes.push(...unrunMatches(lookup, settings));

    // Forwards belong to an entry opened on its own, not to a hop that only carries another connection.
    const { forwards, notes: forwardNotes } =
      entry && !via
        ? forwardsFromSshConfig({ LocalForward: settings.localforward, RemoteForward: settings.remoteforward, DynamicForward: settings.dynamicforward })
        : { forwards: [], notes: [] };
    notes.push(...forwardNotes);
    if (!givenUser) {
      notes.push(`No User is given: the user name is ${username}, the account Wraith runs as, as ssh would use. Edit the connection if the server expects another.`);
    }
    try {
      const created = connections.create({
        name,
        kind: 'ssh',
        host,
        port,
        username,
        groupId: opts.groupId ?? null,
        tags: ['ssh-config'],
        authMethod: identity.keyPath ? 'key' : 'agent',
        keyPath: identity.keyPath,
        jumpHostId,
        sshOptions: { ...(forwards.length > 0 ? { forwards } : {}), ...(forwardAgent === 'yes' ? { agentForward: true } : {}) },
        rdpOptions: {},
        notes: '',
      });
      byName.set(name, created);
      result.created.push(created);
      for (const note of notes) result.notes.push({ host: name, note });
      return created;
    } catch (err) {
      return skip(name, err instanceof Error ? err.message : String(err));
    }
  };

  /** One hop of a ProxyJump chain, reached through `previous` (null for the first, which goes its own way). */
  const ensureHop = (hop: string, previous: Connection | null, depth: number): Connection | null => {
    if (!previous) return ensure(hop, depth);
    // A hop whose own route already goes through `previous` is used as it is; any other would
    // change how it connects where it is used alone, so the chain gets a connection of its own.
    const own = computed.has(hop) ? ensure(hop, depth) : (byName.get(hop) ?? null);
    if (own?.jumpHostId === previous.id) return own;
    return ensure(hop, depth, previous);
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
