/**
 * SFTP throughput: SftpService vs OpenSSH's own clients, against the same local sshd.
 *
 *   node --import tsx bench/sftp-throughput.ts [--mb 500] [--rounds 2] [--tune]
 *
 * A random file (default 500 MB) is created under /tmp and deleted at the end. Each round runs,
 * in turn: SftpService upload + download, OpenSSH `sftp` put + get, `scp` (SFTP protocol, the
 * OpenSSH 9 default) up + down, and `scp -O` (legacy SCP protocol) up + down. All use the key
 * user; ssh2 and OpenSSH each negotiate their default cipher. The best round of each is printed
 * (the machine is shared, so the best is the least disturbed). `--tune` also sweeps SftpService's
 * chunk size × requests in flight. Needs root (the sshd harness).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, closeSync, createReadStream, openSync, rmSync, writeSync } from 'node:fs';
import { Client, type SFTPWrapper } from 'ssh2';
import { SftpService } from '../src-main/node/sftp/sftp-service.js';
import type { TransferTuning } from '../src-main/node/sftp/transfer-runner.js';
import { startSshd } from '../tests/fixtures/sshd.js';

const args = process.argv.slice(2);
const arg = (name: string, dflt: number) => {
  const i = args.indexOf(`--${name}`);
  const v = i >= 0 ? Number(args[i + 1]) : NaN;
  return Number.isFinite(v) && v > 0 ? v : dflt;
};
const SIZE_MB = arg('mb', 500);
const ROUNDS = arg('rounds', 2);
const TUNE = args.includes('--tune');
const SIZE = SIZE_MB * 1_000_000;
const SRC = `/tmp/wraith-bench-${randomBytes(4).toString('hex')}.bin`;
const DOWN = `${SRC}.down`;

function sha256(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const h = createHash('sha256');
    createReadStream(path)
      .on('data', (d) => h.update(d))
      .on('end', () => resolve(h.digest('hex')))
      .on('error', reject);
  });
}

function mbps(bytes: number, ms: number): number {
  return bytes / 1_000_000 / (ms / 1000);
}

async function timed(fn: () => Promise<void> | void): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

async function main(): Promise<void> {
  const sshd = await startSshd();
  // sshd reads authorized_keys as the user: the harness dir must be traversable (the private
  // keys in it stay 0600). The ssh branch fixes this in the fixture; harmless once merged.
  chmodSync(sshd.dir, 0o755);
  const user = sshd.users.key.username;
  const key = sshd.users.key.privateKeyPath;
  const home = execFileSync('sh', ['-c', `getent passwd ${user} | cut -d: -f6`], { encoding: 'utf8' }).trim();
  const sshOpts = ['-i', key, '-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null', '-o', 'LogLevel=ERROR', '-o', 'BatchMode=yes'];
  const remote = (name: string) => `${home}/${name}`;
  const cleanup: string[] = [SRC, DOWN];

  try {
    // The source: random bytes (incompressible), written in 8 MB pieces.
    const fd = openSync(SRC, 'w', 0o644);
    const piece = randomBytes(8_000_000);
    for (let left = SIZE; left > 0; left -= piece.length) writeSync(fd, piece, 0, Math.min(left, piece.length));
    closeSync(fd);
    const srcSha = await sha256(SRC);

    const client = new Client();
    await new Promise<void>((resolve, reject) => {
      client.once('ready', () => resolve());
      client.once('error', reject);
      client.connect({ host: sshd.host, port: sshd.port, username: user, privateKey: sshd.users.key.privateKey });
    });
    const sftp = await new Promise<SFTPWrapper>((resolve, reject) => client.sftp((err, s) => (err ? reject(err) : resolve(s))));
    const cipher = (() => {
      const log = sshd.readLog().split('\n').filter((l) => /kex: client->server cipher/.test(l));
      return log.map((l) => l.replace(/.*cipher: (\S+).*/, '$1'));
    })();

    const service = (tuning?: Partial<TransferTuning>) => new SftpService(() => Promise.resolve(sftp), { tuning });
    const runService = async (svc: SftpService, dir: 'up' | 'down'): Promise<number> => {
      const start =
        dir === 'up'
          ? () => svc.upload({ sessionId: 's', localPath: SRC, remotePath: remote('svc-up.bin'), overwrite: true })
          : () => svc.download({ sessionId: 's', remotePath: remote('svc-up.bin'), localPath: DOWN, overwrite: true });
      let state = '';
      const ms = await timed(async () => {
        const { transferId } = await start();
        const info = await svc.wait(transferId);
        state = info.state === 'failed' ? `failed: ${info.error?.message}` : info.state;
      });
      if (state !== 'done') throw new Error(`SftpService ${dir}: ${state}`);
      return ms;
    };
    cleanup.push(remote('svc-up.bin'), remote('sftp-up.bin'), remote('scp-up.bin'), remote('scpO-up.bin'));

    const runSftpBatch = (batch: string) =>
      timed(() => {
        execFileSync('sftp', [...sshOpts, '-P', String(sshd.port), '-b', '-', `${user}@${sshd.host}`], { input: batch, stdio: ['pipe', 'ignore', 'inherit'] });
      });
    const runScp = (legacy: boolean, from: string, to: string) =>
      timed(() => {
        execFileSync('scp', [...(legacy ? ['-O'] : []), ...sshOpts, '-P', String(sshd.port), from, to], { stdio: ['ignore', 'ignore', 'inherit'] });
      });
    const at = (p: string) => `${user}@${sshd.host}:${p}`;

    const best = new Map<string, number>();
    const record = (name: string, ms: number) => best.set(name, Math.max(best.get(name) ?? 0, mbps(SIZE, ms)));

    const svc = service();
    for (let round = 1; round <= ROUNDS; round++) {
      record('SftpService upload', await runService(svc, 'up'));
      record('SftpService download', await runService(svc, 'down'));
      if (round === 1) {
        const [up, down] = [await sha256(remote('svc-up.bin')), await sha256(DOWN)];
        if (up !== srcSha || down !== srcSha) throw new Error('SftpService copy differs from the source');
      }
      rmSync(DOWN, { force: true });
      record('OpenSSH sftp put', await runSftpBatch(`put ${SRC} sftp-up.bin\n`));
      record('OpenSSH sftp get', await runSftpBatch(`get sftp-up.bin ${DOWN}\n`));
      rmSync(DOWN, { force: true });
      record('scp upload (SFTP protocol)', await runScp(false, SRC, at('scp-up.bin')));
      record('scp download (SFTP protocol)', await runScp(false, at('scp-up.bin'), DOWN));
      rmSync(DOWN, { force: true });
      record('scp -O upload (legacy SCP)', await runScp(true, SRC, at('scpO-up.bin')));
      record('scp -O download (legacy SCP)', await runScp(true, at('scpO-up.bin'), DOWN));
      rmSync(DOWN, { force: true });
    }
    await svc.dispose();

    console.log(`\nSFTP throughput, ${SIZE_MB} MB random file, 127.0.0.1, ${spawnSync('ssh', ['-V'], { encoding: 'utf8' }).stderr.trim()}`);
    console.log(`ciphers negotiated (sshd log, in connection order): ${[...new Set(cipher)].join(', ') || 'unknown'}`);
    console.log(`best of ${ROUNDS} round(s), MB = 10^6 bytes; load average at end: ${(await import('node:os')).loadavg().map((l) => l.toFixed(1)).join(' ')}`);
    for (const [name, v] of best) console.log(`  ${name.padEnd(32)} ${v.toFixed(1).padStart(7)} MB/s`);

    if (TUNE) {
      console.log('\nSftpService tuning sweep (one run each):');
      for (const chunkSize of [32 * 1024, 64 * 1024, 128 * 1024, 255 * 1024]) {
        for (const concurrency of [4, 8, 16, 32, 64]) {
          const s = service({ chunkSize, concurrency });
          const up = mbps(SIZE, await runService(s, 'up'));
          const down = mbps(SIZE, await runService(s, 'down'));
          rmSync(DOWN, { force: true });
          await s.dispose();
          console.log(`  chunk ${String(chunkSize / 1024).padStart(3)} KiB × ${String(concurrency).padStart(2)} in flight: up ${up.toFixed(1).padStart(6)}  down ${down.toFixed(1).padStart(6)} MB/s`);
        }
      }
    }
    client.end();
  } finally {
    for (const p of cleanup) rmSync(p, { force: true });
    await sshd.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
