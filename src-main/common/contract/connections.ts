import { z } from 'zod';
import { Id, Ok, event, method, patchOf } from './define.js';

export const ConnectionKind = z.enum(['ssh', 'rdp']);
export const SshAuthMethod = z.enum(['password', 'key', 'agent', 'keyboard-interactive']);
export const RdpSecurity = z.enum(['auto', 'nla', 'tls', 'rdp']);

/** How messages name the control characters people meet; the rest by their code alone. */
const CONTROL_NAMES: Record<number, string> = { 0: 'NUL', 9: 'a tab', 10: 'a line break', 13: 'a carriage return', 27: 'ESC', 127: 'DEL' };

/**
 * Why `value` cannot stand as a connection's `what` ("host", "user name"), or null: it has a
 * control character in it (U+0000–U+001F, U+007F–U+009F). One comes with a paste from a terminal
 * or a document and does not show in a form; saved, it was sent as it is at connect, and the
 * connect failed in words that did not point at it (a NUL cuts a C string short in FreeRDP).
 */
export function controlCharacterProblem(what: string, value: string): string | null {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code <= 0x1f || (code >= 0x7f && code <= 0x9f)) {
      const name = CONTROL_NAMES[code] ?? 'a control character';
      const hex = `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
      return `The ${what} has an invisible control character in it (${name}, ${hex}, at character ${i + 1}), which would make connecting fail: type the ${what} again.`;
    }
  }
  return null;
}

/** A host name or address (DNS name, IPv4, IPv6 with or without brackets and zone). */
export const Hostname = z
  .string()
  .trim()
  .min(1, 'Enter a host name or address')
  .max(255)
  // Before the pattern, which refuses it too, in words that cannot say what is wrong with an
  // invisible character: the first issue of a field is the one shown.
  .refine((h) => controlCharacterProblem('host', h) === null, { error: (iss) => controlCharacterProblem('host', String(iss.input)) })
  .regex(/^[A-Za-z0-9._:\-[\]%]+$/, 'A host name has letters, digits, dots, dashes or an IP address');

/**
 * "web01:2222" or "[::1]:2222": a port written after the host. An IPv6 address has two colons or
 * more, so one colon outside brackets is a port (as in OpenSSH's "[host]:port").
 */
function hasPort(host: string): boolean {
  return /^\[.*\]:/.test(host) || host.split(':').length === 2;
}

/**
 * A connection's host, as create and update take it: "web01:2222" was saved, then dialled as a
 * name that does not resolve. Connection (what comes out) keeps Hostname, so one saved so before
 * this check still lists, to be mended.
 */
export const ConnectionHost = Hostname.refine((h) => !hasPort(h), 'Enter the host without a port: the port goes in the Port field.');

/** One message for every way a port can be wrong: not a number ("abc"), a fraction, out of range. */
const Port = z.number({ error: 'A port is a whole number from 1 to 65535.' }).int().min(1).max(65535);
const Tag = z.string().trim().min(1).max(40);

/** Loopback only, on either side: a port forward is never offered to the network. */
export const LoopbackHost = z.enum(['127.0.0.1', '::1']);

/** OpenSSH's three kinds of port forward: -L, -R and -D (tunnels.*). */
export const ForwardKind = z.enum(['local', 'remote', 'dynamic']);
export type ForwardKind = z.infer<typeof ForwardKind>;

/** A port forward as asked for (tunnels.start) or kept with a connection (sshOptions.forwards). */
export const ForwardFields = z.object({
  kind: ForwardKind.default('local'),
  bindHost: LoopbackHost.default('127.0.0.1'),
  /** 0 takes any free port. Ports below 1024 need administrator rights (root on the server, for remote). */
  bindPort: z.number({ error: 'A port is a whole number from 0 to 65535 (0 takes any free port).' }).int().min(0).max(65535),
  /** Local and remote forwards only; "localhost" when left out. */
  targetHost: Hostname.optional(),
  /** Local and remote forwards only, where it is required. */
  targetPort: Port.optional(),
});

/** Local and remote forwards need a target; a dynamic one names none (each connection does). */
export function forwardRules(f: z.infer<typeof ForwardFields>, ctx: z.RefinementCtx): void {
  if (f.kind === 'dynamic' && (f.targetHost !== undefined || f.targetPort !== undefined)) {
    ctx.addIssue({ code: 'custom', path: ['targetPort'], message: 'A dynamic (SOCKS) forward has no target: each connection names its own.' });
  } else if (f.kind !== 'dynamic' && f.targetPort === undefined) {
    ctx.addIssue({ code: 'custom', path: ['targetPort'], message: `A ${f.kind} forward needs the port to forward to.` });
  }
}

export const SavedForward = ForwardFields.superRefine(forwardRules);
export type SavedForward = z.infer<typeof SavedForward>;

export const SshOptions = z.object({
  keepaliveIntervalMs: z.number().int().min(0).max(600_000).optional(),
  /** Forward the local ssh-agent to the remote host. */
  agentForward: z.boolean().optional(),
  /** Port forwards started with every session of this connection (as LocalForward & co. in ssh_config). */
  forwards: z.array(SavedForward).max(16, 'A connection keeps at most 16 port forwards').optional(),
});

export const RdpOptions = z.object({
  domain: z.string().max(255).optional(),
  width: z.number().int().min(200).max(8192).optional(),
  height: z.number().int().min(200).max(8192).optional(),
  security: RdpSecurity.optional(),
  /**
   * 'fast' (default): H.264 through the graphics pipeline when the server and FreeRDP can, as
   * mstsc and xfreerdp do — about 28 frames/s against 16, slightly lossy colours. 'lossless':
   * bitmap codecs only, exact pixels.
   */
  quality: z.enum(['fast', 'lossless']).optional(),
});

/** The editable fields of a connection. Secrets are not here: they live in the vault. */
export const ConnectionFields = z.object({
  name: z.string().trim().min(1, 'Give the connection a name').max(200),
  kind: ConnectionKind,
  host: ConnectionHost,
  port: Port.optional(),
  // Trimmed, as the name and host are: a space pasted before the user name was saved and sent,
  // and the server refused " wraith-pw".
  username: z.string().trim().max(255).default(''),
  groupId: Id.nullable().default(null),
  tags: z.array(Tag).max(50).default([]),
  /** SSH only. */
  authMethod: SshAuthMethod.default('password'),
  /**
   * SSH only: path of a private key file on this machine (alternative to a vault-stored key).
   * Trimmed: the save checks read it trimmed, and the connect opened "  /path  " as typed.
   */
  keyPath: z.string().trim().max(4096).nullable().default(null),
  /** Another SSH connection to hop through (SSH: ProxyJump; RDP: tunnel). Chains follow the hop's own jumpHostId. */
  jumpHostId: Id.nullable().default(null),
  sshOptions: SshOptions.default({}),
  rdpOptions: RdpOptions.default({}),
  notes: z.string().max(10_000).default(''),
});

/** Secrets supplied with create/update; stored in the vault, never returned. `null` clears. */
export const ConnectionSecrets = z.object({
  password: z.string().max(10_000).nullable().optional(),
  passphrase: z.string().max(10_000).nullable().optional(),
  privateKey: z.string().max(100_000).nullable().optional(),
});

export const Connection = ConnectionFields.extend({
  id: Id,
  host: Hostname,
  port: Port,
  hasPassword: z.boolean(),
  hasPassphrase: z.boolean(),
  hasPrivateKey: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type Connection = z.infer<typeof Connection>;

export const Group = z.object({
  id: Id,
  name: z.string(),
  parentId: Id.nullable(),
  position: z.number().int(),
});
export type Group = z.infer<typeof Group>;

export const connectionsMethods = {
  'connections.list': method(
    z.object({ query: z.string().max(200).optional(), tag: Tag.optional() }).optional(),
    z.object({ connections: z.array(Connection), groups: z.array(Group), tags: z.array(z.string()) }),
    'Connections and groups; query matches name, host, user and tags.',
  ),
  'connections.get': method(z.object({ id: Id }), Connection, 'One connection.'),
  'connections.create': method(
    ConnectionFields.extend({ secrets: ConnectionSecrets.optional() }),
    Connection,
    'Creates a connection; any secrets go to the vault (which must be unlocked). One that could never connect is refused ' +
      '(EBADARGS, an issue per field): SSH without a user name, the key method without a key, a pasted text or key file that is no private key.',
  ),
  'connections.update': method(
    z.object({ id: Id, patch: patchOf(ConnectionFields), secrets: ConnectionSecrets.optional() }),
    Connection,
    'Changes fields of a connection; secrets given as null are removed from the vault. A change that would keep it from ' +
      'connecting is refused as connections.create refuses it (issues under patch.* and secrets.*).',
  ),
  'connections.duplicate': method(
    z.object({ id: Id }),
    Connection,
    'Copies a connection with its saved secrets (password, private key, passphrase) as new vault entries; ELOCKED, copying ' +
      'nothing, when it has secrets and the vault is locked.',
  ),
  'connections.delete': method(z.object({ id: Id }), Ok, 'Deletes a connection and its secrets.'),
  'connections.importSshConfig': method(
    z.object({
      path: z.string().max(4096).optional(),
      /** Config text instead of a file (e.g. pasted or uploaded in browser mode). */
      text: z.string().max(1_000_000).optional(),
      groupId: Id.nullable().optional(),
    }).optional(),
    z.object({
      created: z.array(Connection),
      skipped: z.array(z.object({ host: z.string(), reason: z.string() })),
      /** Parts of an imported entry left out or filled in, each saying why (a forward listening beyond loopback, a Unix socket; no User, so the local login name). */
      notes: z.array(z.object({ host: z.string(), note: z.string() })),
    }),
    'Imports Host entries (HostName, User, Port, IdentityFile, ProxyJump; LocalForward, RemoteForward, DynamicForward as saved port forwards) from an OpenSSH config.',
  ),
  'connections.groups.create': method(
    z.object({ name: z.string().trim().min(1, 'Give the group a name').max(200), parentId: Id.nullable().default(null) }),
    Group,
    'Creates a group (folder) in the connection tree.',
  ),
  'connections.groups.update': method(
    z.object({ id: Id, name: z.string().trim().min(1).max(200).optional(), parentId: Id.nullable().optional(), position: z.number().int().optional() }),
    Group,
    'Renames or moves a group.',
  ),
  'connections.groups.delete': method(
    z.object({ id: Id }),
    Ok,
    'Deletes a group; its connections and sub-groups move to its parent.',
  ),
};

export const connectionsEvents = {
  'connections.changed': event(
    z.object({}),
    'Saved connections or groups changed (created, edited, moved, deleted, imported — by any window, the CLI or the XO): read them again with connections.list.',
  ),
};
