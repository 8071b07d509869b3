import { type AddressInfo, type Server, createServer } from 'node:net';
import type { Client } from 'ssh2';

export interface Tunnel {
  host: string;
  port: number;
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
  const server: Server = createServer((socket) => {
    via.forwardOut('127.0.0.1', socket.remotePort ?? 0, host, port, (err, stream) => {
      if (err) {
        socket.destroy();
        return;
      }
      socket.pipe(stream).pipe(socket);
      socket.on('error', () => stream.destroy());
      stream.on('error', () => socket.destroy());
      socket.on('close', () => stream.destroy());
      stream.on('close', () => socket.destroy());
    });
  });
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
  return { host: '127.0.0.1', port: (server.address() as AddressInfo).port, close };
}
