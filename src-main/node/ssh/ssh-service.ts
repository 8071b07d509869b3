import { randomUUID } from 'node:crypto';
import { StringDecoder } from 'node:string_decoder';
import type { Client, ClientChannel, SFTPWrapper } from 'ssh2';
import { OK } from '../../common/contract/define.js';
import type { SavedForward } from '../../common/contract/connections.js';
import type { SessionInfo, SessionOpener } from '../../common/contract/sessions.js';
import type { OneTimeCredential } from '../../common/contract/ssh.js';
import { describeForward } from '../../common/contract/tunnels.js';
import { WraithError } from '../../common/errors.js';
import type { ConnectionsService, ResolvedConnection } from '../connections/connections-service.js';
import type { HostKeyStore } from '../hostkeys/host-key-store.js';
import type { EventBus, Router } from '../router.js';
import type { SessionRegistry } from '../sessions/session-registry.js';
import type { FlowControlOptions, TerminalCwd } from '../terminal/terminal-session.js';
import { TerminalSession } from '../terminal/terminal-session.js';
import type { TerminalService } from '../terminal/terminal-service.js';
import { signalCommand } from './channel-signal.js';
import { droppedBecause } from './errors.js';
import { type ConnectDeps, MAX_JUMP_HOPS, PromptBroker, connectChain } from './ssh-connect.js';
import { Tunnels, sameForward, tunnelOptions } from './tunnels.js';
import { type Tunnel, listenTunnel } from './tunnel.js';

export interface SshServiceDeps {
  bus: EventBus;
  sessions: SessionRegistry;
  terminals: TerminalService;
  connections: ConnectionsService;
  hostKeys: HostKeyStore;
  ringBufferBytes: () => number;
  keepaliveIntervalMs: () => number;
  flow?: Partial<FlowControlOptions>;
  /** How long a keyboard-interactive prompt waits for `ssh.answer`. */
  promptTimeoutMs?: number;
  /** A secret a person typed (a one-time password or passphrase): the XO's redactor learns it. */
  noteSecret?: (secret: string) => void;
  readyTimeoutMs?: number;
  /**
   * A session is about to close while its connection is up: what rides on it (SFTP transfers
   * and their temp files) ends over it first. The close waits for this.
   */
  beforeClose?: (sessionId: string) => Promise<void>;
  /** A session connected (opened or reconnected). */
  connected?: (sessionId: string) => void;
}

/** How ssh.exec returns output: text, or base64 of the bytes as they came. */
export type ExecEncoding = 'utf8' | 'base64';

export interface ExecResult {
  rc: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  durationMs: number;
  truncated: boolean;
  timedOut: boolean;
}

/** The env var that marks a session's shell, so `terminal.cwd` can find it in /proc over exec. */
const SESSION_ENV = 'LC_WRAITH_SESSION';

/**
 * The locale a session's shell and commands get, as OpenSSH sends it with Debian's ssh_config
 * (`SendEnv LANG LC_*`; servers take it where sshd_config says `AcceptEnv LANG LC_*`, and
 * ignore it otherwise). Without it the shell ran in the POSIX locale and readline dropped a typed
 * "é". The terminal (xterm.js) is UTF-8 whatever this host's locale: where none of LANG, LC_ALL
 * and LC_CTYPE is set here (a service, a bare container), LANG=C.UTF-8 says so.
 */
export function localeEnv(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const sent: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value && (name === 'LANG' || name.startsWith('LC_')) && name !== SESSION_ENV) sent[name] = value;
  }
  if (!sent.LANG && !sent.LC_ALL && !sent.LC_CTYPE) sent.LANG = 'C.UTF-8';
  return sent;
}

/**
 * A script for an exec channel that prints "PID CWD" of the shell of session `id`, or exits 1.
 * `pwd` there would print the home directory, so the shell is found in /proc (Linux) by the
 * variable set on its channel. Its children carry the variable too, and so may processes left
 * from an earlier connection of the same session (`nohup`, `(cmd &)`), so the shell is told apart
 * as sshd made it: a session leader with a terminal whose parent does not carry the variable;
 * the newest such one if several. One grep reads every process's environment (a grep per process
 * took ~1 ms each: 1.4 s on a host with 1,300 processes), and the PID found last time is tried
 * first, so a repeated lookup reads one file.
 */
function shellCwdScript(id: string, knownPid: number | null): string {
  const mark = `${SESSION_ENV}=${id}`;
  return [
    knownPid === null
      ? ''
      : `p=${knownPid}; if grep -qxz -- '${mark}' /proc/$p/environ 2>/dev/null && c=$(readlink /proc/$p/cwd); then echo "$p $c"; exit 0; fi`,
    `m=$(cd /proc && printf '%s\\n' [0-9]*/environ | xargs grep -lxz -- '${mark}' 2>/dev/null | cut -d/ -f1 | tr '\\n' ' ')`,
    // After "pid (comm) ": $2 ppid, $4 session, $5 tty_nr, \${20} start time (proc(5)).
    'best=""; bt=-1',
    `for p in $m; do set -- $(sed 's/.*) //' /proc/$p/stat 2>/dev/null); [ "$4" = "$p" ] && [ "$5" != 0 ] || continue; case " $m " in *" $2 "*) continue;; esac; [ "\${20}" -gt "$bt" ] && best=$p bt=\${20}; done`,
    '[ -n "$best" ] && c=$(readlink /proc/$best/cwd) && echo "$best $c" && exit 0',
    'exit 1',
  ].filter(Boolean).join('\n');
}

/** The one-time credentials ssh.open and ssh.reconnect carry, and the tag of their login prompts. */
interface TypedCredentials {
  credential?: OneTimeCredential | undefined;
  credentials?: OneTimeCredential[] | undefined;
  promptTag?: string | undefined;
}

/**
 * Why the server would not give an SFTP channel. ssh2 says "Unable to start subsystem: sftp" when
 * the server answered the request with a failure: its sshd has no (or a disabled) `Subsystem sftp`
 * line, as hardened servers and many appliances do. That will not pass on a retry: say so.
 */
function sftpRefused(title: string, err: Error): WraithError {
  if (/unable to start subsystem/i.test(err.message)) {
    return new WraithError(
      'EUNAVAILABLE',
      `${title} does not offer SFTP: its SSH server has no SFTP subsystem (the "Subsystem sftp" line of sshd_config), so its files cannot be browsed or transferred. The terminal is not affected.`,
    );
  }
  return new WraithError('EIO', `${title} refused an SFTP channel: ${err.message}${sessionLimitHint(err)}`);
}

/**
 * A session channel (SFTP, a command) the server would not open. OpenSSH does that when the
 * connection already holds as many sessions as its MaxSessions allows (it says "open failed",
 * nothing more): Wraith's terminal holds one, and the Files panel and the XO's commands each want
 * another. Say so; it is what a person can change about it.
 */
function sessionLimitHint(err: Error): string {
  if (!err.message.startsWith('(SSH) Channel open failure')) return '';
  return '. Servers often refuse this when a connection may hold fewer sessions than Wraith opens (MaxSessions in sshd_config: the terminal takes one, files and commands one more each).';
}

/**
 * One SSH shell: the client chain (jump hosts first), the shell channel, and the terminal state
 * (ring buffer, flow control) that survives reconnects.
 */
export class SshSession extends TerminalSession {
  state: SessionInfo['state'] = 'connecting';
  reason: string | null = null;
  private clients: Client[] = [];
  private channel: ClientChannel | null = null;
  private sftpChannel: Promise<SFTPWrapper> | null = null;
  /** The shell's PID on the server, once `cwd()` found it over exec; cleared on reconnect. */
  private shellPid: number | null = null;
  /** Bumped on every (re)connect, so late events of an old connection are ignored. */
  private generation = 0;
  private readonly createdAt = new Date().toISOString();
  /** Aborted when the session closes: a connect (reconnect) under way is given up. */
  private readonly closing = new AbortController();

  constructor(
    id: string,
    bus: EventBus,
    readonly connectionId: string,
    public title: string,
    private readonly service: SshService,
    opts: { cols: number; rows: number; ringBufferBytes: number; flow?: Partial<FlowControlOptions> },
    private readonly openedBy: SessionOpener,
  ) {
    super(id, bus, opts);
  }

  info(): SessionInfo {
    return {
      id: this.id,
      kind: 'ssh',
      title: this.title,
      connectionId: this.connectionId,
      state: this.state,
      reason: this.reason,
      createdAt: this.createdAt,
      openedBy: this.openedBy,
    };
  }

  isClosed(): boolean {
    return this.state === 'closed';
  }

  /** The connected target client; ESESSIONCLOSED while disconnected. */
  client(): Client {
    const c = this.clients[this.clients.length - 1];
    if (this.state !== 'open' || !c) {
      throw new WraithError('ESESSIONCLOSED', `${this.title} is ${this.state === 'closed' ? 'closed' : 'not connected'}${this.reason ? ': ' + this.reason : ''}`);
    }
    return c;
  }

  /** Whether `client` is still this session's connection: false once it dropped, or after a reconnect. */
  connectedBy(client: Client): boolean {
    return this.state === 'open' && this.clients[this.clients.length - 1] === client;
  }

  /** One SFTP channel per connection, opened on first use and reopened after a reconnect. */
  sftp(): Promise<SFTPWrapper> {
    const client = this.client();
    if (!this.sftpChannel) {
      const gen = this.generation;
      const p = new Promise<SFTPWrapper>((resolve, reject) => {
        client.sftp((err, sftp) => {
          if (err) return reject(sftpRefused(this.title, err));
          sftp.once('close', () => {
            if (this.generation === gen && this.sftpChannel === p) this.sftpChannel = null;
          });
          resolve(sftp);
        });
      });
      this.sftpChannel = p;
      p.catch(() => {
        if (this.sftpChannel === p) this.sftpChannel = null;
      });
    }
    return this.sftpChannel;
  }

  /** `promptTag`: carried by this connect's login prompts (ssh.open's and ssh.reconnect's). */
  async connect(chain: ResolvedConnection[], deps: ConnectDeps, signal?: AbortSignal, promptTag?: string): Promise<void> {
    const gen = ++this.generation;
    this.state = 'connecting';
    this.reason = null;
    // Closing the session gives up its connect as the caller going away does: a login prompt it
    // shows is withdrawn at once rather than left to its timeout.
    const cancelled = signal ? AbortSignal.any([signal, this.closing.signal]) : this.closing.signal;
    const clients = await connectChain(deps, chain, cancelled, { promptTag });
    const endClients = () => [...clients].reverse().forEach((c) => c.destroy());
    // Given up while the chain connected or the shell opened: what was made ends here, and
    // nothing is registered or left open.
    const givenUp = () =>
      gen !== this.generation || this.isClosed()
        ? new WraithError('ECANCELLED', `${this.title} was closed while connecting.`)
        : cancelled.aborted
          ? new WraithError('ECANCELLED', `Connecting to ${this.title} was cancelled.`)
          : null;
    let stop = givenUp();
    if (stop) {
      endClients();
      throw stop;
    }
    const target = clients[clients.length - 1];
    if (!target) throw new WraithError('EIO', 'No connection was made.');
    let channel: ClientChannel;
    try {
      channel = await new Promise<ClientChannel>((resolve, reject) => {
        // Not waited for once the connect is given up: the connection it would ride on ends below.
        const onCancel = () => reject(givenUp());
        cancelled.addEventListener('abort', onCancel, { once: true });
        target.shell(
          { term: 'xterm-256color', cols: this.cols, rows: this.rows },
          { env: { ...localeEnv(), [SESSION_ENV]: this.id } },
          (err, ch) => {
            cancelled.removeEventListener('abort', onCancel);
            if (err) reject(new WraithError('EIO', `${this.title} refused to open a shell: ${err.message}`));
            else resolve(ch);
          },
        );
      });
    } catch (err) {
      endClients();
      throw err;
    }
    stop = givenUp();
    if (stop) {
      endClients();
      throw stop;
    }
    this.clients = clients;
    this.channel = channel;
    this.wire(gen, clients, [...chain].reverse().map((c) => c.name), channel);
    this.attachSource({
      write: (d) => channel.write(d),
      resize: (cols, rows) => channel.setWindow(rows, cols, 0, 0),
      pause: () => {
        channel.pause();
        channel.stderr.pause();
      },
      resume: () => {
        channel.resume();
        channel.stderr.resume();
      },
    });
    this.state = 'open';
  }

  /**
   * Watches the shell and every client of the chain. `hops`: the connection name of each client,
   * from the outermost jump host to the target (as `clients`).
   */
  private wire(gen: number, clients: Client[], hops: string[], channel: ClientChannel): void {
    let exit: { code: number | null; signal: string | null } | null = null;
    /** Per hop: what its client last reported, and whether its connection has ended. */
    const errors: ({ keepalive: boolean; message: string } | null)[] = clients.map(() => null);
    const gone: boolean[] = clients.map(() => false);
    // A jump host that goes takes every hop after it along (their connections ride on its
    // forwarded channels), and the target's shell with them: the outermost hop whose connection
    // ended is the one that dropped, whichever close is heard first.
    const lost = (): string => {
      const dropped = gone.indexOf(true);
      const target = clients.length - 1;
      const hop = dropped === -1 ? target : dropped;
      const why = errors[hop];
      if (hop === target) {
        return `Connection to ${this.title} lost${why ? ': ' + (why.keepalive ? 'the server stopped answering keepalives' : why.message) : ''}.`;
      }
      const what = why?.keepalive ? 'stopped answering keepalives' : why ? `failed: ${why.message}` : 'closed the connection';
      return `Connection to ${this.title} lost: the jump host ${hops[hop] ?? ''} (on the way to ${this.title}) ${what}.`;
    };
    channel.on('data', (d: Buffer) => this.output(d));
    channel.stderr.on('data', (d: Buffer) => this.output(d));
    channel.on('exit', (code: number | null, signal?: string) => {
      exit = { code: typeof code === 'number' ? code : null, signal: signal ?? null };
    });
    channel.on('close', () => {
      // ssh2 names the signal as "SIGKILL" already (the wire says "KILL").
      if (exit) this.ended(gen, exit.code, exit.signal, exit.signal ? `The shell was ended by ${exit.signal}.` : `The shell exited with code ${exit.code}.`);
      else this.ended(gen, null, null, lost());
    });
    for (const [i, c] of clients.entries()) {
      c.on('error', (err: Error) => {
        errors[i] = { keepalive: /keepalive/i.test(err.message), message: droppedBecause(err) };
      });
      // The server ended its side: the connection is over (ssh2 stops reading it). Over a jump
      // host's forwarded channel that is all a client hears when its server goes: the channel
      // stays half open, and no close comes until keepalives fail. ssh2 reports a socket's end
      // before its close, and closes the client's channels (a forwarded one carries the next
      // hop) after that close, so the outermost hop that went is marked first. The first hop's
      // TCP socket closes right after its end, and may learn in between that the end was a reset
      // (ssh-connect's dial): its close is waited for, so the reason says so.
      const over = () => {
        gone[i] = true;
        this.ended(gen, null, null, lost());
      };
      if (i > 0) c.on('end', over);
      c.on('close', over);
    }
  }

  /** The shell or the connection ended: keep the session (and scrollback) as `disconnected`. */
  private ended(gen: number, code: number | null, signal: string | null, reason: string): void {
    if (gen !== this.generation || this.state !== 'open') return;
    this.teardown();
    this.state = 'disconnected';
    this.reason = reason;
    this.emitExit(code, signal, reason);
    this.service.changed(this.id);
  }

  /** Lets the connection go, keeping the session (and scrollback) `disconnected`, as a drop does. */
  letGo(reason: string): void {
    this.ended(this.generation, null, null, reason);
  }

  private teardown(): void {
    this.detachSource();
    this.generation++;
    this.shellPid = null;
    this.channel?.destroy();
    this.channel = null;
    this.sftpChannel = null;
    for (const c of this.clients.reverse()) c.destroy();
    this.clients = [];
  }

  async cwd(): Promise<TerminalCwd> {
    if (this.osc7.cwd) return { cwd: this.osc7.cwd, source: 'osc7' };
    if (this.state !== 'open') return { cwd: null, source: 'unknown' };
    const gen = this.generation;
    try {
      const r = await this.service.execOn(this, shellCwdScript(this.id, this.shellPid), 5000, 8192);
      // `s`: a folder's name may hold a line end.
      const found = /^(\d+) (\/.*)$/s.exec(r.stdout.replace(/\n$/, ''));
      if (r.rc === 0 && found?.[1] && found[2]) {
        if (gen === this.generation) this.shellPid = Number(found[1]);
        return { cwd: found[2], source: 'exec' };
      }
    } catch {
      // Not Linux, no /proc, or exec refused: we do not know.
    }
    return { cwd: null, source: 'unknown' };
  }

  async close(): Promise<void> {
    if (this.state === 'closed') return;
    // While the connection is up, what rides on it ends over it (SFTP removes its temp files).
    if (this.state === 'open') await this.service.beforeClose(this.id);
    if (this.isClosed()) return; // closed by another call meanwhile
    const wasOpen = this.state === 'open';
    this.state = 'closed';
    this.reason = 'Closed.';
    this.closing.abort();
    this.teardown();
    if (wasOpen) this.emitExit(null, null, 'Closed.');
    this.disposeTerminal();
    this.service.removed(this.id);
  }
}

/**
 * SSH sessions over ssh2: `ssh.open`, `ssh.reconnect`, `ssh.exec`, `ssh.answer`, `tunnels.*`. Terminal I/O
 * goes through TerminalService. For SFTP: `getClient(sessionId)` and `sftp(sessionId)`.
 */
export class SshService {
  readonly prompts: PromptBroker;
  private readonly connectDeps: ConnectDeps;
  /** Connects in progress (open/reconnect), aborted on dispose so no half-open client outlives the host. */
  private readonly inFlight = new Set<AbortController>();
  /**
   * Sessions connected by an ssh.open that has not answered yet (their saved forwards are
   * starting): not registered, so not announced, until the open is sure to hand them over.
   */
  private readonly unannounced = new Map<string, SshSession>();

  /** Port forwards (tunnels.*: ssh -L, -R, -D) of the sessions; they stop with their session. */
  readonly tunnels: Tunnels;

  constructor(private readonly deps: SshServiceDeps) {
    this.prompts = new PromptBroker(deps.bus, deps.promptTimeoutMs ?? 120_000);
    const readyTimeoutMs = deps.readyTimeoutMs ?? 20_000;
    // A forward's target has as long to answer as an SSH server has.
    this.tunnels = new Tunnels((sessionId, tunnels) => deps.bus.emit('tunnels.changed', { sessionId, tunnels }), readyTimeoutMs);
    this.connectDeps = {
      hostKeys: deps.hostKeys,
      bus: deps.bus,
      prompts: this.prompts,
      keepaliveIntervalMs: (conn) => conn.sshOptions.keepaliveIntervalMs ?? deps.keepaliveIntervalMs(),
      readyTimeoutMs,
    };
  }

  /** The target hop first, then its jump host, and so on. */
  resolveChain(connectionId: string): ResolvedConnection[] {
    const chain: ResolvedConnection[] = [];
    for (let id: string | null = connectionId; id !== null; ) {
      if (chain.length > MAX_JUMP_HOPS) throw new WraithError('EBADARGS', `The jump host chain of ${chain[0]?.name ?? id} is longer than ${MAX_JUMP_HOPS} hops.`);
      const conn = this.deps.connections.resolve(id);
      if (conn.kind !== 'ssh') throw new WraithError('EBADARGS', `${conn.name} is not an SSH connection.`);
      if (chain.some((c) => c.id === conn.id)) throw new WraithError('EBADARGS', `The jump host chain of ${chain[0]?.name ?? conn.name} loops.`);
      chain.push(conn);
      id = conn.jumpHostId;
    }
    return chain;
  }

  /** resolveChain for a session's Reconnect: a deleted connection is named by the session's title. */
  private resolveChainFor(session: SshSession): ResolvedConnection[] {
    try {
      return this.resolveChain(session.connectionId);
    } catch (err) {
      if (!(err instanceof WraithError) || err.code !== 'ENOTFOUND' || err.details?.connectionId !== session.connectionId) throw err;
      throw new WraithError(
        'ENOTFOUND',
        `The saved connection ${session.title} was deleted, so this session cannot reconnect. Save the connection again, or open another.`,
        { connectionId: session.connectionId, sessionId: session.id },
      );
    }
  }

  /**
   * The chain with typed passwords or passphrases put in place of the missing (or refused) saved
   * ones, each for its hop and this connect only; `save` writes those asked to be saved to the
   * vault once the server accepted them. `to`: what the chain leads to, which a misdirected one
   * is said not to be on the way to (the target's name, or an RDP desktop behind the chain).
   */
  private withCredentials(
    chain: ResolvedConnection[],
    input: TypedCredentials,
    to = chain[0]?.name ?? 'this host',
  ): { chain: ResolvedConnection[]; save: (() => void) | null } {
    // `credential`, and `credentials` for several hops.
    const given = [...(input.credential ? [input.credential] : []), ...(input.credentials ?? [])];
    if (given.length === 0) return { chain, save: null };
    const typed = new Map<string, { field: 'password' | 'passphrase'; credential: OneTimeCredential }>();
    for (const credential of given) {
      const hop = chain.find((c) => c.id === credential.connectionId);
      if (!hop) throw new WraithError('EBADARGS', `The password given is for a connection that is not on the way to ${to}.`);
      if (typed.has(hop.id)) throw new WraithError('EBADARGS', `Two passwords were given for ${hop.name}: give one.`);
      // Keyboard-interactive takes one too: it answers the server's "Password:" prompt.
      const field = hop.authMethod === 'password' || hop.authMethod === 'keyboard-interactive' ? 'password' : hop.authMethod === 'key' ? 'passphrase' : null;
      if (!field) throw new WraithError('EBADARGS', `${hop.name} uses ${hop.authMethod} authentication: it takes no password or key passphrase.`);
      typed.set(hop.id, { field, credential });
    }
    // Writing needs an unlocked vault: ask for it (ELOCKED) before connecting, not after the
    // server has accepted the password and the session would have to be torn down again.
    if (given.some((c) => c.save)) this.deps.connections.assertCanSaveSecrets();
    for (const c of given) this.deps.noteSecret?.(c.secret);
    const toSave = [...typed].filter(([, t]) => t.credential.save);
    return {
      chain: chain.map((c) => {
        const t = typed.get(c.id);
        return t ? { ...c, [t.field]: t.credential.secret } : c;
      }),
      save: toSave.length > 0 ? () => toSave.forEach(([id, t]) => this.deps.connections.update(id, {}, { [t.field]: t.credential.secret })) : null,
    };
  }

  async open(
    input: { connectionId: string; cols: number; rows: number } & TypedCredentials,
    signal: AbortSignal | undefined,
    /** Who asked (a window, the CLI, the XO), which the windows' tabs show. */
    openedBy: SessionOpener,
  ): Promise<{ sessionId: string; forwardErrors?: string[] }> {
    const { chain, save } = this.withCredentials(this.resolveChain(input.connectionId), input);
    const target = chain[0] as ResolvedConnection;
    const session = new SshSession(randomUUID(), this.deps.bus, target.id, target.name, this, {
      cols: input.cols,
      rows: input.rows,
      ringBufferBytes: this.deps.ringBufferBytes(),
      flow: this.deps.flow,
    }, openedBy);
    // Registered (and announced, session.changed) only once it is the caller's: a failed or
    // given-up open leaves nothing behind, and no window shows a tab of it for a moment.
    await this.tracked(signal, (s) => session.connect(chain, this.connectDeps, s, input.promptTag));
    try {
      save?.();
    } catch (err) {
      // Asked to save and could not (the vault was locked meanwhile): say so rather than leave a
      // session the caller was never told about.
      await session.close();
      throw err;
    }
    // Known as its tunnels' owner until registered or closed (its close stops them), so another
    // open of the connection can tell whose a forward is meanwhile.
    this.unannounced.set(session.id, session);
    let forwardErrors: string[];
    try {
      forwardErrors = await this.startSavedForwards(session, target.sshOptions.forwards ?? []);
      if (signal?.aborted) {
        // The caller went away while the forwards started: nobody would own the session (the catch ends it).
        throw new WraithError('ECANCELLED', `Connecting to ${session.title} was cancelled.`);
      }
    } catch (err) {
      // Not handed over: nothing of it may stay connected.
      await session.close();
      throw err;
    } finally {
      this.unannounced.delete(session.id);
    }
    this.deps.terminals.add(session);
    this.deps.sessions.add(session);
    this.deps.connected?.(session.id);
    return forwardErrors.length > 0 ? { sessionId: session.id, forwardErrors } : { sessionId: session.id };
  }

  /**
   * A connection's saved port forwards start with each of its sessions, as ssh starts a host's
   * LocalForward lines. One that another session of the connection already runs is left to it
   * (a second tab, "open a terminal here"), rather than failing on a port in use — unless that
   * session's connection dropped: a tab that lost its connection keeps its forwards for its
   * Reconnect, and a person who opens the connection again instead has gone to the new tab, so
   * the forward moves there (the old tab, reconnected, lists it as saved, not running). One that
   * cannot start is reported, and the session stays open, as ssh warns and goes on.
   */
  private async startSavedForwards(session: SshSession, forwards: SavedForward[]): Promise<string[]> {
    const errors: string[] = [];
    for (const f of forwards) {
      const spec = tunnelOptions(f);
      const holder = this.tunnels.list().find((t) => {
        const owner = this.tunnelOwner(t.sessionId);
        return owner instanceof SshSession && owner.connectionId === session.connectionId && sameForward(t, spec);
      });
      if (holder) {
        const owner = this.tunnelOwner(holder.sessionId);
        if (!(owner instanceof SshSession) || owner.state !== 'disconnected') continue;
        this.tunnels.stop(holder.tunnelId);
      }
      try {
        await this.tunnels.start(session, spec);
      } catch (err) {
        errors.push(`The saved port forward (${describeForward(spec)}) did not start: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    return errors;
  }

  /** The session a tunnel runs for: a registered one, or one whose open is still starting its forwards. */
  private tunnelOwner(sessionId: string): TerminalSession {
    return this.unannounced.get(sessionId) ?? this.deps.terminals.get(sessionId);
  }

  async reconnect(sessionId: string, signal?: AbortSignal, typed: TypedCredentials = {}): Promise<void> {
    const session = this.session(sessionId);
    if (session.state === 'open') return;
    if (session.state === 'connecting') throw new WraithError('EBADARGS', `${session.title} is already connecting.`);
    const { chain, save } = this.withCredentials(this.resolveChainFor(session), typed);
    session.title = chain[0]?.name ?? session.title;
    session.state = 'connecting';
    this.changed(sessionId);
    try {
      await this.tracked(signal, (s) => session.connect(chain, this.connectDeps, s, typed.promptTag));
    } catch (err) {
      if (!session.isClosed()) {
        session.state = 'disconnected';
        session.reason = err instanceof Error ? err.message : String(err);
        this.changed(sessionId);
      }
      throw err;
    }
    try {
      save?.();
    } catch (err) {
      // As open does: asked to save and could not (the vault was locked meanwhile). The new
      // connection is let go, so the retry after unlocking connects again and saves, where it
      // would otherwise find the session open and save nothing, without a word.
      session.letGo(`Reconnected, then let go: ${err instanceof Error ? err.message : String(err)}`);
      throw err;
    }
    this.changed(sessionId);
    this.deps.connected?.(sessionId);
    // Remote forwards listened on the old connection; the new one is asked to listen again.
    await this.tunnels.resume(session);
  }

  /**
   * A loopback TCP tunnel to host:port through a saved SSH connection (and its own jump
   * chain), each hop host-key checked. RDP through a jump host uses it. `forConnection`: the name
   * of the connection the tunnel is for, which a hop's host key question names, as an SSH tab's
   * does ("jump host bastion, on the way to desk"). `credentials`: passwords or passphrases typed
   * for its hops, as ssh.open takes them (saved once their hop accepted them, when asked to be);
   * `signal`: the connect is given up, a login prompt it shows withdrawn, as ssh.open's; `promptTag`: carried by its hops' login prompts.
   */
  async openTunnel(
    viaConnectionId: string,
    host: string,
    port: number,
    forConnection: string,
    opts: { signal?: AbortSignal | undefined; credentials?: OneTimeCredential[] | undefined; promptTag?: string | undefined } = {},
  ): Promise<Tunnel> {
    const { chain, save } = this.withCredentials(this.resolveChain(viaConnectionId), { credentials: opts.credentials }, forConnection);
    const clients = await this.tracked(opts.signal, (s) => connectChain(this.connectDeps, chain, s, { jumpHostFor: forConnection, promptTag: opts.promptTag }));
    try {
      save?.();
      // The chain's last hop (resolveChain's first) dials the target.
      const viaName = chain[0]?.name ?? viaConnectionId;
      return await listenTunnel(clients, host, port, { viaName, forConnection, timeoutMs: this.connectDeps.readyTimeoutMs });
    } catch (err) {
      for (const c of [...clients].reverse()) c.destroy();
      throw err;
    }
  }

  session(id: string): SshSession {
    const s = this.deps.terminals.get(id);
    if (!(s instanceof SshSession)) throw new WraithError('EBADARGS', `Session ${id} is not an SSH session.`);
    return s;
  }

  /** For SFTP and tunnels: the session's connected ssh2 Client (ESESSIONCLOSED if disconnected). */
  getClient(sessionId: string): Client {
    return this.session(sessionId).client();
  }

  /** For SFTP: the session's SFTP channel, opened once per connection and cached. */
  sftp(sessionId: string): Promise<SFTPWrapper> {
    return this.session(sessionId).sftp();
  }

  exec(
    input: { sessionId: string; command: string; timeoutMs: number; maxBytes: number; encoding?: ExecEncoding },
    signal?: AbortSignal,
  ): Promise<ExecResult> {
    return this.execOn(this.session(input.sessionId), input.command, input.timeoutMs, input.maxBytes, signal, input.encoding);
  }

  /**
   * Runs a command on its own exec channel, with no stdin (as `ssh -n`). stdout and stderr are
   * each capped at maxBytes: past the cap output is read and dropped, the command runs on to its
   * end and the result is marked truncated. On timeout the command is stopped (signal KILL,
   * channel closed) and timedOut set; on `signal` it is stopped the same way and the call fails
   * ECANCELLED. Both count from the call, not from when the server opened the channel: a server
   * that stopped answering would otherwise hold the call until keepalives gave up on the
   * connection (a minute), and a command it starts after that is stopped as it starts. A channel
   * that closes without an exit status (the connection dropped) fails ESESSIONCLOSED: the
   * command's outcome is unknown, and a result would pass for one; what it printed until then
   * is in the error's details (`stdout`, `stderr`, capped and encoded as a result's), to show how
   * far it got.
   */
  execOn(
    session: SshSession,
    command: string,
    timeoutMs: number,
    maxBytes: number,
    signal?: AbortSignal,
    encoding: ExecEncoding = 'utf8',
  ): Promise<ExecResult> {
    const client = session.client();
    const started = performance.now();
    return new Promise<ExecResult>((resolve, reject) => {
      const out = { stdout: new Capped(maxBytes), stderr: new Capped(maxBytes) };
      /** The command's channel, once the server has opened it and started the command. */
      let ch: ClientChannel | null = null;
      let rc: number | null = null;
      let sig: string | null = null;
      let exited = false;
      let timedOut = false;
      let done = false;
      const stop = () => {
        if (!ch) return;
        try {
          signalCommand(ch, 'KILL');
        } catch {
          // the channel may already be closing
        }
        ch.close();
      };
      const settle = (outcome: () => void) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        outcome();
      };
      const durationMs = () => Math.round((performance.now() - started) * 10) / 10;
      const result = (): ExecResult => ({
        rc,
        signal: sig,
        stdout: out.stdout.text(encoding),
        stderr: out.stderr.text(encoding),
        durationMs: durationMs(),
        truncated: out.stdout.truncated || out.stderr.truncated,
        timedOut,
      });
      const timer = setTimeout(() => {
        timedOut = true;
        stop();
        // Do not wait for the server to confirm: the caller asked for a bound.
        settle(() => resolve(result()));
      }, timeoutMs);
      const onAbort = () => {
        stop();
        settle(() => reject(new WraithError('ECANCELLED', `The command on ${session.title} was cancelled and stopped.`)));
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      const lostWhileStarting = () =>
        new WraithError(
          'ESESSIONCLOSED',
          `The connection to ${session.title} was lost while the command was starting; whether it ran is unknown. Reconnect and check before running it again.`,
          { durationMs: durationMs() },
        );
      const opened = (err: Error | undefined, channel: ClientChannel) => {
        if (done) {
          // Timed out or cancelled before the server started it, which it did after all: nobody
          // waits for it any more, so it is stopped as a timeout or a cancel stops a command.
          if (!err) {
            ch = channel;
            stop();
          }
          return;
        }
        if (err) {
          // ssh2 fails the channels still opening when the connection ends ("No response from
          // server"): that is the connection lost, not the server refusing.
          if (!session.connectedBy(client)) return settle(() => reject(lostWhileStarting()));
          return settle(() => reject(new WraithError('EIO', `${session.title} refused to run the command: ${err.message}${sessionLimitHint(err)}`)));
        }
        ch = channel;
        // Nothing is ever written to it: a command that reads stdin (cat, read, grep without a
        // file) gets end of input at once instead of waiting out the timeout.
        channel.end();
        // Past the cap, add() drops the bytes: reading on keeps the command from blocking on a full window.
        channel.on('data', (d: Buffer) => out.stdout.add(d));
        channel.stderr.on('data', (d: Buffer) => out.stderr.add(d));
        channel.on('exit', (code: number | null, signalName?: string) => {
          exited = true;
          if (typeof code === 'number') rc = code;
          if (signalName) sig = signalName;
        });
        channel.on('close', () => {
          if (exited) return settle(() => resolve(result()));
          const { stdout, stderr, truncated, durationMs: ran } = result();
          settle(() =>
            reject(
              new WraithError(
                'ESESSIONCLOSED',
                `The connection to ${session.title} was lost while the command ran; its outcome is unknown. Reconnect and check before running it again.`,
                { stdout, stderr, truncated, durationMs: ran },
              ),
            ),
          );
        });
      };
      try {
        client.exec(command, { env: localeEnv() }, opened);
      } catch {
        // ssh2 throws ("Not connected") once the connection's socket is no longer writable: it is
        // going, and the session hears of it next.
        settle(() => reject(lostWhileStarting()));
      }
    });
  }

  changed(id: string): void {
    this.deps.sessions.changed(id);
  }

  async beforeClose(id: string): Promise<void> {
    await this.deps.beforeClose?.(id).catch(() => undefined);
  }

  removed(id: string): void {
    this.tunnels.stopSession(id);
    this.deps.terminals.remove(id);
    this.deps.sessions.changed(id);
  }

  dispose(): void {
    for (const c of this.inFlight) c.abort();
    // Not in the registry, whose closeAll ends the others.
    for (const s of this.unannounced.values()) void s.close();
    this.prompts.cancelAll();
    this.tunnels.dispose();
  }

  private async tracked<T>(outer: AbortSignal | undefined, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const ctl = new AbortController();
    const onOuter = () => ctl.abort();
    outer?.addEventListener('abort', onOuter, { once: true });
    if (outer?.aborted) ctl.abort();
    this.inFlight.add(ctl);
    try {
      return await run(ctl.signal);
    } finally {
      this.inFlight.delete(ctl);
      outer?.removeEventListener('abort', onOuter);
    }
  }

  register(router: Router): void {
    router.handle('ssh.open', (i, ctx) => this.open(i, ctx.signal, ctx.origin));
    router.handle('ssh.reconnect', async (i, ctx) => (await this.reconnect(i.sessionId, ctx.signal, i), OK));
    router.handle('ssh.exec', (i, ctx) => this.exec(i, ctx.signal));
    router.handle('ssh.answer', (i) => (this.prompts.answer(i.promptId, i.answers), OK));
    router.handle('tunnels.start', (i) => this.tunnels.start(this.session(i.sessionId), tunnelOptions(i)));
    router.handle('tunnels.stop', (i) => (this.tunnels.stop(i.tunnelId), OK));
    router.handle('tunnels.list', (i) => ({ tunnels: this.tunnels.list(i?.sessionId) }));
  }
}

/** Collects up to `max` bytes of a stream; gives them as UTF-8 text (no character split by the cap) or base64. */
class Capped {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  truncated = false;

  constructor(private readonly max: number) {}

  /** Keeps what fits under the cap and drops the rest. */
  add(d: Buffer): void {
    if (this.truncated) return;
    const room = this.max - this.size;
    if (d.length > room) {
      this.chunks.push(d.subarray(0, room));
      this.size += room;
      this.truncated = true;
      return;
    }
    this.chunks.push(d);
    this.size += d.length;
  }

  text(encoding: ExecEncoding): string {
    if (encoding === 'base64') return Buffer.concat(this.chunks, this.size).toString('base64');
    const dec = new StringDecoder('utf8');
    // end() without the incomplete tail: a character cut by the cap is dropped, not mangled.
    const s = dec.write(Buffer.concat(this.chunks, this.size));
    return this.truncated ? s : s + dec.end();
  }
}
