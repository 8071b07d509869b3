/**
 * Uploads from the Files panel that end without finishing, in real Chromium against `wraith serve`
 * and a real OpenSSH sshd:
 * - a page reloaded while it sends a file (one alone, or one of a folder upload): the host ends
 *   the upload as the page goes, failed and not "cancelled", removes its temp, and the page that
 *   comes back shows the row, saying what happened, how far it got and (of a folder upload) which
 *   file of which upload it was;
 * - a folder upload onto a disk that fills up (a small tmpfs): it stops at the first file the
 *   server had no room for, and its row says so once, with how many files arrived.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import type { ContractClient } from '../../src-main/common/client.js';
import type { TransferInfo } from '../../src-main/common/contract/sftp.js';
import { connectWebSocket } from '../../src-main/server/ws-client.js';
import { type TestBrowser, openApp, reloadApp } from '../fixtures/browser.js';
import { filesPanel, showFolder } from '../fixtures/files-panel.js';
import { type SmallDisk, mountSmallDisk } from '../fixtures/small-disk.js';
import { type SshdHandle, homeOf, mkdirOwned, startSshd } from '../fixtures/sshd.js';
import { connectNewSshInUi } from '../fixtures/ui-connection.js';
import { type WraithServer, startWraithServer } from '../fixtures/wraith-server.js';

const MB = 1024 * 1024;
let sshd: SshdHandle;
let server: WraithServer;
let api: ContractClient;
let browser: TestBrowser;
let page: Page;
let home: string;
let localDir: string;
let disk: SmallDisk | null = null;
const folder = `e2e-up-cut-${process.pid}-${Date.now().toString(36)}`;

const panel = () => filesPanel(page);
const remote = (...parts: string[]) => join(home, folder, ...parts);
/** The host's transfer to `remotePath`, as `wraith call sftp.transfers` lists it. */
const hostTransfer = async (remotePath: string): Promise<TransferInfo | undefined> => (await api.call('sftp.transfers')).find((t) => t.remotePath === remotePath);
const leftovers = (dir: string) => readdirSync(dir).filter((n) => n.includes('wraith-part'));

beforeAll(async () => {
  sshd = await startSshd();
  home = homeOf(sshd.users.password.username);
  mkdirOwned(remote(), sshd.users.password.username);
  localDir = mkdtempSync(join(tmpdir(), 'wraith-up-cut-'));
  server = await startWraithServer();
  api = await connectWebSocket(server.url, server.token);
  browser = await openApp(server.openUrl);
  page = browser.page;
  page.setDefaultTimeout(20_000);
  await connectNewSshInUi(page, { name: 'cut sshd', host: sshd.host, port: sshd.port, ...sshd.users.password });
});

afterAll(async () => {
  await api?.close();
  await browser?.close();
  await server?.stop();
  await sshd?.stop();
  disk?.unmount();
  if (home) rmSync(join(home, folder), { recursive: true, force: true });
  if (localDir) rmSync(localDir, { recursive: true, force: true });
});

describe('an upload whose page is reloaded', () => {
  it('shows, once the page is back, as failed because the page was reloaded, with nothing left on the server', async () => {
    await showFolder(page, remote());
    // 512 MiB, sparse: seconds of transfer, time enough to reload in the middle.
    const big = join(localDir, 'reloaded.bin');
    execFileSync('truncate', ['-s', '512M', big]);
    await panel().locator('input[name=sftp-upload]').setInputFiles(big);
    await expect.poll(async () => (await hostTransfer(remote('reloaded.bin')))?.bytes ?? 0, { timeout: 20_000 }).toBeGreaterThan(8 * MB);
    await reloadApp(page); // while what it sends is under way
    // Ended by the host as the page went, long before its 5 minutes with nothing new, and not "cancelled".
    await expect.poll(async () => (await hostTransfer(remote('reloaded.bin')))?.state, { timeout: 20_000 }).toBe('failed');
    expect(leftovers(remote())).toEqual([]);
    expect(readdirSync(remote())).not.toContain('reloaded.bin');
    // The page that came back marks it on the Files button, and its transfers list says what happened.
    await expect.poll(() => page.locator('.sftp-toggle').getAttribute('aria-label'), { timeout: 15_000 }).toBe('Files, 1 transfer failed');
    await showFolder(page, remote());
    const row = panel().locator('.transfer[data-state="failed"]', { hasText: 'reloaded.bin' });
    expect(await row.innerText()).toMatch(/The page sending reloaded\.bin was closed or reloaded at [\d.]+ (MB|GB) of 512 MB; nothing was left behind\./);
    await expect.poll(() => page.locator('.sftp-toggle').getAttribute('aria-label')).toBe('Files');
  }, 60_000);

  it('of a folder upload, names the file being sent and the upload it was one of', async () => {
    const many = join(localDir, 'many');
    mkdirSync(many);
    for (const name of ['a.txt', 'c.txt']) writeFileSync(join(many, name), `${name}\n`);
    execFileSync('truncate', ['-s', '256M', join(many, 'b.bin')]);
    await showFolder(page, remote());
    await panel().locator('input[name=sftp-upload-folder]').setInputFiles(many);
    await expect.poll(async () => (await hostTransfer(remote('many', 'b.bin')))?.bytes ?? 0, { timeout: 20_000 }).toBeGreaterThan(8 * MB);
    await reloadApp(page); // while what it sends is under way
    await expect.poll(async () => (await hostTransfer(remote('many', 'b.bin')))?.state, { timeout: 20_000 }).toBe('failed');
    expect(await hostTransfer(remote('many', 'b.bin'))).toMatchObject({ batch: { name: 'many', total: 3 } });
    expect(leftovers(remote('many'))).toEqual([]);
    await showFolder(page, remote());
    const row = panel().locator('.transfer[data-state="failed"]', { hasText: 'b.bin' });
    expect(await row.innerText()).toMatch(/The page sending b\.bin \(file [1-3] of 3 of many\) was closed or reloaded at [\d.]+ MB of 256 MB; nothing was left behind\./);
  }, 60_000);
});

describe('a folder upload onto a disk that fills up', () => {
  it('stops at the first file the server has no room for, and says so once', async () => {
    const fill = join(localDir, 'fill');
    mkdirSync(fill);
    // 60 files of 512 KB (each one sftp.write, as the panel sends small files) onto 20 MB.
    for (let k = 0; k < 60; k++) writeFileSync(join(fill, `f${String(k).padStart(2, '0')}.bin`), Buffer.alloc(512 * 1024, k));
    disk = mountSmallDisk(remote('small'), 20, sshd.users.password.username);
    await showFolder(page, remote('small'));
    await panel().locator('input[name=sftp-upload-folder]').setInputFiles(fill);
    const row = panel().locator('.transfer[data-state="failed"]', { hasText: 'fill' });
    await row.waitFor({ timeout: 30_000 });
    const said = await row.locator('.transfer-meta .error').innerText();
    // Said once: the refusal, then how far the upload got.
    expect(said.match(/disk is full/g)).toHaveLength(1);
    const counts = /The upload stopped there: (\d+) of 60 files had arrived and stay; the other (\d+) were not sent\.$/.exec(said);
    expect(counts).not.toBeNull();
    const [arrived, notSent] = [Number(counts?.[1]), Number(counts?.[2])];
    expect(arrived + notSent).toBe(60);
    expect(readdirSync(remote('small', 'fill')).filter((n) => !n.includes('wraith-part'))).toHaveLength(arrived);
    expect(leftovers(remote('small', 'fill'))).toEqual([]);
    // Retry offers the files that were not sent.
    expect(await row.getByRole('button', { name: 'Retry upload of fill' }).count()).toBe(1);
  }, 60_000);
});
