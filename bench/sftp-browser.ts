/**
 * SFTP throughput the way a `wraith serve` user gets it: a file uploaded through the Files
 * panel's file input of a real page, and downloaded through the panel's Download (the browser
 * saves it), beside OpenSSH `scp` of the same file against the same sshd in the same run.
 *
 *   npm run build && node --import tsx bench/sftp-browser.ts [--mb 500] [--rounds 3]
 *
 * - The page: headless Chromium, the SSH tab and Files panel opened through the UI (password
 *   user), then Playwright disconnected: its DevTools instrumentation copies every WebSocket frame
 *   (the upload's bytes) into events for this process, which a person's browser does not do. The
 *   timed parts run over a bare DevTools session (cdp-page.ts).
 * - Upload: from DOM.setFileInputFiles on the panel's input to the transfer row showing done
 *   (the file renamed into place on the server). Download: from the menu's Download click to the
 *   browser's finished file on disk (no .crdownload left). Both are checked byte for byte once.
 * - scp: the key user, over a ControlMaster opened before timing (no handshake timed, as Wraith's
 *   session is open too), with the cipher Wraith's connection negotiated (read from the sshd log).
 * - `sync` before every timed run; the machine's load average is printed before and after.
 * Needs root (the sshd harness) and /usr/bin/chromium.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, linkSync, mkdirSync, mkdtempSync, openSync, readdirSync, rmSync, statSync, writeSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { CdpPage, type DetachableChromium, launchDetachableChromium } from './cdp-page.js';
import { NAME_SHIM, openSshTab } from './wraith-tab.js';
import { sha256File } from '../tests/fixtures/files.js';
import { type SshdHandle, startSshd } from '../tests/fixtures/sshd.js';
import { type WraithServer, startWraithServer } from '../tests/fixtures/wraith-server.js';
import { numberArg } from './args.js';

const SIZE = numberArg('mb', 500) * 1_000_000;
const ROUNDS = numberArg('rounds', 3);
const TIMEOUT_MS = 10 * 60_000;

const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] ?? 0) : ((s[m - 1] ?? 0) + (s[m] ?? 0)) / 2;
};
const homeOf = (user: string) => execFileSync('sh', ['-c', `getent passwd ${user} | cut -d: -f6`], { encoding: 'utf8' }).trim();

/** Polls `probe` every few ms until it returns true; throws after TIMEOUT_MS. */
async function until(what: string, probe: () => boolean | Promise<boolean>, everyMs = 5): Promise<void> {
  const deadline = Date.now() + TIMEOUT_MS;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${TIMEOUT_MS / 1000} s`);
    await sleep(everyMs);
  }
}

/** Seconds `run` takes, after a `sync` so one run's writeback does not land in the next. */
async function timed(run: () => Promise<void>): Promise<number> {
  execFileSync('sync');
  await sleep(200);
  const t0 = performance.now();
  await run();
  return (performance.now() - t0) / 1000;
}

/** The state of the transfers-list row for `name` (running, done, failed, cancelled), or null. */
function rowState(page: CdpPage, name: string): Promise<string | null> {
  return page.evaluate((n) => {
    for (const li of document.querySelectorAll('li.transfer')) if (li.querySelector('.transfer-name')?.textContent === n) return li.getAttribute('data-state');
    return null;
  }, name);
}

/** Uploads local `path` through the Files panel's file input and waits for its row to say done. */
async function uploadThroughPanel(page: CdpPage, path: string, name: string): Promise<void> {
  const doc = await page.send<{ root: { nodeId: number } }>('DOM.getDocument', { depth: 0 });
  const { nodeId } = await page.send<{ nodeId: number }>('DOM.querySelector', { nodeId: doc.root.nodeId, selector: '.sftp-panel input[name=sftp-upload]' });
  if (!nodeId) throw new Error('the Files panel has no upload input');
  await page.send('DOM.setFileInputFiles', { files: [path], nodeId });
  let state: string | null = null;
  await until(`upload of ${name}`, async () => {
    state = await rowState(page, name);
    return state !== null && state !== 'running';
  }, 10);
  if (state !== 'done') throw new Error(`upload of ${name} ended ${state}`);
}

/** Downloads `name` through its row's menu and waits for the browser's finished file in `dir`. */
async function downloadThroughPanel(page: CdpPage, name: string, dir: string): Promise<void> {
  await page.evaluate((n) => {
    const row = [...document.querySelectorAll<HTMLElement>('tr.sftp-row')].find((r) => r.dataset.name === n);
    if (!row) throw new Error(`no row for ${n}`);
    const r = row.getBoundingClientRect();
    row.dispatchEvent(new MouseEvent('contextmenu', { bubbles: true, cancelable: true, clientX: r.left + 10, clientY: r.top + 5 }));
  }, name);
  await page.evaluate(() => {
    const item = [...document.querySelectorAll<HTMLButtonElement>('.sftp-menu [role=menuitem]')].find((b) => b.textContent?.trim() === 'Download');
    if (!item) throw new Error('the row menu has no Download');
    item.click();
  }, null);
  const file = join(dir, name);
  await until(`download of ${name}`, () => existsSync(file) && statSync(file).size === SIZE && !readdirSync(dir).some((f) => f.endsWith('.crdownload')));
}

let sshd: SshdHandle | undefined;
let server: WraithServer | undefined;
let chrome: DetachableChromium | undefined;
let page: CdpPage | undefined;
let master: ChildProcess | undefined;
const work = mkdtempSync(join(tmpdir(), 'wraith-sftp-browser-'));

try {
  const loadBefore = load();
  const src = join(work, 'source.bin');
  const fd = openSync(src, 'w', 0o644);
  const piece = randomBytes(8_000_000);
  for (let left = SIZE; left > 0; left -= piece.length) writeSync(fd, piece, 0, Math.min(left, piece.length));
  closeSync(fd);
  const srcSha = await sha256File(src);
  const downloads = join(work, 'downloads');
  mkdirSync(downloads);

  sshd = await startSshd();
  server = await startWraithServer();
  let cipher = '';
  chrome = await launchDetachableChromium();
  {
    const pw = await chromium.connectOverCDP(chrome.wsEndpoint);
    const context = pw.contexts()[0];
    const p = context?.pages()[0] ?? (await context?.newPage());
    if (!p) throw new Error('Chromium has no page');
    await p.addInitScript(NAME_SHIM);
    await p.goto(server.openUrl);
    await p.getByText('Host: connected').waitFor();
    const logAt = sshd.readLog().length;
    await openSshTab(p, sshd);
    await p.getByRole('button', { name: /^Files/ }).first().click();
    await p.locator('.sftp-panel .sftp-row, .sftp-panel .sftp-empty').first().waitFor();
    cipher = /kex: client->server cipher: (\S+)/.exec(sshd.readLog().slice(logAt))?.[1] ?? '';
    if (!cipher) throw new Error("the sshd log does not name the cipher of Wraith's connection");
    // For a connectOverCDP browser, close() only disconnects: the page stays.
    await pw.close();
  }
  page = await CdpPage.attach(chrome.httpBase, (url) => url.startsWith(server?.url ?? '\0'));
  await page.send('Page.setDownloadBehavior', { behavior: 'allow', downloadPath: downloads });

  const keyUser = sshd.users.key.username;
  const base = ['-i', sshd.users.key.privateKeyPath, '-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null', '-o', 'LogLevel=ERROR', '-o', 'BatchMode=yes', '-c', cipher];
  const ctl = join(work, 'ctl');
  master = spawn('ssh', [...base, '-M', '-N', '-S', ctl, '-o', 'ControlPersist=no', '-p', String(sshd.port), `${keyUser}@${sshd.host}`], { stdio: 'ignore' });
  await until('the OpenSSH ControlMaster', () => existsSync(ctl), 25);
  const scpOpts = [...base, '-o', `ControlPath=${ctl}`, '-o', 'ControlMaster=no', '-P', String(sshd.port)];
  const scp = (from: string, to: string) => async () => {
    execFileSync('scp', [...scpOpts, from, to], { stdio: ['ignore', 'ignore', 'inherit'] });
  };

  const pwHome = homeOf(sshd.users.password.username);
  const keyRemote = `${keyUser}@${sshd.host}:${homeOf(keyUser)}/scp.bin`;
  const rows = new Map<string, number[]>();
  const record = (name: string, seconds: number) => rows.set(name, [...(rows.get(name) ?? []), SIZE / 1e6 / seconds]);
  for (let round = 1; round <= ROUNDS; round++) {
    // A new name each round: the panel asks before replacing a file, and this bench does not answer.
    const name = `wraith-${round}.bin`;
    const local = join(work, name);
    linkSync(src, local);
    record('Wraith page upload (Files panel)', await timed(() => uploadThroughPanel(page as CdpPage, local, name)));
    record('Wraith page download (Files panel)', await timed(() => downloadThroughPanel(page as CdpPage, name, downloads)));
    if (round === 1) {
      const [up, down] = [await sha256File(join(pwHome, name)), await sha256File(join(downloads, name))];
      if (up !== srcSha || down !== srcSha) throw new Error('A copy made through the page differs from the source');
    }
    rmSync(join(downloads, name));
    rmSync(join(pwHome, name));
    rmSync(local);
    record('scp upload', await timed(scp(src, keyRemote)));
    record('scp download', await timed(scp(keyRemote, join(work, 'scp.down'))));
    rmSync(join(work, 'scp.down'));
  }

  console.log(`\nSFTP through the page, ${SIZE / 1e6} MB random file, 127.0.0.1, ${ROUNDS} round(s); cipher ${cipher} on both sides; MB = 10^6 bytes`);
  console.log(`load average before: ${loadBefore}; after: ${load()}`);
  console.log(`  ${''.padEnd(36)} ${'best'.padStart(7)} ${'median'.padStart(7)} MB/s   every run`);
  for (const [name, xs] of rows) {
    console.log(`  ${name.padEnd(36)} ${Math.max(...xs).toFixed(1).padStart(7)} ${median(xs).toFixed(1).padStart(7)}        ${xs.map((x) => x.toFixed(0)).join(' ')}`);
  }
} finally {
  master?.kill();
  await page?.close();
  await chrome?.close();
  await server?.stop();
  await sshd?.stop();
  rmSync(work, { recursive: true, force: true });
}
