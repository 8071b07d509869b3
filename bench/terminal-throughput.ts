/**
 * SSH terminal figures, each beside its anchor in the same run:
 *   - output throughput: Wraith session (ssh2 → ring buffer → batched terminal.data → in-process
 *     client that acks) vs ssh2 alone vs OpenSSH `ssh host 'cat file' > /dev/null`
 *   - keystroke echo latency p50/p99: through Wraith vs ssh2 alone
 *   - host memory per idle and per busy session; 100 concurrent sessions
 * Run: npx tsx bench/terminal-throughput.ts   (needs root and openssh-server, like the tests)
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, type ClientChannel } from 'ssh2';
import { App } from '../src-main/node/app.js';
import { connectInProcess } from '../src-main/node/in-process.js';
import { startSshd } from '../tests/fixtures/sshd.js';
import { ssh2EchoLatencies } from './ssh2-echo.js';
import { missingHostHeapFlags, runUnderHostHeapFlags } from '../src-main/server/host-heap.js';

// Wraith's host runs in this process here: give it the heap flags `wraith serve` runs under.
if (missingHostHeapFlags().length > 0) await runUnderHostHeapFlags();

const FILE_MB = Number(process.env.BENCH_FILE_MB ?? 100);
const KEYSTROKES = Number(process.env.BENCH_KEYSTROKES ?? 400);
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 100);

const sshd = await startSshd();
const dataDir = mkdtempSync(join(tmpdir(), 'wraith-bench-'));
const app = new App({ dataDir, host: 'in-process' });
const client = connectInProcess(app);
client.subscribe(['terminal.', 'session.']);
await client.call('vault.init', { protection: 'keyfile' });
await client.call('hostkeys.trust', { kind: 'ssh', host: sshd.host, port: sshd.port, keyType: sshd.hostKeyType, fingerprint: sshd.hostKeyFingerprint });
const { id: connectionId } = await client.call('connections.create', {
  name: 'bench',
  kind: 'ssh',
  host: sshd.host,
  port: sshd.port,
  username: sshd.users.key.username,
  authMethod: 'key',
  secrets: { privateKey: sshd.users.key.privateKey },
});

// A text file (base64 of random bytes: what terminals carry), readable by the key user.
const file = join(sshd.dir, 'bench.b64');
execFileSync('sh', ['-c', `head -c ${Math.round((FILE_MB * 3) / 4)}M /dev/urandom | base64 -w 200 > ${file} && chmod 644 ${file}`]);
const fileBytes = Number(execFileSync('stat', ['-c', '%s', file], { encoding: 'utf8' }).trim());
const MARK = '__WRAITH_BENCH_END__';

function mbps(bytes: number, ms: number): string {
  return `${((bytes / 1024 / 1024) / (ms / 1000)).toFixed(0)} MiB/s`;
}
function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}
const fmt = (ms: number) => `${ms.toFixed(3)} ms`;

function ssh2Connect(): Promise<Client> {
  return new Promise((resolve, reject) => {
    const c = new Client();
    c.once('ready', () => resolve(c));
    c.once('error', reject);
    c.connect({ host: sshd.host, port: sshd.port, username: sshd.users.key.username, privateKey: sshd.users.key.privateKey });
  });
}
function ssh2Shell(c: Client): Promise<ClientChannel> {
  return new Promise((resolve, reject) => c.shell({ term: 'xterm-256color', cols: 200, rows: 50 }, (e, ch) => (e ? reject(e) : resolve(ch))));
}

// ---------- throughput ----------
async function wraithThroughput(): Promise<number> {
  const { sessionId } = await client.call('ssh.open', { connectionId, cols: 200, rows: 50 });
  await new Promise((r) => setTimeout(r, 300));
  let got = 0;
  let tail = '';
  const t0 = performance.now();
  const done = new Promise<number>((resolve) => {
    const off = client.on('terminal.data', (d) => {
      if (d.sessionId !== sessionId) return;
      got += d.data.length;
      // The view acks what it processed (here: immediately).
      void client.call('terminal.ack', { sessionId, bytes: d.data.length });
      tail = (tail + Buffer.from(d.data.subarray(Math.max(0, d.data.length - 512))).toString('latin1')).slice(-1024);
      if (got > fileBytes && tail.includes(MARK + 'X')) {
        off();
        resolve(performance.now() - t0);
      }
    });
  });
  await client.call('terminal.ack', { sessionId, bytes: 0 });
  await client.call('terminal.write', { sessionId, data: `cat ${file}; echo ${MARK}X\n` });
  const ms = await done;
  await client.call('sessions.close', { sessionId });
  return ms;
}

async function ssh2Throughput(): Promise<number> {
  const c = await ssh2Connect();
  const ch = await ssh2Shell(c);
  await new Promise((r) => setTimeout(r, 300));
  let got = 0;
  let tail = '';
  const t0 = performance.now();
  const ms = await new Promise<number>((resolve) => {
    ch.on('data', (d: Buffer) => {
      got += d.length;
      tail = (tail + d.subarray(Math.max(0, d.length - 512)).toString('latin1')).slice(-1024);
      if (got > fileBytes && tail.includes(MARK + 'X')) resolve(performance.now() - t0);
    });
    ch.write(`cat ${file}; echo ${MARK}X\n`);
  });
  c.destroy();
  return ms;
}

async function opensshThroughput(tty: boolean): Promise<number> {
  const t0 = performance.now();
  await new Promise<void>((resolve, reject) => {
    const p = spawn(
      'ssh',
      [...(tty ? ['-tt'] : []), '-i', sshd.users.key.privateKeyPath, '-p', String(sshd.port), '-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null', '-o', 'LogLevel=ERROR', `${sshd.users.key.username}@${sshd.host}`, `cat ${file}`],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
    p.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`ssh exited ${code}`))));
  });
  return performance.now() - t0;
}

// ---------- keystroke echo latency ----------
async function wraithEcho(): Promise<number[]> {
  const { sessionId } = await client.call('ssh.open', { connectionId });
  await client.call('terminal.write', { sessionId, data: 'stty -icanon; cat >/dev/null\n' });
  await new Promise((r) => setTimeout(r, 500));
  const lat: number[] = [];
  for (let i = 0; i < KEYSTROKES; i++) {
    const ch = String.fromCharCode(97 + (i % 26));
    const t0 = performance.now();
    const echoed = new Promise<void>((resolve) => {
      const off = client.on('terminal.data', (d) => {
        if (d.sessionId === sessionId && Buffer.from(d.data).toString('latin1').includes(ch)) {
          off();
          resolve();
        }
      });
    });
    await client.call('terminal.write', { sessionId, data: ch });
    await echoed;
    lat.push(performance.now() - t0);
  }
  await client.call('sessions.close', { sessionId });
  return lat.sort((a, b) => a - b);
}

async function ssh2Echo(): Promise<number[]> {
  const c = await ssh2Connect();
  try {
    return await ssh2EchoLatencies(await ssh2Shell(c), KEYSTROKES);
  } finally {
    c.destroy();
  }
}

// ---------- memory / concurrency ----------
async function settle(): Promise<number> {
  for (let i = 0; i < 3; i++) {
    globalThis.gc?.();
    await new Promise((r) => setTimeout(r, 200));
  }
  return process.memoryUsage().rss;
}

async function sessionsFigures(): Promise<void> {
  const before = await settle();
  const ids: string[] = [];
  const t0 = performance.now();
  for (let i = 0; i < SESSIONS; i += 10) {
    const batch = await Promise.all(Array.from({ length: Math.min(10, SESSIONS - i) }, () => client.call('ssh.open', { connectionId })));
    ids.push(...batch.map((b) => b.sessionId));
  }
  const openMs = performance.now() - t0;
  const oks = await Promise.all(ids.map((sessionId) => client.call('ssh.exec', { sessionId, command: 'echo ok' })));
  const allOk = oks.every((r) => r.stdout === 'ok\n' && r.rc === 0);
  const idle = await settle();
  console.log(`${SESSIONS} concurrent sessions: opened in ${(openMs / 1000).toFixed(1)} s, exec on all ${allOk ? 'OK' : 'FAILED'}`);
  console.log(`host memory per idle SSH session: ${((idle - before) / SESSIONS / 1024).toFixed(0)} KiB (rss ${(before / 1048576).toFixed(0)} → ${(idle / 1048576).toFixed(0)} MiB)`);

  // Busy: 10 sessions running `yes` with no view attached (ring buffers full, full speed).
  const busy = ids.slice(0, 10);
  for (const sessionId of busy) await client.call('terminal.write', { sessionId, data: 'yes\n' });
  await new Promise((r) => setTimeout(r, 3000));
  let peak = 0;
  for (let i = 0; i < 10; i++) {
    peak = Math.max(peak, process.memoryUsage().rss);
    await new Promise((r) => setTimeout(r, 200));
  }
  const bytes = busy.reduce((n, id) => n + app.terminals.get(id).ring.endSeq, 0);
  console.log(
    `busy (10 sessions running yes, no view): ${(bytes / 1048576).toFixed(0)} MiB streamed, rss peak ${(peak / 1048576).toFixed(0)} MiB → ` +
      `${((peak - idle) / 10 / 1048576).toFixed(1)} MiB extra per busy session`,
  );
  // Paused (a view attached that stopped acking): the channel window closes.
  for (const sessionId of busy) await client.call('terminal.ack', { sessionId, bytes: 0 });
  await new Promise((r) => setTimeout(r, 1500));
  const paused = busy.filter((id) => app.terminals.get(id).flow.paused).length;
  const pausedRss = await settle();
  console.log(`paused by flow control: ${paused}/10, rss ${(pausedRss / 1048576).toFixed(0)} MiB`);
  for (const sessionId of ids) await client.call('sessions.close', { sessionId });
}

try {
  console.log(`SSH output throughput, cat of a ${(fileBytes / 1048576).toFixed(0)} MiB text file over loopback:`);
  const o = await opensshThroughput(false);
  console.log(`  OpenSSH ssh host 'cat file' > /dev/null : ${mbps(fileBytes, o)} (${(o / 1000).toFixed(2)} s)  [no pty]`);
  const ot = await opensshThroughput(true);
  console.log(`  OpenSSH ssh -tt host 'cat file' >/dev/null: ${mbps(fileBytes, ot)} (${(ot / 1000).toFixed(2)} s)  [pty, as a terminal]`);
  const s = await ssh2Throughput();
  console.log(`  ssh2 alone (shell channel)              : ${mbps(fileBytes, s)} (${(s / 1000).toFixed(2)} s)`);
  const w = await wraithThroughput();
  console.log(`  Wraith session → terminal.data + acks   : ${mbps(fileBytes, w)} (${(w / 1000).toFixed(2)} s)`);

  const e2 = await ssh2Echo();
  const ew = await wraithEcho();
  console.log(`Keystroke echo latency (${KEYSTROKES} keys):`);
  console.log(`  ssh2 alone : p50 ${fmt(pct(e2, 50))}  p99 ${fmt(pct(e2, 99))}`);
  console.log(`  Wraith     : p50 ${fmt(pct(ew, 50))}  p99 ${fmt(pct(ew, 99))}  (added p99 ${fmt(pct(ew, 99) - pct(e2, 99))})`);

  await sessionsFigures();
} finally {
  client.close();
  await app.dispose();
  await sshd.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
