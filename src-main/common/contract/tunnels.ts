import { z } from 'zod';
import { hostAndPort } from '../host-address.js';
import { ForwardFields, ForwardKind, LoopbackHost, forwardRules } from './connections.js';
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
export const TunnelKind = ForwardKind;
export type TunnelKind = ForwardKind;

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

export const TunnelStart = ForwardFields.extend({ sessionId: Id }).superRefine(forwardRules);

/** As a caller writes it: kind and bindHost may be left out. */
export type TunnelStartInput = z.input<typeof TunnelStart>;

/** A forward as both a tunnel and a saved forward describe it (a saved one's defaults left out). */
interface ForwardSpec {
  kind: ForwardKind;
  bindHost: string;
  bindPort: number;
  targetHost?: string | null;
  targetPort?: number | null;
}

/** A forward's identity, for matching a running tunnel to a saved forward: where it listens and where it goes. */
export function forwardKey(f: ForwardSpec): string {
  const dynamic = f.kind === 'dynamic';
  return [f.kind, f.bindHost, f.bindPort, dynamic ? '' : (f.targetHost ?? 'localhost'), dynamic ? '' : (f.targetPort ?? '')].join(' ');
}

/** A forward in a person's words, as the tunnels dialog lists it. */
export function describeForward(f: ForwardSpec): string {
  const at = hostAndPort(f.bindHost, f.bindPort === 0 ? 'any free port' : f.bindPort);
  if (f.kind === 'dynamic') return `SOCKS5 proxy on ${at}`;
  const target = hostAndPort(f.targetHost ?? 'localhost', f.targetPort ?? '?');
  return f.kind === 'remote' ? `Server ${at} → ${target} here` : `${at} → ${target}`;
}

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
