import { randomUUID } from 'node:crypto';
import { type Socket, connect as tcpConnect } from 'node:net';
import type { Duplex } from 'node:stream';
import ssh2, { type AnyAuthMethod, type AuthHandlerMiddleware, Client, type Prompt } from 'ssh2';
import { type CredentialNeed, MAX_LOGIN_TRIES } from '../../common/contract/ssh.js';
import { WraithError } from '../../common/errors.js';
import { hostAndPort, hostToDial } from '../../common/host-address.js';
import { MAX_KEY_FILE_BYTES } from '../connections/connection-checks.js';
import type { ResolvedConnection } from '../connections/connections-service.js';
import { type HostKeyStore, sshFingerprint } from '../hostkeys/host-key-store.js';
import { readLocalFileSync } from '../local-files.js';
import type { EventBus } from '../router.js';
import { type HopLabel, label, mapConnectError } from './errors.js';
import { ServerWords } from './server-words.js';
import { ForwardFailed, openForward } from './tunnel.js';

// ssh2 is CommonJS: Node's ESM loader cannot see `utils` as a named export.
const { utils } = ssh2;

export const MAX_JUMP_HOPS = 8;

export interface ConnectDeps {
  hostKeys: HostKeyStore;
  bus: EventBus;
  prompts: PromptBroker;
  keepaliveIntervalMs: (conn: ResolvedConnection) => number;
  readyTimeoutMs: number;
}

/** The algorithm name at the start of an SSH public key blob ("ssh-ed25519", "rsa-sha2-…" keys say "ssh-rsa"). */
export function keyTypeOf(blob: Buffer): string {
  if (blob.length < 4) return 'unknown';
  const len = blob.readUInt32BE(0);
  if (len <= 0 || len > 64 || 4 + len > blob.length) return 'unknown';
  return blob.subarray(4, 4 + len).toString('ascii');
}

interface PendingPrompt {
  resolve: (answers: string[] | null | 'timeout') => void;
}

/**
 * Whose login a prompt is: the hop that asks, named so the card can say so at once (the prompt
 * may come before a window has heard of a connection saved a moment ago), and the `promptTag`
 * of the connect it belongs to, if its caller gave one.
 */
export interface PromptAsker {
  connectionId: string;
  connectionName: string;
  host: string;
  promptTag?: string | undefined;
}

/**
 * Keyboard-interactive prompts waiting for the user: `ssh.prompt` goes out, `ssh.answer` comes
 * back. A prompt nobody answers within the timeout fails the login with ETIMEOUT. However a
 * prompt ends (answered, cancelled, timed out, or withdrawn because its login was given up),
 * `ssh.prompt_closed` says so: every window shows the card, and one that asks for nothing more
 * must not stand until its timeout.
 */
export class PromptBroker {
  private readonly pending = new Map<string, PendingPrompt>();

  constructor(
    private readonly bus: EventBus,
    private readonly timeoutMs: number,
  ) {}

  /**
   * `signal`: the login the prompt is for was given up (its connect cancelled, its connection
   * gone): the prompt is withdrawn at once and the answer is null.
   */
  ask(
    asker: PromptAsker,
    name: string,
    instructions: string,
    prompts: Prompt[],
    refused = 0,
    signal?: AbortSignal,
  ): Promise<string[] | null | 'timeout'> {
    if (signal?.aborted) return Promise.resolve(null);
    const promptId = randomUUID();
    return new Promise((resolve) => {
      const withdraw = () => entry.resolve(null);
      const timer = setTimeout(() => entry.resolve('timeout'), this.timeoutMs);
      const entry: PendingPrompt = {
        resolve: (a) => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', withdraw);
          if (!this.pending.delete(promptId)) return;
          this.bus.emit('ssh.prompt_closed', { promptId });
          resolve(a);
        },
      };
      this.pending.set(promptId, entry);
      const { connectionId, connectionName, host, promptTag } = asker;
      this.bus.emit('ssh.prompt', {
        promptId,
        connectionId,
        connectionName,
        host,
        ...(promptTag ? { promptTag } : {}),
        name,
        instructions,
        prompts: prompts.map((p) => ({ prompt: p.prompt, echo: p.echo ?? false })),
        refused,
      });
      signal?.addEventListener('abort', withdraw, { once: true });
    });
  }

  answer(promptId: string, answers: string[] | null): void {
    const p = this.pending.get(promptId);
    if (!p) throw new WraithError('ENOTFOUND', 'That login prompt is no longer waiting (it was answered, cancelled or timed out, or its login was given up).');
    p.resolve(answers);
  }

  /** Cancels every waiting prompt (shutdown). */
  cancelAll(): void {
    for (const p of [...this.pending.values()]) p.resolve(null);
  }
}

/**
 * How long a hop has to answer: ssh2's readyTimeout, kept by us so it can stop while a person is
 * asked. ssh2's own runs from the TCP connect to the end of the login, the time a person takes at
 * a keyboard-interactive prompt (a 2FA code) included: a login still waiting for the person's
 * answer failed after 20 s with "did not answer in time", and the prompt's own timeout was never
 * reached. Here only the time we wait for the server counts.
 */
class AnswerClock {
  private timer: NodeJS.Timeout | null = null;
  private left: number;
  private since = 0;
  private stopped = false;

  constructor(
    timeoutMs: number,
    private readonly onTimeout: () => void,
  ) {
    this.left = timeoutMs;
  }

  /** Counts (again) the time the server takes. A timeout of 0 never runs out, as ssh2's. */
  run(): void {
    if (this.stopped || this.timer || this.left <= 0) return;
    this.since = Date.now();
    this.timer = setTimeout(this.onTimeout, Math.max(1, this.left));
  }

  /** A person is asked: their time is not the server's. */
  pause(): void {
    if (!this.timer) return;
    clearTimeout(this.timer);
    this.timer = null;
    this.left -= Date.now() - this.since;
  }

  stop(): void {
    this.pause();
    this.stopped = true;
  }
}

function hopOf(conn: ResolvedConnection): HopLabel {
  return { name: conn.name, host: conn.host, port: conn.port, username: conn.username };
}

/**
 * An EAUTH a person fixes by typing the secret (ssh.open's `credential`): its details say which
 * secret, for which hop, and whether it was missing or refused (contract: CredentialNeed).
 */
export function credentialError(conn: ResolvedConnection, reason: CredentialNeed['reason'], credential: CredentialNeed['credential'], message: string): WraithError {
  const details: CredentialNeed = { reason, credential, connectionId: conn.id, connectionName: conn.name, username: conn.username, host: conn.host, port: conn.port };
  return new WraithError('EAUTH', message, details);
}

/** The private key and passphrase for key auth, checked locally so a wrong passphrase says so. */
function loadKey(conn: ResolvedConnection): { key: Buffer; passphrase?: string } {
  let key: Buffer;
  if (conn.privateKey) key = Buffer.from(conn.privateKey, 'utf8');
  else if (conn.keyPath) {
    try {
      key = readLocalFileSync(conn.keyPath, { maxBytes: MAX_KEY_FILE_BYTES, what: 'a private key file' });
    } catch (err) {
      const code = err instanceof WraithError ? err.code : 'ENOTFOUND';
      throw new WraithError(code, `Cannot read the private key file ${conn.keyPath} for ${conn.name}: ${err instanceof Error ? err.message : String(err)}`);
    }
  } else {
    throw new WraithError('EAUTH', `${conn.name} uses key authentication but has no private key: add one, or a key file path.`);
  }
  const parsed = utils.parseKey(key, conn.passphrase ?? undefined);
  if (parsed instanceof Error) {
    if (/no passphrase/i.test(parsed.message)) {
      throw credentialError(conn, 'credential-required', 'passphrase', `The private key of ${conn.name} is encrypted and no passphrase is saved for it: enter it to connect.`);
    }
    if (/passphrase|decrypt/i.test(parsed.message)) {
      throw credentialError(conn, 'credential-rejected', 'passphrase', `That passphrase does not decrypt the private key of ${conn.name}.`);
    }
    throw new WraithError('EAUTH', `The private key of ${conn.name} cannot be read: ${parsed.message}.`);
  }
  return conn.passphrase ? { key, passphrase: conn.passphrase } : { key };
}

/** The local agent socket for agent forwarding, or a clear error when there is none. */
function forwardableAgent(conn: ResolvedConnection): string {
  const agent = process.env.SSH_AUTH_SOCK;
  if (!agent) {
    throw new WraithError(
      'EUNAVAILABLE',
      `${conn.name} forwards the SSH agent, but no agent is running here (SSH_AUTH_SOCK is not set): start ssh-agent, or turn agent forwarding off for this connection.`,
    );
  }
  return agent;
}

/**
 * Connects one hop (optionally over `sock`, a forwarded channel of the previous hop): host key
 * checked against the store in ssh2's hostVerifier, which runs during key exchange — before the
 * userauth service is even requested, so no credential can leave on an unknown, changed or revoked key.
 */
export function connectHop(
  deps: ConnectDeps,
  conn: ResolvedConnection,
  sock?: Duplex,
  signal?: AbortSignal,
  opts: { isTarget?: boolean; jumpHostFor?: string; promptTag?: string | undefined } = {},
): Promise<Client> {
  const hop = hopOf(conn);
  // A jump host's key is asked about before the target's: the question says which hop it is, as
  // the host:port alone is often an address the person does not know by heart.
  const hopName = opts.jumpHostFor ? `jump host ${conn.name}, on the way to ${opts.jumpHostFor}` : conn.name;
  // Fail fast on what we can tell locally — except a missing or wrong password / passphrase,
  // which is reported from the auth step below: by then the host key has been checked, so the
  // person is asked about the server's identity first and types a secret only for a known server.
  const { methods: auth, pending } = authMethods(conn);
  // Agent forwarding reaches the target only, never a jump host on the way.
  const agentToForward = opts.isTarget && conn.sshOptions.agentForward ? forwardableAgent(conn) : undefined;
  return new Promise<Client>((resolve, reject) => {
    const client = new Client();
    const serverWords = new ServerWords();
    let failure: WraithError | null = null;
    let settled = false;
    /** Aborted once this hop's login is over, whichever way: a prompt still shown is withdrawn. */
    const loginOver = new AbortController();
    const finish = (err: WraithError | null) => {
      if (settled) return;
      settled = true;
      loginOver.abort();
      clock.stop();
      serverWords.stop();
      signal?.removeEventListener('abort', onAbort);
      client.removeListener('ready', onReady);
      if (err) {
        client.removeAllListeners('close');
        client.on('error', () => {});
        client.destroy();
        reject(err);
      } else {
        resolve(client);
      }
    };
    const onReady = () => finish(null);
    const onAbort = () => finish(new WraithError('ECANCELLED', `Connecting to ${conn.name} was cancelled.`));
    // What ssh2 reports when its readyTimeout runs out, so the message stays the same.
    const clock = new AnswerClock(deps.readyTimeoutMs, () =>
      finish(mapConnectError(Object.assign(new Error('Timed out while waiting for handshake'), { level: 'client-timeout' }), hop, serverWords.said)),
    );
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) return onAbort();
    client.once('ready', onReady);
    // The server refused the login after it was given the saved password (password auth, or its
    // keyboard-interactive prompt): the person may type it again.
    const refusedPassword = (err: Error): WraithError | null =>
      (passwordTried || passwordUsedForKi) && Reflect.get(err, 'level') === 'client-authentication'
        ? credentialError(conn, 'credential-rejected', 'password', `${label(hop)} refused the login with that password: permission denied, please try again.`)
        : null;
    client.on('error', (err) => finish(failure ?? refusedPassword(err) ?? mapConnectError(err, hop, serverWords.said)));
    client.once('close', () => finish(failure ?? new WraithError('EIO', `${label(hop)} closed the connection during login.`)));

    const kiPrompt = (name: string, instructions: string, _lang: string, prompts: Prompt[], done: (a: string[]) => void) => {
      if (prompts.length === 0) return done([]);
      // PAM's single hidden "Password:" prompt gets the saved password, once: with password auth
      // (whatever the prompt says), and with keyboard-interactive where the prompt asks for the
      // password (then a second round, a 2FA code, is the person's).
      const only = prompts.length === 1 ? prompts[0] : undefined;
      const passwordPrompt =
        only !== undefined && !only.echo && (conn.authMethod === 'password' || (conn.authMethod === 'keyboard-interactive' && /password/i.test(only.prompt)));
      if (passwordPrompt && conn.password !== null && !passwordUsedForKi) {
        passwordUsedForKi = true;
        return done([conn.password]);
      }
      kiAnsweredByUser = true;
      clock.pause();
      const asker = { connectionId: conn.id, connectionName: conn.name, host: conn.host, promptTag: opts.promptTag };
      void deps.prompts.ask(asker, name, instructions, prompts, kiRefused, loginOver.signal).then((answers) => {
        if (settled) return; // withdrawn: the login was given up meanwhile
        clock.run();
        if (answers === 'timeout') {
          failure = new WraithError('ETIMEOUT', `Nobody answered the login prompt of ${conn.name} in time; connect again to retry.`);
          client.end();
        } else if (answers === null) {
          failure = new WraithError('EAUTH', `The login to ${conn.name} was cancelled.`);
          client.end();
        } else {
          done(prompts.map((_, i) => answers[i] ?? ''));
        }
      });
    };
    let passwordUsedForKi = false;
    /** The keyboard-interactive round under way was answered by the person, not with a saved password. */
    let kiAnsweredByUser = false;
    /** Keyboard-interactive logins the person answered and the server refused. */
    let kiRefused = 0;
    let lastTried: AnyAuthMethod | null = null;
    const methods: AnyAuthMethod[] = auth.map((a) =>
      a.type === 'keyboard-interactive' ? { type: 'keyboard-interactive', username: conn.username, prompt: kiPrompt } : a,
    );
    let next = 0;
    let passwordTried = false;
    // Asks with "none" first (as OpenSSH) to learn what the server accepts, then tries only
    // those; keyboard-interactive stands in for password auth only where password is not offered.
    const authHandler: AuthHandlerMiddleware = (authsLeft, _partial, cb) => {
      if (authsLeft === null || authsLeft === undefined) {
        // First call: key exchange and the host key check are done, nothing has been sent yet.
        if (pending) {
          failure = pending;
          return Reflect.apply(cb, undefined, [false]);
        }
        return cb({ type: 'none', username: conn.username });
      }
      // A mistyped password or code at the server's own prompt: ask again, MAX_LOGIN_TRIES times in
      // all, as OpenSSH's NumberOfPasswordPrompts (a saved password refused is asked for by the card instead).
      if (lastTried?.type === 'keyboard-interactive' && kiAnsweredByUser && authsLeft.includes('keyboard-interactive') && kiRefused + 1 < MAX_LOGIN_TRIES) {
        kiRefused += 1;
        kiAnsweredByUser = false;
        return cb(lastTried);
      }
      while (next < methods.length) {
        const m = methods[next++] as AnyAuthMethod;
        const wire = m.type === 'agent' ? 'publickey' : m.type;
        if (!authsLeft.includes(wire)) continue;
        if (m.type === 'keyboard-interactive' && passwordTried) continue;
        if (m.type === 'password') passwordTried = true;
        lastTried = m;
        return cb(m);
      }
      // `false` means "no more methods" (ssh2's documented contract; @types/ssh2 omits it).
      Reflect.apply(cb, undefined, [false]);
    };

    const keepalive = deps.keepaliveIntervalMs(conn);
    // The first hop's socket is ours (dialled as ssh2 would dial it), so what the server says can
    // be listened to: ssh2 keeps its own socket to itself.
    const stream = sock ?? dial(conn.host, conn.port);
    client.connect({
      host: conn.host,
      port: conn.port,
      username: conn.username,
      sock: stream,
      // ssh2 then asks for agent forwarding on every session channel of this connection. Only
      // the authHandler above decides which auth methods are tried, so this adds no agent auth.
      ...(agentToForward ? { agent: agentToForward, agentForward: true } : {}),
      // Off: the clock above keeps it, without the time a person takes to answer a prompt.
      readyTimeout: 0,
      keepaliveInterval: keepalive,
      keepaliveCountMax: 3,
      hostVerifier: (key: Buffer) => {
        const keyType = keyTypeOf(key);
        const fingerprint = sshFingerprint(key);
        const verdict = deps.hostKeys.check('ssh', conn.host, conn.port, keyType, fingerprint);
        if (verdict.status === 'trusted') return true;
        const details = {
          host: conn.host,
          port: conn.port,
          keyType,
          fingerprint,
          connectionId: conn.id,
          connectionName: conn.name,
          // The connection being opened, when this hop is a jump host on the way to it.
          ...(opts.jumpHostFor ? { jumpHostFor: opts.jumpHostFor } : {}),
        };
        if (verdict.status === 'revoked') {
          const { source, revokedAt } = verdict.revocation;
          failure = new WraithError(
            'EHOSTKEY_REVOKED',
            `${hostAndPort(conn.host, conn.port)} (${hopName}) offered the host key ${keyType} ${fingerprint}, which ${source} marks @revoked ` +
              `(imported ${revokedAt.slice(0, 10)}): Wraith refuses that key whichever server offers it, and nothing was sent. ` +
              'Ask the server\'s administrator for its new key; if the revocation was a mistake, lift it in Known hosts.',
            { ...details, source, revokedAt },
          );
          return false;
        }
        failure =
          verdict.status === 'unknown'
            ? new WraithError(
                'EHOSTKEY_UNKNOWN',
                `The host key of ${hostAndPort(conn.host, conn.port)} (${hopName}) is not known yet. Check its fingerprint ${fingerprint} (${keyType}) and trust it to connect.`,
                details,
              )
            : new WraithError(
                'EHOSTKEY_CHANGED',
                `Host key for ${hostAndPort(conn.host, conn.port)} (${hopName}) changed — possible man-in-the-middle; nothing was sent. ` +
                  `Known: ${verdict.knownFingerprint}, now offered: ${fingerprint}. If the server was really reinstalled, forget the old key and trust the new one.`,
                { ...details, knownFingerprint: verdict.knownFingerprint, knownKeyType: verdict.knownKeyType },
              );
        return false;
      },
      authHandler,
    });
    serverWords.listen(stream);
    clock.run();
    // ssh2 leaves Nagle's algorithm on. Our small packets (SFTP READ requests, channel window
    // adjusts, keystrokes) then wait for the ACK of the previous small one, which the server's
    // kernel delays (up to 40 ms) when it has no data of its own to send — e.g. when it has used
    // up the window our pending adjust would reopen. Downloads stalled on that again and again.
    // OpenSSH sets TCP_NODELAY on both ends of every session, sftp included (seen with strace).
    // (Client#setNoDelay is ssh2's documented API; on a jump-host channel it does nothing.)
    client.setNoDelay(true);
  });
}

/**
 * A TCP connection to host:port that reports a reset as a reset. A reset that arrives while data
 * is still unread (the server's last output, say) is reported by Node as a plain end: libuv reads
 * the data, sees the connection hung up, and calls it the end of the stream without the read that
 * would have returned ECONNRESET. The reset is still on the socket, and a write returns it: so the
 * socket is half-open (Node does not end our side by itself) and, when the server's side ends, an
 * empty write asks. On a reset it fails, and the socket is destroyed with ECONNRESET, which ssh2
 * reports as its client's error before its close; otherwise (the server closed the connection) our
 * side is closed too. Either way 'close' follows 'end'.
 */
function dial(host: string, port: number): Socket {
  const socket = tcpConnect({ host, port, allowHalfOpen: true });
  socket.once('end', () => {
    // Already ended by us (ssh2 said goodbye first): nothing to ask, and it closes by itself.
    if (!socket.writable) return;
    socket.write(Buffer.alloc(0), (err) => {
      if (!err) socket.destroy();
    });
  });
  return socket;
}

type AuthSpec = AnyAuthMethod;

/**
 * The auth methods to try, or (pending) the credential error to report once the host key has
 * been checked: a password or key passphrase that is missing, or a passphrase that is wrong.
 */
function authMethods(conn: ResolvedConnection): { methods: AuthSpec[]; pending: WraithError | null } {
  const username = conn.username;
  if (!username) throw new WraithError('EBADARGS', `${conn.name} has no user name; set one in the connection.`);
  switch (conn.authMethod) {
    case 'password':
      if (conn.password === null) {
        return { methods: [], pending: credentialError(conn, 'credential-required', 'password', `No password is saved for ${conn.name}: enter it to connect.`) };
      }
      // Many servers (PAM) offer only keyboard-interactive: answer its password prompt too.
      return {
        methods: [
          { type: 'password', username, password: conn.password },
          { type: 'keyboard-interactive', username, prompt: () => {} },
        ],
        pending: null,
      };
    case 'key':
      try {
        return { methods: [{ type: 'publickey', username, ...loadKey(conn) }], pending: null };
      } catch (err) {
        if (err instanceof WraithError && err.code === 'EAUTH' && typeof err.details?.reason === 'string') return { methods: [], pending: err };
        throw err;
      }
    case 'agent': {
      const agent = process.env.SSH_AUTH_SOCK;
      if (!agent) throw new WraithError('EAUTH', `${conn.name} uses the SSH agent, but no agent is running here (SSH_AUTH_SOCK is not set).`);
      return { methods: [{ type: 'agent', username, agent }], pending: null };
    }
    case 'keyboard-interactive':
      return { methods: [{ type: 'keyboard-interactive', username, prompt: () => {} }], pending: null };
  }
}

/**
 * Opens a direct-tcpip channel through `via` to the next hop. The next hop has `timeoutMs` to
 * answer the jump host's dial, as a direct connect has (0: no limit, as there), and `signal`
 * gives it up at once (openForward). Either way the caller ends `via`'s connection, which takes
 * the channel still opening along.
 */
export async function forwardTo(
  via: Client,
  viaConn: ResolvedConnection,
  next: ResolvedConnection,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<Duplex> {
  try {
    return await openForward(via, next.host, next.port, { timeoutMs, signal });
  } catch (err) {
    if (!(err instanceof ForwardFailed)) throw err;
    if (err.reason === 'cancelled') throw new WraithError('ECANCELLED', `Connecting to ${next.name} was cancelled.`);
    // A direct connect's words for a timeout (mapConnectError), said of the jump host that dialled.
    const why = err.reason === 'timeout' ? err.message : `${err.message}.`;
    throw new WraithError(err.reason === 'timeout' ? 'ETIMEOUT' : 'EIO', `Jump host ${viaConn.name} could not reach ${hostAndPort(next.host, next.port)} (${next.name}): ${why}`, {
      host: next.host,
      port: next.port,
    });
  }
}

/**
 * A hop as it is dialled and logged in to: an IPv6 host without the brackets it may be saved in
 * (its host key is looked up under the bare address too, as the store keeps an imported
 * known_hosts "[::1]:2222"), and the user name and key file without the spaces a connection saved
 * before the contract trimmed them may have.
 */
function asDialled(conn: ResolvedConnection): ResolvedConnection {
  return { ...conn, host: hostToDial(conn.host), username: conn.username.trim(), keyPath: conn.keyPath?.trim() || null };
}

/**
 * Connects through the jump chain: `chain[0]` is the target, `chain[1]` its jump host, and so on.
 * Returns the clients from the outermost hop to the target; on failure closes what it opened.
 * `jumpHostFor`: the chain is only the way to another connection (an RDP desktop behind it), so
 * every hop, `chain[0]` too, is a jump host on the way to that one: its questions name it so, and
 * none of them is the target that gets the agent forwarded. `promptTag`: carried by the login
 * prompts of every hop (ssh.open's).
 */
export async function connectChain(
  deps: ConnectDeps,
  chain: ResolvedConnection[],
  signal?: AbortSignal,
  { jumpHostFor, promptTag }: { jumpHostFor?: string; promptTag?: string | undefined } = {},
): Promise<Client[]> {
  const order = chain.map(asDialled).reverse();
  const target = jumpHostFor ?? chain[0]?.name;
  const clients: Client[] = [];
  try {
    let prev: { client: Client; conn: ResolvedConnection } | null = null;
    for (const [i, conn] of order.entries()) {
      const sock: Duplex | undefined = prev ? await forwardTo(prev.client, prev.conn, conn, deps.readyTimeoutMs, signal) : undefined;
      const isTarget = jumpHostFor === undefined && i === order.length - 1;
      const client = await connectHop(deps, conn, sock, signal, { ...(isTarget ? { isTarget } : { jumpHostFor: target }), promptTag });
      clients.push(client);
      prev = { client, conn };
    }
    return clients;
  } catch (err) {
    for (const c of clients.reverse()) c.destroy();
    throw err;
  }
}
