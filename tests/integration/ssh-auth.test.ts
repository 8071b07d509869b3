import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { type AddressInfo, type Socket, connect, createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ContractClient } from '../../src-main/common/client.js';
import type { EventPayload, Input } from '../../src-main/common/contract/index.js';
import { App } from '../../src-main/node/app.js';
import { connectInProcess } from '../../src-main/node/in-process.js';
import { type SshAgentHandle, type SshdHandle, freePort, logThroughConnectionEnd, startSshAgent, startSshd } from '../fixtures/sshd.js';
import { failure } from '../fixtures/errors.js';
import { shortTimeoutService } from '../fixtures/ssh-service.js';

let sshd: SshdHandle;
let agent: SshAgentHandle;
let app: App;
let client: ContractClient;
let dataDir: string;

beforeAll(async () => {
  sshd = await startSshd();
  agent = await startSshAgent([sshd.users.key.privateKeyPath]);
  dataDir = mkdtempSync(join(tmpdir(), 'wraith-ssh-auth-'));
  app = new App({ dataDir, host: 'in-process', terminal: { promptTimeoutMs: 1500 } });
  client = connectInProcess(app);
  client.subscribe(['']);
  await client.call('vault.init', { protection: 'keyfile' });
});

afterAll(async () => {
  client?.close();
  await app?.dispose();
  await agent?.stop();
  await sshd?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

type ConnInput = Input<'connections.create'>;

async function connection(fields: Partial<ConnInput>): Promise<string> {
  const c = await client.call('connections.create', {
    name: 'web01',
    kind: 'ssh',
    host: sshd.host,
    port: sshd.port,
    username: sshd.users.password.username,
    ...fields,
  });
  return c.id;
}

async function trustHost(): Promise<void> {
  await client.call('hostkeys.trust', { kind: 'ssh', host: sshd.host, port: sshd.port, keyType: sshd.hostKeyType, fingerprint: sshd.hostKeyFingerprint });
}

/** Runs `whoami` over exec on a fresh session and closes it. */
async function whoami(connectionId: string): Promise<string> {
  const { sessionId } = await client.call('ssh.open', { connectionId });
  const r = await client.call('ssh.exec', { sessionId, command: 'whoami' });
  await client.call('sessions.close', { sessionId });
  expect(r.rc).toBe(0);
  return r.stdout.trim();
}

describe('host keys, checked before any credential is sent', () => {
  test('unknown host key → EHOSTKEY_UNKNOWN with the fingerprint; trusting it lets the connection through', async () => {
    const id = await connection({ authMethod: 'password', secrets: { password: sshd.users.password.password } });
    const err = await failure(client.call('ssh.open', { connectionId: id }));
    expect(err.code).toBe('EHOSTKEY_UNKNOWN');
    expect(err.details).toMatchObject({ host: sshd.host, port: sshd.port, keyType: 'ssh-ed25519', fingerprint: sshd.hostKeyFingerprint });
    expect(await client.call('sessions.list')).toEqual([]);

    const d = err.details as { host: string; port: number; keyType: string; fingerprint: string };
    await client.call('hostkeys.trust', { kind: 'ssh', ...d });
    expect(await whoami(id)).toBe(sshd.users.password.username);
    expect(sshd.readLog()).toContain('userauth-request for user wraith-pw');
  });
});

describe('auth methods', () => {
  beforeAll(trustHost);

  test('password', async () => {
    const id = await connection({ authMethod: 'password', secrets: { password: sshd.users.password.password } });
    expect(await whoami(id)).toBe('wraith-pw');
  });

  test('wrong password → EAUTH with a plain message', async () => {
    const id = await connection({ authMethod: 'password', secrets: { password: 'not-the-password' } });
    const err = await failure(client.call('ssh.open', { connectionId: id }));
    expect(err.code).toBe('EAUTH');
    expect(err.message).toMatch(/refused the login/);
    expect(err.message).not.toContain('not-the-password');
  });

  test('private key from the vault', async () => {
    const id = await connection({ authMethod: 'key', username: sshd.users.key.username, secrets: { privateKey: sshd.users.key.privateKey } });
    expect(await whoami(id)).toBe('wraith-key');
  });

  test('private key file (keyPath)', async () => {
    const id = await connection({ authMethod: 'key', username: sshd.users.key.username, keyPath: sshd.users.key.privateKeyPath });
    expect(await whoami(id)).toBe('wraith-key');
  });

  test('encrypted key with its passphrase; a missing or wrong passphrase says so', async () => {
    const ok = await connection({
      authMethod: 'key',
      username: sshd.users.key.username,
      secrets: { privateKey: sshd.users.key.encryptedKey, passphrase: sshd.users.key.passphrase },
    });
    expect(await whoami(ok)).toBe('wraith-key');

    const none = await connection({ authMethod: 'key', username: sshd.users.key.username, keyPath: sshd.users.key.encryptedKeyPath });
    const e1 = await failure(client.call('ssh.open', { connectionId: none }));
    expect(e1.code).toBe('EAUTH');
    expect(e1.message).toMatch(/encrypted/);

    const wrong = await connection({
      authMethod: 'key',
      username: sshd.users.key.username,
      keyPath: sshd.users.key.encryptedKeyPath,
      secrets: { passphrase: 'wrong' },
    });
    const e2 = await failure(client.call('ssh.open', { connectionId: wrong }));
    expect(e2.code).toBe('EAUTH');
    expect(e2.message).toMatch(/passphrase/);
  });

  test('ssh-agent (a real ssh-agent holding the key)', async () => {
    const id = await connection({ authMethod: 'agent', username: sshd.users.key.username });
    const saved = process.env.SSH_AUTH_SOCK;
    try {
      delete process.env.SSH_AUTH_SOCK;
      const err = await failure(client.call('ssh.open', { connectionId: id }));
      expect(err.code).toBe('EAUTH');
      expect(err.message).toMatch(/SSH_AUTH_SOCK/);
      process.env.SSH_AUTH_SOCK = agent.socket;
      expect(await whoami(id)).toBe('wraith-key');
    } finally {
      if (saved === undefined) delete process.env.SSH_AUTH_SOCK;
      else process.env.SSH_AUTH_SOCK = saved;
    }
  });

  test('agent forwarding: commands on the server use the local agent, only when asked for', async () => {
    const keyFingerprint = execFileSync('ssh-keygen', ['-lf', sshd.users.key.privateKeyPath], { encoding: 'utf8' }).split(' ')[1];
    expect(keyFingerprint).toMatch(/^SHA256:/);
    const listAgentKeys = async (connectionId: string) => {
      const { sessionId } = await client.call('ssh.open', { connectionId });
      try {
        return await client.call('ssh.exec', { sessionId, command: 'ssh-add -l' });
      } finally {
        await client.call('sessions.close', { sessionId });
      }
    };
    const auth = { authMethod: 'password' as const, secrets: { password: sshd.users.password.password } };
    const forwarding = await connection({ ...auth, sshOptions: { agentForward: true } });
    const plain = await connection(auth);
    const saved = process.env.SSH_AUTH_SOCK;
    try {
      delete process.env.SSH_AUTH_SOCK;
      const err = await failure(client.call('ssh.open', { connectionId: forwarding }));
      expect(err.code).toBe('EUNAVAILABLE');
      expect(err.message).toMatch(/SSH_AUTH_SOCK/);

      process.env.SSH_AUTH_SOCK = agent.socket;
      const forwarded = await listAgentKeys(forwarding);
      expect(forwarded.rc).toBe(0);
      expect(forwarded.stdout).toContain(keyFingerprint);
      // the same server without the option: no agent there (ssh-add exits 2: cannot connect)
      const notForwarded = await listAgentKeys(plain);
      expect(notForwarded.rc).toBe(2);
      expect(notForwarded.stdout).not.toContain(keyFingerprint);
    } finally {
      if (saved === undefined) delete process.env.SSH_AUTH_SOCK;
      else process.env.SSH_AUTH_SOCK = saved;
    }
  });

  test('keyboard-interactive: the PAM "Password:" prompt is answered through ssh.answer', async () => {
    const id = await connection({ authMethod: 'keyboard-interactive' });
    const seen: string[] = [];
    const off = client.on('ssh.prompt', (p) => {
      seen.push(...p.prompts.map((q) => q.prompt));
      expect(p.connectionId).toBe(id);
      expect(p.prompts[0]?.echo).toBe(false);
      void client.call('ssh.answer', { promptId: p.promptId, answers: [sshd.users.password.password] });
    });
    try {
      expect(await whoami(id)).toBe('wraith-pw');
    } finally {
      off();
    }
    expect(seen.some((p) => /password/i.test(p))).toBe(true);
  });

  test("keyboard-interactive: a prompt names the hop that asks and carries its connect's promptTag, so the tab that connects asks it in place", async () => {
    const id = await connection({ authMethod: 'keyboard-interactive', name: 'named-in-prompt' });
    const prompts: EventPayload<'ssh.prompt'>[] = [];
    const off = client.on('ssh.prompt', (p) => {
      prompts.push(p);
      void client.call('ssh.answer', { promptId: p.promptId, answers: [sshd.users.password.password] });
    });
    try {
      const tagged = await client.call('ssh.open', { connectionId: id, promptTag: 'tab-of-window-7' });
      await client.call('sessions.close', { sessionId: tagged.sessionId });
      // The name and host as saved, with the prompt: a window that has not read the connection yet still names it.
      expect(prompts).toHaveLength(1);
      expect(prompts[0]).toMatchObject({ connectionId: id, connectionName: 'named-in-prompt', host: sshd.host, promptTag: 'tab-of-window-7' });

      const untagged = await client.call('ssh.open', { connectionId: id });
      await client.call('sessions.close', { sessionId: untagged.sessionId });
      expect(prompts).toHaveLength(2);
      expect(prompts[1]).toMatchObject({ connectionName: 'named-in-prompt', host: sshd.host });
      expect(prompts[1]?.promptTag).toBeUndefined();
    } finally {
      off();
    }
  });

  test('keyboard-interactive with a saved password: the PAM "Password:" prompt gets it, nobody is asked; a wrong one is refused as a password', async () => {
    const asked: string[] = [];
    const off = client.on('ssh.prompt', (p) => {
      asked.push(...p.prompts.map((q) => q.prompt));
      void client.call('ssh.answer', { promptId: p.promptId, answers: null });
    });
    try {
      const saved = await connection({ authMethod: 'keyboard-interactive', secrets: { password: sshd.users.password.password } });
      expect(await whoami(saved)).toBe('wraith-pw');
      expect(asked).toEqual([]);

      const wrong = await connection({ authMethod: 'keyboard-interactive', secrets: { password: 'not-the-password' } });
      const err = await failure(client.call('ssh.open', { connectionId: wrong }));
      expect(err.code).toBe('EAUTH');
      expect(err.details).toMatchObject({ reason: 'credential-rejected', credential: 'password', connectionId: wrong });
      expect(asked).toEqual([]);
    } finally {
      off();
    }
  });

  test('keyboard-interactive: a refused answer is asked again, up to three logins, each saying how many were refused', async () => {
    const id = await connection({ authMethod: 'keyboard-interactive' });
    const refusedCounts: number[] = [];
    // Wrong twice, then right: the third login gets in.
    let off = client.on('ssh.prompt', (p) => {
      refusedCounts.push(p.refused);
      const right = refusedCounts.length === 3;
      void client.call('ssh.answer', { promptId: p.promptId, answers: [right ? sshd.users.password.password : 'wrong-password'] });
    });
    try {
      expect(await whoami(id)).toBe('wraith-pw');
    } finally {
      off();
    }
    expect(refusedCounts).toEqual([0, 1, 2]);

    // Wrong three times: refused with EAUTH after the third, no fourth question.
    refusedCounts.length = 0;
    off = client.on('ssh.prompt', (p) => {
      refusedCounts.push(p.refused);
      void client.call('ssh.answer', { promptId: p.promptId, answers: ['wrong-password'] });
    });
    try {
      const err = await failure(client.call('ssh.open', { connectionId: id }));
      expect(err.code).toBe('EAUTH');
    } finally {
      off();
    }
    expect(refusedCounts).toEqual([0, 1, 2]);
  });

  test('keyboard-interactive: cancelled → EAUTH, unanswered → ETIMEOUT, stale answer → ENOTFOUND', async () => {
    const id = await connection({ authMethod: 'keyboard-interactive' });
    let lastPrompt = '';
    const off = client.on('ssh.prompt', (p) => {
      lastPrompt = p.promptId;
      void client.call('ssh.answer', { promptId: p.promptId, answers: null });
    });
    const cancelled = await failure(client.call('ssh.open', { connectionId: id }));
    off();
    expect(cancelled.code).toBe('EAUTH');
    expect(cancelled.message).toMatch(/cancelled/);

    const timedOut = await failure(client.call('ssh.open', { connectionId: id })); // nobody answers (timeout 1.5 s here)
    expect(timedOut.code).toBe('ETIMEOUT');

    const stale = await failure(client.call('ssh.answer', { promptId: lastPrompt, answers: ['x'] }));
    expect(stale.code).toBe('ENOTFOUND');
  });

  test('keyboard-interactive: the time a person takes to answer is not the server\'s; a server that never answers still times out', async () => {
    // A service of its own with a short answer timeout (1.5 s, where the app's is 20 s), on the
    // app's sessions and connections; its prompts keep their own (120 s) timeout.
    const ssh = shortTimeoutService(app);
    const silent = createServer(() => undefined); // takes the connection, never says a word
    try {
      const id = await connection({ name: 'kbd', authMethod: 'keyboard-interactive' });
      const answered: Promise<void>[] = [];
      const off = client.on('ssh.prompt', (p) => {
        // The person answers after 3.5 s: longer than the server is given to answer.
        answered.push(new Promise<void>((r) => setTimeout(r, 3500)).then(() => ssh.prompts.answer(p.promptId, [sshd.users.password.password])));
      });
      try {
        const started = Date.now();
        const { sessionId } = await ssh.open({ connectionId: id, cols: 80, rows: 24 }, undefined, 'test');
        expect(Date.now() - started).toBeGreaterThanOrEqual(3500);
        const r = await client.call('ssh.exec', { sessionId, command: 'whoami' });
        expect(r.stdout).toBe('wraith-pw\n');
        await client.call('sessions.close', { sessionId });
      } finally {
        off();
      }
      expect(answered.length).toBe(1);
      await Promise.all(answered);

      await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
      const { port } = silent.address() as AddressInfo;
      const mute = await connection({ name: 'mute', port, authMethod: 'password', secrets: { password: 'x' } });
      const started = Date.now();
      const err = await failure(ssh.open({ connectionId: mute, cols: 80, rows: 24 }, undefined, 'test'));
      expect(err.code).toBe('ETIMEOUT');
      expect(err.message).toBe(`127.0.0.1:${port} did not answer in time (mute). Is the host up and the port right?`);
      expect(Date.now() - started).toBeGreaterThanOrEqual(1400);
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      ssh.dispose();
      silent.close();
    }
  });

  test('closing a session whose reconnect waits at its login prompt gives the reconnect up: the prompt is withdrawn at once', async () => {
    const id = await connection({ authMethod: 'keyboard-interactive' });
    let off = client.on('ssh.prompt', (p) => void client.call('ssh.answer', { promptId: p.promptId, answers: [sshd.users.password.password] }));
    const { sessionId } = await client.call('ssh.open', { connectionId: id }).finally(() => off());
    sshd.dropConnections();
    await expect.poll(async () => (await client.call('sessions.list')).find((s) => s.id === sessionId)?.state, { timeout: 10_000 }).toBe('disconnected');

    const closed: string[] = [];
    const offClosed = client.on('ssh.prompt_closed', (p) => closed.push(p.promptId));
    const prompted = new Promise<string>((resolve) => {
      off = client.on('ssh.prompt', (p) => (off(), resolve(p.promptId)));
    });
    try {
      const reconnecting = failure(client.call('ssh.reconnect', { sessionId }));
      const promptId = await prompted;
      await client.call('sessions.close', { sessionId });
      // Given up for the close, not left to the prompt's timeout (ETIMEOUT).
      const err = await reconnecting;
      expect(err.code).toBe('ECANCELLED');
      expect(closed).toContain(promptId);
      expect((await failure(client.call('ssh.answer', { promptId, answers: ['x'] }))).code).toBe('ENOTFOUND');
      expect((await client.call('sessions.list')).find((s) => s.id === sessionId)).toBeUndefined();
    } finally {
      off();
      offClosed();
    }
  });

  test('shutting down while a login waits for the user cancels it and leaves nothing behind', async () => {
    const id = await connection({ authMethod: 'keyboard-interactive' });
    const prompted = new Promise<void>((resolve) => {
      const off = client.on('ssh.prompt', () => (off(), resolve()));
    });
    const opening = failure(client.call('ssh.open', { connectionId: id }));
    await prompted;
    app.ssh.dispose(); // what App.dispose() does first
    const err = await opening;
    expect(err.code).toBe('ECANCELLED');
    expect(await client.call('sessions.list')).toEqual([]);
  });

  test('refused port and unresolvable host → EIO with plain messages', async () => {
    const port = await freePort();
    const refused = await connection({ port, authMethod: 'password', secrets: { password: 'x' } });
    const e1 = await failure(client.call('ssh.open', { connectionId: refused }));
    expect(e1.code).toBe('EIO');
    expect(e1.message).toMatch(/refused the connection/);

    const nowhere = await connection({ host: 'no-such-host.invalid', authMethod: 'password', secrets: { password: 'x' } });
    const e2 = await failure(client.call('ssh.open', { connectionId: nowhere }));
    expect(e2.code).toBe('EIO');
    expect(e2.message).toMatch(/does not resolve/);
  });
});

describe('a port that is not an SSH server', () => {
  /** A TCP server on 127.0.0.1 that does `onConnection` with each connection; closed after `body`. */
  async function withServer(onConnection: (socket: Socket) => void, body: (port: number) => Promise<void>): Promise<void> {
    const server = createServer((socket) => {
      socket.on('error', () => undefined); // the client hangs up as it likes
      onConnection(socket);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      await body((server.address() as AddressInfo).port);
    } finally {
      server.close();
    }
  }
  const open = async (port: number) => failure(client.call('ssh.open', { connectionId: await connection({ name: 'http', port, authMethod: 'password', secrets: { password: 'x' } }) }));

  test('one that answers as something else is named by what it said', async () => {
    // A web server: it reads ssh2's "SSH-2.0-…" line as a bad request, says so and closes.
    await withServer(
      (socket) => socket.once('data', () => socket.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n')),
      async (port) => {
        const err = await open(port);
        expect(err.code).toBe('EIO');
        expect(err.message).toBe(`127.0.0.1:${port} answered, but not as an SSH server (http): it said "HTTP/1.1 400 Bad Request". Is the port right?`);
      },
    );
    // A binary protocol: nothing readable to quote.
    await withServer(
      (socket) => socket.end(Buffer.from([0x16, 0x03, 0x01, 0x00, 0x02, 0x02, 0x28])),
      async (port) => {
        expect((await open(port)).message).toBe(`127.0.0.1:${port} answered, but not as an SSH server (http). Is the port right?`);
      },
    );
  });

  test('one that answers as something else and then waits is named too, not taken for a slow SSH server', async () => {
    // A service of its own with a short answer timeout (1.5 s, where the app's is 20 s).
    const ssh = shortTimeoutService(app);
    try {
      // A mail server: it greets, answers ssh2's line as an unknown command, and waits for the next.
      await withServer(
        (socket) => {
          socket.write('220 mail.example.com ESMTP\r\n');
          socket.on('data', () => socket.write('500 5.5.2 Syntax error, command unrecognized\r\n'));
        },
        async (port) => {
          const connectionId = await connection({ name: 'smtp', port, authMethod: 'password', secrets: { password: 'x' } });
          const err = await failure(ssh.open({ connectionId, cols: 80, rows: 24 }, undefined, 'test'));
          expect(err.code).toBe('EIO');
          expect(err.message).toBe(`127.0.0.1:${port} answered, but not as an SSH server (smtp): it said "220 mail.example.com ESMTP". Is the port right?`);
        },
      );
    } finally {
      ssh.dispose();
    }
  });

  test('one that closes without a word says it closed before the SSH greeting', async () => {
    await withServer(
      (socket) => socket.end(),
      async (port) => {
        const err = await open(port);
        expect(err.code).toBe('EIO');
        expect(err.message).toBe(
          `127.0.0.1:${port} closed the connection before the SSH greeting (http): is an SSH server listening on that port, and does it take connections from here?`,
        );
      },
    );
  });
});

describe('an IPv6 host', () => {
  /**
   * The sshd listens on 127.0.0.1 only: a TCP relay listening on ::1 stands for a server there.
   * `dialled`: the address each connection reached it on.
   */
  async function sshdOnIpv6Loopback(): Promise<{ port: number; dialled: string[]; close: () => void }> {
    const dialled: string[] = [];
    const relay = createServer((socket) => {
      dialled.push(socket.localAddress ?? '');
      const sshdSide = connect(sshd.port, sshd.host);
      socket.pipe(sshdSide).pipe(socket);
      socket.on('error', () => sshdSide.destroy());
      sshdSide.on('error', () => socket.destroy());
    });
    await new Promise<void>((r) => relay.listen(0, '::1', r));
    return { port: (relay.address() as AddressInfo).port, dialled, close: () => relay.close() };
  }

  test('in brackets ([::1]) or bare (::1), it is dialled as the address, under one known host key', async () => {
    const relay = await sshdOnIpv6Loopback();
    const { port, dialled } = relay;
    try {
      const auth = { port, authMethod: 'password' as const, secrets: { password: sshd.users.password.password } };
      const bracketed = await connection({ ...auth, host: '[::1]' });
      // The key is judged for the address, as OpenSSH's known_hosts writes it ("[::1]:port").
      const unknown = await failure(client.call('ssh.open', { connectionId: bracketed }));
      expect(unknown.code).toBe('EHOSTKEY_UNKNOWN');
      expect(unknown.details).toMatchObject({ host: '::1', port, fingerprint: sshd.hostKeyFingerprint });
      // Beside its port the address is in brackets: "::1:2222" could be an address alone.
      expect(unknown.message).toContain(`The host key of [::1]:${port} (web01) is not known yet.`);
      await client.call('hostkeys.trust', { kind: 'ssh', host: '::1', port, keyType: sshd.hostKeyType, fingerprint: sshd.hostKeyFingerprint });
      expect(await whoami(bracketed)).toBe('wraith-pw');
      expect(await whoami(await connection({ ...auth, host: '::1' }))).toBe('wraith-pw');
      expect(dialled).toEqual(['::1', '::1', '::1']);
    } finally {
      relay.close();
    }
  });

  test('a key trusted for [::1] (hostkeys.trust given the brackets) is the key of ::1: stored once, bare; found by connections saved either way, forgotten either way', async () => {
    const relay = await sshdOnIpv6Loopback();
    const { port } = relay;
    try {
      const key = { kind: 'ssh' as const, port, keyType: sshd.hostKeyType, fingerprint: sshd.hostKeyFingerprint };
      expect(await client.call('hostkeys.trust', { ...key, host: '[::1]' })).toMatchObject({ host: '::1', port });
      const trusted = async () => (await client.call('hostkeys.list')).filter((e) => e.port === port).map((e) => e.host);
      expect(await trusted()).toEqual(['::1']);
      const auth = { port, authMethod: 'password' as const, secrets: { password: sshd.users.password.password } };
      expect(await whoami(await connection({ ...auth, host: '::1' }))).toBe('wraith-pw');
      expect(await whoami(await connection({ ...auth, host: '[::1]' }))).toBe('wraith-pw');
      // Trusted again, bare: still the one entry.
      await client.call('hostkeys.trust', { ...key, host: '::1' });
      expect(await trusted()).toEqual(['::1']);
      expect(await client.call('hostkeys.forget', { kind: 'ssh', host: '[::1]', port })).toEqual({ ok: true, forgotten: 1 });
      expect(await trusted()).toEqual([]);
    } finally {
      relay.close();
    }
  });

  test('a refusal names the address and port as [::1]:port, bare or bracketed as saved', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '::1', r));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((r) => closed.close(() => r()));
    for (const host of ['::1', '[::1]']) {
      const id = await connection({ host, port, authMethod: 'password', secrets: { password: 'x' } });
      const err = await failure(client.call('ssh.open', { connectionId: id }));
      expect(err.code).toBe('EIO');
      expect(err.message).toBe(`[::1]:${port} refused the connection (web01): no SSH server listens on that port.`);
    }
  });
});

describe('changed host key', () => {
  test('→ EHOSTKEY_CHANGED, refused, and sshd never saw a userauth request', async () => {
    const id = await connection({ authMethod: 'password', secrets: { password: sshd.users.password.password } });
    await trustHost();
    const oldFingerprint = sshd.hostKeyFingerprint;
    await sshd.restartWithNewHostKey();
    expect(sshd.hostKeyFingerprint).not.toBe(oldFingerprint);
    const logBefore = sshd.readLog().length;

    const err = await failure(client.call('ssh.open', { connectionId: id }));
    expect(err.code).toBe('EHOSTKEY_CHANGED');
    expect(err.message).toContain(`Host key for ${sshd.host}:${sshd.port} (web01) changed — possible man-in-the-middle; nothing was sent`);
    expect(err.details).toMatchObject({ fingerprint: sshd.hostKeyFingerprint, knownFingerprint: oldFingerprint, keyType: 'ssh-ed25519' });

    // sshd (LogLevel DEBUG1) logs every "userauth-request for user … method …" it receives, all of
    // them before the line that ends the connection: read once that line is there.
    const log = await logThroughConnectionEnd(sshd, logBefore);
    expect(log).toContain('Connection from 127.0.0.1'); // the attempt did reach the server…
    expect(log).not.toContain('userauth-request'); // …but no login (and no password) did
    expect(log).not.toMatch(/Accepted|Failed password/);

    // Forgetting the old key deliberately, then trusting the new one, works.
    await client.call('hostkeys.forget', { kind: 'ssh', host: sshd.host, port: sshd.port });
    await trustHost();
    expect(await whoami(id)).toBe('wraith-pw');
  });
});
