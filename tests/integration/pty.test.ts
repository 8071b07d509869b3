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

/**
 * How long a panel's shell waits here for a window to claim it (PANEL_CLAIM_GRACE_MS in use):
 * long enough for a claim the next line makes, short enough to wait out in a test.
 */
const PANEL_GRACE_MS = 1500;

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'wraith-pty-'));
  app = new App({ dataDir, host: 'in-process', terminal: { panelGraceMs: PANEL_GRACE_MS } });
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

test("a shell spawned for a window's local shell panel says so, in the list and the event that announces it, after a relaunch too; one for a tab does not", async () => {
  const seen: EventPayload<'session.changed'>[] = [];
  const off = client.on('session.changed', (e) => seen.push(e));
  try {
    const panel = (await client.call('pty.spawn', { shell: 'bash', cols: 80, rows: 24, panel: true })).sessionId;
    const tab = (await client.call('pty.spawn', { shell: 'bash', cols: 80, rows: 24 })).sessionId;
    const list = await client.call('sessions.list');
    expect(list.find((s) => s.id === panel)?.panel).toBe(true);
    expect(list.find((s) => s.id === tab)?.panel).toBeUndefined();
    await until('both announced', () => seen.some((e) => e.id === panel) && seen.some((e) => e.id === tab));
    expect(seen.find((e) => e.id === panel)).toMatchObject({ state: 'open', panel: true });
    expect(seen.find((e) => e.id === tab)?.panel).toBeUndefined();

    // Its shell exits and is relaunched: still the panel's.
    await client.call('terminal.write', { sessionId: panel, data: 'exit\n' });
    await until('the panel shell exited', async () => (await client.call('sessions.list')).find((s) => s.id === panel)?.state === 'disconnected');
    await client.call('pty.relaunch', { sessionId: panel });
    expect((await client.call('sessions.list')).find((s) => s.id === panel)).toMatchObject({ state: 'open', panel: true });
    await client.call('sessions.close', { sessionId: panel });
    await client.call('sessions.close', { sessionId: tab });
  } finally {
    off();
  }
});

/** A session.changed that says the shell, still there, is no panel's (a tab in every window). */
function letGo(seen: EventPayload<'session.changed'>[], id: string): EventPayload<'session.changed'> | undefined {
  return seen.find((e) => e.id === id && e.state !== 'closed' && e.panel === undefined);
}

/**
 * A panel shell whose connection closes at once: when it is let go, a whole grace has passed
 * since this was called. Nothing else orders the tests below in time.
 */
async function graceClock(): Promise<string> {
  const clock = connectInProcess(app);
  const { sessionId } = await clock.call('pty.spawn', { shell: 'bash', cols: 80, rows: 24, panel: true });
  clock.close();
  return sessionId;
}

test("a panel's shell stays its window's while that window's connection lasts; the window gone, unclaimed for the grace, it is no panel's, running on, announced and listed so", async () => {
  const win = connectInProcess(app);
  const seen: EventPayload<'session.changed'>[] = [];
  const off = client.on('session.changed', (e) => seen.push(e));
  const opened: string[] = [];
  try {
    const shell = (await win.call('pty.spawn', { shell: 'bash', cols: 80, rows: 24, panel: true })).sessionId;
    opened.push(shell);
    const clock = await graceClock();
    opened.push(clock);
    await until('the clock shell let go', () => letGo(seen, clock));
    // A grace since the spawn, its window still there: still its panel's.
    expect((await client.call('sessions.list')).find((s) => s.id === shell)?.panel).toBe(true);
    expect(letGo(seen, shell)).toBeUndefined();

    // The window goes (closed for good): after the grace, every window may show the shell as a tab.
    win.close();
    expect(await until("the window's shell let go", () => letGo(seen, shell))).toMatchObject({ kind: 'pty', state: 'open', openedBy: 'test' });
    const listed = (await client.call('sessions.list')).find((s) => s.id === shell);
    expect(listed).toMatchObject({ state: 'open' });
    expect(listed?.panel).toBeUndefined();
    // The shell runs on, as it was.
    const since = await mark(shell);
    await client.call('terminal.write', { sessionId: shell, data: 'echo still-$((6*7))\n' });
    await waitForOutput(shell, /still-42/, since);
  } finally {
    off();
    win.close();
    for (const sessionId of opened) await client.call('sessions.close', { sessionId });
  }
});

test("a window that claims a panel's shell (pty.panel) within the grace keeps it, until it goes too; one that claims it after takes it back into its panel", async () => {
  const before = connectInProcess(app);
  const reloaded = connectInProcess(app);
  const later = connectInProcess(app);
  const seen: EventPayload<'session.changed'>[] = [];
  const off = client.on('session.changed', (e) => seen.push(e));
  const opened: string[] = [];
  try {
    const shell = (await before.call('pty.spawn', { shell: 'bash', cols: 80, rows: 24, panel: true })).sessionId;
    opened.push(shell);
    // A reload: the page's connection goes, the new one claims the shell again.
    before.close();
    await reloaded.call('pty.panel', { sessionId: shell });
    // Claimed once more by the same window (a reconnect): no harm.
    await reloaded.call('pty.panel', { sessionId: shell });
    const clock = await graceClock();
    opened.push(clock);
    await until('the clock shell let go', () => letGo(seen, clock));
    // The grace the first connection's close started is over: the claim kept the shell the panel's.
    expect(letGo(seen, shell)).toBeUndefined();
    expect((await client.call('sessions.list')).find((s) => s.id === shell)?.panel).toBe(true);

    reloaded.close();
    await until("the shell let go once its claimer went", () => letGo(seen, shell));
    // A window claims it after that (its link was down for longer): a panel's again, announced so.
    const from = seen.length;
    await later.call('pty.panel', { sessionId: shell });
    expect(await until('the shell taken back', () => seen.slice(from).find((e) => e.id === shell))).toMatchObject({ state: 'open', panel: true });
    expect((await client.call('sessions.list')).find((s) => s.id === shell)?.panel).toBe(true);
  } finally {
    off();
    for (const c of [before, reloaded, later]) c.close();
    for (const sessionId of opened) await client.call('sessions.close', { sessionId });
  }
});

test("the command's panel: true shell, with no window to show it, becomes a tab after the grace", async () => {
  const cli = connectInProcess(app);
  const seen: EventPayload<'session.changed'>[] = [];
  const off = client.on('session.changed', (e) => seen.push(e));
  let shell = '';
  try {
    shell = (await cli.call('pty.spawn', { shell: 'bash', cols: 80, rows: 24, panel: true })).sessionId;
    expect(seen.find((e) => e.id === shell)).toMatchObject({ panel: true });
    // `wraith call` ends, and its connection with it.
    cli.close();
    expect(await until('the shell let go', () => letGo(seen, shell))).toMatchObject({ state: 'open' });
  } finally {
    off();
    cli.close();
    if (shell) await client.call('sessions.close', { sessionId: shell });
  }
});

test('pty.panel refuses a session that is unknown, closing or closed, or a tab\'s shell, each with a code and a sentence', async () => {
  const unknown = await failure(client.call('pty.panel', { sessionId: 'nope' }));
  expect(unknown.code).toBe('ENOTFOUND');
  expect(unknown.message).toBe('No terminal session with id nope; it may have been closed.');
  expect((await failure(client.call('pty.panel', { sessionId: '' }))).code).toBe('EBADARGS');

  const tab = (await client.call('pty.spawn', { shell: 'bash', cols: 80, rows: 24 })).sessionId;
  try {
    const refused = await failure(client.call('pty.panel', { sessionId: tab }));
    expect(refused.code).toBe('EBADARGS');
    expect(refused.message).toBe(`Session ${tab} is a local shell tab's, not started for a local shell panel (pty.spawn with panel: true).`);
    // Still nobody's panel shell.
    expect((await client.call('sessions.list')).find((s) => s.id === tab)?.panel).toBeUndefined();
  } finally {
    await client.call('sessions.close', { sessionId: tab });
  }

  // One being closed (its shell stays for the hang-up a while), then closed.
  const panel = (await client.call('pty.spawn', { shell: 'bash', cols: 80, rows: 24, panel: true })).sessionId;
  await client.call('terminal.write', { sessionId: panel, data: "trap '' HUP; echo armed\n" });
  await waitForOutput(panel, /^armed/m);
  const closing = client.call('sessions.close', { sessionId: panel });
  const whileClosing = await failure(client.call('pty.panel', { sessionId: panel }));
  expect(whileClosing.code).toBe('ESESSIONCLOSED');
  expect(whileClosing.message).toBe('This local shell was closed; start a new one in the panel.');
  await closing;
  expect((await failure(client.call('pty.panel', { sessionId: panel }))).code).toBe('ENOTFOUND');
});
