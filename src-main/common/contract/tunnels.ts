import { z } from 'zod';
import { Hostname } from './connections.js';
import { Id, Ok, event, method } from './define.js';

/**
 * Port forwarding through SSH sessions (DESIGN.md: tunnels.*), OpenSSH's three kinds:
 * - local (ssh -L): a listener on this machine's loopback whose connections the server carries
 *   on to targetHost:targetPort;
 * - remote (ssh -R): the server listens on its loopback, and its connections come back through
 *   the session to targetHost:targetPort as this machine reaches it;
 * - dynamic (ssh -D): a SOCKS5 proxy on this machine's loopback; each connection names its own
 *   destination, which the server connects to (and resolves, as socks5h does).
 */
export const TunnelKind = z.enum(['local', 'remote', 'dynamic']);
export type TunnelKind = z.infer<typeof TunnelKind>;

/** Loopback only, on either side: a tunnel is never offered to the network. */
const LoopbackHost = z.enum(['127.0.0.1', '::1']);
const Port = (min: number) =>
  z
    .number()
    .int('Port is a whole number')
    .min(min, `Port is ${min}–65535`)
    .max(65535, `Port is ${min}–65535`);

export const Tunnel = z.object({
  tunnelId: Id,
  sessionId: Id,
  kind: TunnelKind,
  /** Where it listens: this machine's loopback (local, dynamic) or the server's (remote). */
  bindHost: LoopbackHost,
  bindPort: z.number().int(),
  /**
   * Where connections go: as the server resolves it for local ("localhost" is the server), as
   * this machine resolves it for remote ("localhost" is this machine); null for dynamic, whose
   * connections each name their own.
   */
  targetHost: z.string().nullable(),
  targetPort: z.number().int().nullable(),
  /** Connections carried now, and since the tunnel started. */
  active: z.number().int().nonnegative(),
  total: z.number().int().nonnegative(),
  /** Why the last connection could not be carried (the server refused it, the session is down), until one is. */
  lastError: z.string().nullable(),
});
export type Tunnel = z.infer<typeof Tunnel>;

export const TunnelStart = z
  .object({
    sessionId: Id,
    kind: TunnelKind.default('local'),
    bindHost: LoopbackHost.default('127.0.0.1'),
    /** 0 takes any free port. Ports below 1024 need administrator rights (root on the server, for remote). */
    bindPort: Port(0),
    /** Local and remote forwards only; "localhost" when left out. */
    targetHost: Hostname.optional(),
    /** Local and remote forwards only, where it is required. */
    targetPort: Port(1).optional(),
  })
  .superRefine((t, ctx) => {
    if (t.kind === 'dynamic' && (t.targetHost !== undefined || t.targetPort !== undefined)) {
      ctx.addIssue({ code: 'custom', path: ['targetPort'], message: 'A dynamic (SOCKS) forward has no target: each connection names its own.' });
    } else if (t.kind !== 'dynamic' && t.targetPort === undefined) {
      ctx.addIssue({ code: 'custom', path: ['targetPort'], message: `A ${t.kind} forward needs the port to forward to.` });
    }
  });
/** As a caller writes it: kind and bindHost may be left out. */
export type TunnelStartInput = z.input<typeof TunnelStart>;

export const tunnelsMethods = {
  'tunnels.start': method(
    TunnelStart,
    Tunnel,
    'Starts a port forward through an SSH session: local (ssh -L: bindHost:bindPort here → targetHost:targetPort from the server), remote (ssh -R: bindHost:bindPort on the server → targetHost:targetPort from here) or dynamic (ssh -D: a SOCKS5 proxy on bindHost:bindPort here, connecting from the server). It lasts until stopped or the session closes, and outlives a reconnect.',
  ),
  'tunnels.stop': method(z.object({ tunnelId: Id }), Ok, 'Stops a tunnel; the connections it carries end.'),
  'tunnels.list': method(z.object({ sessionId: Id.optional() }).optional(), z.object({ tunnels: z.array(Tunnel) }), 'The tunnels of one session, or of every session.'),
};

export const tunnelsEvents = {
  'tunnels.changed': event(
    z.object({ sessionId: Id, tunnels: z.array(Tunnel) }),
    "A session's tunnels changed: one started or stopped, or a connection through one began or ended.",
  ),
};
