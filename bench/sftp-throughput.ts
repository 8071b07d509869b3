/**
 * SFTP throughput: Wraith (the App's own SSH connect path and SftpService) vs OpenSSH's own
 * clients, against the same local sshd.
 *
 *   node --import tsx bench/sftp-throughput.ts [--mb 500] [--rounds 3] [--tune] [--wraith-only] [--replace]
 *
 * A random file (default 500 MB) is created under /tmp and deleted at the end. Each round runs
 * Wraith upload + download, OpenSSH `sftp` put + get, `scp` (SFTP protocol, the OpenSSH 9
 * default) up + down, `scp -O` (legacy SCP protocol) up + down, and — for reference only —
 * `sftp` put + get with OpenSSH's own default cipher. All use the key user.
 *
 * What keeps the comparison fair:
 * - Same cipher. OpenSSH is told (-c) the cipher Wraith's connection negotiated, read from the
 *   sshd log; every connection's negotiated cipher is printed. (OpenSSH's default is
 *   chacha20-poly1305, which is slower than AES-GCM on a CPU with AES-NI: comparing that against
 *   Wraith's AES-GCM would flatter Wraith. Those rows are labelled "own default cipher".)
 * - No handshake timed on either side. Wraith's session is open before timing; OpenSSH runs over
 *   a ControlMaster connection opened before timing (same processes on the data path: sftp/scp ↔
 *   the master ssh ↔ TCP), so key exchange and authentication are outside the timing for both.
 * - Same files and caches. Every run reads a source that is in the page cache and writes to
 *   /tmp or the key user's home; `sync` runs before every timed run so one run's writeback does
 *   not land in the next one. No hashing inside timed parts (copies are checked once, after).
 * - Same kind of target. By default every run writes a new file: its destination is removed
 *   before the run, outside the timing (downloads always did; uploads from round 2 used to land
 *   on the previous round's copy). `--replace` keeps the previous copy, which times a different
 *   operation per tool: Wraith writes a temp file and renames it over the old one, `sftp put`
 *   truncates the old file (ext4 then flushes it on close, as it does a file renamed over
 *   another), and `scp` writes into the old file's blocks in place and truncates at the end
 *   (fast, but the name holds a mix of old and new bytes until it finishes).
 * - Order alternates each round (Wraith first, then OpenSSH first), and each figure is shown as
 *   best and median of the rounds, beside CPU seconds per GB on the client side (Wraith: the
 *   whole node process; OpenSSH: sftp/scp plus the master ssh) and on the server side (the sshd
 *   process tree). The machine is shared: the load average is printed before and after, and
 *   each row says how many cores other processes took during its runs ("others") and the median
 *   of the runs they left alone ("quiet"); compare figures from quiet runs.
 *
 * `--tune` also sweeps SftpService's chunk size × bytes in flight over the same session (one run
 * each, in one process: later rows inherit the heap the earlier ones left, so repeat a row
 * before trusting a difference).
 * Needs root (the sshd harness).
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from '../src-main/node/app.js';
import { connectInProcess } from '../src-main/node/in-process.js';
import { SftpService } from '../src-main/node/sftp/sftp-service.js';
import type { TransferTuning } from '../src-main/node/sftp/transfer-runner.js';
import { startSshd } from '../tests/fixtures/sshd.js';
import { sha256File } from '../tests/fixtures/files.js';
import { missingHostHeapFlags, runUnderHostHeapFlags } from '../src-main/server/host-heap.js';
import { numberArg, flagArg } from './args.js';

// Wraith's host runs in this process here: give it the heap flags `wraith serve` runs under.
if (missingHostHeapFlags().length > 0) await runUnderHostHeapFlags();

const SIZE_MB = numberArg('mb', 500);
const ROUNDS = numberArg('rounds', 3);
const TUNE = flagArg('tune');
/** Only Wraith's rows (for profiling it); the comparison needs both. */
const WRAITH_ONLY = flagArg('wraith-only');
/** Uploads land on the previous round's copy instead of a new file (see the header). */
const REPLACE = flagArg('replace');
const SIZE = SIZE_MB * 1_000_000;
const SRC = `/tmp/wraith-bench-${randomBytes(4).toString('hex')}.bin`;
const DOWN = `${SRC}.down`;
const TICK_MS = 1000 / 100;
/** A run is "quiet" when processes outside the bench used less than this many cores meanwhile. */
const QUIET_CORES = 0.25; // /proc reports CPU time in clock ticks (USER_HZ = 100 on Linux)

const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Fields after "(comm)" in /proc/PID/stat: [11] utime, [12] stime, [13] cutime, [14] cstime. */
function statFields(path: string): string[] | null {
  try {
    const s = readFileSync(path, 'utf8');
    return s.slice(s.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** CPU ms of a process tree, waited-for descendants included (they move into cutime/cstime). */
function treeCpuMs(root: number): number {
  let ticks = 0;
  const walk = (pid: number) => {
    const f = statFields(`/proc/${pid}/stat`);
    if (!f) return;
    ticks += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
    let kids: string[] = [];
    try {
      kids = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(' ').filter(Boolean);
    } catch {
      // gone meanwhile
    }
    for (const k of kids) walk(Number(k));
  };
  walk(root);
  return ticks * TICK_MS;
}

/** CPU ms of this process's waited-for children (the sftp/scp runs). */
function childrenCpuMs(): number {
  const f = statFields('/proc/self/stat');
  return f ? (Number(f[13]) + Number(f[14])) * TICK_MS : 0;
}

function processCpuMs(pid: number): number {
  const f = statFields(`/proc/${pid}/stat`);
  return f ? (Number(f[11]) + Number(f[12])) * TICK_MS : 0;
}

/** "kex: client->server cipher: X MAC: Y" lines the sshd log gained since `from`. */
function ciphersSince(logText: string, from: number): string[] {
  return logText
    .slice(from)
    .split('\n')
    .filter((l) => /kex: client->server cipher/.test(l))
    .map((l) => l.replace(/.*cipher: (\S+) MAC: (\S+).*/, '$1 (MAC $2)'));
}

/** CPU ms the whole machine spent busy (all cores, /proc/stat: everything but idle and iowait). */
function machineBusyMs(): number {
  const f = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
  const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
  return (total - (f[3] ?? 0) - (f[4] ?? 0)) * TICK_MS;
}

interface Sample {
  mbps: number;
  clientCpuPerGb: number;
  serverCpuPerGb: number;
  /** Cores busy with processes outside this bench meanwhile (the machine is shared). */
  othersCores: number;
}

async function main(): Promise<void> {
  const loadBefore = load();
  const sshd = await startSshd();
  const sshdPid = Number(readFileSync(join(sshd.dir, 'sshd.pid'), 'utf8'));
  const user = sshd.users.key.username;
  const key = sshd.users.key.privateKeyPath;
  const home = execFileSync('sh', ['-c', `getent passwd ${user} | cut -d: -f6`], { encoding: 'utf8' }).trim();
  const remote = (name: string) => `${home}/${name}`;
  const cleanup: string[] = [SRC, DOWN];
  const dataDir = mkdtempSync(join(tmpdir(), 'wraith-bench-app-'));
  const app = new App({ dataDir, host: 'in-process' });
  const c = connectInProcess(app);
  const masters: ChildProcess[] = [];

  try {
    // The source: random bytes (incompressible), written in 8 MB pieces.
    const fd = openSync(SRC, 'w', 0o644);
    const piece = randomBytes(8_000_000);
    for (let left = SIZE; left > 0; left -= piece.length) writeSync(fd, piece, 0, Math.min(left, piece.length));
    closeSync(fd);
    const srcSha = await sha256File(SRC);

    // Wraith: a saved key connection, opened the way the UI opens it.
    await c.call('vault.init', { protection: 'keyfile' });
    await c.call('hostkeys.trust', { kind: 'ssh', host: sshd.host, port: sshd.port, keyType: sshd.hostKeyType, fingerprint: sshd.hostKeyFingerprint });
    const conn = await c.call('connections.create', {
      name: 'bench',
      kind: 'ssh',
      host: sshd.host,
      port: sshd.port,
      username: user,
      authMethod: 'key',
      secrets: { privateKey: sshd.users.key.privateKey },
    });
    const logAt = sshd.readLog().length;
    const { sessionId } = await c.call('ssh.open', { connectionId: conn.id });
    await c.call('sftp.realpath', { sessionId }); // opens the SFTP channel outside the timing
    const wraithCipher = ciphersSince(sshd.readLog(), logAt)[0] ?? 'unknown';
    const cipherName = wraithCipher.split(' ')[0] ?? 'aes128-gcm@openssh.com';

    // OpenSSH: one ControlMaster per cipher setting, authenticated before any timing.
    const baseOpts = ['-i', key, '-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null', '-o', 'LogLevel=ERROR', '-o', 'BatchMode=yes'];
    const openMaster = async (cipher: string | null) => {
      const ctl = join(dataDir, `ctl-${masters.length}`);
      const before = sshd.readLog().length;
      const proc = spawn('ssh', [...baseOpts, ...(cipher ? ['-c', cipher] : []), '-M', '-N', '-S', ctl, '-o', 'ControlPersist=no', '-p', String(sshd.port), `${user}@${sshd.host}`], {
        stdio: 'ignore',
      });
      masters.push(proc);
      for (let i = 0; i < 200 && !existsSync(ctl); i++) await sleep(25);
      if (!existsSync(ctl)) throw new Error('The OpenSSH ControlMaster did not come up');
      await sleep(100);
      const pid = proc.pid ?? 0;
      return { opts: [...baseOpts, '-o', `ControlPath=${ctl}`, '-o', 'ControlMaster=no'], pid, cipher: ciphersSince(sshd.readLog(), before)[0] ?? 'unknown' };
    };
    const same = await openMaster(cipherName);
    const own = await openMaster(null);

    const samples = new Map<string, Sample[]>();
    const record = (name: string, s: Sample) => samples.set(name, [...(samples.get(name) ?? []), s]);

    /** Times one run and what it costs in CPU on each side. */
    const measure = async (name: string, clientCpu: () => number, run: () => Promise<void> | void, target?: string) => {
      if (target && !REPLACE) rmSync(target, { force: true });
      execFileSync('sync');
      await sleep(50);
      const [c0, s0, b0, o0] = [clientCpu(), treeCpuMs(sshdPid), benchCpu(), machineBusyMs()];
      const t0 = performance.now();
      await run();
      const ms = performance.now() - t0;
      await sleep(100); // the server's per-session processes exit and are reaped
      const wall = performance.now() - t0;
      const [c1, s1, b1, o1] = [clientCpu(), treeCpuMs(sshdPid), benchCpu(), machineBusyMs()];
      const gb = SIZE / 1e9;
      record(name, {
        mbps: SIZE / 1e6 / (ms / 1000),
        clientCpuPerGb: (c1 - c0) / 1000 / gb,
        serverCpuPerGb: (s1 - s0) / 1000 / gb,
        othersCores: Math.max(0, (o1 - o0 - (b1 - b0) - (s1 - s0)) / wall),
      });
    };
    const nodeCpu = () => {
      const u = process.cpuUsage();
      return (u.user + u.system) / 1000;
    };
    const opensshCpu = (masterPid: number) => () => childrenCpuMs() + processCpuMs(masterPid);
    /** Everything this bench runs on the client side: itself, its waited-for children, the masters. */
    const benchCpu = () => nodeCpu() + childrenCpuMs() + masters.reduce((sum, m) => sum + processCpuMs(m.pid ?? 0), 0);

    const runWraith = async (svc: SftpService | null, dir: 'up' | 'down') => {
      const params =
        dir === 'up'
          ? { sessionId, localPath: SRC, remotePath: remote('wraith-up.bin'), overwrite: true }
          : { sessionId, remotePath: remote('wraith-up.bin'), localPath: DOWN, overwrite: true };
      const { transferId } = svc
        ? await (dir === 'up' ? svc.upload(params) : svc.download(params))
        : await c.call(dir === 'up' ? 'sftp.upload' : 'sftp.download', params);
      const info = await (svc ?? app.sftp).wait(transferId);
      if (info.state !== 'done') throw new Error(`Wraith ${dir}: ${info.state} ${info.error?.message ?? ''}`);
    };
    const sftpBatch = (m: { opts: string[] }, batch: string) => () => {
      execFileSync('sftp', [...m.opts, '-P', String(sshd.port), '-b', '-', `${user}@${sshd.host}`], { input: batch, stdio: ['pipe', 'ignore', 'inherit'] });
    };
    const scp = (m: { opts: string[] }, legacy: boolean, from: string, to: string) => () => {
      execFileSync('scp', [...(legacy ? ['-O'] : []), ...m.opts, '-P', String(sshd.port), from, to], { stdio: ['ignore', 'ignore', 'inherit'] });
    };
    const at = (p: string) => `${user}@${sshd.host}:${p}`;
    cleanup.push(...['wraith-up.bin', 'sftp-up.bin', 'scp-up.bin', 'scpO-up.bin', 'sftp-own-up.bin'].map(remote));

    const wraithRound = async () => {
      await measure('Wraith upload', nodeCpu, () => runWraith(null, 'up'), remote('wraith-up.bin'));
      await measure('Wraith download', nodeCpu, () => runWraith(null, 'down'));
      rmSync(DOWN, { force: true });
    };
    const opensshRound = async () => {
      if (WRAITH_ONLY) return;
      const cpu = opensshCpu(same.pid);
      await measure('OpenSSH sftp put', cpu, sftpBatch(same, `put ${SRC} sftp-up.bin\n`), remote('sftp-up.bin'));
      await measure('OpenSSH sftp get', cpu, sftpBatch(same, `get sftp-up.bin ${DOWN}\n`));
      rmSync(DOWN, { force: true });
      await measure('scp upload (SFTP protocol)', cpu, scp(same, false, SRC, at('scp-up.bin')), remote('scp-up.bin'));
      await measure('scp download (SFTP protocol)', cpu, scp(same, false, at('scp-up.bin'), DOWN));
      rmSync(DOWN, { force: true });
      await measure('scp -O upload (legacy SCP)', cpu, scp(same, true, SRC, at('scpO-up.bin')), remote('scpO-up.bin'));
      await measure('scp -O download (legacy SCP)', cpu, scp(same, true, at('scpO-up.bin'), DOWN));
      rmSync(DOWN, { force: true });
      const ownCpu = opensshCpu(own.pid);
      await measure('sftp put, own default cipher', ownCpu, sftpBatch(own, `put ${SRC} sftp-own-up.bin\n`), remote('sftp-own-up.bin'));
      await measure('sftp get, own default cipher', ownCpu, sftpBatch(own, `get sftp-own-up.bin ${DOWN}\n`));
      rmSync(DOWN, { force: true });
    };

    for (let round = 1; round <= ROUNDS; round++) {
      if (round % 2 === 1) {
        await wraithRound();
        await opensshRound();
      } else {
        await opensshRound();
        await wraithRound();
      }
      if (round === 1) {
        await runWraith(null, 'down');
        const [up, down] = [await sha256File(remote('wraith-up.bin')), await sha256File(DOWN)];
        if (up !== srcSha || down !== srcSha) throw new Error('A Wraith copy differs from the source');
        for (const name of WRAITH_ONLY ? [] : ['sftp-up.bin', 'scp-up.bin', 'scpO-up.bin']) {
          if ((await sha256File(remote(name))) !== srcSha) throw new Error(`OpenSSH's ${name} differs from the source`);
        }
        rmSync(DOWN, { force: true });
      }
    }

    const median = (xs: number[]) => {
      const s = [...xs].sort((a, b) => a - b);
      const m = Math.floor(s.length / 2);
      return s.length % 2 ? (s[m] ?? 0) : ((s[m - 1] ?? 0) + (s[m] ?? 0)) / 2;
    };
    console.log(`\nSFTP throughput, ${SIZE_MB} MB random file, 127.0.0.1, ${spawnSync('ssh', ['-V'], { encoding: 'utf8' }).stderr.trim()}, node ${process.version}`);
    console.log(`ciphers (sshd log): Wraith ${wraithCipher}; OpenSSH rows ${same.cipher}; "own default cipher" rows ${own.cipher}`);
    console.log(REPLACE ? 'uploads replace the previous round\'s copy (--replace)' : 'every upload and download writes a new file (the previous copy is removed before the run, untimed)');
    console.log(`${ROUNDS} round(s), order alternating; MB = 10^6 bytes; CPU = CPU seconds per GB moved (client side / sshd side);`);
    console.log(`others = cores (of ${cpus().length}) that processes outside this bench used meanwhile, median;`);
    console.log(`quiet = median MB/s of the runs during which others used under ${QUIET_CORES} core (how many such runs)`);
    console.log(`load average before: ${loadBefore}; after: ${load()}`);
    console.log(`  ${''.padEnd(32)} ${'best'.padStart(7)} ${'median'.padStart(7)} MB/s   CPU s/GB client  server   others    quiet`);
    for (const [name, xs] of samples) {
      const mb = xs.map((x) => x.mbps);
      const cl = median(xs.map((x) => x.clientCpuPerGb));
      const sv = median(xs.map((x) => x.serverCpuPerGb));
      const ot = median(xs.map((x) => x.othersCores));
      const quiet = xs.filter((x) => x.othersCores < QUIET_CORES).map((x) => x.mbps);
      const q = quiet.length ? `${median(quiet).toFixed(1)} (${quiet.length})` : '-';
      console.log(
        `  ${name.padEnd(32)} ${Math.max(...mb).toFixed(1).padStart(7)} ${median(mb).toFixed(1).padStart(7)}        ${cl.toFixed(2).padStart(12)} ${sv.toFixed(2).padStart(7)} ${ot.toFixed(2).padStart(8)} ${q.padStart(12)}`,
      );
    }

    console.log('every run, in order: MB/s (others, client CPU s/GB)');
    for (const [name, xs] of samples) {
      console.log(`  ${name.padEnd(32)} ${xs.map((x) => `${x.mbps.toFixed(0)} (${x.othersCores.toFixed(2)}, ${x.clientCpuPerGb.toFixed(2)})`).join('  ')}`);
    }

    if (TUNE) {
      console.log('\nSftpService tuning sweep over the same session (one run each):');
      for (const chunkSize of [32 * 1024, 64 * 1024, 128 * 1024, 255 * 1024]) {
        for (const inFlightKiB of [512, 1024, 2048, 4096, 8192]) {
          const tuning: Partial<TransferTuning> = { chunkSize, readInFlightBytes: inFlightKiB * 1024, writeInFlightBytes: inFlightKiB * 1024 };
          const s = new SftpService((id) => app.ssh.sftp(id), { tuning });
          const t0 = performance.now();
          await runWraith(s, 'up');
          const up = SIZE / 1e6 / ((performance.now() - t0) / 1000);
          const t1 = performance.now();
          await runWraith(s, 'down');
          const down = SIZE / 1e6 / ((performance.now() - t1) / 1000);
          rmSync(DOWN, { force: true });
          await s.dispose();
          console.log(`  chunk ${String(chunkSize / 1024).padStart(3)} KiB, ${String(inFlightKiB).padStart(4)} KiB in flight: up ${up.toFixed(1).padStart(6)}  down ${down.toFixed(1).padStart(6)} MB/s`);
        }
      }
      console.log(`load average after the sweep: ${load()}`);
    }
  } finally {
    for (const m of masters) m.kill();
    c.close();
    await app.dispose();
    for (const p of cleanup) rmSync(p, { force: true });
    rmSync(dataDir, { recursive: true, force: true });
    await sshd.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
