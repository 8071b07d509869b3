import { randomUUID } from 'node:crypto';
import { type AddressInfo, type Server, type Socket, createServer } from 'node:net';
import type { Client } from 'ssh2';
import type { Tunnel } from '../../common/contract/tunnels.js';
import { WraithError } from '../../common/errors.js';
import { carryThrough } from './tunnel.js';

/** What a tunnel needs of its session: the client to carry a connection through, now. */
export interface TunnelSession {
  readonly id: string;
  readonly title: string;
  /** The connected client; throws (ESESSIONCLOSED) while the session is down. */
  client(): Client;
}

interface Running {
  info: Tunnel;
  server: Server;
  sockets: Set<Socket>;
}

/**
 * Local port forwards of SSH sessions (tunnels.*, ssh -L), started while a session runs
 * (OpenSSH's `~C`, Tabby's and Termius' port forwarding). Each listens on loopback only and asks
 * its session for the client at every connection, so a tunnel outlives a reconnect: while the
 * session is down, connections are refused and lastError says why.
 */
export class LocalTunnels {
  private readonly running = new Map<string, Running>();

  constructor(private readonly onChange: (sessionId: string, tunnels: Tunnel[]) => void) {}

  async start(session: TunnelSession, o: { bindHost: Tunnel['bindHost']; bindPort: number; targetHost: string; targetPort: number }): Promise<Tunnel> {
    session.client(); // refuse at once when the session is down
    const sockets = new Set<Socket>();
    const info: Tunnel = { tunnelId: randomUUID(), sessionId: session.id, kind: 'local', ...o, active: 0, total: 0, lastError: null };
    const server = createServer((socket) => this.carry(session, info, sockets, socket));
    await new Promise<void>((resolve, reject) => {
      server.once('error', (err: NodeJS.ErrnoException) => reject(listenError(err, o.bindHost, o.bindPort)));
      server.listen({ host: o.bindHost, port: o.bindPort, exclusive: true }, () => resolve());
    });
    server.on('error', () => undefined); // once listening, errors belong to single connections
    info.bindPort = (server.address() as AddressInfo).port;
    this.running.set(info.tunnelId, { info, server, sockets });
    this.changed(session.id);
    return { ...info };
  }

  stop(tunnelId: string): void {
    const t = this.running.get(tunnelId);
    if (!t) throw new WraithError('ENOTFOUND', `No tunnel with id ${tunnelId}; it may have stopped with its session.`);
    this.end(t);
    this.changed(t.info.sessionId);
  }

  /** Every tunnel of a session ends with it. */
  stopSession(sessionId: string): void {
    const mine = [...this.running.values()].filter((t) => t.info.sessionId === sessionId);
    for (const t of mine) this.end(t);
    if (mine.length > 0) this.changed(sessionId);
  }

  list(sessionId?: string): Tunnel[] {
    return [...this.running.values()].filter((t) => sessionId === undefined || t.info.sessionId === sessionId).map((t) => ({ ...t.info }));
  }

  dispose(): void {
    for (const t of [...this.running.values()]) this.end(t);
  }

  private end(t: Running): void {
    this.running.delete(t.info.tunnelId);
    t.server.close();
    for (const s of t.sockets) s.destroy();
  }

  private carry(session: TunnelSession, info: Tunnel, sockets: Set<Socket>, socket: Socket): void {
    let client: Client;
    try {
      client = session.client();
    } catch (err) {
      info.lastError = err instanceof Error ? err.message : String(err);
      socket.destroy();
      this.changed(session.id);
      return;
    }
    sockets.add(socket);
    info.active += 1;
    info.total += 1;
    socket.once('close', () => {
      sockets.delete(socket);
      info.active -= 1;
      this.changed(session.id);
    });
    this.changed(session.id);
    carryThrough(
      client,
      socket,
      info.targetHost,
      info.targetPort,
      (message) => (info.lastError = `${session.title} could not connect to ${info.targetHost}:${info.targetPort}: ${message}`),
      () => (info.lastError = null),
    );
  }

  private changed(sessionId: string): void {
    this.onChange(sessionId, this.list(sessionId));
  }
}

function listenError(err: NodeJS.ErrnoException, host: string, port: number): WraithError {
  if (err.code === 'EADDRINUSE') {
    return new WraithError('EBADARGS', `Port ${port} is already in use on this machine; choose another local port, or 0 for any free one.`, { bindPort: port, reason: 'port_in_use' });
  }
  if (err.code === 'EACCES') {
    return new WraithError('EDENIED', `Port ${port} needs administrator rights on this machine; choose a port of 1024 or above.`, { bindPort: port, reason: 'port_denied' });
  }
  return new WraithError('EIO', `Cannot listen on ${host}:${port}: ${err.message}`, { bindPort: port });
}
