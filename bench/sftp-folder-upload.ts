/**
 * A folder of many small files uploaded through the Files panel of a real Chromium page of
 * `wraith serve` (the folder input, as "Upload a folder" gives it), against the local sshd:
 * from setting the input to every file on the server under its own name and the transfers list
 * saying "all finished"; the rows the transfers list held at the end; and as anchors OpenSSH's
 * `scp -r` and `sftp` `put -r` of the same folder over a ControlMaster connection opened before
 * timing. `--rtt MS` puts every connection through a proxy that delays each direction by MS/2,
 * a server that far away (round trips, not bandwidth, are what many small files cost).
 *
 *   npm run build && node --import tsx bench/sftp-folder-upload.ts [--files 1000] [--kb 4] [--rounds 3] [--rtt 0]
 *
 * Needs root (the sshd harness) and /usr/bin/chromium.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { openApp } from '../tests/fixtures/browser.js';
import { startSshd } from '../tests/fixtures/sshd.js';
import { startWraithServer } from '../tests/fixtures/wraith-server.js';
import { numberArg } from './args.js';
import { type DelayProxy, startDelayProxy } from '../tests/fixtures/delay-proxy.js';
import { openSshTab } from './wraith-tab.js';

const FILES = numberArg('files', 1000);
const KB = numberArg('kb', 4);
const ROUNDS = numberArg('rounds', 3);
const RTT_MS = numberArg('rtt', 0);
const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const sshd = await startSshd();
const proxy: DelayProxy | null = RTT_MS > 0 ? await startDelayProxy(sshd.port, RTT_MS / 2) : null;
const port = proxy?.port ?? sshd.port;
const server = await startWraithServer();
const browser = await openApp(server.openUrl);
const page = browser.page;
const pwUser = sshd.users.password.username;
const keyUser = sshd.users.key.username;
const homeOf = (u: string) => execFileSync('getent', ['passwd', u], { encoding: 'utf8' }).split(':')[5] ?? '';
const local = mkdtempSync(join(tmpdir(), 'wraith-bench-folder-'));
const src = join(local, 'site');
let master: ChildProcess | null = null;
const ctl = join(local, 'ctl');
const cleanup: string[] = [local];
try {
  for (let i = 0; i < FILES; i++) {
    const dir = join(src, `d${Math.floor(i / 100)}`);
    if (i % 100 === 0) mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `f${i}.txt`), randomBytes(KB * 1024));
  }
  const count = (dir: string): number =>
    readdirSync(dir, { withFileTypes: true }).reduce((n, e) => n + (e.isDirectory() ? count(join(dir, e.name)) : e.name.startsWith('.') ? 0 : 1), 0);
  const loadBefore = load();

  await openSshTab(page, { ...sshd, port });
  await page.keyboard.press('Control+Shift+E');
  const panel = page.getByRole('complementary', { name: 'Files' });
  await panel.locator('tr.sftp-row').first().or(panel.getByText('This folder is empty')).first().waitFor();
  const wraithMs: number[] = [];
  let rowsAtEnd = 0;
  for (let r = 0; r < ROUNDS; r++) {
    const dest = join(homeOf(pwUser), 'site');
    rmSync(dest, { recursive: true, force: true });
    cleanup.push(dest);
    // The batch's row says done once its last file is renamed into place. Watched inside the page,
    // by an observer of the DOM's changes: polling the server's folder and the page's text from
    // here every 50 ms took 13-35% of a core from the processes being timed (2 cores), and polling
    // in the page at each frame asked for a frame 60 times a second that the page would not draw.
    await page.evaluate(() => {
      const w = window as unknown as { benchDone?: Promise<void> };
      w.benchDone = new Promise<void>((resolve) => {
        const seen = new MutationObserver(() => {
          if (document.querySelector('.sftp-transfers .transfer[data-state="done"]') === null) return;
          seen.disconnect();
          resolve();
        });
        seen.observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-state'] });
      });
    });
    const t0 = performance.now();
    await panel.locator('input[name=sftp-upload-folder]').setInputFiles(src);
    await page.evaluate(() => (window as unknown as { benchDone: Promise<void> }).benchDone);
    wraithMs.push(performance.now() - t0);
    // Every file under its final name (the temps are dot-files), and nothing left running.
    const landed = count(dest);
    if (landed !== FILES || (await panel.getByText('all finished').count()) === 0) throw new Error(`the upload ended with ${landed} of ${FILES} files on the server`);
    rowsAtEnd = await panel.locator('.transfer').count();
    await panel.getByRole('button', { name: 'Clear finished' }).click();
  }

  // OpenSSH: scp -r over a master connection opened before timing (no handshake timed).
  master = spawn('ssh', ['-M', '-N', '-S', ctl, '-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null', '-i', sshd.users.key.privateKeyPath, '-p', String(port), `${keyUser}@${sshd.host}`], { stdio: 'ignore' });
  for (let i = 0; i < 100 && spawnCheck(ctl) !== 0; i++) await sleep(100);
  const scpMs: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const dest = join(homeOf(keyUser), 'site');
    rmSync(dest, { recursive: true, force: true });
    cleanup.push(dest);
    const t0 = performance.now();
    await run('scp', ['-r', '-q', '-o', `ControlPath=${ctl}`, '-P', String(port), src, `${keyUser}@${sshd.host}:`]);
    scpMs.push(performance.now() - t0);
    if (count(dest) !== FILES) throw new Error('scp -r did not copy every file');
  }
  const sftpMs: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const dest = join(homeOf(keyUser), 'site');
    rmSync(dest, { recursive: true, force: true });
    const t0 = performance.now();
    await run('sftp', ['-q', '-o', `ControlPath=${ctl}`, '-P', String(port), '-b', '-', `${keyUser}@${sshd.host}`], `put -r ${src}\n`);
    sftpMs.push(performance.now() - t0);
    if (count(dest) !== FILES) throw new Error('sftp put -r did not copy every file');
  }

  const fmt = (xs: number[]) => `median ${(median(xs) / 1000).toFixed(2)} s  (${xs.map((x) => (x / 1000).toFixed(2)).join(', ')})`;
  const link = RTT_MS > 0 ? `, through a ${RTT_MS} ms round trip` : ', over loopback';
  console.log(`\nA folder of ${FILES} files of ${KB} KiB in ${Math.ceil(FILES / 100)} sub-folders${link}, ${ROUNDS} round(s); load average before ${loadBefore}, after ${load()}`);
  console.log(`  Wraith, Files panel "Upload a folder"    : ${fmt(wraithMs)}; ${(FILES / (median(wraithMs) / 1000)).toFixed(0)} files/s`);
  console.log(`  scp -r (OpenSSH, master connection open) : ${fmt(scpMs)}; ${(FILES / (median(scpMs) / 1000)).toFixed(0)} files/s`);
  console.log(`  sftp put -r (OpenSSH, same connection)   : ${fmt(sftpMs)}; ${(FILES / (median(sftpMs) / 1000)).toFixed(0)} files/s`);
  console.log(`  rows in the transfers list at the end    : ${rowsAtEnd}`);
} finally {
  master?.kill();
  await proxy?.close();
  for (const p of cleanup) rmSync(p, { recursive: true, force: true });
  await browser.close();
  await server.stop();
  await sshd.stop();
}

/**
 * Runs an OpenSSH client to its end without blocking this process, which may be carrying the
 * connection (the delay proxy of --rtt lives here).
 */
function run(cmd: string, args: string[], input?: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { stdio: [input === undefined ? 'ignore' : 'pipe', 'ignore', 'inherit'] });
    if (input !== undefined) p.stdin?.end(input);
    p.once('error', reject);
    p.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} exited ${code}`))));
  });
}

/** 0 once the master connection answers (ssh -O check). */
function spawnCheck(path: string): number {
  try {
    execFileSync('ssh', ['-S', path, '-O', 'check', 'x'], { stdio: 'ignore' });
    return 0;
  } catch {
    return 1;
  }
}
