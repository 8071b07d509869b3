/**
 * Transfers of a tab whose connection is down, in real Chromium against `wraith serve` and a real
 * OpenSSH sshd:
 * - Retry on an upload that failed with the connection, pressed before the tab is reconnected,
 *   keeps the row (and the File it sends again) and says why it cannot start; after Reconnect the
 *   same Retry sends the file;
 * - Cancel of an upload while the server does not answer (its processes SIGSTOPped): the host
 *   cannot remove the partial copy, and the row says it stays, by name, until the next connection,
 *   which removes it.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Locator, Page } from 'playwright-core';
import type { ContractClient } from '../../src-main/common/client.js';
import type { TransferInfo } from '../../src-main/common/contract/sftp.js';
import { connectWebSocket } from '../../src-main/server/ws-client.js';
import { type TestBrowser, openApp } from '../fixtures/browser.js';
import { filesPanel, showFolder } from '../fixtures/files-panel.js';
import { type SshdHandle, homeOf, mkdirOwned, startSshd } from '../fixtures/sshd.js';
import { recordToasts } from '../fixtures/toasts.js';
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
const folder = `e2e-offline-${process.pid}-${Date.now().toString(36)}`;

const panel = () => filesPanel(page);
const remote = (...parts: string[]) => join(home, folder, ...parts);
const transferRow = (name: string): Locator => panel().locator('.transfer').filter({ has: page.locator('.transfer-name', { hasText: name }) });
const banner = () => page.locator('.tab-panel:visible .pane-banner');
/** The host's transfers to `remotePath`, newest last, as `wraith call sftp.transfers` lists them. */
const hostTransfers = async (remotePath: string): Promise<TransferInfo[]> => (await api.call('sftp.transfers')).filter((t) => t.remotePath === remotePath);
const leftovers = () => readdirSync(remote()).filter((n) => n.includes('.wraith-part-'));

/** Starts uploading a sparse file of `size` from the page ("Upload files"), and waits until the host has some of it. */
async function uploadFromPage(name: string, size: string): Promise<void> {
  await showFolder(page, remote());
  const file = join(localDir, name);
  execFileSync('truncate', ['-s', size, file]);
  await panel().locator('input[name=sftp-upload]').setInputFiles(file);
  await expect.poll(async () => (await hostTransfers(remote(name))).at(-1)?.bytes ?? 0, { timeout: 20_000 }).toBeGreaterThan(4 * MB);
}

/** Reconnect on the tab's banner, and the Files panel back on the test's folder. */
async function reconnect(): Promise<void> {
  await banner().getByRole('button', { name: 'Reconnect' }).click();
  await expect.poll(() => page.locator('.tab.active').getAttribute('class'), { timeout: 30_000 }).toContain('open');
  await showFolder(page, remote());
}

beforeAll(async () => {
  sshd = await startSshd();
  home = homeOf(sshd.users.password.username);
  mkdirOwned(remote(), sshd.users.password.username);
  localDir = mkdtempSync(join(tmpdir(), 'wraith-offline-'));
  // A server that stops answering is given up on in seconds (3 keepalives unanswered), not 45.
  server = await startWraithServer({ settings: { 'ssh.keepaliveIntervalMs': 1000 } });
  api = await connectWebSocket(server.url, server.token);
  browser = await openApp(server.openUrl);
  page = browser.page;
  page.setDefaultTimeout(20_000);
  await connectNewSshInUi(page, { name: 'offline sshd', host: sshd.host, port: sshd.port, ...sshd.users.password });
});

afterAll(async () => {
  await api?.close();
  await browser?.close();
  await server?.stop();
  await sshd?.stop();
  if (home) rmSync(join(home, folder), { recursive: true, force: true });
  if (localDir) rmSync(localDir, { recursive: true, force: true });
});

describe('an upload cut off by a dropped connection', () => {
  it('Retry before the tab is reconnected keeps the row and its file, and says why; after Reconnect it sends the file', async () => {
    await uploadFromPage('cut.bin', '1G');
    sshd.dropConnections();
    const row = transferRow('cut.bin');
    await expect.poll(() => row.getAttribute('data-state'), { timeout: 20_000 }).toBe('failed');
    await banner().getByRole('button', { name: 'Reconnect' }).waitFor();
    const toasts = await recordToasts(page);

    await row.getByRole('button', { name: 'Retry upload of cut.bin' }).click();
    await expect.poll(toasts).toContain(
      'The upload of cut.bin cannot start again yet: offline sshd is not connected, so nothing can be sent or fetched through it. Reconnect the tab, then Retry.',
    );
    // The row stays as it was, Retry and all: nothing was started, nothing was lost.
    expect(await row.count()).toBe(1);
    expect(await row.getAttribute('data-state')).toBe('failed');
    expect(await row.getByRole('button', { name: 'Retry upload of cut.bin' }).count()).toBe(1);

    await reconnect();
    const before = (await hostTransfers(remote('cut.bin'))).length;
    await row.getByRole('button', { name: 'Retry upload of cut.bin' }).click();
    // The same File, sent again by the page: a new transfer of it, on the row.
    await expect.poll(async () => (await hostTransfers(remote('cut.bin'))).length, { timeout: 20_000 }).toBe(before + 1);
    await expect.poll(async () => (await hostTransfers(remote('cut.bin'))).at(-1)?.bytes ?? 0, { timeout: 20_000 }).toBeGreaterThan(4 * MB);
    await expect.poll(() => transferRow('cut.bin').getAttribute('data-state')).toBe('running');
    await transferRow('cut.bin').getByRole('button', { name: 'Cancel upload of cut.bin' }).click();
    await expect.poll(() => transferRow('cut.bin').getAttribute('data-state'), { timeout: 20_000 }).toBe('cancelled');
    expect(await transferRow('cut.bin').locator('.transfer-meta').innerText()).toBe('Cancelled — nothing was left behind');
    expect(leftovers()).toEqual([]);
  }, 120_000);
});

describe('an upload cancelled while the server does not answer', () => {
  it('says its partial copy stays, by name, until the next connection, which removes it', async () => {
    await uploadFromPage('frozen.bin', '1G');
    const thaw = sshd.freezeConnections();
    const row = transferRow('frozen.bin');
    try {
      await row.getByRole('button', { name: 'Cancel upload of frozen.bin' }).click();
      await expect.poll(() => row.getAttribute('data-state'), { timeout: 30_000 }).toBe('cancelled');
      const [temp] = leftovers();
      expect(temp).toMatch(/^\.frozen\.bin\.wraith-part-/);
      expect(await row.locator('.transfer-meta').innerText()).toBe(
        `Cancelled — the connection was lost before its partial copy could be removed: ${temp} stays in ${remote()} on the server until the next connection to it, which removes it.`,
      );
    } finally {
      sshd.dropConnections();
      thaw();
    }
    await reconnect();
    await expect.poll(leftovers, { timeout: 15_000 }).toEqual([]);
  }, 120_000);
});
