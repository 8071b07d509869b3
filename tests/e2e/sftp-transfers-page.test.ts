/**
 * What the Files panel says of files and transfers, in real Chromium against a real OpenSSH sshd:
 * "Upload a folder" keeps a backslash in a file's name (no folder made of part of it); names that
 * differ only in spaces look different; sizes of 1000 to 1023 of a unit fit the Size column; a
 * folder upload with a folder that cannot be made counts every file once, on its row; an upload
 * the CLI started is named by where it goes, the folder shown lists it once it ends, and one cut
 * off by a dropped connection can be retried; closing a tab names the transfers that stop with it.
 */
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Locator, Page } from 'playwright-core';
import type { ContractClient } from '../../src-main/common/client.js';
import { type AppWithSshd, startAppWithSshd } from '../fixtures/app-with-sshd.js';
import { type SshdHandle, accountIds, homeOf, mkdirOwned } from '../fixtures/sshd.js';
import { filesPanel, showFolder as showFolderAt } from '../fixtures/files-panel.js';
import { recordToasts } from '../fixtures/toasts.js';
import { connectNewSshInUi } from '../fixtures/ui-connection.js';

let app: AppWithSshd;
let sshd: SshdHandle;
let api: ContractClient;
let page: Page;
let home: string;
let localDir: string;
const folder = `e2e-xfer-page-${process.pid}-${Date.now().toString(36)}`;
const CONNECTION = 'xfer sshd';

const panel = () => filesPanel(page);
const row = (name: string): Locator => panel().locator(`tr.sftp-row[data-name="${name}"]`);
const transferRow = (name: string): Locator => panel().locator('.transfer').filter({ has: page.locator('.transfer-name', { hasText: name }) });
const remote = (...parts: string[]) => join(home, folder, ...parts);
const showFolder = () => showFolderAt(page, remote());
const banner = () => page.locator('.tab-panel:visible .pane-banner');
/** The session of the tab in front. */
const activeSessionId = async () => (await page.locator('.tab-panel:visible .terminal-pane[data-session-id]').getAttribute('data-session-id')) ?? '';
/** How far the transfer row named `name` says it is (0 without a progress bar). */
const percentOf = (name: string) =>
  page.evaluate((n) => {
    const li = [...document.querySelectorAll('.transfer')].find((t) => t.querySelector('.transfer-name')?.textContent === n);
    return Number(li?.querySelector('[role="progressbar"]')?.getAttribute('aria-valuenow') ?? 0);
  }, name);

/** A file on the server's disk (the sshd is local and we are root), owned by the SFTP user unless `owner` says. */
function put(path: string, data: string | Buffer, opts: { owner?: string } = {}): void {
  writeFileSync(path, data);
  const { uid, gid } = accountIds(opts.owner ?? sshd.users.password.username);
  chownSync(path, uid, gid);
}

async function refresh(): Promise<void> {
  await panel().getByRole('button', { name: 'Refresh' }).click();
}

/** Opens another tab on the test's connection and waits until its session is open. */
async function openAnotherTab(): Promise<string> {
  const before = await page.locator('.tab').count();
  await page.getByRole('treeitem', { name: new RegExp(`^${CONNECTION}, SSH`) }).dblclick();
  await expect.poll(() => page.locator('.tab').count()).toBe(before + 1);
  await page.locator('.tab.active.open').waitFor({ timeout: 30_000 });
  await expect.poll(activeSessionId).not.toBe('');
  return activeSessionId();
}

beforeAll(async () => {
  app = await startAppWithSshd({ server: { settings: { 'ui.confirmCloseRunningTab': true } } });
  ({ sshd, api, page } = app);
  home = homeOf(sshd.users.password.username);
  mkdirOwned(remote(), sshd.users.password.username);
  localDir = mkdtempSync(join(tmpdir(), 'wraith-xfer-page-'));
  // A call that waits for what is not there fails the test it is in, rather than the tests after it.
  page.setDefaultTimeout(20_000);
  await connectNewSshInUi(page, { name: CONNECTION, host: sshd.host, port: sshd.port, ...sshd.users.password });
});

afterAll(async () => {
  await app?.stop();
  if (home) rmSync(join(home, folder), { recursive: true, force: true });
  if (localDir) rmSync(localDir, { recursive: true, force: true });
});

describe('the file list', () => {
  it('"Upload a folder" keeps a backslash in a file\'s name: no folder is made of part of it', async () => {
    await showFolder();
    const names = join(localDir, 'names');
    mkdirSync(names);
    writeFileSync(join(names, 'back\\slash.txt'), 'backslash\n');
    writeFileSync(join(names, 'plain.txt'), 'plain\n');
    await panel().locator('input[name=sftp-upload-folder]').setInputFiles(names);
    await panel().locator('.transfer[data-state="done"]', { hasText: 'names' }).waitFor();
    expect(readdirSync(remote('names')).sort()).toEqual(['back\\slash.txt', 'plain.txt']);
    expect(readFileSync(remote('names', 'back\\slash.txt'), 'utf8')).toBe('backslash\n');
  });

  it('shows names that differ only in spaces differently: spaces kept, those at either end marked', async () => {
    await showFolder();
    mkdirOwned(remote('spaces'), sshd.users.password.username);
    for (const name of ['dup.conf', ' dup.conf', 'dup.conf ', 'dup  .conf']) put(remote('spaces', name), `${JSON.stringify(name)}\n`);
    await showFolderAt(page, remote('spaces'));
    const shown = (name: string) => row(name).locator('.entry-name').innerText();
    await row('dup.conf ').waitFor();
    expect(await shown('dup.conf')).toBe('dup.conf');
    expect(await shown(' dup.conf')).toBe('␣dup.conf');
    expect(await shown('dup.conf ')).toBe('dup.conf␣');
    expect(await shown('dup  .conf')).toBe('dup  .conf');
    // Four rows, four different readings.
    const all = await panel().locator('tr.sftp-row .entry-name').allInnerTexts();
    expect(all).toHaveLength(4);
    expect(new Set(all).size).toBe(4);
  });

  it('fits a size of 1000 to 1023 of a unit in the Size column: the next unit, never four digits', async () => {
    await showFolder();
    mkdirOwned(remote('sizes'), sshd.users.password.username);
    // Sparse: no disk space used.
    execFileSync('truncate', ['-s', String(1000 * 1024 * 1024), remote('sizes', 'thousand-mib.bin')]);
    execFileSync('truncate', ['-s', String(1023 * 1024), remote('sizes', 'kib-1023.bin')]);
    await showFolderAt(page, remote('sizes'));
    const size = (name: string) => row(name).locator('td.col-size');
    await row('thousand-mib.bin').waitFor();
    expect(await size('thousand-mib.bin').innerText()).toBe('0.98 GB');
    expect(await size('kib-1023.bin').innerText()).toBe('1.0 MB');
    for (const name of ['thousand-mib.bin', 'kib-1023.bin']) {
      // Not cut off: the text fits the cell.
      expect(await size(name).evaluate((td) => td.scrollWidth <= td.clientWidth)).toBe(true);
    }
  });
});

describe('an upload from the page', () => {
  it('counts every file of a folder once, on its row: those whose folder could not be made with those the server refused', async () => {
    await showFolder();
    const toasts = await recordToasts(page);
    const src = join(localDir, 'cnt');
    mkdirSync(join(src, 'sub'), { recursive: true });
    mkdirSync(join(src, 'ok'));
    writeFileSync(join(src, 'a.txt'), 'a\n');
    writeFileSync(join(src, 'x.txt'), 'x new\n');
    writeFileSync(join(src, 'sub', 'c.txt'), 'c\n');
    writeFileSync(join(src, 'ok', 'd.txt'), 'd\n');
    mkdirOwned(remote('cnt'), sshd.users.password.username);
    // A file where the folder sub would go: it cannot be made, and c.txt stays here.
    put(remote('cnt', 'sub'), 'a file named sub\n');
    // root's, in the user's folder: replacing it is refused.
    put(remote('cnt', 'x.txt'), 'x old\n', { owner: 'root' });
    await refresh();

    await panel().locator('input[name=sftp-upload-folder]').setInputFiles(src);
    await page.getByRole('dialog', { name: 'Replace cnt/x.txt?' }).getByRole('button', { name: 'Replace' }).click();
    const batch = panel().locator('.transfer[data-state="failed"]', { hasText: 'cnt' });
    await batch.waitFor();
    const said = await batch.locator('.transfer-meta').innerText();
    expect(said).toMatch(/^Failed: 2 of 4 files did not upload\. /);
    expect(said).toContain(`cnt/sub/c.txt: Cannot create ${remote('cnt', 'sub')}: ${remote('cnt', 'sub')} exists and is not a folder.`);
    expect(said).toContain(`cnt/x.txt: Cannot replace ${remote('cnt', 'x.txt')}: it belongs to root and you may not write it.`);
    // One count, in one place: no toast with another.
    expect((await toasts()).filter((t) => t.includes('did not upload'))).toEqual([]);
    expect(readFileSync(remote('cnt', 'a.txt'), 'utf8')).toBe('a\n');
    expect(readFileSync(remote('cnt', 'ok', 'd.txt'), 'utf8')).toBe('d\n');
    expect(readFileSync(remote('cnt', 'x.txt'), 'utf8')).toBe('x old\n');
  });
});

describe('a transfer another client started', () => {
  it('is named by where an upload goes, and the folder shown lists what it brought once it ends', async () => {
    await showFolder();
    const sessionId = await activeSessionId();
    const local = join(localDir, 'deploy.sh');
    writeFileSync(local, '#!/bin/sh\necho deployed\n');
    expect(await row('deploy-cli.sh').count()).toBe(0);
    await api.call('sftp.upload', { sessionId, localPath: local, remotePath: remote('deploy-cli.sh') });
    const done = panel().locator('.transfer[data-state="done"]').filter({ hasText: 'deploy' });
    await done.waitFor();
    await expect.poll(() => done.locator('.transfer-name').innerText()).toBe('deploy-cli.sh');
    // Listed without a Refresh.
    await row('deploy-cli.sh').waitFor({ timeout: 10_000 });

    // A download is named by what it takes, as before.
    await api.call('sftp.download', { sessionId, remotePath: remote('deploy-cli.sh'), localPath: join(localDir, 'fetched.sh') });
    await expect.poll(async () => (await panel().locator('.transfer[data-state="done"] .transfer-name').allInnerTexts()).filter((n) => n.startsWith('deploy'))).toEqual(['deploy-cli.sh', 'deploy-cli.sh']);
    expect(readFileSync(join(localDir, 'fetched.sh'), 'utf8')).toBe('#!/bin/sh\necho deployed\n');
  });

  it('cut off by a dropped connection, offers the Retry it promises, which sends the same file again', async () => {
    await showFolder();
    const sessionId = await activeSessionId();
    const big = join(localDir, 'cut-cli.bin');
    execFileSync('truncate', ['-s', '2G', big]);
    await api.call('sftp.upload', { sessionId, localPath: big, remotePath: remote('cut-cli.bin') });
    const transfer = transferRow('cut-cli.bin');
    await expect.poll(() => percentOf('cut-cli.bin'), { timeout: 20_000 }).toBeGreaterThan(0);
    sshd.dropConnections();
    await expect.poll(() => transfer.getAttribute('data-state'), { timeout: 20_000 }).toBe('failed');
    expect(await transfer.innerText()).toContain('the connection to the server dropped before it finished. Retry once the tab is reconnected.');
    const retry = transfer.getByRole('button', { name: 'Retry upload of cut-cli.bin' });
    expect(await retry.count()).toBe(1);

    await banner().getByRole('button', { name: 'Reconnect' }).click();
    await expect.poll(() => page.locator('.tab.active').getAttribute('class'), { timeout: 30_000 }).toContain('open');
    await expect.poll(() => panel().getAttribute('data-path'), { timeout: 15_000 }).toBe(remote());
    await retry.click();
    // The same file again, from the host's disk, to the same place: a new transfer of the host's.
    await expect.poll(async () => (await api.call('sftp.transfers', { sessionId })).filter((t) => t.remotePath === remote('cut-cli.bin') && t.state === 'running').length).toBe(1);
    const again = (await api.call('sftp.transfers', { sessionId })).find((t) => t.remotePath === remote('cut-cli.bin') && t.state === 'running');
    expect(again?.localPath).toBe(big);
    await expect.poll(() => transferRow('cut-cli.bin').getAttribute('data-state')).toBe('running');
    await transferRow('cut-cli.bin').getByRole('button', { name: 'Cancel upload of cut-cli.bin' }).click();
    await expect.poll(() => transferRow('cut-cli.bin').getAttribute('data-state'), { timeout: 20_000 }).toBe('cancelled');
  }, 120_000);
});

describe('closing a tab with transfers running', () => {
  it('names them, with how far each is, in its question', async () => {
    await openAnotherTab();
    await showFolder();
    const big = join(localDir, 'big-close.bin');
    execFileSync('truncate', ['-s', '2G', big]);
    await panel().locator('input[name=sftp-upload]').setInputFiles(big);
    await expect.poll(() => percentOf('big-close.bin'), { timeout: 20_000 }).toBeGreaterThan(0);
    const count = await page.locator('.tab').count();
    await page.locator('.tab.active .tab-close').click();
    const question = page.getByRole('dialog', { name: /^Close xfer sshd/ });
    await question.waitFor();
    expect(await question.innerText()).toMatch(/The SSH session to xfer sshd is running: .* The upload of big-close\.bin \(\d+ %\) will stop\. Settings/s);
    await question.getByRole('button', { name: 'Close tab' }).click();
    await expect.poll(() => page.locator('.tab').count()).toBe(count - 1);
  });

  it('says afterwards what stopped when the question is turned off', async () => {
    await api.call('settings.set', { 'ui.confirmCloseRunningTab': false });
    const sessionId = await openAnotherTab();
    const toasts = await recordToasts(page);
    const big = join(localDir, 'big-quiet.bin');
    execFileSync('truncate', ['-s', '2G', big]);
    await showFolder();
    await api.call('sftp.upload', { sessionId, localPath: big, remotePath: remote('big-quiet.bin') });
    await expect.poll(() => percentOf('big-quiet.bin'), { timeout: 20_000 }).toBeGreaterThan(0);
    const count = await page.locator('.tab').count();
    await page.locator('.tab.active .tab-close').click();
    await expect.poll(() => page.locator('.tab').count()).toBe(count - 1);
    expect(await page.getByRole('dialog').count()).toBe(0);
    await expect.poll(toasts).toEqual([expect.stringMatching(/^Closing xfer sshd stopped the upload of big-quiet\.bin \(\d+ %\)\.$/)]);
    // Stopped, and nothing of it left on the server.
    await expect.poll(async () => (await api.call('sftp.transfers', { sessionId })).find((t) => t.remotePath === remote('big-quiet.bin'))?.state).not.toBe('running');
    expect(existsSync(remote('big-quiet.bin'))).toBe(false);
  });
});
