import { randomUUID } from 'node:crypto';
import { type AddressInfo, type Server, type Socket, connect, createServer } from 'node:net';
import type { Duplex } from 'node:stream';
import { Socks5Server } from '@pondwader/socks5-server';
import type { Client, ClientChannel, TcpConnectionDetails } from 'ssh2';
import { type Tunnel, type TunnelKind, forwardKey } from '../../common/contract/tunnels.js';
import { WraithError } from '../../common/errors.js';
import { hostAndPort, hostToDial } from '../../common/host-address.js';
import { carryThrough, splice } from './tunnel.js';

/** What a tunnel needs of its session: the client to carry a connection through, now. */
export interface TunnelSession {
  readonly id: string;
  readonly title: string;
  /** The connected client; throws (ESESSIONCLOSED) while the session is down. */
  client(): Client;
}

export interface TunnelOptions {
  kind: TunnelKind;
  bindHost: Tunnel['bindHost'];
  bindPort: number;
  /** Null for dynamic forwards. */
  targetHost: string | null;
  targetPort: number | null;
}

/** A forward as asked for (tunnels.start) or saved, with what it leaves out filled in. */
export function tunnelOptions(f: { kind: TunnelKind; bindHost: Tunnel['bindHost']; bindPort: number; targetHost?: string; targetPort?: number }): TunnelOptions {
  const dynamic = f.kind === 'dynamic';
  return { kind: f.kind, bindHost: f.bindHost, bindPort: f.bindPort, targetHost: dynamic ? null : (f.targetHost ?? 'localhost'), targetPort: dynamic ? null : (f.targetPort ?? null) };
}

interface Running {
  info: Tunnel;
  session: TunnelSession;
  /** Local and dynamic: the listener on this machine. */
  server?: Server;
  /** Remote: the connection the server listens for (a new one after each reconnect). */
  client?: Client;
  /** The connections it carries now: sockets here (local, dynamic) or channels (remote). */
  streams: Set<Duplex>;
}

/**
 * The port forwards of SSH sessions (tunnels.*), started while a session runs (OpenSSH's `~C`,
 * Tabby's and Termius' port forwarding). Every listener is on loopback only, on either side.
 * A tunnel outlives a reconnect: local and dynamic ones ask their session for the client at every
 * connection (while it is down, connections are refused and lastError says why); remote ones ask
 * the new connection to listen again (`resume`).
 */
export class Tunnels {
  private readonly running = new Map<string, Running>();
  /** Clients whose forwarded connections (remote tunnels) are routed here; one listener each. */
  private readonly routed = new WeakSet<Client>();

  /** `forwardTimeoutMs`: how long a target has to answer each connection carried to it (carryThrough). */
  constructor(
    private readonly onChange: (sessionId: string, tunnels: Tunnel[]) => void,
    private readonly forwardTimeoutMs: number,
  ) {}

  async start(session: TunnelSession, o: TunnelOptions): Promise<Tunnel> {
    const client = session.client(); // refuse at once when the session is down
    const t: Running = {
      info: { tunnelId: randomUUID(), sessionId: session.id, ...o, active: 0, total: 0, lastError: null },
      session,
      streams: new Set(),
    };
    if (o.kind === 'remote') {
      t.info.bindPort = await this.listenThere(t, client, o.bindPort);
    } else {
      t.server = await listenHere(o.bindHost, o.bindPort, (socket) => this.accept(t, socket));
      t.info.bindPort = (t.server.address() as AddressInfo).port;
    }
    this.running.set(t.info.tunnelId, t);
    this.changed(session.id);
    return { ...t.info };
  }

  stop(tunnelId: string): void {
    const t = this.running.get(tunnelId);
    if (!t) throw new WraithError('ENOTFOUND', `No tunnel with id ${tunnelId}; it may have stopped with its session.`);
    this.end(t);
    this.changed(t.info.sessionId);
  }

  /** Every tunnel of a session ends with it. */
  stopSession(sessionId: string): void {
    const mine = this.of(sessionId);
    for (const t of mine) this.end(t);
    if (mine.length > 0) this.changed(sessionId);
  }

  /**
   * After a reconnect: the server forgot the session's remote forwards with the old connection,
   * so each asks the new one to listen on the same port again. One the server now refuses (the
   * port was taken meanwhile) stays listed, with lastError saying so, until stopped.
   */
  async resume(session: TunnelSession): Promise<void> {
    const remote = this.of(session.id).filter((t) => t.info.kind === 'remote');
    if (remote.length === 0) return;
    let client: Client;
    try {
      client = session.client();
    } catch {
      return; // down again already: the next reconnect asks
    }
    await Promise.all(
      remote.map(async (t) => {
        try {
          await this.listenThere(t, client, t.info.bindPort);
          t.info.lastError = null;
        } catch (err) {
          t.info.lastError = `After the reconnect, ${err instanceof Error ? err.message : String(err)}`;
        }
      }),
    );
    this.changed(session.id);
  }

  list(sessionId?: string): Tunnel[] {
    return [...this.running.values()].filter((t) => sessionId === undefined || t.info.sessionId === sessionId).map((t) => ({ ...t.info }));
  }

  dispose(): void {
    for (const t of [...this.running.values()]) this.end(t);
  }

  private of(sessionId: string): Running[] {
    return [...this.running.values()].filter((t) => t.info.sessionId === sessionId);
  }

  private end(t: Running): void {
    this.running.delete(t.info.tunnelId);
    t.server?.close();
    if (t.client) {
      try {
        t.client.unforwardIn(t.info.bindHost, t.info.bindPort, () => undefined);
      } catch {
        // the connection is gone, and the server's listener with it
      }
    }
    for (const s of t.streams) s.destroy();
  }

  /** Counts a connection while it lasts. */
  private track(t: Running, stream: Duplex): void {
    t.streams.add(stream);
    t.info.active += 1;
    t.info.total += 1;
    stream.once('close', () => {
      t.streams.delete(stream);
      t.info.active -= 1;
      this.changed(t.info.sessionId);
    });
    this.changed(t.info.sessionId);
  }

  private refused(t: Running, message: string): void {
    t.info.lastError = message;
    this.changed(t.info.sessionId);
  }

  /** A connection to a local or dynamic tunnel's listener on this machine. */
  private accept(t: Running, socket: Socket): void {
    let client: Client;
    try {
      client = t.session.client();
    } catch (err) {
      socket.destroy();
      this.refused(t, err instanceof Error ? err.message : String(err));
      return;
    }
    this.track(t, socket);
    const { title } = t.session;
    if (t.info.kind === 'local') {
      const host = t.info.targetHost ?? 'localhost';
      const port = t.info.targetPort ?? 0;
      carryThrough(
        client,
        socket,
        host,
        port,
        this.forwardTimeoutMs,
        (message) => this.refused(t, `${title} could not connect to ${hostAndPort(host, port)}: ${message}`),
        () => (t.info.lastError = null),
      );
      return;
    }
    // Dynamic: the SOCKS5 handshake names the destination, then the server connects to it.
    socks((conn, reply) => {
      // The library resumes the socket as soon as this returns, before the channel is open: a
      // client's first bytes sent with its request (optimistic data) would flow to no one. Pause
      // it again once the library is done (a microtask runs before the resume takes effect);
      // the pipe resumes it when the channel opens.
      queueMicrotask(() => socket.pause());
      const where = hostAndPort(conn.destAddress, conn.destPort);
      carryThrough(
        client,
        socket,
        conn.destAddress,
        conn.destPort,
        this.forwardTimeoutMs,
        (message) => {
          reply(socksStatus(message));
          this.refused(t, `${title} could not connect to ${where}: ${message}`);
        },
        () => {
          reply('REQUEST_GRANTED');
          t.info.lastError = null;
        },
      );
    })._handleConnection(socket);
  }

  /** Asks the server to listen for a remote tunnel; resolves with the port it listens on. */
  private async listenThere(t: Running, client: Client, port: number): Promise<number> {
    this.route(client);
    const bound = await new Promise<number>((resolve, reject) => {
      try {
        client.forwardIn(t.info.bindHost, port, (err, actual) => (err ? reject(err) : resolve(actual)));
      } catch (err) {
        reject(err instanceof Error ? err : new Error(String(err)));
      }
    }).catch((err: Error) => {
      throw new WraithError(
        'EDENIED',
        `${t.session.title} would not listen on ${hostAndPort(t.info.bindHost, port)} (${err.message}). The port may be in use there, need root (below 1024), or the server may forbid forwarding (AllowTcpForwarding).`,
        { bindPort: port, reason: 'remote_listen_refused' },
      );
    });
    t.client = client;
    return bound;
  }

  /** Forwarded connections from the server go to the remote tunnel listening on their address. */
  private route(client: Client): void {
    if (this.routed.has(client)) return;
    this.routed.add(client);
    client.on('tcp connection', (details: TcpConnectionDetails, accept: () => ClientChannel, reject: () => void) => {
      const t = [...this.running.values()].find(
        (r) => r.client === client && r.info.kind === 'remote' && r.info.bindPort === details.destPort && r.info.bindHost === details.destIP,
      );
      if (!t) return reject();
      this.carryHome(t, accept());
    });
  }

  /** A connection the server took for a remote tunnel, carried on to its target from this machine. */
  private carryHome(t: Running, channel: ClientChannel): void {
    this.track(t, channel);
    const host = t.info.targetHost ?? 'localhost';
    const port = t.info.targetPort ?? 0;
    // Node looks "[::1]", as a person may write it, up as a name: it wants the bare address.
    const socket = connect({ host: hostToDial(host), port });
    socket.once('connect', () => (t.info.lastError = null));
    socket.on('error', (err) => this.refused(t, `This computer could not connect to ${hostAndPort(host, port)}: ${err.message}`));
    splice(channel, socket);
  }

  private changed(sessionId: string): void {
    this.onChange(sessionId, this.list(sessionId));
  }
}

/**
 * Whether a running tunnel is the forward `f` asks for. A forward on port 0 is never "already
 * running": it takes a new free port each time, so it cannot clash.
 */
export function sameForward(t: TunnelOptions, f: TunnelOptions): boolean {
  return f.bindPort !== 0 && forwardKey(t) === forwardKey(f);
}

type SocksReply = Parameters<Parameters<Socks5Server['setConnectionHandler']>[0]>[1];
type SocksStatus = Parameters<SocksReply>[0];

/** A SOCKS5 handshake on one socket (CONNECT only, no authentication: the listener is loopback). */
function socks(connect: (conn: { destAddress: string; destPort: number }, reply: SocksReply) => void): Socks5Server {
  return new Socks5Server().setConnectionHandler((conn, reply) => {
    if (conn.command !== 'connect') return reply('COMMAND_NOT_SUPPORTED');
    connect(conn, reply);
  });
}

/** The SOCKS reply for the server's reason it would not connect (its channel-open failure text). */
function socksStatus(message: string): SocksStatus {
  if (/refused/i.test(message)) return 'CONNECTION_REFUSED';
  if (/prohibited/i.test(message)) return 'CONNECTION_NOT_ALLOWED';
  if (/network is unreachable/i.test(message)) return 'NETWORK_UNREACHABLE';
  return 'HOST_UNREACHABLE';
}

async function listenHere(host: string, port: number, onConnection: (socket: Socket) => void): Promise<Server> {
  const server = createServer(onConnection);
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => reject(listenError(err, host, port)));
    server.listen({ host, port, exclusive: true }, () => resolve());
  });
  server.on('error', () => undefined); // once listening, errors belong to single connections
  return server;
}

function listenError(err: NodeJS.ErrnoException, host: string, port: number): WraithError {
  if (err.code === 'EADDRINUSE') {
    return new WraithError('EBADARGS', `Port ${port} is already in use on this machine; choose another local port, or 0 for any free one.`, { bindPort: port, reason: 'port_in_use' });
  }
  if (err.code === 'EACCES') {
    return new WraithError('EDENIED', `Port ${port} needs administrator rights on this machine; choose a port of 1024 or above.`, { bindPort: port, reason: 'port_denied' });
  }
  return new WraithError('EIO', `Cannot listen on ${hostAndPort(host, port)}: ${err.message}`, { bindPort: port });
}
