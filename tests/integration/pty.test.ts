import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { ContractClient } from '../../src-main/common/client.js';
import type { EventPayload } from '../../src-main/common/contract/index.js';
import { App } from '../../src-main/node/app.js';
import { connectInProcess } from '../../src-main/node/in-process.js';
import { PtySession } from '../../src-main/node/pty/pty-service.js';
import { detectShells } from '../../src-main/node/pty/shells.js';
import { until } from '../fixtures/poll.js';
import { failure } from '../fixtures/errors.js';
import { childrenOf, running } from '../fixtures/processes.js';

let app: App;
let client: ContractClient;
let dataDir: string;

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'wraith-pty-'));
  app = new App({ dataDir, host: 'in-process' });
  client = connectInProcess(app);
  client.subscribe(['']);
});

afterAll(async () => {
  client?.close();
  await app?.dispose();
  rmSync(dataDir, { recursive: true, force: true });
});

async function waitForOutput(sessionId: string, pattern: RegExp, sinceSeq = 0): Promise<string> {
  let text = '';
  let seq = sinceSeq;
  return until(`output ${pattern}`, async () => {
    const r = await client.call('terminal.read', { sessionId, sinceSeq: seq, stripAnsi: true, maxBytes: 1024 * 1024 });
    text += r.text;
    seq = r.nextSeq;
    return pattern.test(text) ? text : undefined;
  });
}

async function mark(sessionId: string): Promise<number> {
  return (await client.call('terminal.read', { sessionId, maxBytes: 1 })).nextSeq;
}

test('pty.shells finds the shells installed here, one default', async () => {
  const shells = await client.call('pty.shells');
  const bash = shells.find((s) => s.name === 'bash');
  expect(bash && existsSync(bash.path)).toBe(true);
  expect(shells.find((s) => s.name === 'sh')).toBeDefined();
  expect(shells.filter((s) => s.isDefault)).toHaveLength(1);
  for (const s of shells) expect(existsSync(s.path)).toBe(true);
});

test('pty.shells lists a shell once where /bin is a link to /usr/bin (merged /usr), keeping $SHELL; sh linked to bash stays', () => {
  // A merged-/usr tree: bin -> usr/bin, $SHELL names bin/bash, PATH finds usr/bin/bash (one file),
  // and usr/bin/sh is a link to bash (as on Arch or Fedora), which runs as sh: another shell.
  const root = mkdtempSync(join(tmpdir(), 'wraith-shells-'));
  try {
    mkdirSync(join(root, 'usr', 'bin'), { recursive: true });
    writeFileSync(join(root, 'usr', 'bin', 'bash'), '#!/bin/sh\n');
    chmodSync(join(root, 'usr', 'bin', 'bash'), 0o755);
    symlinkSync('bash', join(root, 'usr', 'bin', 'sh'));
    symlinkSync('usr/bin', join(root, 'bin'));
    const shells = detectShells({ SHELL: join(root, 'bin', 'bash'), PATH: join(root, 'usr', 'bin') }).filter((s) => s.path.startsWith(root));
    expect(shells).toEqual([
      { name: 'bash', path: join(root, 'bin', 'bash'), isDefault: true },
      { name: 'sh', path: join(root, 'usr', 'bin', 'sh'), isDefault: false },
    ]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('spawn, echo, environment, resize, cwd, exit with code, relaunch, close', async () => {
  process.env.WRAITH_PTY_TEST_MARKER = 'inherited-42';
  const { sessionId } = await client.call('pty.spawn', { shell: 'bash', cols: 90, rows: 20, cwd: '/tmp' });
  const info = (await client.call('sessions.list')).find((s) => s.id === sessionId);
  expect(info).toMatchObject({ kind: 'pty', title: 'bash', state: 'open', connectionId: null });
  // The path it was started from, which a view re-attached after a reload relaunches.
  expect(info?.shell).toBe((await client.call('pty.shells')).find((s) => s.name === 'bash')?.path);

  let m = await mark(sessionId);
  await client.call('terminal.write', { sessionId, data: 'echo "$WRAITH_PTY_TEST_MARKER $TERM $COLORTERM" && stty size\n' });
  await waitForOutput(sessionId, /inherited-42 xterm-256color truecolor\n20 90\n/, m);

  m = await mark(sessionId);
  await client.call('terminal.resize', { sessionId, cols: 120, rows: 40 });
  await client.call('terminal.write', { sessionId, data: 'stty size\n' });
  await waitForOutput(sessionId, /^40 120$/m, m);

  expect(await client.call('terminal.cwd', { sessionId })).toEqual({ cwd: '/tmp', source: 'proc' });
  m = await mark(sessionId);
  await client.call('terminal.write', { sessionId, data: 'cd /usr && echo there\n' });
  await waitForOutput(sessionId, /^there$/m, m);
  expect(await client.call('terminal.cwd', { sessionId })).toEqual({ cwd: '/usr', source: 'proc' });

  const exits: EventPayload<'terminal.exit'>[] = [];
  const off = client.on('terminal.exit', (e) => exits.push(e));
  await client.call('terminal.write', { sessionId, data: 'echo bye-$((2*21)); exit 5\n' });
  const exit = await until('exit', () => exits.find((e) => e.sessionId === sessionId));
  expect(exit).toMatchObject({ code: 5, signal: null, reason: 'bash exited with code 5.' });
  expect((await client.call('sessions.list')).find((s) => s.id === sessionId)).toMatchObject({ state: 'disconnected', reason: 'bash exited with code 5.' });
  // "Session ended": the output is still readable, input is refused.
  const ended = await client.call('terminal.read', { sessionId, sinceSeq: 0, stripAnsi: true });
  expect(ended.text).toContain('bye-42');
  expect(ended.closed).toBe(true);
  expect((await failure(client.call('terminal.write', { sessionId, data: 'x' }))).code).toBe('ESESSIONCLOSED');

  // "Relaunch?": the same shell again, same session, scrollback kept.
  await client.call('pty.relaunch', { sessionId });
  m = ended.nextSeq;
  await client.call('terminal.write', { sessionId, data: 'echo again-$((3+4))\n' });
  await waitForOutput(sessionId, /again-7\n/, m);
  expect((await client.call('terminal.read', { sessionId, sinceSeq: 0, stripAnsi: true })).text).toContain('bye-42');
  expect((await failure(client.call('pty.relaunch', { sessionId }))).code).toBe('EBADARGS');

  const session = app.terminals.get(sessionId);
  if (!(session instanceof PtySession)) throw new Error('not a PTY session');
  const pid = session.pid;
  expect(pid).toBeGreaterThan(0);
  await client.call('sessions.close', { sessionId });
  off();
  // Closing leaves nothing behind: the shell process is gone, the session too.
  expect(existsSync(`/proc/${pid}`)).toBe(false);
  expect((await client.call('sessions.list')).some((s) => s.id === sessionId)).toBe(false);
  expect((await failure(client.call('terminal.read', { sessionId }))).code).toBe('ENOTFOUND');
});

test('relaunch refuses a shell that was moved away since it exited, as a new spawn does, and relaunches once it is back', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'wraith-pty-moved-'));
  const script = join(dir, 'myshell');
  writeFileSync(script, '#!/bin/sh\nexec bash --norc --noprofile\n');
  chmodSync(script, 0o755);
  try {
    const { sessionId } = await client.call('pty.spawn', { shell: script, cols: 80, rows: 24 });
    const exits: EventPayload<'terminal.exit'>[] = [];
    const off = client.on('terminal.exit', (e) => exits.push(e));
    await client.call('terminal.write', { sessionId, data: 'exit 3\n' });
    await until('exit', () => exits.find((e) => e.sessionId === sessionId));
    const before = await mark(sessionId);
    renameSync(script, `${script}.moved`);

    const refused = await failure(client.call('pty.relaunch', { sessionId }));
    expect(refused.code).toBe('ENOTFOUND');
    expect(refused.message).toBe(`No shell "${script}" on this machine: it may have been moved or removed. Choose another shell.`);
    // Nothing was started: no node-pty "execvp(3) failed" output, no second exit, the session as it was.
    expect(await mark(sessionId)).toBe(before);
    expect(exits.filter((e) => e.sessionId === sessionId)).toHaveLength(1);
    expect((await client.call('sessions.list')).find((s) => s.id === sessionId)).toMatchObject({ state: 'disconnected', reason: 'myshell exited with code 3.' });

    // Put back, it relaunches in the same session.
    renameSync(`${script}.moved`, script);
    await client.call('pty.relaunch', { sessionId });
    await client.call('terminal.write', { sessionId, data: 'echo back-$((6*7))\n' });
    await waitForOutput(sessionId, /back-42\n/, before);
    off();
    await client.call('sessions.close', { sessionId });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('flow control pauses a PTY running yes; acks resume it; Ctrl+C stops it', async () => {
  const { sessionId } = await client.call('pty.spawn', { shell: 'bash' });
  const session = app.terminals.get(sessionId);
  await waitForOutput(sessionId, /[$#] $/);
  await client.call('terminal.ack', { sessionId, bytes: 0 }); // a view attaches
  await client.call('terminal.write', { sessionId, data: 'yes\n' });
  await until('paused', () => session.flow.paused);
  await new Promise((r) => setTimeout(r, 300));
  const stalledAt = session.ring.endSeq;
  await new Promise((r) => setTimeout(r, 400));
  expect(session.ring.endSeq).toBe(stalledAt);

  await client.call('terminal.ack', { sessionId, bytes: session.flow.unacked });
  await until('flowing again', () => session.ring.endSeq > stalledAt + 100 * 1024);

  const off = client.on('terminal.data', (d) => {
    if (d.sessionId === sessionId) void client.call('terminal.ack', { sessionId, bytes: d.data.length });
  });
  await client.call('terminal.write', { sessionId, data: '\x03' });
  await client.call('terminal.ack', { sessionId, bytes: session.flow.unacked });
  await until('prompt after ^C', async () => /[$#] $/.test((await client.call('terminal.read', { sessionId, maxBytes: 128, stripAnsi: true })).text));
  off();
  await client.call('sessions.close', { sessionId });
});

test('a shell that exits while its output is paused still delivers every byte it wrote', async () => {
  // A view attaches and never acks. The first 9,000 bytes pass the (small) high watermark, so the
  // output is paused before the rest is written; the shell then writes 6,000 more bytes, which
  // fit in the kernel's pty buffer and the socket's, and exits while nothing reads. node-pty
  // closes the terminal 200 ms later and, left alone, throws the unread bytes away
  // (see drain-on-exit.ts).
  const dir = mkdtempSync(join(tmpdir(), 'wraith-pty-drain-'));
  const small = new App({ dataDir: dir, host: 'in-process', terminal: { flow: { highWatermark: 8 * 1024, lowWatermark: 4 * 1024, batchBytes: 1024 } } });
  const c = connectInProcess(small);
  c.subscribe(['']);
  try {
    const { sessionId } = await c.call('pty.spawn', { shell: 'bash', cwd: '/tmp' });
    const session = small.terminals.get(sessionId);
    if (!(session instanceof PtySession)) throw new Error('not a PTY session');
    expect(session.drainsOnExit).toBe(true);
    await until('prompt', async () => /[$#] $/.test((await c.call('terminal.read', { sessionId, stripAnsi: true })).text));
    const exits: EventPayload<'terminal.exit'>[] = [];
    c.on('terminal.exit', (e) => exits.push(e));
    await c.call('terminal.ack', { sessionId, bytes: 0 });
    await c.call('terminal.write', {
      sessionId,
      data: "head -c 9000 /dev/zero | tr '\\0' y; sleep 0.5; head -c 6000 /dev/zero | tr '\\0' x; echo; echo tail-$((6*7)); exit 3\n",
    });
    // The sleep holds the pause long enough to be seen; nothing acks, so it lasts until the exit.
    await until('paused', () => session.flow.paused);
    await until('exit', () => exits.find((e) => e.sessionId === sessionId));
    const { text } = await c.call('terminal.read', { sessionId, sinceSeq: 0, stripAnsi: true, maxBytes: 1024 * 1024 });
    const longest = (ch: string) => Math.max(0, ...(text.match(new RegExp(`${ch}+`, 'g')) ?? []).map((run) => run.length));
    expect(longest('y')).toBe(9000);
    expect(longest('x')).toBe(6000);
    expect(text).toMatch(/^tail-42$/m);
  } finally {
    c.close();
    await small.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('bad input is refused with a plain message', async () => {
  const e1 = await failure(client.call('pty.spawn', { shell: '/no/such/shell' }));
  expect(e1.code).toBe('ENOTFOUND');
  // Words a person can act on, not the name of an API call.
  expect(e1.message).toBe('No shell "/no/such/shell" on this machine: it may have been moved or removed. Choose another shell.');
  const e2 = await failure(client.call('pty.spawn', { shell: 'bash', cwd: '/no/such/dir' }));
  expect(e2.code).toBe('ENOTFOUND');
  expect(e2.message).toContain('/no/such/dir');
  const e3 = await failure(client.call('pty.relaunch', { sessionId: 'nope' }));
  expect(e3.code).toBe('ENOTFOUND');
});

test('broadcast.set keeps which terminal sessions share typing; a closed member leaves, one alone ends it', async () => {
  const changes: EventPayload<'broadcast.changed'>[] = [];
  const off = client.on('broadcast.changed', (e) => changes.push(e));
  try {
    const a = (await client.call('pty.spawn', { shell: 'bash', cols: 80, rows: 24 })).sessionId;
    const b = (await client.call('pty.spawn', { shell: 'bash', cols: 80, rows: 24 })).sessionId;
    const c = (await client.call('pty.spawn', { shell: 'bash', cols: 80, rows: 24 })).sessionId;
    expect(await client.call('broadcast.get', {})).toEqual({ sessionIds: [] });
    expect(await client.call('broadcast.set', { sessionIds: [a, b, c, a] })).toEqual({ sessionIds: [a, b, c] });
    expect(await client.call('broadcast.get', {})).toEqual({ sessionIds: [a, b, c] });
    // One session is no broadcast; an unknown id is refused and changes nothing.
    expect(await client.call('broadcast.set', { sessionIds: [a] })).toEqual({ sessionIds: [] });
    expect((await failure(client.call('broadcast.set', { sessionIds: [a, 'no-such-session'] }))).code).toBe('ENOTFOUND');
    expect(await client.call('broadcast.get', {})).toEqual({ sessionIds: [] });

    await client.call('broadcast.set', { sessionIds: [a, b, c] });
    await client.call('sessions.close', { sessionId: c });
    await until('c to leave the broadcast', async () => (await client.call('broadcast.get', {})).sessionIds.length === 2);
    expect((await client.call('broadcast.get', {})).sessionIds).toEqual([a, b]);
    await client.call('sessions.close', { sessionId: b });
    await until('the broadcast to end', async () => (await client.call('broadcast.get', {})).sessionIds.length === 0);
    await client.call('sessions.close', { sessionId: a });
    expect(changes.map((e) => e.sessionIds.length)).toEqual([3, 0, 3, 2, 0]);
  } finally {
    off();
  }
});

function shellPid(sessionId: string): number {
  const session = app.terminals.get(sessionId);
  if (!(session instanceof PtySession) || !session.pid) throw new Error('not a running PTY session');
  return session.pid;
}

test('closing a shell that ignores hang-ups and SIGTERM ends it, and the job in front of it too', async () => {
  const { sessionId } = await client.call('pty.spawn', { shell: 'bash', cols: 80, rows: 24 });
  const shell = shellPid(sessionId);
  // `sleep` inherits the ignored signals: SIGKILL to the shell alone left it running, unseen.
  await client.call('terminal.write', { sessionId, data: "trap '' HUP TERM; sleep 100\n" });
  const job = await until('the sleep to start', () => childrenOf(shell)[0]);
  try {
    await client.call('sessions.close', { sessionId });
    expect(running(shell)).toBe(false);
    await until('the job to be gone', () => !running(job), 3000);
    expect((await client.call('sessions.list')).some((s) => s.id === sessionId)).toBe(false);
  } finally {
    if (running(job)) process.kill(job, 'SIGKILL');
  }
});

test('closing a shell sends SIGHUP, then SIGTERM to one that stays, then SIGKILL', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'wraith-pty-signals-'));
  const log = join(dir, 'signals.txt');
  try {
    const { sessionId } = await client.call('pty.spawn', { shell: 'bash', cols: 80, rows: 24 });
    const shell = shellPid(sessionId);
    // The traps write down what came and carry on; the loop gives bash a moment to run them.
    await client.call('terminal.write', { sessionId, data: `trap 'echo HUP >> ${log}' HUP; trap 'echo TERM >> ${log}' TERM; echo armed > ${log}; while :; do sleep 0.05; done\n` });
    await until('the traps to be set', () => existsSync(log));
    await client.call('sessions.close', { sessionId });
    expect(running(shell)).toBe(false);
    expect(readFileSync(log, 'utf8').split('\n').filter(Boolean)).toEqual(['armed', 'HUP', 'TERM']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a session says who opened it: the caller of pty.spawn (here a test, then the XO)', async () => {
  const xo = connectInProcess(app, 'ai');
  const seen: EventPayload<'session.changed'>[] = [];
  const off = client.on('session.changed', (e) => seen.push(e));
  try {
    const mine = (await client.call('pty.spawn', { shell: 'bash', cols: 80, rows: 24 })).sessionId;
    const theirs = (await xo.call('pty.spawn', { shell: 'bash', cols: 80, rows: 24 })).sessionId;
    const list = await client.call('sessions.list');
    expect(list.find((s) => s.id === mine)?.openedBy).toBe('test');
    expect(list.find((s) => s.id === theirs)?.openedBy).toBe('ai');
    // The event that announces it says so too: a window shows the tab from it.
    await until('the XO session announced', () => seen.find((e) => e.id === theirs));
    expect(seen.find((e) => e.id === theirs)).toMatchObject({ state: 'open', openedBy: 'ai' });
    await client.call('sessions.close', { sessionId: mine });
    await client.call('sessions.close', { sessionId: theirs });
  } finally {
    off();
    xo.close();
  }
});
