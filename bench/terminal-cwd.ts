/**
 * `terminal.cwd` of an SSH shell that does not report its folder (no OSC 7), as the XO and the
 * Files panel's "follow the terminal" ask for it: the host finds the shell in the server's /proc
 * over an exec channel. The figure is the time of a call, first and repeated, on a server with
 * few processes and on one crowded with `--procs N` more (idle `sleep`s of the test user, whose
 * environments the lookup must read like any others).
 *
 * Run: node --import tsx bench/terminal-cwd.ts [--procs 1000] [--calls 20]
 * Needs root (the sshd harness, and `su` to start the test user's processes).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { App } from '../src-main/node/app.js';
import { connectInProcess } from '../src-main/node/in-process.js';
import { savePasswordConnection, startSshd } from '../tests/fixtures/sshd.js';
import { numberArg } from './args.js';

const PROCS = numberArg('procs', 1000);
const CALLS = numberArg('calls', 20);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const processCount = () => readdirSync('/proc').filter((d) => /^\d+$/.test(d)).length;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

const sshd = await startSshd();
const dataDir = mkdtempSync(join(tmpdir(), 'wraith-bench-cwd-'));
const app = new App({ dataDir, host: 'in-process' });
const client = connectInProcess(app);
const crowd: ChildProcess[] = [];
try {
  const { id: connectionId } = await savePasswordConnection(client, sshd);
  const { sessionId } = await client.call('ssh.open', { connectionId, cols: 80, rows: 24 });
  await client.call('terminal.write', { sessionId, data: 'cd /usr/share\n' });
  await sleep(500);

  /** A new session each time, so its first call has no shell PID remembered. */
  const measure = async (label: string) => {
    const { sessionId: sid } = await client.call('ssh.open', { connectionId, cols: 80, rows: 24 });
    await client.call('terminal.write', { sessionId: sid, data: 'cd /usr/share\n' });
    await sleep(500);
    let t = performance.now();
    const first = await client.call('terminal.cwd', { sessionId: sid });
    const firstMs = performance.now() - t;
    if (first.cwd !== '/usr/share') throw new Error(`terminal.cwd gave ${JSON.stringify(first)}, the shell is in /usr/share`);
    const again: number[] = [];
    for (let i = 0; i < CALLS; i++) {
      t = performance.now();
      const r = await client.call('terminal.cwd', { sessionId: sid });
      again.push(performance.now() - t);
      if (r.cwd !== '/usr/share') throw new Error(`terminal.cwd gave ${JSON.stringify(r)} on call ${i + 2}`);
    }
    console.log(`  ${label.padEnd(34)} first ${firstMs.toFixed(1)} ms, then median ${median(again).toFixed(1)} ms, max ${Math.max(...again).toFixed(1)} ms (source ${first.source})`);
    await client.call('sessions.close', { sessionId: sid });
  };

  console.log(`terminal.cwd over exec, no OSC 7 (${CALLS} repeated calls each):`);
  await measure(`${processCount()} processes on the server`);
  const user = sshd.users.password.username;
  for (let i = 0; i < PROCS; i++) crowd.push(spawn('su', ['-s', '/bin/sh', user, '-c', 'exec sleep 600'], { stdio: 'ignore' }));
  await sleep(Math.max(2000, PROCS * 3));
  await measure(`${processCount()} processes on the server`);
} finally {
  for (const p of crowd) p.kill('SIGKILL');
  try {
    execFileSync('pkill', ['-KILL', '-u', sshd.users.password.username, 'sleep']);
  } catch {
    // none left
  }
  client.close();
  await app.dispose();
  await sshd.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
