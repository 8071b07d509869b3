/**
 * A call ends when its caller goes: a command run for a client that closed its connection (Ctrl+C
 * on `wraith call`, a closed window) is stopped on the server, not left running until its timeout.
 * And one call ends when its caller gives it up (`{t:'cancel', id}`), the caller's other calls
 * running on. Against a real sshd, a real `wraith serve` and the real CLI, and the Electron port
 * transport.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ContractClient } from '../../src-main/common/client.js';
import { App } from '../../src-main/node/app.js';
import type { ServerMessage } from '../../src-main/common/protocol.js';
import { connectInProcess, openInProcessWire } from '../../src-main/node/in-process.js';
import { connectWebSocket } from '../../src-main/server/ws-client.js';
import { failure } from '../fixtures/errors.js';
import { until } from '../fixtures/poll.js';
import { portClient } from '../fixtures/port-client.js';
import { type ServedSession, startServedSession } from '../fixtures/served-session.js';
import { askingConnection, savePasswordConnection } from '../fixtures/sshd.js';
import { REPO_ROOT } from '../fixtures/wraith-server.js';

let served: ServedSession;
let n = 0;

beforeAll(async () => {
  served = await startServedSession('caller-gone');
});
afterAll(async () => {
  await served?.stop();
});

/**
 * A command that sleeps `seconds` (a number no other test sleeps), then leaves a marker file:
 * the marker appears only if the command is left to run on. `sleep`: its sleep's command line;
 * `shell`: a pattern for the shell that runs it, written so as not to match itself where it
 * stands in the command line of the shell that runs pgrep.
 */
function longCommand(seconds: number): { command: string; sleep: string; shell: string; marker: string } {
  const name = `wraith-caller-gone-${process.pid}-${++n}`;
  const marker = `/tmp/${name}`;
  return { command: `sleep ${seconds}; touch ${marker}`, sleep: `sleep ${seconds}`, shell: `[${name[0]}]${name.slice(1)}$`, marker };
}

/** Pids of the session user's processes on the server whose command line matches `pattern` (pgrep -f), `whole` or in part. */
async function remoteProcesses(client: ContractClient, sessionId: string, pattern: string, whole: boolean): Promise<string> {
  const r = await client.call('ssh.exec', { sessionId, command: `pgrep -u "$(id -u)" -f${whole ? 'x' : ''} '${pattern}' || true` });
  return r.stdout.trim();
}

/** Ends what a failed test left of the command on the server (it would sleep on, and touch its marker). */
async function removeLeftovers(client: ContractClient, sessionId: string, c: ReturnType<typeof longCommand>): Promise<void> {
  // The shell before its sleep (else it would touch the marker), and a last word that keeps this
  // command's own line from matching c.shell.
  const command = `pkill -KILL -u "$(id -u)" -f '${c.shell}'; pkill -KILL -u "$(id -u)" -fx '${c.sleep}'; rm -f ${c.marker}; true`;
  await client.call('ssh.exec', { sessionId, command }).catch(() => undefined);
}

/** Waits until the command runs on the server, and returns a check that it was stopped, whole, and left no marker. */
async function runningOnServer(client: ContractClient, sessionId: string, c: ReturnType<typeof longCommand>): Promise<() => Promise<void>> {
  await until(`${c.sleep} running on the server`, async () => (await remoteProcesses(client, sessionId, c.sleep, true)) !== '');
  expect(await remoteProcesses(client, sessionId, c.shell, false)).not.toBe(''); // the pattern finds the command's shell
  return async () => {
    await until(`${c.sleep} stopped on the server`, async () => (await remoteProcesses(client, sessionId, c.sleep, true)) === '', 10_000);
    // Nothing of the command is left that could still touch the marker, and it never did.
    expect(await remoteProcesses(client, sessionId, c.shell, false)).toBe('');
    expect(existsSync(c.marker)).toBe(false);
  };
}

/**
 * A command that waits, on the server, until `release` (a file of the test's) exists, then
 * prints `word`: a call that is still running when another is given up, and ends when told.
 */
function waitingCommand(word: string): { command: string; release: string } {
  const release = `/tmp/wraith-call-cancel-${process.pid}-${++n}`;
  return { command: `while [ ! -e ${release} ]; do sleep 0.1; done; echo ${word}`, release };
}

/** A command given up by its caller is stopped on the server; the caller's other call, and the caller, go on. */
async function cancelOneOfTwo(caller: ContractClient, keeper: ContractClient, sessionId: string, seconds: number): Promise<void> {
  const c = longCommand(seconds);
  const other = waitingCommand('other-call-done');
  const giveUp = new AbortController();
  try {
    const answer = failure(caller.call('ssh.exec', { sessionId, command: c.command, timeoutMs: 120_000 }, { signal: giveUp.signal }));
    const otherAnswer = caller.call('ssh.exec', { sessionId, command: other.command, timeoutMs: 120_000 });
    const stopped = await runningOnServer(keeper, sessionId, c);
    giveUp.abort();
    const e = await answer;
    expect(e.code).toBe('ECANCELLED'); // the host's answer: it stopped the command
    expect(e.message).toMatch(/cancelled and stopped/);
    await stopped();
    // The other call was left running: it ends when released, with its own answer.
    execFileSync('touch', [other.release]);
    expect((await otherAnswer).stdout).toBe('other-call-done\n');
    expect((await caller.call('ssh.exec', { sessionId, command: 'echo caller-still-here' })).stdout).toBe('caller-still-here\n');
  } finally {
    execFileSync('touch', [other.release]);
    await removeLeftovers(keeper, sessionId, c);
    rmSync(other.release, { force: true });
  }
}

describe('wraith serve', () => {
  test('a command run for a WebSocket client that closes is stopped on the server', async () => {
    const { client, sessionId, host } = served;
    const c = longCommand(731);
    const caller = await connectWebSocket(host.url, host.token);
    try {
      const answer = failure(caller.call('ssh.exec', { sessionId, command: c.command, timeoutMs: 120_000 }));
      const stopped = await runningOnServer(client, sessionId, c);
      caller.close();
      expect((await answer).code).toBe('ESESSIONCLOSED'); // the caller's own side: its connection closed
      await stopped();
    } finally {
      caller.close();
      await removeLeftovers(client, sessionId, c);
    }
    // The session it ran on is untouched.
    expect((await client.call('ssh.exec', { sessionId, command: 'echo still-here' })).stdout).toBe('still-here\n');
  });

  test('Ctrl+C on `wraith call ssh.exec` stops the command on the server', async () => {
    const { client, sessionId, host } = served;
    const c = longCommand(732);
    const cli: ChildProcess = spawn(
      process.execPath,
      [join(REPO_ROOT, 'bin', 'wraith.js'), 'call', 'ssh.exec', JSON.stringify({ sessionId, command: c.command, timeoutMs: 120_000 }), '--url', host.url, '--token', host.token],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => cli.once('exit', (code, signal) => resolve({ code, signal })));
    try {
      const stopped = await runningOnServer(client, sessionId, c);
      cli.kill('SIGINT');
      expect(await exited).toEqual({ code: null, signal: 'SIGINT' });
      await stopped();
    } finally {
      cli.kill('SIGKILL');
      await removeLeftovers(client, sessionId, c);
    }
  });

  test('a login waiting at its prompt for a client that closes is given up: no session, no connection left on the server', async () => {
    const { client, sshd, host } = served;
    const conn = await askingConnection(client, sshd, 'asks');
    const connections = () => sshd.heldConnections();
    const before = connections();
    const sessionsBefore = (await client.call('sessions.list')).length;

    const caller = await connectWebSocket(host.url, host.token);
    caller.subscribe(['ssh.prompt']);
    const prompted = new Promise<void>((resolve) => {
      const off = caller.on('ssh.prompt', (p) => {
        if (p.connectionId !== conn.id) return;
        off();
        resolve();
      });
    });
    const opening = failure(caller.call('ssh.open', { connectionId: conn.id }));
    await prompted;
    expect(connections()).toBe(before + 1);
    caller.close();
    expect((await opening).code).toBe('ESESSIONCLOSED');
    await until('the login connection closed on the server', () => connections() === before, 10_000);
    expect((await client.call('sessions.list')).length).toBe(sessionsBefore);
  });

  test('the login prompt of a caller that goes away is withdrawn at once, and a late answer to it is refused', async () => {
    const { client, sshd, host } = served;
    const conn = await askingConnection(client, sshd, 'asks-then-goes');
    // A window shows every login prompt as a card, whoever opened the connection (here a CLI).
    const window = await connectWebSocket(host.url, host.token);
    const caller = await connectWebSocket(host.url, host.token);
    try {
      window.subscribe(['ssh.prompt']);
      const closed: string[] = [];
      window.on('ssh.prompt_closed', (p) => closed.push(p.promptId));
      const prompted = new Promise<string>((resolve) => {
        const off = window.on('ssh.prompt', (p) => {
          if (p.connectionId !== conn.id) return;
          off();
          resolve(p.promptId);
        });
      });
      const opening = failure(caller.call('ssh.open', { connectionId: conn.id }));
      const promptId = await prompted;
      expect(closed).toEqual([]);
      caller.close();
      await opening;
      // The prompt waits 120 s for its answer here: its card is taken down long before.
      await until('the prompt withdrawn', () => closed.includes(promptId));
      const late = await failure(window.call('ssh.answer', { promptId, answers: [sshd.users.password.password] }));
      expect(late.code).toBe('ENOTFOUND');
      expect(late.message).toMatch(/no longer waiting/);
    } finally {
      caller.close();
      window.close();
    }
  });
});

describe('one call given up by its caller (wraith serve)', () => {
  test('a command given up is stopped on the server, while the same caller\'s other command runs on', async () => {
    const { client, sessionId, host } = served;
    const caller = await connectWebSocket(host.url, host.token);
    try {
      await cancelOneOfTwo(caller, client, sessionId, 741);
    } finally {
      caller.close();
    }
  });

  test('an SSH open given up at its login prompt ends with ECANCELLED: the prompt is withdrawn, no session, no connection left on the server', async () => {
    const { client, sshd, host } = served;
    const conn = await askingConnection(client, sshd, 'asks-then-given-up');
    const connections = () => sshd.heldConnections();
    const before = connections();
    const sessionsBefore = (await client.call('sessions.list')).length;
    const logins = () => (sshd.readLog().match(/Accepted keyboard-interactive/g) ?? []).length;
    const loginsBefore = logins();

    const caller = await connectWebSocket(host.url, host.token);
    try {
      caller.subscribe(['ssh.prompt']);
      const closed: string[] = [];
      caller.on('ssh.prompt_closed', (p) => closed.push(p.promptId));
      const prompted = new Promise<string>((resolve) => {
        const off = caller.on('ssh.prompt', (p) => {
          if (p.connectionId !== conn.id) return;
          off();
          resolve(p.promptId);
        });
      });
      const giveUp = new AbortController();
      const opening = failure(caller.call('ssh.open', { connectionId: conn.id }, { signal: giveUp.signal }));
      const promptId = await prompted;
      expect(connections()).toBe(before + 1);
      giveUp.abort();
      const e = await opening;
      expect(e.code).toBe('ECANCELLED');
      expect(e.message).toMatch(/cancelled/);
      // The prompt waits 120 s for its answer here: it is withdrawn now, and a late answer is refused.
      await until('the prompt withdrawn', () => closed.includes(promptId));
      expect((await failure(caller.call('ssh.answer', { promptId, answers: [sshd.users.password.password] }))).code).toBe('ENOTFOUND');
      await until('the login connection closed on the server', () => connections() === before, 10_000);
      expect((await client.call('sessions.list')).length).toBe(sessionsBefore);
      expect(logins()).toBe(loginsBefore);
      // Only that call was given up: the caller's connection is still there.
      expect((await caller.call('sessions.list')).length).toBe(sessionsBefore);
    } finally {
      caller.close();
    }
  });

  test('a signal aborted before the call is sent fails it at once, and sends nothing', async () => {
    const { host } = served;
    const caller = await connectWebSocket(host.url, host.token);
    try {
      const e = await failure(caller.call('connections.create', { name: 'never-sent', kind: 'ssh', host: '127.0.0.1', port: 22, username: 'x' }, { signal: AbortSignal.abort() }));
      expect(e.code).toBe('ECANCELLED');
      expect((await caller.call('connections.list')).connections.some((c) => c.name === 'never-sent')).toBe(false);
    } finally {
      caller.close();
    }
  });
});

describe('the Electron port transport', () => {
  let app: App;
  let dataDir: string;
  let keeper: ContractClient;
  let sessionId: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'wraith-caller-gone-'));
    app = new App({ dataDir, host: 'in-process' });
    keeper = connectInProcess(app);
    const conn = await savePasswordConnection(keeper, served.sshd, 'port-caller');
    ({ sessionId } = await keeper.call('ssh.open', { connectionId: conn.id }));
  });
  afterAll(async () => {
    keeper?.close();
    await app?.dispose();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('a command a window gives up is stopped on the server, while its other command runs on', async () => {
    const window = portClient(app);
    try {
      await cancelOneOfTwo(window.client, keeper, sessionId, 742);
    } finally {
      window.close();
    }
  });

  test('a cancel for a call that finished, or was never made, is ignored: no error, and the connection goes on', async () => {
    const wire = openInProcessWire(app);
    const heard: ServerMessage[] = [];
    wire.onMessage((m) => heard.push(m));
    try {
      wire.send({ t: 'call', id: 1, method: 'health.ping' });
      await until('the ping answered', () => heard.length === 1);
      wire.send({ t: 'cancel', id: 1 }); // finished: its answer crossed the cancel
      wire.send({ t: 'cancel', id: 424242 }); // never made
      wire.send({ t: 'call', id: 2, method: 'health.ping' });
      await until('the second ping answered', () => heard.length >= 2);
      expect(heard.map((m) => m.t === 'event' ? m.name : [m.t, m.id])).toEqual([['result', 1], ['result', 2]]);
    } finally {
      wire.close();
    }
  });

  test('an upload a window streams fails at once when its port closes (the window reloaded or closed), leaving nothing', async () => {
    const window = portClient(app);
    const remotePath = `${served.dir}/window-gone.bin`;
    const { transferId } = await window.client.call('sftp.uploadBegin', { sessionId, remotePath, size: 4 * 1024 * 1024 });
    await window.client.call('sftp.uploadChunk', { transferId, offset: 0, data: new Uint8Array(1024 * 1024) });
    window.close();
    // Not after the 5 minutes a streamed upload waits for a sender that may come back: a window's port never does.
    expect(await app.sftp.wait(transferId)).toMatchObject({
      state: 'failed',
      error: { code: 'EIO', reason: 'page_left', message: 'The page sending window-gone.bin was closed or reloaded at 1.0 MB of 4.0 MB; nothing was left behind.' },
    });
    expect(readdirSync(served.dir).filter((n) => n.includes('window-gone'))).toEqual([]);
  });

  test('a command run for a window whose port closes is stopped on the server', async () => {
    // As main.ts serves each window: one port, closed when the window goes (or reloads).
    const window = portClient(app).client;
    const c = longCommand(733);
    try {
      const answer = failure(window.call('ssh.exec', { sessionId, command: c.command, timeoutMs: 120_000 }));
      const stopped = await runningOnServer(keeper, sessionId, c);
      window.close();
      expect((await answer).code).toBe('ESESSIONCLOSED');
      await stopped();
    } finally {
      window.close();
      await removeLeftovers(keeper, sessionId, c);
    }
  });
});
