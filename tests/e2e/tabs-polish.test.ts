/**
 * Tabs, in real Chromium against `wraith serve` and a real OpenSSH sshd: a reload brings back the
 * tab that was in front; "Reconnect all" in the tab menu reconnects every dropped SSH tab, one
 * that cannot (its saved password is refused) asking in its own card while the others come
 * back; the file editor's "Not connected" stays in sight however far its text is scrolled; the
 * folder picker says it leaves empty folders out (a folder dragged in keeps them); and the
 * question after "Forget old host key…" says the old key was forgotten rather than calling the
 * server new.
 * The tests run in order, each on the tabs the one before left.
 */
import { chownSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Locator, Page } from 'playwright-core';
import type { ContractClient } from '../../src-main/common/client.js';
import { connectWebSocket } from '../../src-main/server/ws-client.js';
import { type TestBrowser, openApp } from '../fixtures/browser.js';
import { type SshdHandle, accountIds, homeOf, mkdirOwned, savePasswordConnection, startSshd } from '../fixtures/sshd.js';
import { activeSessionId, echoWorks } from '../fixtures/terminal-page.js';
import { dropLocal, filesPanel, showFolder } from '../fixtures/files-panel.js';
import { type WraithServer, startWraithServer } from '../fixtures/wraith-server.js';

let sshd: SshdHandle;
let server: WraithServer;
let api: ContractClient;
let browser: TestBrowser;
let page: Page;
let home = '';
let localDir = '';
const folder = `e2e-tabs-polish-${process.pid}-${Date.now().toString(36)}`;
const remote = (...parts: string[]) => join(home, folder, ...parts);
/** A file on the server's disk (the sshd is local and we are root), the SFTP user's. */
function put(path: string, data: string): void {
  writeFileSync(path, data);
  const { uid, gid } = accountIds(sshd.users.password.username);
  chownSync(path, uid, gid);
}
const NAMES = ['alpha', 'beta', 'gamma'] as const;
const ids: Record<string, string> = {};

beforeAll(async () => {
  sshd = await startSshd();
  home = homeOf(sshd.users.password.username);
  mkdirOwned(remote(), sshd.users.password.username);
  localDir = mkdtempSync(join(tmpdir(), 'wraith-tabs-polish-'));
  server = await startWraithServer();
  api = await connectWebSocket(server.url, server.token);
  for (const name of NAMES) ids[name] = (await savePasswordConnection(api, sshd, name)).id;
  browser = await openApp(server.openUrl);
  page = browser.page;
  page.setDefaultTimeout(20_000);
});

afterAll(async () => {
  api?.close();
  await browser?.close();
  await server?.stop();
  await sshd?.stop();
  if (home) rmSync(remote(), { recursive: true, force: true });
  if (localDir) rmSync(localDir, { recursive: true, force: true });
});

const tabs = () => page.locator('.tab');
const files = () => filesPanel(page);
/** The tab strip's tab named `name`. */
const tab = (name: string) => page.getByRole('tab', { name });
/** The terminal pane of the tab named `name`. */
async function paneOf(name: string): Promise<Locator> {
  return page.locator(`#${await tab(name).getAttribute('aria-controls')} .terminal-pane`);
}
/** The phase of the tab named `name` (open, disconnected, credential…), as its pane says. */
const phaseOf = async (name: string) => (await paneOf(name)).getAttribute('data-phase');

describe('tabs', () => {
  it('brings back the tab that was in front after a page reload, not the first one', async () => {
    for (const name of NAMES) {
      await page.getByRole('treeitem', { name: new RegExp(`^${name}, SSH`) }).dblclick();
      await expect.poll(() => phaseOf(name), { timeout: 20_000 }).toBe('open');
    }
    await tab('beta').click();
    const beta = await activeSessionId(page);
    await page.reload();
    await page.getByText('Host: connected').waitFor();
    await expect.poll(() => tabs().count(), { timeout: 20_000 }).toBe(3);
    // The first tab is alpha's: the one in front is still beta's.
    expect(await tabs().first().innerText()).toContain('alpha');
    expect(await activeSessionId(page)).toBe(beta);
    expect(await page.locator('.tab.active').innerText()).toContain('beta');
  });

  it('reconnects every dropped SSH tab with "Reconnect all" from the tab menu; one that fails asks in its own card, the others come back', async () => {
    const before = Object.fromEntries(await Promise.all(NAMES.map(async (n) => [n, await (await paneOf(n)).getAttribute('data-session-id')] as const)));
    // alpha's saved password is wrong now: its reconnect is refused.
    await api.call('connections.update', { id: ids.alpha ?? '', patch: {}, secrets: { password: 'not-the-password' } });
    sshd.dropConnections();
    for (const name of NAMES) await expect.poll(() => phaseOf(name), { timeout: 20_000 }).toBe('disconnected');

    await tab('gamma').click({ button: 'right' });
    const menu = page.getByRole('menu', { name: 'Tab gamma' });
    await menu.getByRole('menuitem', { name: 'Reconnect all disconnected tabs (3)' }).click();

    await expect.poll(() => phaseOf('alpha'), { timeout: 20_000 }).toBe('credential');
    for (const name of ['beta', 'gamma']) {
      await expect.poll(() => phaseOf(name), { timeout: 20_000 }).toBe('open');
      // The same session, reconnected (its scrollback with it), and it runs commands.
      expect(await (await paneOf(name)).getAttribute('data-session-id')).toBe(before[name]);
      await tab(name).click();
      await echoWorks(page, name);
    }
    // Nothing is left for it to do: the menu no longer offers it.
    await tab('beta').click({ button: 'right' });
    expect(await page.getByRole('menu', { name: 'Tab beta' }).getByRole('menuitem', { name: /^Reconnect all/ }).count()).toBe(0);
    await page.keyboard.press('Escape');

    // alpha's card takes the right password, and it reconnects too.
    await tab('alpha').click();
    const card = page.locator('.tab-panel:visible').getByLabel('Password', { exact: true });
    await card.fill(sshd.users.password.password);
    await card.press('Enter');
    await expect.poll(() => phaseOf('alpha'), { timeout: 20_000 }).toBe('open');
    expect(await (await paneOf('alpha')).getAttribute('data-session-id')).toBe(before.alpha);
  });

  it('keeps the file editor\'s "Not connected" notice in sight, above its text scrolled to the end', async () => {
    await tab('beta').click();
    await showFolder(page, remote());
    put(remote('notes.txt'), Array.from({ length: 200 }, (_, i) => `line ${i + 1}\n`).join(''));
    await files().getByRole('button', { name: 'Refresh' }).click();
    await files().locator('tr.sftp-row[data-name="notes.txt"] .entry-name').dblclick();
    const editor = page.getByRole('dialog', { name: 'Edit notes.txt' });
    await editor.locator('.cm-line').first().waitFor();
    sshd.dropConnections();
    const notice = editor.getByRole('alert').filter({ hasText: 'Not connected.' });
    await notice.waitFor({ timeout: 20_000 });
    // To the end of the text, and the dialog scrolled as far as it goes.
    await editor.getByRole('textbox', { name: 'Contents of notes.txt' }).click();
    await page.keyboard.press('Control+End');
    await editor.locator('.modal-body').evaluate((body) => body.scrollTo(0, body.scrollHeight));
    // What the notice says is on top where it is drawn: not under the dialog's title.
    const seen = (l: Locator) =>
      l.evaluate((el) => {
        const r = el.getBoundingClientRect();
        return el.contains(document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2));
      });
    expect(await seen(notice.getByText('Not connected.'))).toBe(true);
    expect(await seen(notice.getByRole('button', { name: 'Reconnect' }))).toBe(true);
    await notice.getByRole('button', { name: 'Reconnect' }).click();
    await notice.waitFor({ state: 'detached', timeout: 20_000 });
    await editor.getByRole('button', { name: 'Close', exact: true }).last().click();
    await editor.waitFor({ state: 'detached' });
  });

  it('says the folder picker leaves empty folders out; a folder dragged in keeps them', async () => {
    await tab('beta').click();
    await showFolder(page, remote());
    const tree = (name: string) => {
      mkdirSync(join(localDir, name, 'empty'), { recursive: true });
      mkdirSync(join(localDir, name, 'assets'));
      writeFileSync(join(localDir, name, 'assets', 'logo.txt'), 'logo\n');
      return join(localDir, name);
    };
    await files().locator('input[name=sftp-upload-folder]').setInputFiles(tree('picked'));
    await page.locator('.toasts .toast', { hasText: 'Empty folders are not uploaded by the folder picker: it gives only the files. Drag the folder into this panel to keep them.' }).waitFor();
    await expect.poll(() => existsSync(remote('picked', 'assets', 'logo.txt')), { timeout: 20_000 }).toBe(true);
    expect(existsSync(remote('picked', 'empty'))).toBe(false);

    // A folder with no file at all: nothing goes, and the page says so.
    mkdirSync(join(localDir, 'hollow', 'inner'), { recursive: true });
    await files().locator('input[name=sftp-upload-folder]').setInputFiles(join(localDir, 'hollow'));
    await page.locator('.toasts .toast', { hasText: 'Nothing was uploaded: the folder picked has no files' }).waitFor();

    // What the notice advises: dragged in, the same folder keeps its empty folder.
    await dropLocal(page, files().locator('tr.sftp-row[data-name="picked"] .entry-name'), [tree('dragged')]);
    await expect.poll(() => existsSync(remote('picked', 'dragged', 'assets', 'logo.txt')), { timeout: 20_000 }).toBe(true);
    expect(existsSync(remote('picked', 'dragged', 'empty'))).toBe(true);
  });

  it('after "Forget old host key…", asks about the new key without calling it a first connection', async () => {
    await tab('beta').click();
    sshd.dropConnections();
    const banner = page.locator('.tab-panel:visible .pane-banner.warn');
    await banner.waitFor({ timeout: 20_000 });
    await sshd.restartWithNewHostKey();
    await banner.getByRole('button', { name: 'Reconnect' }).click();
    const warning = page.locator('.tab-panel:visible').getByRole('alertdialog', { name: /host key of 127\.0\.0\.1:\d+ has changed/ });
    await warning.getByLabel("I have confirmed the new host key with the server's administrator").check();
    await warning.getByRole('button', { name: 'Forget old host key…' }).click();

    const card = page.locator('.tab-panel:visible').getByRole('alertdialog', { name: `New host key of 127.0.0.1:${sshd.port}` });
    await card.waitFor({ timeout: 20_000 });
    const text = await card.innerText();
    expect(text).toContain('The old host key was forgotten. This is the key the server offers now');
    expect(text).not.toContain('First connection');
    expect(text).not.toContain('has not seen');
    expect(await card.locator('.fingerprint').innerText()).toBe(sshd.hostKeyFingerprint);
    await card.getByRole('button', { name: 'Trust and connect' }).click();
    await expect.poll(() => phaseOf('beta'), { timeout: 20_000 }).toBe('open');
    await echoWorks(page, 'rekeyed');

    // A server Wraith has never seen is still a first connection.
    await api.call('hostkeys.forget', { kind: 'ssh', host: sshd.host, port: sshd.port });
    await page.getByRole('treeitem', { name: /^gamma, SSH/ }).dblclick();
    const first = page.locator('.tab-panel:visible').getByRole('alertdialog', { name: /^First connection to 127\.0\.0\.1/ });
    await first.waitFor({ timeout: 20_000 });
    expect(await first.innerText()).toContain('Wraith has not seen this server before.');
  });
});
