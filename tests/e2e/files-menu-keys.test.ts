/**
 * Where the keys go after the Files panel's row menu, in real Chromium against a real sshd, with a
 * live SSH terminal in front the whole time (where keys that lose their way end up, typed into a
 * server's shell): an item chosen gives them back to the row (Copy path, Download), a dialog it
 * opened gives them back to the row when it closes (Permissions…, Rename… cancelled), to the
 * renamed row after a Rename, to the row in its place after a Delete; and a dialog whose row went
 * away meanwhile (the file deleted elsewhere) leaves them in the list, not in the terminal.
 * An arrow key pressed then moves in the list. The tests run in order, on one folder.
 */
import { chownSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Locator, Page } from 'playwright-core';
import { type AppWithSshd, startAppWithSshd } from '../fixtures/app-with-sshd.js';
import { accountIds, homeOf, mkdirOwned } from '../fixtures/sshd.js';
import { activeSessionId, typeAndSee } from '../fixtures/terminal-page.js';

let app: AppWithSshd;
let page: Page;
let home = '';
let shellId = '';
const folder = `e2e-files-keys-${process.pid}-${Date.now().toString(36)}`;
const remote = (...parts: string[]) => join(home, folder, ...parts);

/** A file on the server's disk (the sshd is local and we are root), owned by the SFTP user. */
function put(name: string): void {
  writeFileSync(remote(name), 'x');
  const { uid, gid } = accountIds(app.sshd.users.password.username);
  chownSync(remote(name), uid, gid);
}

beforeAll(async () => {
  app = await startAppWithSshd({ connection: 'files-keys' });
  home = homeOf(app.sshd.users.password.username);
  mkdirOwned(remote(), app.sshd.users.password.username);
  for (const name of ['alpha.txt', 'bravo.txt', 'charlie.txt', 'delta.txt', 'echo.txt']) put(name);
  page = app.page;
  page.setDefaultTimeout(20_000);
});

afterAll(async () => {
  await app?.stop();
  if (home) rmSync(remote(), { recursive: true, force: true });
});

const panel = () => page.getByRole('complementary', { name: 'Files' });
const row = (name: string): Locator => panel().locator(`tr.sftp-row[data-name="${name}"]`);

/** What has the keys, as a person would name it (for a readable failure): a row by its name. */
const focused = () =>
  page.evaluate(() => {
    const a = document.activeElement;
    if (!a || a === document.body) return 'nothing (the page body)';
    if (a.matches('tr.sftp-row')) return `row ${a.getAttribute('data-name')}`;
    if (a.matches('.sftp-list')) return 'the file list';
    return `${a.tagName} ${a.getAttribute('aria-label') ?? a.textContent?.trim().slice(0, 40) ?? ''}`;
  });

/** Opens `name`'s row menu with a right click and clicks `item`. */
async function fromMenu(name: string, item: string): Promise<void> {
  await row(name).locator('.entry-name').click({ button: 'right' });
  const menu = panel().locator('.sftp-menu');
  await menu.waitFor();
  await menu.getByRole('menuitem', { name: item, exact: true }).click();
  await menu.waitFor({ state: 'detached' });
}

/** The tab of the saved connection open in front, its shell in the test's folder, the Files panel showing it. */
async function openShellAndFiles(): Promise<void> {
  await page.getByRole('treeitem', { name: /^files-keys, SSH/ }).dblclick();
  await page.locator('.tab.active.open').waitFor({ timeout: 30_000 });
  shellId = await activeSessionId(page);
  await typeAndSee(page, shellId, `cd ${remote()} && echo "live-$((6*7))"`, 'live-42');
  await page.keyboard.press('Control+Shift+E');
  await panel().waitFor();
  await expect.poll(() => panel().getAttribute('data-path'), { timeout: 15_000 }).toBeTruthy();
  await panel().locator('.sftp-list').focus();
  await page.keyboard.press('Control+L');
  const bar = panel().getByRole('textbox', { name: 'Go to path' });
  await bar.fill(remote());
  await bar.press('Enter');
  await expect.poll(() => panel().getAttribute('data-path'), { timeout: 15_000 }).toBe(remote());
}

/** A key pressed now works the list (ArrowDown or ArrowUp moves to `rowName`'s row), not the shell. */
async function keyReachesList(key: 'ArrowDown' | 'ArrowUp', rowName: string): Promise<void> {
  await page.keyboard.press(key);
  await expect.poll(focused).toBe(`row ${rowName}`);
}

describe("the Files panel's row menu, with a live terminal in front", () => {
  it('gives the keys back to the row after Copy path and Download, and after Permissions… and Rename… are cancelled', async () => {
    await openShellAndFiles();
    await fromMenu('bravo.txt', 'Copy path');
    await expect.poll(focused).toBe('row bravo.txt');
    await keyReachesList('ArrowDown', 'charlie.txt');

    await fromMenu('bravo.txt', 'Download');
    await expect.poll(focused).toBe('row bravo.txt');

    await fromMenu('bravo.txt', 'Permissions…');
    const chmod = page.getByRole('dialog', { name: /^Permissions/ });
    await chmod.waitFor();
    await page.keyboard.press('Escape');
    await chmod.waitFor({ state: 'detached' });
    await expect.poll(focused).toBe('row bravo.txt');

    await fromMenu('bravo.txt', 'Rename…');
    const rename = page.getByRole('dialog', { name: 'Rename bravo.txt' });
    await rename.waitFor();
    await page.keyboard.press('Escape');
    await rename.waitFor({ state: 'detached' });
    await expect.poll(focused).toBe('row bravo.txt');
    await keyReachesList('ArrowUp', 'alpha.txt');
  });

  it('gives them to the renamed row after Rename…, and to the row in its place after Delete…', async () => {
    await fromMenu('bravo.txt', 'Rename…');
    const rename = page.getByRole('dialog', { name: 'Rename bravo.txt' });
    await rename.getByRole('textbox').fill('beta.txt');
    await page.keyboard.press('Enter');
    await rename.waitFor({ state: 'detached' });
    await row('beta.txt').waitFor();
    await expect.poll(focused).toBe('row beta.txt');
    await keyReachesList('ArrowDown', 'charlie.txt');

    await fromMenu('beta.txt', 'Delete…');
    const confirm = page.getByRole('dialog', { name: 'Delete beta.txt?' });
    await confirm.getByRole('button', { name: 'Delete' }).click();
    await row('beta.txt').waitFor({ state: 'detached' });
    await expect.poll(focused).toBe('row charlie.txt');
    await keyReachesList('ArrowDown', 'delta.txt');
  });

  it('keeps the keys in the list when the row of a Rename went away meanwhile (deleted elsewhere)', async () => {
    await fromMenu('delta.txt', 'Rename…');
    const rename = page.getByRole('dialog', { name: 'Rename delta.txt' });
    await rename.waitFor();
    rmSync(remote('delta.txt'));
    await rename.getByRole('textbox').fill('delta-2.txt');
    await page.keyboard.press('Enter');
    // The server says it is gone: the dialog closes, the list is read again without it.
    await rename.waitFor({ state: 'detached' });
    await row('delta.txt').waitFor({ state: 'detached' });
    // On the list's first row, its tab stop (the row that had them is gone).
    await expect.poll(focused).toBe('row alpha.txt');
    await keyReachesList('ArrowDown', 'charlie.txt');

    // Gone while the dialog is open (the list read again meanwhile), then cancelled.
    await fromMenu('echo.txt', 'Rename…');
    const renameEcho = page.getByRole('dialog', { name: 'Rename echo.txt' });
    await renameEcho.waitFor();
    rmSync(remote('echo.txt'));
    // The Refresh button behind the dialog, pressed as another part of the app would list the folder again.
    await panel().getByRole('button', { name: 'Refresh' }).evaluate((b) => (b as HTMLButtonElement).click());
    await row('echo.txt').waitFor({ state: 'detached' });
    await page.keyboard.press('Escape');
    await renameEcho.waitFor({ state: 'detached' });
    await expect.poll(focused).toBe('row alpha.txt');
    await keyReachesList('ArrowDown', 'charlie.txt');

    // The same with Permissions…, whose closing says nothing of the list: the dialog gives the
    // keys to the list its row was in (Backspace there goes up a folder), not to the terminal.
    await fromMenu('charlie.txt', 'Permissions…');
    const chmod = page.getByRole('dialog', { name: /^Permissions/ });
    await chmod.waitFor();
    rmSync(remote('charlie.txt'));
    await panel().getByRole('button', { name: 'Refresh' }).evaluate((b) => (b as HTMLButtonElement).click());
    await row('charlie.txt').waitFor({ state: 'detached' });
    await page.keyboard.press('Escape');
    await chmod.waitFor({ state: 'detached' });
    await expect.poll(focused).toBe('the file list');
    await page.keyboard.press('Backspace');
    await expect.poll(() => panel().getAttribute('data-path')).toBe(home);
  });
});
