import { type AddressInfo, type Server, type Socket, createServer } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Client, ClientChannel } from 'ssh2';
import { WraithError } from '../../common/errors.js';
import { hostAndPort, hostToDial } from '../../common/host-address.js';

export interface Tunnel {
  host: string;
  port: number;
  /** Closed by close(), or because the SSH side went away: it carries no new connection. */
  readonly closed: boolean;
  /**
   * Why the last connection it was given did not get through (the target refused it or did not
   * answer), naming the jump host and the target; null once one got through. The tunnel stays up
   * for the next connection either way.
   */
  readonly lastError: WraithError | null;
  close(): void;
}

/**
 * A loopback listener whose every connection is carried to host:port through the last SSH
 * client of a connected chain (direct-tcpip). For protocols we cannot hand a stream to, such
 * as FreeRDP, which dials a TCP address itself. Closing the tunnel ends the SSH chain too.
 * `viaName`: the last hop's connection name, and `forConnection` what the tunnel is for, as
 * lastError names them; `timeoutMs`: how long the target has to answer each connection
 * (openForward).
 */
export async function listenTunnel(
  chain: Client[],
  host: string,
  port: number,
  opts: { viaName: string; forConnection: string; timeoutMs: number },
): Promise<Tunnel> {
  const via = chain.at(-1);
  if (!via) throw new Error('listenTunnel needs a connected SSH chain');
  let lastError: WraithError | null = null;
  const server: Server = createServer((socket) =>
    carryThrough(
      via,
      socket,
      host,
      port,
      opts.timeoutMs,
      (message, reason) => {
        // forwardTo's words and codes, which it says of an SSH hop behind a jump host.
        const why = reason === 'timeout' ? message : `${message}.`;
        lastError = new WraithError(reason === 'timeout' ? 'ETIMEOUT' : 'EIO', `Jump host ${opts.viaName} could not reach ${hostAndPort(host, port)} (${opts.forConnection}): ${why}`, {
          host,
          port,
        });
      },
      () => (lastError = null),
    ),
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    server.close();
    for (const c of [...chain].reverse()) c.end();
  };
  // The SSH side going away ends the tunnel.
  via.once('close', close);
  return {
    host: '127.0.0.1',
    port: (server.address() as AddressInfo).port,
    get closed() {
      return closed;
    },
    get lastError() {
      return lastError;
    },
    close,
  };
}

/** Joins two connections: each one's bytes go to the other, and when one fails or closes, so does the other. */
export function splice(a: Duplex, b: Duplex): void {
  a.pipe(b).pipe(a);
  a.on('error', () => b.destroy());
  b.on('error', () => a.destroy());
  a.on('close', () => b.destroy());
  b.on('close', () => a.destroy());
}

/** Why a direct-tcpip channel did not open: the server refused, the target did not answer, or the caller gave up. */
export class ForwardFailed extends Error {
  constructor(
    readonly reason: 'refused' | 'timeout' | 'cancelled',
    message: string,
  ) {
    super(message);
  }
}

/**
 * Asks `via`'s server to connect to host:port and carry the connection (direct-tcpip). The
 * server answers once its own TCP connect is through, and a target that drops what it is sent
 * gets no answer until the server's kernel gives up (over two minutes): so the target has
 * `timeoutMs` to answer, as a direct connect has (0: no limit), and `signal` gives the wait up at
 * once. SSH cannot take back a channel it asked for: one that opens after the wait was given up is
 * closed. Fails with ForwardFailed; `host` is given to the server as it is (hostToDial is the
 * caller's).
 */
export function openForward(
  via: Client,
  host: string,
  port: number,
  opts: { srcPort?: number; timeoutMs: number; signal?: AbortSignal | undefined },
): Promise<ClientChannel> {
  const { signal, timeoutMs } = opts;
  return new Promise((resolve, reject) => {
    let settled = false;
    /** Ends the wait; false when it had already ended. */
    const settle = (): boolean => {
      if (settled) return false;
      settled = true;
      if (timer) clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      return true;
    };
    const fail = (reason: ForwardFailed['reason'], message: string) => {
      if (settle()) reject(new ForwardFailed(reason, message));
    };
    const onAbort = () => fail('cancelled', 'given up');
    const timer = timeoutMs > 0 ? setTimeout(() => fail('timeout', 'it did not answer in time. Is the host up and the port right?'), timeoutMs) : null;
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      via.forwardOut('127.0.0.1', opts.srcPort ?? 0, host, port, (err, stream) => {
        if (err) return fail('refused', err.message);
        if (settle()) resolve(stream);
        // Given up meanwhile: nobody will use it.
        else stream.close();
      });
    } catch (err) {
      // ssh2 throws when the connection went away meanwhile.
      fail('refused', err instanceof Error ? err.message : String(err));
    }
  });
}

/**
 * Carries one local connection through `via` to host:port (direct-tcpip): the two streams are
 * piped both ways and each end closes the other. `onRefused` hears why the server would not or
 * could not connect there ("Connection refused", "administratively prohibited", or that the target
 * did not answer within `timeoutMs`, as openForward says); the socket is closed then. The socket
 * closing first (its program gave up) gives the wait up.
 */
export function carryThrough(
  via: Client,
  socket: Socket,
  host: string,
  port: number,
  timeoutMs: number,
  onRefused: (message: string, reason: 'refused' | 'timeout') => void,
  onCarried?: () => void,
): void {
  socket.on('error', () => socket.destroy());
  const gaveUp = new AbortController();
  const onClose = () => gaveUp.abort();
  socket.once('close', onClose);
  // The server resolves what it is given: "[::1]" as written would be a name it cannot find.
  openForward(via, hostToDial(host), port, { srcPort: socket.remotePort ?? 0, timeoutMs, signal: gaveUp.signal }).then(
    (stream) => {
      socket.removeListener('close', onClose);
      if (socket.destroyed) {
        stream.close();
        return;
      }
      onCarried?.();
      splice(socket, stream);
    },
    (err: unknown) => {
      socket.removeListener('close', onClose);
      const failed = err instanceof ForwardFailed ? err : new ForwardFailed('refused', String(err));
      // Heard first: a SOCKS client is answered why on the socket.
      if (failed.reason !== 'cancelled') onRefused(failed.message, failed.reason);
      socket.destroy();
    },
  );
}
