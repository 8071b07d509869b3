/**
 * A big folder in the Files panel: how long from the double-click on a folder of N empty files
 * (default 20 000) to its first row on screen, and from End to its last row focused, in a real
 * Chromium page of `wraith serve` against the local sshd. Beside it, the host's `sftp.list` of
 * the same folder alone (the same call through the page's own transport is part of the first
 * figure), the time a click on the Name header takes to show the folder sorted the other way,
 * and how many table rows and DOM nodes the page holds with the folder open.
 *
 *   npm run build && node --import tsx bench/sftp-big-folder.ts [--files 20000] [--rounds 3]
 *
 * Times are wall clock from this process (Playwright's round trips included, a few ms).
 * Needs root (the sshd harness) and /usr/bin/chromium.
 */
import { execFileSync } from 'node:child_process';
import { chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from '../src-main/node/app.js';
import { connectInProcess } from '../src-main/node/in-process.js';
import { openApp } from '../tests/fixtures/browser.js';
import { accountIds, savePasswordConnection, startSshd } from '../tests/fixtures/sshd.js';
import { startWraithServer } from '../tests/fixtures/wraith-server.js';
import { numberArg } from './args.js';
import { openSshTab } from './wraith-tab.js';

const FILES = numberArg('files', 20_000);
const ROUNDS = numberArg('rounds', 3);
const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

const sshd = await startSshd();
const server = await startWraithServer();
const browser = await openApp(server.openUrl);
const page = browser.page;
const user = sshd.users.password.username;
const { uid, gid } = accountIds(user);
const home = execFileSync('getent', ['passwd', user], { encoding: 'utf8' }).split(':')[5] ?? '';
const folderName = `bench-big-${process.pid}`;
const folder = join(home, folderName);
const dataDir = mkdtempSync(join(tmpdir(), 'wraith-bench-big-'));
const app = new App({ dataDir, host: 'in-process' });
const client = connectInProcess(app);
try {
  mkdirSync(folder);
  chownSync(folder, uid, gid);
  for (let i = 1; i <= FILES; i++) {
    const f = join(folder, `file-${String(i).padStart(6, '0')}.log`);
    writeFileSync(f, '');
    chownSync(f, uid, gid);
  }
  const last = `file-${String(FILES).padStart(6, '0')}.log`;
  const loadBefore = load();

  // The host's part alone: sftp.list in process, no page.
  const conn = await savePasswordConnection(client, sshd);
  const { sessionId } = await client.call('ssh.open', { connectionId: conn.id, cols: 80, rows: 24 });
  const hostMs: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = performance.now();
    const listed = await client.call('sftp.list', { sessionId, path: folder, showHidden: false });
    hostMs.push(performance.now() - t0);
    if (listed.entries.length !== FILES) throw new Error(`sftp.list gave ${listed.entries.length} entries, not ${FILES}`);
  }

  await openSshTab(page, sshd);
  await page.keyboard.press('Control+Shift+E');
  const panel = page.getByRole('complementary', { name: 'Files' });
  const row = (name: string) => panel.locator(`tr.sftp-row[data-name="${name}"]`);
  const openMs: number[] = [];
  const endMs: number[] = [];
  const sortMs: number[] = [];
  let rows = 0;
  let nodes = 0;
  for (let r = 0; r < ROUNDS; r++) {
    await row(folderName).waitFor();
    const t0 = performance.now();
    await row(folderName).locator('.entry-name').dblclick();
    await row('file-000001.log').waitFor({ timeout: 120_000 });
    openMs.push(performance.now() - t0);
    rows = await panel.locator('tr.sftp-row').count();
    nodes = await page.evaluate(() => document.getElementsByTagName('*').length);
    await row('file-000001.log').locator('.entry-name').click();
    const t1 = performance.now();
    await page.keyboard.press('End');
    // Builds before Home/End were keys of the list never get there: recorded as NaN, not a hang.
    const reached = await page
      .waitForFunction((name) => (document.activeElement as HTMLElement | null)?.dataset.name === name, last, { timeout: 30_000 })
      .then(() => true)
      .catch(() => false);
    endMs.push(reached ? performance.now() - t1 : NaN);
    // Name ▼: the whole folder sorted again in the page, the last name first.
    const t2 = performance.now();
    await panel.getByRole('button', { name: /^Name/ }).click();
    await panel.locator('tr.sftp-row').first().and(row(last)).waitFor({ timeout: 120_000 });
    sortMs.push(performance.now() - t2);
    await panel.getByRole('button', { name: /^Name/ }).click();
    await panel.getByRole('button', { name: 'Up one folder' }).click();
  }

  console.log(`\nFiles panel, a folder of ${FILES} empty files, ${ROUNDS} round(s); load average before ${loadBefore}, after ${load()}`);
  console.log(`  host sftp.list alone (in process)        : median ${median(hostMs).toFixed(0)} ms  (${hostMs.map((x) => x.toFixed(0)).join(', ')})`);
  console.log(`  double-click → first row on screen       : median ${median(openMs).toFixed(0)} ms  (${openMs.map((x) => x.toFixed(0)).join(', ')})`);
  console.log(`  End → last row focused                   : median ${median(endMs).toFixed(0)} ms  (${endMs.map((x) => x.toFixed(0)).join(', ')})`);
  console.log(`  Name header → sorted the other way, shown: median ${median(sortMs).toFixed(0)} ms  (${sortMs.map((x) => x.toFixed(0)).join(', ')})`);
  console.log(`  with the folder open: ${rows} table rows drawn, ${nodes} DOM elements in the page`);
} finally {
  client.close();
  await app.dispose();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(folder, { recursive: true, force: true });
  await browser.close();
  await server.stop();
  await sshd.stop();
}
