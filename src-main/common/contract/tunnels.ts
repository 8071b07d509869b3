import { z } from 'zod';
import { Hostname } from './connections.js';
import { Id, Ok, event, method } from './define.js';

/**
 * Port forwarding through SSH sessions (DESIGN.md: tunnels.*). Built: local forwards (ssh -L), a
 * listener on this machine's loopback whose connections the server carries on to
 * targetHost:targetPort. The contract's remote (-R) and dynamic (-D, SOCKS) kinds are not built
 * yet; `kind` grows when they are.
 */
export const TunnelKind = z.enum(['local']);

export const Tunnel = z.object({
  tunnelId: Id,
  sessionId: Id,
  kind: TunnelKind,
  /** Where it listens here: loopback only, so the tunnel is not offered to the network. */
  bindHost: z.enum(['127.0.0.1', '::1']),
  bindPort: z.number().int(),
  /** Where the server connects to, as the server resolves it ("localhost" is the server itself). */
  targetHost: z.string(),
  targetPort: z.number().int(),
  /** Connections carried now, and since the tunnel started. */
  active: z.number().int().nonnegative(),
  total: z.number().int().nonnegative(),
  /** Why the last connection could not be carried (the server refused it, the session is down), until one is. */
  lastError: z.string().nullable(),
});
export type Tunnel = z.infer<typeof Tunnel>;

export const tunnelsMethods = {
  'tunnels.start': method(
    z.object({
      sessionId: Id,
      kind: TunnelKind.default('local'),
      bindHost: z.enum(['127.0.0.1', '::1']).default('127.0.0.1'),
      /** 0 takes any free port. Ports below 1024 need administrator rights on most systems. */
      bindPort: z.number().int('Port is a whole number').min(0, 'Port is 0–65535').max(65535, 'Port is 0–65535'),
      /** As the server resolves it: "localhost" is the server itself. */
      targetHost: Hostname.default('localhost'),
      targetPort: z.number().int('Port is a whole number').min(1, 'Port is 1–65535').max(65535, 'Port is 1–65535'),
    }),
    Tunnel,
    'Starts a local port forward through an SSH session (ssh -L): connections to bindHost:bindPort here go to targetHost:targetPort from the server. It lasts until stopped or the session closes, and outlives a reconnect.',
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
