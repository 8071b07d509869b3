import { WraithError } from '../../common/errors.js';
import { hostAndPort } from '../../common/host-address.js';
import type { ServerSaid } from './server-words.js';

export interface HopLabel {
  name: string;
  host: string;
  port: number;
  username: string;
}

/** "web01 (deploy@10.0.0.5:22)", "lab (root@[::1]:2222)" */
export function label(hop: HopLabel): string {
  return `${hop.name} (${hop.username ? hop.username + '@' : ''}${hostAndPort(hop.host, hop.port)})`;
}

/**
 * Turns what ssh2 or the socket reported into a stable code and a message a person can act on.
 * Never includes secrets: ssh2 errors do not carry them and we add none. `said`: what the server
 * sent before any SSH identification (ServerWords), which tells a port that is not SSH.
 */
export function mapConnectError(err: unknown, hop: HopLabel, said?: ServerSaid): WraithError {
  if (err instanceof WraithError) return err;
  const e = err instanceof Error ? err : new Error(String(err));
  const code = stringProp(e, 'code');
  const level = stringProp(e, 'level');
  const where = hostAndPort(hop.host, hop.port);
  // Whatever went wrong after that (it closed, it waited, ssh2 could not parse it), the person's
  // fix is the same: the port, or the address, is not an SSH server's.
  if (said?.kind === 'other') {
    const what = said.firstLine ? `: it said "${said.firstLine}"` : '';
    return new WraithError('EIO', `${where} answered, but not as an SSH server (${hop.name})${what}. Is the port right?`, { host: hop.host, port: hop.port });
  }
  if (level === 'client-authentication') {
    return new WraithError(
      'EAUTH',
      `${label(hop)} refused the login. Check the user name and the password, key or agent this connection uses.`,
      { host: hop.host, port: hop.port },
    );
  }
  if (level === 'client-timeout' || /timed out/i.test(e.message)) {
    return new WraithError('ETIMEOUT', `${where} did not answer in time (${hop.name}). Is the host up and the port right?`, {
      host: hop.host,
      port: hop.port,
    });
  }
  switch (code) {
    case 'ECONNREFUSED':
      return new WraithError('EIO', `${where} refused the connection (${hop.name}): no SSH server listens on that port.`, { host: hop.host, port: hop.port });
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new WraithError('EIO', `Cannot find the host "${hop.host}" (${hop.name}): the name does not resolve.`, { host: hop.host, port: hop.port });
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return new WraithError('EIO', `${where} is unreachable from here (${hop.name}).`, { host: hop.host, port: hop.port });
    case 'ETIMEDOUT':
      return new WraithError('ETIMEOUT', `${where} did not answer in time (${hop.name}).`, { host: hop.host, port: hop.port });
    case 'ECONNRESET':
      return new WraithError('EIO', `${where} closed the connection during login (${hop.name}).`, { host: hop.host, port: hop.port });
    default:
      // ssh2's word for a server that closed before sending its SSH identification.
      if (said?.kind === 'nothing' && /before handshake/i.test(e.message)) {
        return new WraithError(
          'EIO',
          `${where} closed the connection before the SSH greeting (${hop.name}): is an SSH server listening on that port, and does it take connections from here?`,
          { host: hop.host, port: hop.port },
        );
      }
      return new WraithError('EIO', `SSH to ${label(hop)} failed: ${e.message || 'unknown error'}.`, { host: hop.host, port: hop.port });
  }
}

function stringProp(o: object, key: string): string {
  const v: unknown = Reflect.get(o, key);
  return typeof v === 'string' ? v : '';
}

/**
 * Why an established connection ended, in words, from the error its client reported last. Node's
 * socket errors say "read ECONNRESET" or "write EPIPE": the code a system call returned, which
 * tells a person little. The codes a connection that was up can end with are put in words; any
 * other error keeps its own message. Keepalives that went unanswered are worded by the caller.
 */
export function droppedBecause(err: Error): string {
  switch (stringProp(err, 'code')) {
    case 'ECONNRESET':
      return 'the connection was reset (the server, or a firewall or NAT on the way, ended it abruptly)';
    case 'EPIPE':
      return 'the server closed the connection while we were sending';
    case 'ETIMEDOUT':
      return 'the network stopped carrying it (what we sent was never acknowledged)';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'ENETDOWN':
      return 'the server could no longer be reached over the network';
    case 'ECONNABORTED':
      return 'this computer aborted the connection';
    default:
      return err.message || 'an unknown error';
  }
}
