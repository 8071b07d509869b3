import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'ssh2';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test, vi } from 'vitest';
import type { ContractClient } from '../../src-main/common/client.js';
import type { EventPayload } from '../../src-main/common/contract/index.js';
import { App } from '../../src-main/node/app.js';
import { connectInProcess } from '../../src-main/node/in-process.js';
import { DEFAULT_FLOW } from '../../src-main/node/terminal/terminal-session.js';
import { type SshdHandle, startSshd, savePasswordConnection } from '../fixtures/sshd.js';
import { type SilentPort, silentPort, startResettingProxy } from '../fixtures/net.js';
import { until } from '../fixtures/poll.js';
import { failure } from '../fixtures/errors.js';
import { shortTimeoutService } from '../fixtures/ssh-service.js';

let sshd: SshdHandle;
let jump: SshdHandle;
let app: App;
let client: ContractClient;
let dataDir: string;
let connectionId: string;

beforeAll(async () => {
  [sshd, jump] = await Promise.all([startSshd(), startSshd()]);
  dataDir = mkdtempSync(join(tmpdir(), 'wraith-ssh-session-'));
  app = new App({ dataDir, host: 'in-process' });
  client = connectInProcess(app);
  client.subscribe(['']);
  connectionId = (await savePasswordConnection(client, sshd)).id;
});

afterAll(async () => {
  client?.close();
  await app?.dispose();
  await Promise.all([sshd?.stop(), jump?.stop()]);
  rmSync(dataDir, { recursive: true, force: true });
});

/** Reads the session's output as plain text until `pattern` shows up after `sinceSeq`. */
async function waitForOutput(sessionId: string, pattern: RegExp, sinceSeq = 0): Promise<{ text: string; nextSeq: number }> {
  let text = '';
  let seq = sinceSeq;
  return until(`output ${pattern}`, async () => {
    const r = await client.call('terminal.read', { sessionId, sinceSeq: seq, stripAnsi: true, maxBytes: 1024 * 1024 });
    text += r.text;
    seq = r.nextSeq;
    return pattern.test(text) ? { text, nextSeq: seq } : undefined;
  });
}

async function openShell(): Promise<string> {
  const { sessionId } = await client.call('ssh.open', { connectionId, cols: 100, rows: 30 });
  await waitForOutput(sessionId, /\$ $/);
  return sessionId;
}

describe('shell I/O', () => {
  test('echo hello comes back; terminal.data seqs are contiguous; sinceSeq reads only what is new', async () => {
    const data: EventPayload<'terminal.data'>[] = [];
    const off = client.on('terminal.data', (d) => data.push(d));
    const sessionId = await openShell();
    const info = (await client.call('sessions.list')).find((s) => s.id === sessionId);
    expect(info).toMatchObject({ kind: 'ssh', title: 'web01', connectionId, state: 'open' });

    const before = await client.call('terminal.read', { sessionId, maxBytes: 1 });
    await client.call('terminal.write', { sessionId, data: 'echo hello-$((6*7))\n' });
    const { text } = await waitForOutput(sessionId, /hello-42\n/, before.nextSeq);
    expect(text).toContain('echo hello-$((6*7))');
    expect(text).not.toContain('Last login'); // only what came after sinceSeq

    // Bytes as Uint8Array, never strings; each event starts where the last one ended.
    const mine = data.filter((d) => d.sessionId === sessionId);
    expect(mine.length).toBeGreaterThan(0);
    let expected = 0;
    for (const d of mine) {
      expect(d.data).toBeInstanceOf(Uint8Array);
      expect(d.seq).toBe(expected);
      expected += d.data.length;
    }
    off();

    // terminal.resize reaches the remote pty.
    await client.call('terminal.resize', { sessionId, cols: 132, rows: 43 });
    const mark = (await client.call('terminal.read', { sessionId, maxBytes: 1 })).nextSeq;
    await client.call('terminal.write', { sessionId, data: new TextEncoder().encode('stty size\n') });
    await waitForOutput(sessionId, /^43 132$/m, mark);

    await client.call('sessions.close', { sessionId });
    expect((await client.call('sessions.list')).some((s) => s.id === sessionId)).toBe(false);
    expect((await failure(client.call('terminal.read', { sessionId }))).code).toBe('ENOTFOUND');
  });

  test('terminal.cwd: found over exec without OSC 7, from OSC 7 when the shell reports it', async () => {
    const sessionId = await openShell();
    let mark = (await client.call('terminal.read', { sessionId, maxBytes: 1 })).nextSeq;
    await client.call('terminal.write', { sessionId, data: 'cd /usr/share && echo moved-$((1+1))\n' });
    await waitForOutput(sessionId, /moved-2\n/, mark);
    expect(await client.call('terminal.cwd', { sessionId })).toEqual({ cwd: '/usr/share', source: 'exec' });
    // Asked again, the shell found the first time is looked at first: it must follow the shell.
    mark = (await client.call('terminal.read', { sessionId, maxBytes: 1 })).nextSeq;
    await client.call('terminal.write', { sessionId, data: 'cd /etc && (sleep 30 &) && echo moved-$((2+1))\n' });
    await waitForOutput(sessionId, /moved-3\n/, mark);
    expect(await client.call('terminal.cwd', { sessionId })).toEqual({ cwd: '/etc', source: 'exec' });
    // A folder whose name holds a line end (the probe prints the path after the PID).
    const odd = `/tmp/wraith-cwd-${process.pid}\nsecond line`;
    mark = (await client.call('terminal.read', { sessionId, maxBytes: 1 })).nextSeq;
    await client.call('terminal.write', { sessionId, data: `d=$(printf '${odd.replace('\n', '\\n')}'); mkdir -p "$d" && cd "$d" && echo moved-$((2+5))\n` });
    await waitForOutput(sessionId, /moved-7\n/, mark);
    expect(await client.call('terminal.cwd', { sessionId })).toEqual({ cwd: odd, source: 'exec' });
    await client.call('terminal.write', { sessionId, data: 'cd / && rmdir "$d"\n' });
    // After a reconnect the shell is a new process with a new PID.
    const exits: EventPayload<'terminal.exit'>[] = [];
    const off = client.on('terminal.exit', (e) => exits.push(e));
    await client.call('terminal.write', { sessionId, data: 'exit\n' });
    await until('terminal.exit', () => exits.find((e) => e.sessionId === sessionId));
    off();
    mark = (await client.call('terminal.read', { sessionId, maxBytes: 1 })).nextSeq;
    await client.call('ssh.reconnect', { sessionId });
    await waitForOutput(sessionId, /\$ $/, mark);
    await client.call('terminal.write', { sessionId, data: 'cd /usr/lib && echo moved-$((3+1))\n' });
    await waitForOutput(sessionId, /moved-4\n/, mark);
    expect(await client.call('terminal.cwd', { sessionId })).toEqual({ cwd: '/usr/lib', source: 'exec' });

    mark = (await client.call('terminal.read', { sessionId, maxBytes: 1 })).nextSeq;
    await client.call('terminal.write', {
      sessionId,
      data: `PROMPT_COMMAND='printf "\\033]7;file://%s%s\\033\\\\" "$HOSTNAME" "$PWD"'; cd /var && echo osc-$((2+2))\n`,
    });
    await waitForOutput(sessionId, /osc-4\n/, mark);
    await until('OSC 7', async () => (await client.call('terminal.cwd', { sessionId })).source === 'osc7');
    expect(await client.call('terminal.cwd', { sessionId })).toEqual({ cwd: '/var', source: 'osc7' });
    await client.call('sessions.close', { sessionId });
  });
});

describe('ssh.exec', () => {
  let sessionId: string;
  beforeAll(async () => {
    ({ sessionId } = await client.call('ssh.open', { connectionId }));
  });
  afterAll(async () => {
    await client.call('sessions.close', { sessionId });
  });

  test('rc, stdout and stderr apart, duration', async () => {
    const r = await client.call('ssh.exec', { sessionId, command: 'echo out; echo err >&2; exit 3' });
    expect(r).toMatchObject({ rc: 3, signal: null, stdout: 'out\n', stderr: 'err\n', truncated: false, timedOut: false });
    expect(r.durationMs).toBeGreaterThan(0);
  });

  test('timeout kills the command', async () => {
    const r = await client.call('ssh.exec', { sessionId, command: 'exec sleep 777', timeoutMs: 300 });
    expect(r.timedOut).toBe(true);
    expect(r.rc).toBeNull();
    // The KILL signal reached it: no sleep 777 left on the server.
    await until('sleep killed', async () => {
      const ps = await client.call('ssh.exec', { sessionId, command: 'pgrep -u "$(id -u)" -fx "sleep 777" || true' });
      return ps.stdout.trim() === '';
    });
  });

  test('timeout kills the whole command, not just its shell', async () => {
    const running = client.call('ssh.exec', { sessionId, command: 'sleep 888; echo never', timeoutMs: 2000 });
    const pgrep = async () => (await client.call('ssh.exec', { sessionId, command: 'pgrep -u "$(id -u)" -fx "sleep 888" || true' })).stdout.trim();
    await until('sleep running', async () => (await pgrep()) !== '');
    const r = await running;
    expect(r.timedOut).toBe(true);
    expect(r.stdout).toBe('');
    await until('compound command killed', async () => (await pgrep()) === '');
  });

  test('output caps: truncated at maxBytes, an endless command is stopped by its timeout', async () => {
    const r = await client.call('ssh.exec', { sessionId, command: 'head -c 100000 /dev/zero | tr "\\0" x', maxBytes: 1000 });
    expect(r.stdout).toBe('x'.repeat(1000));
    expect(r.truncated).toBe(true);

    const endless = await client.call('ssh.exec', { sessionId, command: 'yes', maxBytes: 5000, timeoutMs: 1000 });
    expect(endless.truncated).toBe(true);
    expect(endless.timedOut).toBe(true);
    expect(endless.stdout.length).toBe(5000);

    // A multi-byte character cut by the cap is dropped, not mangled.
    const utf = await client.call('ssh.exec', { sessionId, command: 'printf "aé"', maxBytes: 2 });
    expect(utf.stdout).toBe('a');
  });

  test('encoding base64 gives binary output byte for byte, capped in bytes; utf8 text stays the default', async () => {
    // Bytes that are not UTF-8 (0xff, 0x80) and a NUL, on both streams.
    const command = String.raw`printf '\377\000\200ok'; printf '\376' >&2`;
    const text = await client.call('ssh.exec', { sessionId, command });
    expect(text.stdout).toBe('\uFFFD\0\uFFFDok');
    const raw = await client.call('ssh.exec', { sessionId, command, encoding: 'base64' });
    expect(Buffer.from(raw.stdout, 'base64')).toEqual(Buffer.from([0xff, 0x00, 0x80, 0x6f, 0x6b]));
    expect(Buffer.from(raw.stderr, 'base64')).toEqual(Buffer.from([0xfe]));
    const capped = await client.call('ssh.exec', { sessionId, command, encoding: 'base64', maxBytes: 2 });
    expect(Buffer.from(capped.stdout, 'base64')).toEqual(Buffer.from([0xff, 0x00]));
    expect(capped.truncated).toBe(true);
    const bad = await failure(client.call('ssh.exec', { sessionId, command: 'true', encoding: 'latin1' as 'utf8' }));
    expect(bad.code).toBe('EBADARGS');
  });

  test('output past maxBytes is dropped, the command runs to its end and its exit code is reported', async () => {
    const marker = `/tmp/wraith-exec-finished-${process.pid}-${Date.now()}`;
    // Still writing (to both streams) well after the cap is reached: stopping it would lose the marker.
    const command = `for i in $(seq 1 400); do echo line $i; echo err $i >&2; sleep 0.001; done; echo finished > ${marker}; exit 7`;
    const r = await client.call('ssh.exec', { sessionId, command, maxBytes: 1000, timeoutMs: 120_000 });
    expect(r).toMatchObject({ rc: 7, signal: null, truncated: true, timedOut: false });
    expect(r.stdout).toMatch(/^line 1\nline 2\n/);
    expect(r.stdout.length).toBe(1000);
    expect(r.stderr).toMatch(/^err 1\nerr 2\n/);
    expect(r.stderr.length).toBe(1000);
    expect((await client.call('ssh.exec', { sessionId, command: `cat ${marker}; rm -f ${marker}` })).stdout).toBe('finished\n');
  });

  test('a command with a NUL is refused (EBADARGS), and the session is untouched', async () => {
    const refused = await failure(client.call('ssh.exec', { sessionId, command: 'echo a\0b' }));
    expect(refused.code).toBe('EBADARGS');
    expect(refused.message).toMatch(/command contains a NUL character/);
    expect((await client.call('sessions.list')).find((s) => s.id === sessionId)?.state).toBe('open');
    expect((await client.call('ssh.exec', { sessionId, command: 'echo still-here' })).stdout).toBe('still-here\n');
  });

  test('stdin is closed: commands that read it see end of input instead of waiting out the timeout', async () => {
    const r = await client.call('ssh.exec', { sessionId, command: 'cat; echo after-cat', timeoutMs: 20_000 });
    expect(r).toMatchObject({ rc: 0, stdout: 'after-cat\n', timedOut: false });
    const read = await client.call('ssh.exec', { sessionId, command: 'read x; echo "read: $?"', timeoutMs: 20_000 });
    expect(read).toMatchObject({ stdout: 'read: 1\n', timedOut: false });
  });

  test('a cancelled call stops the command (ECANCELLED) instead of leaving it to its timeout', async () => {
    const cancel = new AbortController();
    const running = failure(
      app.router.call('ssh.exec', { sessionId, command: 'sleep 747; echo never', timeoutMs: 60_000 }, { clientId: 'test', origin: 'test', signal: cancel.signal }),
    );
    const pgrep = async () => (await client.call('ssh.exec', { sessionId, command: 'pgrep -u "$(id -u)" -fx "sleep 747" || true' })).stdout.trim();
    await until('sleep running', async () => (await pgrep()) !== '');
    cancel.abort();
    const err = await running;
    expect(err.code).toBe('ECANCELLED');
    expect(err.message).toMatch(/cancelled/);
    await until('cancelled command killed', async () => (await pgrep()) === '');
  });

  test('exec on an unknown session → ENOTFOUND', async () => {
    expect((await failure(client.call('ssh.exec', { sessionId: 'nope', command: 'true' }))).code).toBe('ENOTFOUND');
  });

  test("an SSH session is no local shell: pty.panel refuses it (EBADARGS), and it stays nobody's panel shell", async () => {
    const refused = await failure(client.call('pty.panel', { sessionId }));
    expect(refused.code).toBe('EBADARGS');
    expect(refused.message).toBe(`Session ${sessionId} is not a local shell.`);
    expect((await client.call('sessions.list')).find((s) => s.id === sessionId)?.panel).toBeUndefined();
  });

  test('a server that allows one session per connection: the shell works, and exec and SFTP say why they are refused', async () => {
    const strict = await startSshd({ maxSessions: 1 });
    try {
      const conn = await savePasswordConnection(client, strict, 'one-session');
      const { sessionId: sid } = await client.call('ssh.open', { connectionId: conn.id });
      await client.call('terminal.write', { sessionId: sid, data: 'echo shell-$((6*7))\n' });
      await waitForOutput(sid, /shell-42\n/);
      for (const refused of [
        await failure(client.call('ssh.exec', { sessionId: sid, command: 'true' })),
        await failure(client.call('sftp.realpath', { sessionId: sid })),
      ]) {
        expect(refused.code).toBe('EIO');
        expect(refused.message).toMatch(/^one-session refused (to run the command|an SFTP channel): /);
        expect(refused.message).toContain('MaxSessions in sshd_config');
      }
      expect(strict.readLog()).toContain('no more sessions');
      await client.call('sessions.close', { sessionId: sid });
    } finally {
      await strict.stop();
    }
  });
});

describe('dropped connection and reconnect', () => {
  test('exec when the connection drops mid-command: ESESSIONCLOSED, the outcome unknown, not a result; what it printed is in the details, capped', async () => {
    const lossy = await startSshd();
    try {
      const conn = await savePasswordConnection(client, lossy, 'lossy');
      const { sessionId } = await client.call('ssh.open', { connectionId: conn.id });
      const running = failure(client.call('ssh.exec', { sessionId, command: 'echo started; echo warned >&2; sleep 737', timeoutMs: 120_000, maxBytes: 5 }));
      await until('sleep running', async () => {
        const ps = await client.call('ssh.exec', { sessionId, command: 'pgrep -u "$(id -u)" -fx "sleep 737" || true' });
        return ps.stdout.trim() !== '';
      });
      lossy.dropConnections();
      const err = await running;
      expect(err.code).toBe('ESESSIONCLOSED');
      expect(err.message).toMatch(/^The connection to lossy was lost while the command ran; its outcome is unknown\./);
      // How far it got: its output until the drop, under the same cap as a result's.
      expect(err.details).toMatchObject({ stdout: 'start', stderr: 'warne', truncated: true });
      expect(err.details?.durationMs).toBeGreaterThan(0);
      await client.call('sessions.close', { sessionId });
    } finally {
      await lossy.stop();
    }
  });

  test('the session turns disconnected with a reason, keeps its scrollback, and reconnects under the same id', async () => {
    const sessionId = await openShell();
    const exits: EventPayload<'terminal.exit'>[] = [];
    const changes: EventPayload<'session.changed'>[] = [];
    const offs = [client.on('terminal.exit', (e) => exits.push(e)), client.on('session.changed', (s) => changes.push(s))];
    await client.call('terminal.write', { sessionId, data: 'echo before-$((10+1))\n' });
    await waitForOutput(sessionId, /before-11\n/);

    sshd.dropConnections();
    await until('disconnected', () => changes.find((c) => c.id === sessionId && c.state === 'disconnected'));
    const exit = await until('terminal.exit', () => exits.find((e) => e.sessionId === sessionId));
    expect(exit.reason).toMatch(/Connection to web01 lost/);
    const [info] = (await client.call('sessions.list')).filter((s) => s.id === sessionId);
    expect(info?.state).toBe('disconnected');
    expect(info?.reason).toMatch(/lost/);

    const kept = await client.call('terminal.read', { sessionId, sinceSeq: 0, stripAnsi: true });
    expect(kept.text).toContain('before-11');
    expect(kept.closed).toBe(true);
    expect((await failure(client.call('terminal.write', { sessionId, data: 'x' }))).code).toBe('ESESSIONCLOSED');
    expect((await failure(client.call('ssh.exec', { sessionId, command: 'true' }))).code).toBe('ESESSIONCLOSED');

    await client.call('ssh.reconnect', { sessionId });
    expect((await client.call('sessions.list')).find((s) => s.id === sessionId)?.state).toBe('open');
    const mark = kept.nextSeq;
    await client.call('terminal.write', { sessionId, data: 'echo after-$((20+2))\n' });
    await waitForOutput(sessionId, /after-22\n/, mark);
    const all = await client.call('terminal.read', { sessionId, sinceSeq: 0, stripAnsi: true });
    expect(all.text.indexOf('before-11')).toBeLessThan(all.text.indexOf('after-22'));
    expect((await client.call('ssh.exec', { sessionId, command: 'echo ok' })).stdout).toBe('ok\n');
    for (const off of offs) off();
    await client.call('sessions.close', { sessionId });
  });

  test('a reset that arrives with output still unread is said to be a reset; a server that closes the connection is not', async () => {
    const proxy = await startResettingProxy(sshd.port);
    try {
      const conn = await savePasswordConnection(client, { ...sshd, port: proxy.port }, 'alpha');
      const { sessionId } = await client.call('ssh.open', { connectionId: conn.id });
      const disconnected = () => until('disconnected', async () => (await client.call('sessions.list')).find((s) => s.id === sessionId && s.state === 'disconnected'));
      await waitForOutput(sessionId, /\$ $/);
      // The server's answer to a command and the reset reach us together: the answer unread.
      proxy.hold();
      await client.call('terminal.write', { sessionId, data: 'echo unread\n' });
      await until("the server's answer held back", () => proxy.heldBytes() > 0);
      proxy.resetWithHeld();
      expect((await disconnected()).reason).toBe('Connection to alpha lost: the connection was reset (the server, or a firewall or NAT on the way, ended it abruptly).');

      // The server's processes killed: it closes the connection, which is no reset.
      const mark = (await client.call('terminal.read', { sessionId, maxBytes: 1 })).nextSeq;
      await client.call('ssh.reconnect', { sessionId });
      await waitForOutput(sessionId, /\$ $/, mark);
      sshd.dropConnections();
      expect((await disconnected()).reason).toBe('Connection to alpha lost.');
      await client.call('sessions.close', { sessionId });
    } finally {
      await proxy.close();
    }
  });

  test('the shell exiting ends the session with its code', async () => {
    const sessionId = await openShell();
    const exits: EventPayload<'terminal.exit'>[] = [];
    const off = client.on('terminal.exit', (e) => exits.push(e));
    await client.call('terminal.write', { sessionId, data: 'exit 7\n' });
    const exit = await until('terminal.exit', () => exits.find((e) => e.sessionId === sessionId));
    expect(exit).toMatchObject({ code: 7, reason: 'The shell exited with code 7.' });
    off();
    await client.call('sessions.close', { sessionId });
  });

  test('the shell killed by a signal ends the session naming the signal once', async () => {
    const sessionId = await openShell();
    const exits: EventPayload<'terminal.exit'>[] = [];
    const off = client.on('terminal.exit', (e) => exits.push(e));
    await client.call('terminal.write', { sessionId, data: 'kill -9 $$\n' });
    const exit = await until('terminal.exit', () => exits.find((e) => e.sessionId === sessionId));
    off();
    expect(exit).toMatchObject({ code: null, signal: 'SIGKILL', reason: 'The shell was ended by SIGKILL.' });
    expect((await client.call('sessions.list')).find((s) => s.id === sessionId)?.reason).toBe('The shell was ended by SIGKILL.');
    await client.call('sessions.close', { sessionId });
  });
});

describe('ssh.exec on a server that stopped answering', () => {
  let still: SshdHandle;
  let sessionId: string;

  beforeAll(async () => {
    still = await startSshd();
  });
  afterAll(async () => {
    await still?.stop();
  });
  beforeEach(async () => {
    const conn = await savePasswordConnection(client, still, 'alpha');
    // No keepalives: the connection stays up however long the server is silent, as it does for
    // the first minute with them.
    await client.call('connections.update', { id: conn.id, patch: { sshOptions: { keepaliveIntervalMs: 0 } } });
    ({ sessionId } = await client.call('ssh.open', { connectionId: conn.id }));
  });
  afterEach(async () => {
    still.dropConnections();
    await client.call('sessions.close', { sessionId });
  });

  /**
   * Once the server runs again, it opens the channel and starts the command it was asked for
   * while silent, and is told at once to kill it: nobody waits for it any more. (The kill comes
   * before the command can do anything, so the server's log is what shows it.)
   */
  async function startedLateAndKilled(logFrom: number): Promise<void> {
    await until('the command started late to be killed', () => /req exec\r?\n[\s\S]*session_signal_req: signal KILL/.test(still.readLog().slice(logFrom)));
  }

  test('the timeout counts from the call: the channel that never opened gives a timed-out result, and a command started after that is stopped', async () => {
    const logFrom = still.readLog().length;
    const thaw = still.freezeConnections();
    const r = await client.call('ssh.exec', { sessionId, command: 'sleep 606', timeoutMs: 500 });
    expect(r).toMatchObject({ rc: null, signal: null, stdout: '', stderr: '', truncated: false, timedOut: true });
    thaw();
    await startedLateAndKilled(logFrom);
    expect((await client.call('ssh.exec', { sessionId, command: 'echo still-here' })).stdout).toBe('still-here\n');
  });

  test('a call cancelled while its channel opens fails ECANCELLED at once, and a command started after that is stopped', async () => {
    const logFrom = still.readLog().length;
    const thaw = still.freezeConnections();
    const cancel = new AbortController();
    const call = failure(app.router.call('ssh.exec', { sessionId, command: 'sleep 607', timeoutMs: 600_000 }, { clientId: 'test', origin: 'test', signal: cancel.signal }));
    cancel.abort();
    const err = await call;
    expect(err.code).toBe('ECANCELLED');
    thaw();
    await startedLateAndKilled(logFrom);
  });

  test('a connection lost while the channel opens is a lost connection (ESESSIONCLOSED), not a refusal; the session says why in words', async () => {
    // The shell's prompt is the last the server sends: read, it leaves nothing unread here, so
    // the reset below is heard as a reset rather than after that data as an end.
    await waitForOutput(sessionId, /\$ $/);
    still.freezeConnections();
    // Through the router, not the in-process client, so the request is on the wire when the call
    // returns: the server's processes then end with it unread, and their kernel resets the connection.
    const call = failure(app.router.call('ssh.exec', { sessionId, command: 'echo never', timeoutMs: 600_000 }, { clientId: 'test', origin: 'test' }));
    still.dropConnections();
    const err = await call;
    expect(err.code).toBe('ESESSIONCLOSED');
    expect(err.message).toBe(
      'The connection to alpha was lost while the command was starting; whether it ran is unknown. Reconnect and check before running it again.',
    );
    const info = (await client.call('sessions.list')).find((s) => s.id === sessionId);
    expect(info).toMatchObject({
      state: 'disconnected',
      reason: 'Connection to alpha lost: the connection was reset (the server, or a firewall or NAT on the way, ended it abruptly).',
    });
  });
});

describe('locale', () => {
  /** Runs `run` with only `vars` as this host's LANG and LC_* (a session takes them when it opens). */
  async function withLocale<T>(vars: Record<string, string>, run: () => Promise<T>): Promise<T> {
    const saved = Object.entries(process.env).filter(([name]) => name === 'LANG' || name.startsWith('LC_'));
    for (const [name] of saved) delete process.env[name];
    Object.assign(process.env, vars);
    try {
      return await run();
    } finally {
      for (const name of Object.keys(vars)) delete process.env[name];
      for (const [name, value] of saved) process.env[name] = value;
    }
  }

  test('with no locale here the shell gets LANG=C.UTF-8 (the terminal is UTF-8), and a typed é reaches it whole', async () => {
    await withLocale({}, async () => {
      const sessionId = await openShell();
      const mark = (await client.call('terminal.read', { sessionId, maxBytes: 1 })).nextSeq;
      // wc -m counts characters in a UTF-8 locale: 4 for "café" (5 bytes).
      await client.call('terminal.write', { sessionId, data: `echo "[$LANG] [$LC_ALL] $(printf '%s' 'café' | wc -m)"\n` });
      await waitForOutput(sessionId, /^\[C\.UTF-8\] \[\] 4$/m, mark);
      await client.call('sessions.close', { sessionId });
    });
  });

  test("this host's LANG and LC_* go to the shell and to commands as they are", async () => {
    await withLocale({ LANG: 'C.utf8', LC_PAPER: 'C.utf8' }, async () => {
      const sessionId = await openShell();
      const mark = (await client.call('terminal.read', { sessionId, maxBytes: 1 })).nextSeq;
      await client.call('terminal.write', { sessionId, data: 'echo "[$LANG] [$LC_PAPER] [${LC_WRAITH_SESSION:+marked}]"\n' });
      await waitForOutput(sessionId, /^\[C\.utf8\] \[C\.utf8\] \[marked\]$/m, mark);
      const r = await client.call('ssh.exec', { sessionId, command: 'echo "[$LANG] [$LC_PAPER]"' });
      expect(r.stdout).toBe('[C.utf8] [C.utf8]\n');
      await client.call('sessions.close', { sessionId });
    });
  });
});

describe('keepalive', () => {
  test('a server that stops answering is detected and the session turns disconnected', async () => {
    const conn = await client.call('connections.create', {
      name: 'frozen',
      kind: 'ssh',
      host: sshd.host,
      port: sshd.port,
      username: sshd.users.password.username,
      authMethod: 'password',
      sshOptions: { keepaliveIntervalMs: 200 },
      secrets: { password: sshd.users.password.password },
    });
    const { sessionId } = await client.call('ssh.open', { connectionId: conn.id });
    // Freeze (SIGSTOP) every per-connection sshd process: TCP stays up, nothing answers.
    sshd.freezeConnections();
    try {
      const info = await until('disconnected', async () =>
        (await client.call('sessions.list')).find((s) => s.id === sessionId && s.state === 'disconnected'),
      );
      expect(info.reason).toBe('Connection to frozen lost: the server stopped answering keepalives.');
    } finally {
      sshd.dropConnections();
    }
    await client.call('sessions.close', { sessionId });
  });
});

describe('flow control under `yes`', () => {
  test('without a view memory stays bounded; a view that stops acking pauses the channel; acks resume it; Ctrl+C stops it', async () => {
    const sessionId = await openShell();
    const session = app.terminals.get(sessionId);
    const mb = (n: number) => n * 1024 * 1024;
    const rss = () => process.memoryUsage().rss;

    // 1. No view (CLI / XO readers only): full speed, the ring buffer bounds what is kept.
    await client.call('terminal.write', { sessionId, data: 'yes\n' });
    await until('8 MiB of output', () => session.ring.endSeq > mb(8), 60_000);
    const rssStart = rss();
    let rssMax = rssStart;
    await until(
      '40 MiB of output',
      () => {
        rssMax = Math.max(rssMax, rss());
        return session.ring.endSeq > mb(40);
      },
      120_000,
    );
    expect(session.flow.armed).toBe(false);
    const r = await client.call('terminal.read', { sessionId, sinceSeq: 0, maxBytes: 16 });
    expect(r.dropped).toBeGreaterThan(mb(38)); // only the last 1 MiB is kept
    // 32+ MiB went through; the host grew by far less (buffers are recycled, nothing accumulates).
    expect(rssMax - rssStart).toBeLessThan(mb(96));

    // 2. A view attaches (ack 0) and then never acks: past the high watermark the channel pauses
    // and the stream stops (ssh2 stops widening the window, the server blocks on it).
    await client.call('terminal.ack', { sessionId, bytes: 0 });
    await until('paused', () => session.flow.paused);
    expect(session.flow.unacked).toBeGreaterThan(DEFAULT_FLOW.highWatermark);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const stalledAt = session.ring.endSeq;
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(session.ring.endSeq).toBe(stalledAt);
    expect(session.flow.paused).toBe(true);

    // 3. The view catches up: below the low watermark it resumes — and, acking nothing more,
    // pauses again one high watermark later.
    await client.call('terminal.ack', { sessionId, bytes: session.flow.unacked });
    await until('output flows again', () => session.ring.endSeq > stalledAt + 256 * 1024);
    await until('paused again', () => session.flow.paused);

    // 4. Ctrl+C stops it, promptly, with the view acking what it receives.
    const off = client.on('terminal.data', (d) => {
      if (d.sessionId === sessionId) void client.call('terminal.ack', { sessionId, bytes: d.data.length });
    });
    await client.call('terminal.write', { sessionId, data: '\x03' });
    // The view works through its backlog (what it was sent before it caught up).
    await client.call('terminal.ack', { sessionId, bytes: session.flow.unacked });
    await until('prompt after ^C', async () => {
      const tail = await client.call('terminal.read', { sessionId, maxBytes: 256, stripAnsi: true });
      return /\^C\n?.*\$ $/.test(tail.text);
    });
    off();
    const stoppedAt = session.ring.endSeq;
    await client.call('terminal.write', { sessionId, data: 'echo still-$((3*3))\n' });
    const after = await waitForOutput(sessionId, /still-9\n/, stoppedAt);
    expect(after.text).not.toMatch(/^y$/m);
    await client.call('sessions.close', { sessionId });
  }, 240_000);
});

describe('jump host', () => {
  /** `targetName` on the test sshd (password), reached through `jumpName` on the jump sshd (key). */
  async function saveJumpChain(jumpName: string, targetName: string) {
    const jumpConn = await client.call('connections.create', {
      name: jumpName,
      kind: 'ssh',
      host: jump.host,
      port: jump.port,
      username: jump.users.key.username,
      authMethod: 'key',
      secrets: { privateKey: jump.users.key.privateKey },
    });
    const target = await client.call('connections.create', {
      name: targetName,
      kind: 'ssh',
      host: sshd.host,
      port: sshd.port,
      username: sshd.users.password.username,
      authMethod: 'password',
      jumpHostId: jumpConn.id,
      secrets: { password: sshd.users.password.password },
    });
    return { jumpConn, target };
  }
  const trustBothHops = async () => {
    for (const h of [jump, sshd]) await client.call('hostkeys.trust', { kind: 'ssh', host: h.host, port: h.port, keyType: h.hostKeyType, fingerprint: h.hostKeyFingerprint });
  };

  test('the target is reached through a jump sshd; each hop has its own host-key check and credentials', async () => {
    const { target } = await saveJumpChain('bastion', 'db01');

    // The jump host's key is unknown: refused at the first hop, which the question names: the
    // person opened db01, and is asked about some other host:port first.
    const e1 = await failure(client.call('ssh.open', { connectionId: target.id }));
    expect(e1.code).toBe('EHOSTKEY_UNKNOWN');
    expect(e1.details).toMatchObject({ port: jump.port, fingerprint: jump.hostKeyFingerprint, connectionName: 'bastion', jumpHostFor: 'db01' });
    expect(e1.message).toContain(`The host key of ${jump.host}:${jump.port} (jump host bastion, on the way to db01) is not known yet.`);
    // A key trusted for the jump host that it does not offer: the warning names the hop too.
    await client.call('hostkeys.trust', { kind: 'ssh', host: jump.host, port: jump.port, keyType: jump.hostKeyType, fingerprint: `SHA256:${'A'.repeat(43)}` });
    const changed = await failure(client.call('ssh.open', { connectionId: target.id }));
    expect(changed.code).toBe('EHOSTKEY_CHANGED');
    expect(changed.details).toMatchObject({ port: jump.port, connectionName: 'bastion', jumpHostFor: 'db01' });
    expect(changed.message).toContain(`Host key for ${jump.host}:${jump.port} (jump host bastion, on the way to db01) changed`);
    await client.call('hostkeys.trust', { kind: 'ssh', host: jump.host, port: jump.port, keyType: jump.hostKeyType, fingerprint: jump.hostKeyFingerprint });

    // The target's key is checked too, through the tunnel.
    await client.call('hostkeys.forget', { kind: 'ssh', host: sshd.host, port: sshd.port });
    const e2 = await failure(client.call('ssh.open', { connectionId: target.id }));
    expect(e2.code).toBe('EHOSTKEY_UNKNOWN');
    expect(e2.details).toMatchObject({ port: sshd.port, fingerprint: sshd.hostKeyFingerprint, connectionName: 'db01' });
    // The target is the connection opened: no hop to name.
    expect(e2.details).not.toHaveProperty('jumpHostFor');
    expect(e2.message).toContain(`The host key of ${sshd.host}:${sshd.port} (db01) is not known yet.`);
    await client.call('hostkeys.trust', { kind: 'ssh', host: sshd.host, port: sshd.port, keyType: sshd.hostKeyType, fingerprint: sshd.hostKeyFingerprint });

    const { sessionId } = await client.call('ssh.open', { connectionId: target.id });
    const r = await client.call('ssh.exec', { sessionId, command: 'whoami' });
    expect(r.stdout).toBe('wraith-pw\n');
    // The jump sshd forwarded it: it logged the direct-tcpip request to the target's port.
    expect(jump.readLog()).toMatch(new RegExp(`direct-tcpip.*\\n?.*port ${sshd.port}|target 127\\.0\\.0\\.1 port ${sshd.port}`));
    expect(jump.readLog()).toContain('Accepted publickey for wraith-key');
    await client.call('sessions.close', { sessionId });
  });

  test('a dropped jump host is named as the hop that went, not blamed on the target; the target dropping speaks for itself', async () => {
    const { target } = await saveJumpChain('bastion-3', 'db03');
    await trustBothHops();
    const exits: EventPayload<'terminal.exit'>[] = [];
    const off = client.on('terminal.exit', (e) => exits.push(e));
    const { sessionId } = await client.call('ssh.open', { connectionId: target.id });
    const disconnected = () => until('disconnected', async () => (await client.call('sessions.list')).find((s) => s.id === sessionId && s.state === 'disconnected'));
    try {
      await waitForOutput(sessionId, /\$ $/);
      // The bastion goes away (its sshd's connections killed); the target's sshd never stopped.
      jump.dropConnections();
      const viaJump = await disconnected();
      expect(viaJump.reason).toMatch(/^Connection to db03 lost: the jump host bastion-3 \(on the way to db03\) (closed the connection|failed: .+)\.$/);
      expect((await until('terminal.exit', () => exits.find((e) => e.sessionId === sessionId))).reason).toBe(viaJump.reason);

      // Back through the bastion; now the target itself goes: its own words, no jump host in them.
      await client.call('ssh.reconnect', { sessionId });
      await waitForOutput(sessionId, /\$ $/);
      sshd.dropConnections();
      const own = await disconnected();
      expect(own.reason).toMatch(/^Connection to db03 lost(: .+)?\.$/);
      expect(own.reason).not.toContain('jump host');
    } finally {
      off();
      await client.call('sessions.close', { sessionId });
    }
  });

  describe('a target the jump host cannot reach (its packets dropped)', () => {
    let silent: SilentPort;
    beforeAll(async () => {
      silent = await silentPort();
    });
    afterAll(async () => {
      await silent?.close();
    });
    /** The chain with its target moved to the silent port: the jump host dials it and hears nothing. */
    async function saveUnreachableChain(jumpName: string, targetName: string) {
      const { target } = await saveJumpChain(jumpName, targetName);
      await client.call('connections.update', { id: target.id, patch: { port: silent.port } });
      await trustBothHops();
      return target;
    }
    /** The jump sshd was asked (since its log had `logFrom` characters) to forward to the silent port: the forward is under way. */
    const forwardAsked = (logFrom: number) =>
      until('the jump host to dial the target', () => jump.readLog().slice(logFrom).includes(`target 127.0.0.1 port ${silent.port}`));

    test('times out as a direct connect does, naming the jump host, and ends the jump connection', async () => {
      const target = await saveUnreachableChain('bastion-4', 'db04');
      const before = jump.heldConnections();
      const ssh = shortTimeoutService(app);
      try {
        const err = await failure(ssh.open({ connectionId: target.id, cols: 80, rows: 24 }, undefined, 'test'));
        expect(err.code).toBe('ETIMEOUT');
        expect(err.message).toBe(`Jump host bastion-4 could not reach 127.0.0.1:${silent.port} (db04): it did not answer in time. Is the host up and the port right?`);
        expect(err.details).toMatchObject({ host: '127.0.0.1', port: silent.port });
        await until('the jump connection closed on the jump host', () => jump.heldConnections() === before);
      } finally {
        ssh.dispose();
      }
    });

    test('cancelling the open while the jump host dials gives it up at once and closes the jump connection', async () => {
      const target = await saveUnreachableChain('bastion-5', 'db05');
      const before = jump.heldConnections();
      const logFrom = jump.readLog().length;
      const cancel = new AbortController();
      const opening = failure(app.ssh.open({ connectionId: target.id, cols: 80, rows: 24 }, cancel.signal, 'test'));
      await forwardAsked(logFrom);
      cancel.abort();
      const err = await opening;
      expect(err.code).toBe('ECANCELLED');
      expect(err.message).toBe('Connecting to db05 was cancelled.');
      await until('the jump connection closed on the jump host', () => jump.heldConnections() === before);
    });
  });

  test('an open given up after the chain connected, while the shell opens, ends both connections and registers nothing', async () => {
    const { target } = await saveJumpChain('bastion-2', 'db02');
    await trustBothHops();
    const held = (h: SshdHandle) => h.heldConnections();
    const before = { jump: held(jump), target: held(sshd) };
    const sessionsBefore = (await client.call('sessions.list')).map((s) => s.id);
    const opened: string[] = [];
    const off = client.on('session.changed', (s) => opened.push(s.id));
    // The caller goes (its signal aborts, as a closed window's does) just as the shell is asked
    // for: both hops are logged in by then.
    const gone = new AbortController();
    const shell = Client.prototype.shell;
    const asked = vi.spyOn(Client.prototype, 'shell').mockImplementation(function (this: Client, ...args: unknown[]) {
      expect(held(jump)).toBe(before.jump + 1);
      expect(held(sshd)).toBe(before.target + 1);
      gone.abort();
      return Reflect.apply(shell, this, args) as Client;
    });
    try {
      const err = await failure(app.ssh.open({ connectionId: target.id, cols: 80, rows: 24 }, gone.signal, 'test'));
      expect(asked).toHaveBeenCalledTimes(1);
      expect(err.code).toBe('ECANCELLED');
      expect(err.message).toBe('Connecting to db02 was cancelled.');
      expect((await client.call('sessions.list')).map((s) => s.id)).toEqual(sessionsBefore);
      expect(opened).toEqual([]);
      await until('both connections closed on the servers', () => held(jump) === before.jump && held(sshd) === before.target, 10_000);
    } finally {
      asked.mockRestore();
      off();
    }
  });
});
