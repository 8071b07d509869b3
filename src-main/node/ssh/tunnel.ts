import { type AddressInfo, type Server, type Socket, createServer } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Client, ClientChannel } from 'ssh2';
import { hostToDial } from '../../common/host-address.js';

export interface Tunnel {
  host: string;
  port: number;
  /** Closed by close(), or because the SSH side went away: it carries no new connection. */
  readonly closed: boolean;
  close(): void;
}

/**
 * A loopback listener whose every connection is carried to host:port through the last SSH
 * client of a connected chain (direct-tcpip). For protocols we cannot hand a stream to, such
 * as FreeRDP, which dials a TCP address itself. Closing the tunnel ends the SSH chain too.
 */
export async function listenTunnel(chain: Client[], host: string, port: number): Promise<Tunnel> {
  const via = chain.at(-1);
  if (!via) throw new Error('listenTunnel needs a connected SSH chain');
  const server: Server = createServer((socket) => carryThrough(via, socket, host, port, () => undefined));
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

/**
 * Carries one local connection through `via` to host:port (direct-tcpip): the two streams are
 * piped both ways and each end closes the other. `onRefused` hears why the server would not
 * connect there ("Connection refused", "administratively prohibited"); the socket is closed then.
 */
export function carryThrough(via: Client, socket: Socket, host: string, port: number, onRefused: (message: string) => void, onCarried?: () => void): void {
  socket.on('error', () => socket.destroy());
  const opened = (err: Error | undefined, stream: ClientChannel) => {
    if (err) {
      onRefused(err.message);
      socket.destroy();
      return;
    }
    if (socket.destroyed) {
      stream.close();
      return;
    }
    onCarried?.();
    splice(socket, stream);
  };
  try {
    // The server resolves what it is given: "[::1]" as written would be a name it cannot find.
    via.forwardOut('127.0.0.1', socket.remotePort ?? 0, hostToDial(host), port, opened);
  } catch (err) {
    // ssh2 throws when the connection went away meanwhile.
    onRefused(err instanceof Error ? err.message : String(err));
    socket.destroy();
  }
}
