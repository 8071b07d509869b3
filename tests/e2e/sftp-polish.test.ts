/**
 * The Files panel's rough edges, in real Chromium against a real OpenSSH sshd of this file's own:
 * Ctrl+Shift+E hands the keys to the file list and back to the terminal; finished transfers are
 * cleared (all, or one by one) from the keyboard; files dropped on a folder row go into that
 * folder; a file the login may not write opens read-only and a refused save keeps the text; a
 * UTF-8 byte order mark is hidden and kept; a folder zip leaves out what cannot be read and says
 * so; a dropped connection is reported once, with its Reconnect button in sight; the editor keeps
 * its text through a dropped connection and saves after Reconnect; Ctrl+S of no change writes
 * nothing; a 250-character name keeps its dialogs in the window; a name the server refuses stays
 * in its dialog with the reason; the path bar keeps a folder it may not list, with the reason; an
 * upload does not replace another user's file the login may not write (a folder upload names it
 * and sends the rest); a link to nowhere is left out of a zip and named; the sort order and
 * "Show hidden files" outlast the panel closing and the page reloading; files dropped with a
 * folder that cannot be made still go, the folder's named on the upload's row with the reason; a
 * file opened through a link saves again and again; a file that cannot be edited offers its
 * download; links to folders and links to nowhere look like neither folders nor working links.
 */
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, linkSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Download, Locator, Page } from 'playwright-core';
import { linkToNowhere } from '../../src-main/common/contract/sftp.js';
import { type TestBrowser, openApp, reloadApp } from '../fixtures/browser.js';
import { type SshdHandle, accountIds, homeOf, mkdirOwned, startSshd } from '../fixtures/sshd.js';
import { type WraithServer, startWraithServer } from '../fixtures/wraith-server.js';
import { readZip } from '../fixtures/zip.js';
import { dropLocal, filesPanel, showFolder as showFolderAt } from '../fixtures/files-panel.js';
import { recordToasts } from '../fixtures/toasts.js';
import { connectNewSshInUi } from '../fixtures/ui-connection.js';

let sshd: SshdHandle;
let server: WraithServer;
let browser: TestBrowser;
let page: Page;
let home: string;
let localDir: string;
const folder = `e2e-polish-${process.pid}-${Date.now().toString(36)}`;
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

const panel = () => filesPanel(page);
const row = (name: string): Locator => panel().locator(`tr.sftp-row[data-name="${name}"]`);
const remote = (...parts: string[]) => join(home, folder, ...parts);
const terminalInput = () => page.locator('.tab-panel:visible .xterm-helper-textarea');
const screenText = () => page.locator('.tab-panel:visible .xterm-rows').innerText();
const focusedIs = (l: Locator) => l.evaluate((el) => el === document.activeElement).catch(() => false);
/** How far the transfer row named `name` says it is (0 without a progress bar), read without waiting for it. */
const percentOf = (name: string) =>
  page.evaluate((n) => {
    const li = [...document.querySelectorAll('.transfer')].find((t) => t.textContent?.includes(n));
    return Number(li?.querySelector('[role="progressbar"]')?.getAttribute('aria-valuenow') ?? 0);
  }, name);

/** A file on the server's disk (the sshd is local and we are root), owned by the SFTP user unless `owner` says. */
function put(path: string, data: string | Buffer, opts: { owner?: string; mode?: number } = {}): void {
  writeFileSync(path, data);
  const { uid, gid } = accountIds(opts.owner ?? sshd.users.password.username);
  chownSync(path, uid, gid);
  execFileSync('chmod', [(opts.mode ?? 0o644).toString(8), path]);
}

/** The text in a file editor dialog, as its lines show it (CodeMirror draws one .cm-line per line). */
async function editorText(dialog: Locator): Promise<string | null> {
  const lines = await dialog.locator('.cm-line').evaluateAll((ls) => ls.map((l) => l.textContent ?? ''));
  return lines.length ? lines.join('\n') : null;
}

async function refresh(): Promise<void> {
  await panel().getByRole('button', { name: 'Refresh' }).click();
}

/** Closes an editor dialog, discarding what it holds (a test that failed halfway leaves it open). */
async function closeEditor(editor: Locator): Promise<void> {
  if (!(await editor.count())) return;
  await editor.getByRole('button', { name: 'Close', exact: true }).last().click();
  const discard = page.getByRole('dialog', { name: 'Discard changes?' });
  await Promise.race([discard.waitFor().then(() => discard.getByRole('button', { name: 'Discard' }).click()), editor.waitFor({ state: 'detached' })]);
  await editor.waitFor({ state: 'detached' });
}

/** The Files panel open on the test's folder. */
const showFolder = () => showFolderAt(page, remote());

beforeAll(async () => {
  sshd = await startSshd();
  home = homeOf(sshd.users.password.username);
  mkdirOwned(remote(), sshd.users.password.username);
  localDir = mkdtempSync(join(tmpdir(), 'wraith-sftp-polish-'));
  server = await startWraithServer();
  browser = await openApp(server.openUrl);
  page = browser.page;
  // A call that waits for what is not there fails the test it is in, rather than the tests after it.
  page.setDefaultTimeout(20_000);
  await connectNewSshInUi(page, { name: 'polish sshd', host: sshd.host, port: sshd.port, ...sshd.users.password });
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await sshd?.stop();
  if (home) rmSync(join(home, folder), { recursive: true, force: true });
  if (localDir) rmSync(localDir, { recursive: true, force: true });
});

describe('the Files panel, polished', () => {
  it('Ctrl+Shift+E puts the keys in the file list, and closing the panel gives them back to the terminal', async () => {
    await page.locator('.tab-panel:visible .xterm').click();
    await expect.poll(() => focusedIs(terminalInput())).toBe(true);
    await page.keyboard.press('Control+Shift+E');
    await panel().waitFor();
    // The keys are on a row of the list (the first), not left in the terminal.
    await expect.poll(() => page.evaluate(() => document.activeElement?.matches('aside[aria-label="Files"] tr.sftp-row') ?? false), { timeout: 15_000 }).toBe(true);
    // Keys typed now work the list: type-ahead goes to the test's folder, Enter opens it.
    await page.keyboard.type(folder);
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('data-name'))).toBe(folder);
    await page.keyboard.press('Enter');
    await expect.poll(() => panel().getAttribute('data-path')).toBe(remote());

    // Closed with the keyboard from inside it: the terminal has the keys again.
    await page.keyboard.press('Control+Shift+E');
    await panel().waitFor({ state: 'detached' });
    await expect.poll(() => focusedIs(terminalInput())).toBe(true);
    await page.keyboard.type('echo keys-back-$((6*7))\n');
    await expect.poll(screenText).toMatch(/^keys-back-42 *$/m);

    // Open again, closed by its ✕ button: the same.
    await page.keyboard.press('Control+Shift+E');
    await panel().waitFor();
    await expect.poll(() => page.evaluate(() => document.activeElement?.closest('aside[aria-label="Files"] .sftp-list') !== null)).toBe(true);
    await panel().getByRole('button', { name: 'Hide the files panel' }).click();
    await panel().waitFor({ state: 'detached' });
    await expect.poll(() => focusedIs(terminalInput())).toBe(true);

    await page.keyboard.press('Control+Shift+E');
    await panel().waitFor();
    await expect.poll(() => panel().getAttribute('data-path')).toBe(remote());
  });

  it('clears finished transfers from the keyboard, one by one or all at once, and leaves running ones', async () => {
    await showFolder();
    for (const name of ['one.txt', 'two.txt', 'three.txt']) {
      await panel().locator('input[name=sftp-upload]').setInputFiles({ name, mimeType: 'text/plain', buffer: Buffer.from(`${name}\n`) });
      await panel().locator('.transfer[data-state="done"]', { hasText: name }).waitFor({ timeout: 20_000 });
    }
    const rows = panel().locator('.transfer');
    expect(await rows.count()).toBe(3);

    // One row's ✕: that row goes, the keys go to the ✕ of the row that takes its place.
    const removeTwo = panel().getByRole('button', { name: 'Remove two.txt from the list' });
    expect(await removeTwo.count()).toBe(1);
    await removeTwo.focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => rows.count()).toBe(2);
    expect(await panel().locator('.transfer', { hasText: 'two.txt' }).count()).toBe(0);
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('Remove one.txt from the list');
    expect(existsSync(remote('two.txt'))).toBe(true); // the list forgets the transfer, not the file

    // A transfer still running stays when the finished ones are cleared; the keys stay in the list.
    const big = join(localDir, 'big.bin');
    execFileSync('truncate', ['-s', '1G', big]);
    await panel().locator('input[name=sftp-upload]').setInputFiles(big);
    const running = panel().locator('.transfer[data-state="running"]', { hasText: 'big.bin' });
    await running.waitFor({ timeout: 20_000 });
    expect(await running.getByRole('button', { name: /^Remove / }).count()).toBe(0);
    await panel().getByRole('button', { name: 'Clear finished' }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().getAttribute('data-state')).toBe('running');
    await expect.poll(() => page.evaluate(() => document.activeElement?.closest('.sftp-transfers .transfers-head') !== null)).toBe(true);

    // Cancelled, it is finished too: cleared, the list goes and the keys go back to the files.
    await running.getByRole('button', { name: 'Cancel upload of big.bin' }).click();
    await expect.poll(() => rows.first().getAttribute('data-state'), { timeout: 20_000 }).toBe('cancelled');
    await panel().getByRole('button', { name: 'Clear finished' }).focus();
    await page.keyboard.press('Enter');
    await panel().locator('.sftp-transfers').waitFor({ state: 'detached' });
    await expect.poll(() => page.evaluate(() => document.activeElement?.closest('aside[aria-label="Files"] .sftp-list') !== null)).toBe(true);
  });

  it('uploads files dropped on a folder row into that folder, lighting the row up; dropped elsewhere, into the folder shown', async () => {
    await showFolder();
    const me = accountIds(sshd.users.password.username);
    mkdirSync(remote('inbox'));
    chownSync(remote('inbox'), me.uid, me.gid);
    put(remote('plain.txt'), 'plain\n');
    await refresh();
    await row('inbox').waitFor();
    await row('plain.txt').waitFor();
    const files = (name: string) =>
      page.evaluateHandle((n) => {
        const dt = new DataTransfer();
        dt.items.add(new File([`${n} by drag and drop\n`], n, { type: 'text/plain' }));
        return dt;
      }, name);
    const hint = panel().locator('.drop-hint');

    const intoFolder = await files('into.txt');
    await panel().dispatchEvent('dragenter', { dataTransfer: intoFolder });
    await row('inbox').locator('.entry-name').dispatchEvent('dragover', { dataTransfer: intoFolder });
    await expect.poll(() => row('inbox').getAttribute('class')).toContain('drop-target');
    expect(await hint.innerText()).toContain(`Drop to upload to ${remote('inbox')}`);
    // The rows stay in sight while dragging: the hint does not cover the folder row.
    const hintBox = await hint.boundingBox();
    const rowBox = await row('inbox').boundingBox();
    expect(hintBox && rowBox && (rowBox.y + rowBox.height <= hintBox.y || rowBox.y >= hintBox.y + hintBox.height)).toBe(true);
    await row('inbox').locator('.entry-name').dispatchEvent('drop', { dataTransfer: intoFolder });
    await hint.waitFor({ state: 'detached' });
    await expect.poll(() => existsSync(remote('inbox', 'into.txt')) && readFileSync(remote('inbox', 'into.txt'), 'utf8'), { timeout: 20_000 }).toBe('into.txt by drag and drop\n');
    expect(existsSync(remote('into.txt'))).toBe(false);
    expect(await row('inbox').getAttribute('class')).not.toContain('drop-target');
    expect(await panel().getAttribute('data-path')).toBe(remote()); // the panel stays where it was

    // Onto a file's row: into the folder shown, as onto the list's empty space.
    const here = await files('here.txt');
    await panel().dispatchEvent('dragenter', { dataTransfer: here });
    await row('plain.txt').locator('.entry-name').dispatchEvent('dragover', { dataTransfer: here });
    expect(await hint.innerText()).toContain(`Drop to upload to ${remote()}`);
    expect(await row('plain.txt').getAttribute('class')).not.toContain('drop-target');
    await row('plain.txt').locator('.entry-name').dispatchEvent('drop', { dataTransfer: here });
    await row('here.txt').waitFor({ timeout: 20_000 });
    expect(readFileSync(remote('here.txt'), 'utf8')).toBe('here.txt by drag and drop\n');
    expect(existsSync(remote('inbox', 'here.txt'))).toBe(false);
  });

  it('sends what it can of files dropped with a folder that cannot be made, and its row names the rest with the reason', async () => {
    await showFolder();
    const toasts = await recordToasts(page);
    // Dropped: a folder and a loose file, as from a file manager.
    const local = join(localDir, 'drop-mix');
    mkdirSync(join(local, 'tree', 'sub'), { recursive: true });
    writeFileSync(join(local, 'tree', 'a.txt'), 'alpha\n');
    writeFileSync(join(local, 'tree', 'sub', 'b.txt'), 'beta\n');
    writeFileSync(join(local, 'loose.txt'), 'loose\n');
    const dropped = [join(local, 'tree'), join(local, 'loose.txt')];
    const me = accountIds(sshd.users.password.username);
    mkdirSync(remote('mixed'));
    chownSync(remote('mixed'), me.uid, me.gid);
    mkdirSync(remote('rodir'), { mode: 0o755 }); // root's, as the tests run: the login may not write in it
    // The upload's one row: what it says once it ended.
    const clear = panel().getByRole('button', { name: 'Clear finished' });
    if (await clear.count()) await clear.click();
    const failed = () => panel().locator('.transfer[data-state="failed"]', { hasText: '3 files' }).locator('.transfer-meta').allInnerTexts();
    try {
      // Where a file holds the folder's name: the folder cannot be made, the loose file goes.
      put(remote('mixed', 'tree'), 'a file named tree\n');
      await refresh();
      await dropLocal(page, row('mixed').locator('.entry-name'), dropped);
      await expect.poll(() => existsSync(remote('mixed', 'loose.txt')) && readFileSync(remote('mixed', 'loose.txt'), 'utf8'), { timeout: 20_000 }).toBe('loose\n');
      await expect.poll(failed).toHaveLength(1);
      const [named = ''] = await failed();
      // One count of the upload's files, on its row, and no toast with another.
      expect(named).toMatch(/^Failed: 2 of 3 files did not upload\. /);
      const why = `Cannot create ${remote('mixed', 'tree')}: ${remote('mixed', 'tree')} exists and is not a folder.`;
      expect(named).toContain(`tree/a.txt: ${why}`);
      expect(named).toContain(`tree/sub/b.txt: ${why}`);
      expect(readFileSync(remote('mixed', 'tree'), 'utf8')).toBe('a file named tree\n');

      // Where the login may write nothing: the folder's files are named, and the loose file is
      // tried and refused in words of its own, rather than nothing said of it.
      await dropLocal(page, row('rodir').locator('.entry-name'), dropped);
      await expect.poll(failed).toHaveLength(2);
      const [ro = ''] = await failed(); // the newest row first
      expect(ro).toMatch(new RegExp(`^Failed: 3 of 3 files did not upload\\. .*tree/a\\.txt: Cannot create directory ${remote('rodir', 'tree')}: permission denied`));
      expect(ro).toContain(`loose.txt: Cannot write ${remote('rodir', 'loose.txt')}: the folder ${remote('rodir')} is not writable`);
      expect((await toasts()).filter((t) => t.includes('did not upload') || t.includes('loose.txt'))).toEqual([]);
    } finally {
      rmSync(remote('mixed'), { recursive: true, force: true });
      rmSync(remote('rodir'), { recursive: true, force: true });
    }
  });

  it('refuses a file dropped where nothing takes it (the status bar): the browser does not open it in place of Wraith', async () => {
    const dropped = join(localDir, 'dropped-astray.txt');
    writeFileSync(dropped, 'astray\n');
    const before = page.url();
    await page.evaluate(() => ((window as unknown as { stillHere: boolean }).stillHere = true));
    const box = await page.locator('footer.status-bar').boundingBox();
    if (!box) throw new Error('no status bar');
    // A real drag of a local file, as the browser delivers one from the desktop.
    const cdp = await page.context().newCDPSession(page);
    const at = { x: box.x + box.width / 2, y: box.y + box.height / 2, data: { items: [], files: [dropped], dragOperationsMask: 1 } };
    for (const type of ['dragEnter', 'dragOver', 'drop'] as const) await cdp.send('Input.dispatchDragEvent', { type, ...at });
    await cdp.detach();
    // Still Wraith, in this page and no other. (A browser opening the file does so right after the
    // drop; half a second lets that show, it is not a figure under test.)
    await page.waitForTimeout(500);
    expect(page.url()).toBe(before);
    expect(await page.evaluate(() => (window as unknown as { stillHere?: boolean }).stillHere)).toBe(true);
    expect(page.context().pages()).toHaveLength(1);
    expect(await panel().isVisible()).toBe(true);
  });

  it("opens a file the login may not write read-only, says so, and a save the server refuses keeps the text and says why", async () => {
    await showFolder();
    put(remote('theirs.conf'), 'listen 80;\n', { owner: sshd.users.key.username, mode: 0o644 });
    await refresh();
    await row('theirs.conf').locator('.entry-name').dblclick();
    const editor = page.getByRole('dialog', { name: 'Edit theirs.conf' });
    try {
      await expect.poll(() => editorText(editor)).toBe('listen 80;\n');
      const note = editor.getByRole('note');
      await expect.poll(() => note.innerText({ timeout: 500 }).catch(() => '')).toContain('Read-only.');
      expect(await note.innerText()).toContain(`theirs.conf belongs to ${sshd.users.key.username}`);
      expect(await note.innerText()).toContain(`do not let ${sshd.users.password.username} change it`);
      expect(await editor.locator('.editor-path').innerText()).toContain('Read-only');
      // No Save that cannot work, and typing changes nothing.
      expect(await editor.getByRole('button', { name: 'Save', exact: true }).count()).toBe(0);
      const text = editor.getByRole('textbox', { name: 'Contents of theirs.conf' });
      expect(await text.getAttribute('aria-readonly')).toBe('true');
      await text.click();
      await page.keyboard.type('mine');
      await page.keyboard.press('Control+s');
      expect(await editorText(editor)).toBe('listen 80;\n');

      // Edit anyway: the server has the last word, and refuses. The text stays as typed, and why is said.
      await editor.getByRole('button', { name: /^Edit anyway/ }).click();
      await text.press('Control+End');
      await text.pressSequentially('listen 443;\n');
      await text.press('Control+s');
      const alert = editor.getByRole('alert');
      await expect.poll(() => alert.innerText({ timeout: 500 }).catch(() => ''), { timeout: 15_000 }).toContain('Not saved: the server refused to write theirs.conf.');
      expect(await alert.innerText()).toContain(`Cannot save ${remote('theirs.conf')}: it belongs to ${sshd.users.key.username} and you may not write it.`);
      expect(await alert.innerText()).toContain('Your text is still here');
      expect(await editorText(editor)).toBe('listen 80;\nlisten 443;\n');
      expect(readFileSync(remote('theirs.conf'), 'utf8')).toBe('listen 80;\n');
      expect(await page.locator('.toasts .toast', { hasText: 'theirs.conf' }).count()).toBe(0);
    } finally {
      await closeEditor(editor);
    }
  });

  it('hides a UTF-8 byte order mark in the editor and keeps it on save: only the edit changes the bytes', async () => {
    await showFolder();
    put(remote('bom.ini'), Buffer.concat([BOM, Buffer.from('[a]\r\nx=1\r\n')]));
    await refresh();
    await row('bom.ini').locator('.entry-name').dblclick();
    const editor = page.getByRole('dialog', { name: 'Edit bom.ini' });
    try {
      await expect.poll(() => editorText(editor)).toBe('[a]\nx=1\n');
      expect(await editor.locator('.cm-specialChar').count()).toBe(0);
      expect(await editor.locator('.editor-path').innerText()).toContain('UTF-8 BOM');
      expect(await editor.getByRole('note').count()).toBe(0); // its own file: not read-only
      const text = editor.getByRole('textbox', { name: 'Contents of bom.ini' });
      await text.press('Control+End');
      await text.pressSequentially('y=2\n');
      await text.press('Control+s');
      await expect.poll(() => readFileSync(remote('bom.ini')).toString('hex')).toBe(Buffer.concat([BOM, Buffer.from('[a]\r\nx=1\r\ny=2\r\n')]).toString('hex'));
    } finally {
      await closeEditor(editor);
    }
  });

  it('downloads a folder as a zip without what it cannot read, and its row names what was left out', async () => {
    await showFolder();
    const me = accountIds(sshd.users.password.username);
    mkdirSync(remote('site'));
    chownSync(remote('site'), me.uid, me.gid);
    put(remote('site', 'index.html'), '<h1>hi</h1>\n');
    put(remote('site', 'secret.key'), 'k\n', { owner: sshd.users.key.username, mode: 0o000 });
    await refresh();
    await row('site').locator('.entry-name').click({ button: 'right' });
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('menuitem', { name: 'Download as zip' }).click()]);
    expect(download.suggestedFilename()).toBe('site.zip');
    const chunks: Buffer[] = [];
    for await (const c of await download.createReadStream()) chunks.push(Buffer.from(c));
    const entries = await readZip(Buffer.concat(chunks));
    expect(Object.keys(entries).sort()).toEqual(['WRAITH-NOT-INCLUDED.txt', 'index.html']);
    expect(entries['index.html']?.data.toString()).toBe('<h1>hi</h1>\n');
    expect(entries['WRAITH-NOT-INCLUDED.txt']?.data.toString()).toContain(`secret.key\tCannot open ${remote('site', 'secret.key')}: permission denied on the server.`);
    const done = panel().locator('.transfer[data-state="done"]', { hasText: 'site.zip' });
    await done.waitFor({ timeout: 20_000 });
    expect(await done.getByRole('note').innerText()).toContain('1 item could not be read and was left out: secret.key.');
  });

  it('reports a dropped connection once: no toast for the transfer it cut off, Reconnect uncovered, the Files button marks the failure', async () => {
    await showFolder();
    const big = join(localDir, 'cut.bin');
    execFileSync('truncate', ['-s', '2G', big]);
    const toasts = await recordToasts(page);
    await panel().locator('input[name=sftp-upload]').setInputFiles(big);
    const transfer = panel().locator('.transfer', { hasText: 'cut.bin' });
    await expect.poll(() => percentOf('cut.bin'), { timeout: 20_000 }).toBeGreaterThan(0);
    // Out of sight (the panel closed), the connection drops under the upload.
    const toggle = page.locator('.sftp-toggle');
    await toggle.click();
    await panel().waitFor({ state: 'detached' });
    sshd.dropConnections();
    const banner = page.locator('.tab-panel:visible .pane-banner');
    await expect.poll(() => banner.innerText({ timeout: 500 }).catch(() => ''), { timeout: 20_000 }).toContain('Disconnected');
    // The failure is marked on the Files button instead of a toast over the tab.
    await expect.poll(() => toggle.getAttribute('aria-label'), { timeout: 20_000 }).toBe('Files, 1 transfer failed');
    expect((await toasts()).filter((t) => t.includes('cut.bin'))).toEqual([]);

    // Reconnect is in sight, even with a toast up (any toast: here the broadcast shortcut's).
    await page.keyboard.press('Control+Shift+B');
    await page.locator('.toasts .toast', { hasText: 'Broadcasting input needs two terminal tabs' }).waitFor();
    const reconnect = banner.getByRole('button', { name: 'Reconnect' });
    const uncovered = () =>
      reconnect.evaluate((b) => {
        const r = b.getBoundingClientRect();
        const at = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
        return at !== null && b.contains(at);
      });
    expect(await uncovered()).toBe(true);

    // Opened, the list shows the failure in plain words, with Retry; the mark goes once seen.
    await toggle.click();
    await panel().waitFor();
    expect(await transfer.innerText()).toContain('Failed: the connection to the server dropped before it finished.');
    await expect.poll(() => toggle.getAttribute('aria-label')).toBe('Files');

    // In sight this time: the row says it, and nothing else does.
    await reconnect.click();
    await expect.poll(() => page.locator('.tab.active').getAttribute('class'), { timeout: 30_000 }).toContain('open');
    await expect.poll(() => panel().getAttribute('data-path'), { timeout: 15_000 }).toBe(remote());
    await transfer.getByRole('button', { name: 'Retry upload of cut.bin' }).click();
    await expect.poll(() => percentOf('cut.bin'), { timeout: 20_000 }).toBeGreaterThan(0);
    sshd.dropConnections();
    await expect.poll(() => transfer.getAttribute('data-state'), { timeout: 20_000 }).toBe('failed');
    await expect.poll(() => banner.innerText({ timeout: 500 }).catch(() => ''), { timeout: 20_000 }).toContain('Disconnected');
    await reconnect.click();
    await expect.poll(() => page.locator('.tab.active').getAttribute('class'), { timeout: 30_000 }).toContain('open');
    await expect.poll(() => panel().getAttribute('data-path'), { timeout: 15_000 }).toBe(remote());
    expect((await toasts()).filter((t) => t.includes('cut.bin'))).toEqual([]);

    // And all along, the page logged no errors.
    expect(browser.pageErrors.filter((e) => !/WebSocket connection to .* failed/.test(e))).toEqual([]);
  }, 120_000);

  it('lists a named pipe as special, and opening it says why not instead of doing nothing', async () => {
    execFileSync('mkfifo', [remote('a-pipe')]);
    await showFolder();
    await refresh();
    const pipe = row('a-pipe');
    await pipe.waitFor();
    expect(await pipe.locator('.col-size').innerText()).toBe('special');
    expect(await pipe.getAttribute('title')).toContain('a special file (a named pipe, a socket or a device)');
    // Its menu offers nothing that would only bring the server's refusal.
    await pipe.click({ button: 'right' });
    const menu = page.locator('.sftp-menu');
    await menu.waitFor();
    const offered = await menu.getByRole('menuitem').allInnerTexts();
    expect(offered).not.toContain('Edit');
    expect(offered).not.toContain('Download');
    expect(offered).toContain('Rename…');
    await page.keyboard.press('Escape');
    await menu.waitFor({ state: 'detached' });
    const toasts = await recordToasts(page);
    await pipe.dblclick();
    await expect.poll(toasts).toContainEqual(expect.stringContaining('a-pipe is a special file (a named pipe, a socket or a device): it has no contents to open here.'));
    expect(await page.getByRole('dialog', { name: 'Edit a-pipe' }).count()).toBe(0);
  });

  it("moves through a row's menu with the arrow keys, Home and End, and Escape gives the keys back to the row", async () => {
    put(remote('menu-keys.txt'), 'x');
    await showFolder();
    await refresh();
    await row('menu-keys.txt').locator('.entry-name').click();
    await page.keyboard.press('Shift+F10');
    const menu = page.locator('.sftp-menu');
    await menu.waitFor();
    const items = await menu.getByRole('menuitem').evaluateAll((els) => els.filter((e) => !(e as HTMLButtonElement).disabled).map((e) => e.textContent?.trim() ?? ''));
    expect(items.length).toBeGreaterThan(2);
    const focusedItem = () => page.evaluate(() => (document.activeElement?.getAttribute('role') === 'menuitem' ? document.activeElement.textContent?.trim() : null));
    await expect.poll(focusedItem).toBe(items[0]);
    await page.keyboard.press('ArrowDown');
    await expect.poll(focusedItem).toBe(items[1]);
    await page.keyboard.press('ArrowUp');
    await page.keyboard.press('ArrowUp');
    await expect.poll(focusedItem).toBe(items.at(-1));
    await page.keyboard.press('ArrowDown');
    await expect.poll(focusedItem).toBe(items[0]);
    await page.keyboard.press('End');
    await expect.poll(focusedItem).toBe(items.at(-1));
    await page.keyboard.press('Home');
    await expect.poll(focusedItem).toBe(items[0]);
    // The list behind did not move with the arrows: the same row is still the one selected.
    await page.keyboard.press('Escape');
    await menu.waitFor({ state: 'detached' });
    await expect.poll(() => focusedIs(row('menu-keys.txt'))).toBe(true);
  });

  it('opens a Windows-1252 (Latin-1) file as that when asked, and saves it back in it', async () => {
    // "Grüße “quoted” – 5 €\n" in Windows-1252: no UTF-8.
    const original = Buffer.concat([Buffer.from('Gr'), Buffer.from([0xfc, 0xdf]), Buffer.from('e '), Buffer.from([0x93]), Buffer.from('quoted'), Buffer.from([0x94, 0x20, 0x96, 0x20]), Buffer.from('5 '), Buffer.from([0x80, 0x0a])]);
    put(remote('legacy.txt'), original);
    await showFolder();
    await refresh();
    await row('legacy.txt').locator('.entry-name').dblclick();
    const editor = page.getByRole('dialog', { name: 'Edit legacy.txt' });
    try {
      const alert = editor.getByRole('alert');
      await alert.waitFor();
      expect(await alert.innerText()).toContain('is not UTF-8 text');
      await editor.getByRole('button', { name: 'Open as Windows-1252 (Latin-1)' }).click();
      await expect.poll(() => editorText(editor)).toBe('Grüße “quoted” – 5 €\n');
      expect(await editor.locator('.editor-path').innerText()).toContain('Windows-1252');
      const text = editor.getByRole('textbox', { name: 'Contents of legacy.txt' });
      await text.press('Control+End');
      await text.press('ArrowUp');
      await text.press('End');
      await page.keyboard.type(' ½');
      await page.keyboard.press('Control+S');
      await expect.poll(() => readFileSync(remote('legacy.txt')).toString('hex'), { timeout: 10_000 }).toBe(
        Buffer.concat([original.subarray(0, original.length - 1), Buffer.from([0x20, 0xbd, 0x0a])]).toString('hex'),
      );
    } finally {
      await closeEditor(editor);
    }
  });

  it('keeps the editor and its text while the connection is down; Save waits for Reconnect, then writes it, still checking the server', async () => {
    await showFolder();
    put(remote('draft.txt'), 'line 1\n');
    await refresh();
    await row('draft.txt').locator('.entry-name').dblclick();
    const editor = page.getByRole('dialog', { name: 'Edit draft.txt' });
    const offline = editor.getByRole('alert').filter({ hasText: 'Not connected.' });
    const save = editor.getByRole('button', { name: 'Save', exact: true });
    const reconnect = editor.getByRole('button', { name: 'Reconnect' });
    const text = editor.getByRole('textbox', { name: 'Contents of draft.txt' });
    try {
      await expect.poll(() => editorText(editor)).toBe('line 1\n');
      await text.press('Control+End');
      await text.pressSequentially('typed before the drop\n');

      sshd.dropConnections();
      await offline.waitFor({ timeout: 20_000 });
      expect(await offline.innerText()).toContain('The connection to the server dropped: Save works again once the tab is reconnected.');
      expect(await editorText(editor)).toBe('line 1\ntyped before the drop\n');
      expect(await save.isDisabled()).toBe(true);
      // Ctrl+S while it is down writes nothing and loses nothing.
      await text.press('Control+s');
      await new Promise((r) => setTimeout(r, 500));
      expect(readFileSync(remote('draft.txt'), 'utf8')).toBe('line 1\n');
      expect(await editorText(editor)).toBe('line 1\ntyped before the drop\n');

      // The tab's own Reconnect is behind the dialog: the editor has one. Then Save writes the text.
      await reconnect.click();
      await offline.waitFor({ state: 'detached', timeout: 30_000 });
      expect(await page.locator('.tab.active').getAttribute('class')).toContain('open');
      await text.press('Control+s');
      await expect.poll(() => readFileSync(remote('draft.txt'), 'utf8'), { timeout: 15_000 }).toBe('line 1\ntyped before the drop\n');

      // Down again, and the file changes on the server meanwhile: after Reconnect, Save still says so
      // instead of writing over it.
      await text.press('Control+End');
      await text.pressSequentially('typed in the second drop\n');
      sshd.dropConnections();
      await offline.waitFor({ timeout: 20_000 });
      put(remote('draft.txt'), 'changed on the server meanwhile\n');
      await reconnect.click();
      await offline.waitFor({ state: 'detached', timeout: 30_000 });
      await save.click();
      await expect.poll(() => editor.getByRole('alert').innerText({ timeout: 500 }).catch(() => ''), { timeout: 15_000 }).toContain('draft.txt changed on the server since it was opened');
      expect(readFileSync(remote('draft.txt'), 'utf8')).toBe('changed on the server meanwhile\n');
      expect(await editorText(editor)).toBe('line 1\ntyped before the drop\ntyped in the second drop\n');
    } finally {
      await closeEditor(editor);
    }
  }, 120_000);

  it('writes nothing on Ctrl+S with no change: the file keeps its inode, so its hard links stay one file', async () => {
    await showFolder();
    put(remote('linked.conf'), 'a=1\n');
    linkSync(remote('linked.conf'), remote('linked-too.conf'));
    const before = statSync(remote('linked.conf'));
    await refresh();
    await row('linked.conf').locator('.entry-name').dblclick();
    const editor = page.getByRole('dialog', { name: 'Edit linked.conf' });
    try {
      await expect.poll(() => editorText(editor)).toBe('a=1\n');
      const toasts = await recordToasts(page);
      await editor.getByRole('textbox', { name: 'Contents of linked.conf' }).press('Control+s');
      await expect.poll(toasts).toContain('No changes to save in linked.conf.');
      await new Promise((r) => setTimeout(r, 500));
      expect((await toasts()).filter((t) => t.startsWith('Saved linked.conf'))).toEqual([]);
      const after = statSync(remote('linked.conf'));
      expect(after.ino).toBe(before.ino);
      expect(after.nlink).toBe(2);
      expect(after.mtimeMs).toBe(before.mtimeMs);
    } finally {
      await closeEditor(editor);
    }
  });

  it('saves a file opened through a link (sites-enabled/*) again and again: its size in the toast, no false conflict, the link kept', async () => {
    await showFolder();
    put(remote('with space.txt'), 'server {}\n');
    symlinkSync('with space.txt', remote('link-to-file'));
    await refresh();
    await row('link-to-file').locator('.entry-name').dblclick();
    const editor = page.getByRole('dialog', { name: 'Edit link-to-file' });
    const text = editor.getByRole('textbox', { name: 'Contents of link-to-file' });
    try {
      await expect.poll(() => editorText(editor)).toBe('server {}\n');
      const toasts = await recordToasts(page);
      await text.press('Control+End');
      await text.pressSequentially('listen 80;\n');
      await text.press('Control+s');
      // The file's 21 bytes, not the link's 14.
      await expect.poll(toasts).toContain('Saved link-to-file (21 B).');
      await text.pressSequentially('listen 443;\n');
      await text.press('Control+s');
      await expect.poll(toasts).toContain('Saved link-to-file (33 B).');
      expect(await editor.getByRole('alert').count()).toBe(0);
      expect(readFileSync(remote('with space.txt'), 'utf8')).toBe('server {}\nlisten 80;\nlisten 443;\n');
      expect(readlinkSync(remote('link-to-file'))).toBe('with space.txt');
    } finally {
      await closeEditor(editor);
    }
  });

  it('says once why a file cannot be edited here, and its Download button downloads it', async () => {
    await showFolder();
    const bytes = Buffer.concat([Buffer.from('PNG\0\x01'), Buffer.alloc(3000, 7)]);
    put(remote('image.bin'), bytes);
    put(remote('big.log'), Buffer.alloc(6 * 1024 * 1024, 'a'));
    await refresh();

    await row('big.log').locator('.entry-name').dblclick();
    const big = page.getByRole('dialog', { name: 'Edit big.log' });
    const bigAlert = big.getByRole('alert');
    await expect.poll(() => bigAlert.innerText().catch(() => '')).toContain('more than the');
    // Said once (the host's reason ends "download it instead"), and the button does it.
    expect((await bigAlert.locator('p').allInnerTexts()).join('\n').match(/download/gi)).toHaveLength(1);
    expect(await big.getByRole('button', { name: 'Download big.log' }).count()).toBe(1);
    await page.screenshot({ path: '/tmp/wraith-editor-download.png' });
    await big.getByRole('button', { name: 'Close', exact: true }).last().click();
    await big.waitFor({ state: 'detached' });

    await row('image.bin').locator('.entry-name').dblclick();
    const binary = page.getByRole('dialog', { name: 'Edit image.bin' });
    await expect.poll(() => binary.getByRole('alert').innerText().catch(() => '')).toContain('binary file');
    const [download] = await Promise.all([page.waitForEvent('download'), binary.getByRole('button', { name: 'Download image.bin' }).click()]);
    expect(download.suggestedFilename()).toBe('image.bin');
    const chunks: Buffer[] = [];
    for await (const c of await download.createReadStream()) chunks.push(Buffer.from(c));
    expect(Buffer.concat(chunks)).toEqual(bytes);
    await binary.waitFor({ state: 'detached' }); // nothing left to do in it
    await panel().locator('.transfer[data-state="done"]', { hasText: 'image.bin' }).waitFor();
  });

  it('marks links: to a folder apart from a folder, and one that leads nowhere apart from one that works', async () => {
    await showFolder();
    const me = accountIds(sshd.users.password.username);
    mkdirSync(remote('real-dir'));
    chownSync(remote('real-dir'), me.uid, me.gid);
    put(remote('real.txt'), 'real\n');
    symlinkSync('real-dir', remote('dir-link'));
    symlinkSync('real.txt', remote('file-link'));
    symlinkSync('nowhere', remote('dead-link'));
    await refresh();
    await row('dead-link').waitFor();
    // What each row's icon draws: five kinds, five pictures.
    const drawn = async (name: string) => (await row(name).locator('.entry-icon path').getAttribute('d')) ?? '';
    const icons = { dir: await drawn('real-dir'), dirLink: await drawn('dir-link'), file: await drawn('real.txt'), fileLink: await drawn('file-link'), dead: await drawn('dead-link') };
    expect(new Set(Object.values(icons)).size).toBe(5);
    expect(icons.dirLink.startsWith(icons.dir)).toBe(true); // a folder, marked
    expect(await row('dead-link').locator('.entry-icon').getAttribute('class')).toContain('broken');
    expect(await row('dead-link').getAttribute('title')).toContain('→ nowhere, which cannot be reached');
    expect(await row('file-link').getAttribute('title')).not.toContain('cannot be reached');
    await page.screenshot({ path: '/tmp/wraith-link-icons.png' });
    for (const n of ['dir-link', 'file-link', 'dead-link', 'real.txt']) rmSync(remote(n));
    rmSync(remote('real-dir'), { recursive: true });
  });

  it('keeps the dialogs of a file with a 250-character name inside the window: the title wraps, the text, Save and ✕ in sight', async () => {
    const long = `${'L'.repeat(250)}.txt`;
    put(remote(long), 'long name\n');
    await showFolder();
    await refresh();
    const viewport = page.viewportSize() ?? { width: 0, height: 0 };
    type Box = { x: number; y: number; width: number; height: number };
    const inside = (x: Box, o: Box) => x.x >= o.x - 0.5 && x.y >= o.y - 0.5 && x.x + x.width <= o.x + o.width + 0.5 && x.y + x.height <= o.y + o.height + 0.5;
    /** Whether all of `l` is on screen and, given a dialog, inside it (a dialog scrolls what overflows it out of sight). */
    const inSight = async (l: Locator, within?: Locator) => {
      const b = await l.boundingBox();
      const d = within ? await within.boundingBox() : null;
      return !!b && inside(b, { x: 0, y: 0, ...viewport }) && (!within || (!!d && inside(b, d)));
    };
    try {
      await row(long).locator('.entry-name').dblclick();
      const editor = page.getByRole('dialog', { name: `Edit ${long}` });
      try {
        await expect.poll(() => editorText(editor)).toBe('long name\n');
        expect(await inSight(editor)).toBe(true);
        expect(await inSight(editor.getByRole('button', { name: 'Save', exact: true }), editor)).toBe(true);
        for (const close of await editor.getByRole('button', { name: 'Close', exact: true }).all()) expect(await inSight(close, editor)).toBe(true);
        expect(await inSight(editor.locator('.editor-text'), editor)).toBe(true);
        // All of the name is there to read, wrapped.
        expect((await editor.locator('h2').innerText()).replace(/\s/g, '')).toBe(`Edit${long}`);
      } finally {
        await closeEditor(editor);
      }

      await row(long).locator('.entry-name').click({ button: 'right' });
      await page.getByRole('menuitem', { name: 'Delete…' }).click();
      const ask = page.getByRole('dialog', { name: `Delete ${long}?` });
      await ask.waitFor();
      expect(await inSight(ask)).toBe(true);
      expect(await inSight(ask.getByRole('button', { name: 'Close', exact: true }), ask)).toBe(true);
      expect(await inSight(ask.getByRole('button', { name: 'Delete', exact: true }), ask)).toBe(true);
      await ask.getByRole('button', { name: 'Close', exact: true }).click();
      await ask.waitFor({ state: 'detached' });
      expect(existsSync(remote(long))).toBe(true);
    } finally {
      rmSync(remote(long), { force: true });
    }
  });

  it('keeps a name the server refuses in its dialog, with the reason under it, and takes the corrected one', async () => {
    const me = accountIds(sshd.users.password.username);
    mkdirSync(remote('taken'));
    chownSync(remote('taken'), me.uid, me.gid);
    put(remote('taken.txt'), 'kept\n');
    await showFolder();
    await refresh();
    await row('taken').waitFor();

    // New folder, named like a folder that is there.
    await panel().getByRole('button', { name: 'New folder' }).click();
    const make = page.getByRole('dialog', { name: 'New folder' });
    const field = make.getByRole('textbox');
    await field.fill('taken');
    await make.getByRole('button', { name: 'Create' }).click();
    const why = make.getByRole('alert');
    await expect.poll(() => why.innerText({ timeout: 500 }).catch(() => '')).toBe(`Cannot create ${remote('taken')}: something with that name already exists.`);
    expect(await field.inputValue()).toBe('taken');
    expect(await field.getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('.toasts .toast', { hasText: 'Could not create' }).count()).toBe(0);
    // Corrected where it was typed: the reason goes with the change, and the folder is made.
    await field.press('End');
    await page.keyboard.type('-2');
    expect(await why.count()).toBe(0);
    await page.keyboard.press('Enter');
    await make.waitFor({ state: 'detached' });
    await expect.poll(() => row('taken-2').getAttribute('aria-selected')).toBe('true');

    // New file over a file that is there: the same, and the file is as it was.
    await panel().getByRole('button', { name: 'New file' }).click();
    const newFile = page.getByRole('dialog', { name: 'New file' });
    await newFile.getByRole('textbox').fill('taken.txt');
    await newFile.getByRole('button', { name: 'Create' }).click();
    await expect.poll(() => newFile.getByRole('alert').innerText({ timeout: 500 }).catch(() => '')).toContain('taken.txt');
    expect(await newFile.getByRole('textbox').inputValue()).toBe('taken.txt');
    await newFile.getByRole('button', { name: 'Cancel' }).click();
    await newFile.waitFor({ state: 'detached' });
    expect(readFileSync(remote('taken.txt'), 'utf8')).toBe('kept\n');
    expect(await page.getByRole('dialog', { name: /^Edit / }).count()).toBe(0);

    // Rename onto a name that is taken.
    await row('taken.txt').locator('.entry-name').click({ button: 'right' });
    await page.getByRole('menuitem', { name: 'Rename…' }).click();
    const rename = page.getByRole('dialog', { name: 'Rename taken.txt' });
    await rename.getByRole('textbox').fill('taken');
    await rename.getByRole('button', { name: 'Rename' }).click();
    await expect.poll(() => rename.getByRole('alert').innerText({ timeout: 500 }).catch(() => '')).toBe(`Cannot rename ${remote('taken.txt')} to ${remote('taken')}: ${remote('taken')} already exists.`);
    expect(await rename.getByRole('textbox').inputValue()).toBe('taken');
    await rename.getByRole('textbox').fill('renamed.txt');
    await rename.getByRole('button', { name: 'Rename' }).click();
    await rename.waitFor({ state: 'detached' });
    await expect.poll(() => existsSync(remote('renamed.txt')) && readFileSync(remote('renamed.txt'), 'utf8')).toBe('kept\n');
    await expect.poll(() => row('renamed.txt').getAttribute('aria-selected')).toBe('true');
  });

  it("gives the keys to a new folder's row, selected, not back to the New folder button: Enter opens it, F2 renames it", async () => {
    await showFolder();
    const newFolder = panel().getByRole('button', { name: 'New folder' });
    await newFolder.click();
    const make = page.getByRole('dialog', { name: 'New folder' });
    await make.getByRole('textbox').fill('made-here');
    await page.keyboard.press('Enter');
    await make.waitFor({ state: 'detached' });
    await expect.poll(() => focusedIs(row('made-here'))).toBe(true);
    expect(await row('made-here').getAttribute('aria-selected')).toBe('true');

    // F2 renames the row that has the keys: the new folder (cancelled, the keys come back to it).
    await page.keyboard.press('F2');
    const rename = page.getByRole('dialog', { name: 'Rename made-here' });
    await rename.waitFor();
    await rename.getByRole('button', { name: 'Cancel' }).click();
    await rename.waitFor({ state: 'detached' });
    await expect.poll(() => focusedIs(row('made-here'))).toBe(true);

    // Enter opens it; a folder made with the folders on its way ("deep/er") gives its first part's row the keys.
    await page.keyboard.press('Enter');
    await expect.poll(() => panel().getAttribute('data-path')).toBe(remote('made-here'));
    await newFolder.click();
    await make.getByRole('textbox').fill('deep/er');
    await page.keyboard.press('Enter');
    await make.waitFor({ state: 'detached' });
    await expect.poll(() => focusedIs(row('deep'))).toBe(true);
    expect(existsSync(remote('made-here', 'deep', 'er'))).toBe(true);

    // Cancelled, nothing is made, and the keys go back to the button, as from any dialog.
    await newFolder.click();
    await make.getByRole('button', { name: 'Cancel' }).click();
    await make.waitFor({ state: 'detached' });
    await expect.poll(() => focusedIs(newFolder)).toBe(true);
  });

  it('keeps the path bar open on a folder it may not list, with the reason under what was typed', async () => {
    const me = accountIds(sshd.users.password.username);
    mkdirSync(remote('sealed'), { mode: 0o700 }); // root's: the SFTP user may see it, not list it
    mkdirSync(remote('open-door'));
    chownSync(remote('open-door'), me.uid, me.gid);
    await showFolder();
    await refresh();
    const bar = panel().getByRole('textbox', { name: 'Go to path' });
    await panel().locator('.sftp-list').focus();
    await page.keyboard.press('Control+L');
    await bar.fill(remote('sealed'));
    await bar.press('Enter');
    await expect.poll(() => panel().locator('#sftp-path-error').innerText({ timeout: 500 }).catch(() => '')).toBe(`${remote('sealed')}: permission denied on the server.`);
    expect(await bar.inputValue()).toBe(remote('sealed'));
    expect(await bar.getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('.toasts .toast', { hasText: 'sealed' }).count()).toBe(0);
    expect(await panel().getAttribute('data-path')).toBe(remote());
    // Corrected, it goes there.
    await bar.fill(remote('open-door'));
    await bar.press('Enter');
    await expect.poll(() => panel().getAttribute('data-path')).toBe(remote('open-door'));
    await bar.waitFor({ state: 'detached' });
  });

  it("refuses to replace a file of another user the login may not write: alone, and in a folder upload whose other files arrive", async () => {
    await showFolder();
    const me = accountIds(sshd.users.password.username);
    const src = join(localDir, 'conf-copy');
    mkdirSync(src);
    writeFileSync(join(src, 'a.conf'), 'a new\n');
    writeFileSync(join(src, 'roots.conf'), 'mine\n');
    mkdirSync(remote('conf-copy'));
    chownSync(remote('conf-copy'), me.uid, me.gid);
    put(remote('conf-copy', 'a.conf'), 'a old\n');
    // root's, 0644, in the user's own folders: a rename over them would work, and make them the user's.
    put(remote('roots.conf'), 'old\n', { owner: 'root' });
    put(remote('conf-copy', 'roots.conf'), 'old\n', { owner: 'root' });
    const said = (path: string) => `Cannot replace ${path}: it belongs to root and you may not write it.`;
    await refresh();

    await panel().locator('input[name=sftp-upload]').setInputFiles({ name: 'roots.conf', mimeType: 'text/plain', buffer: Buffer.from('mine\n') });
    await page.getByRole('dialog', { name: 'Replace roots.conf?' }).getByRole('button', { name: 'Replace' }).click();
    // Refused before a byte is sent, as every upload the host refuses at its start: said at once.
    await page.locator('.toasts .toast', { hasText: `Could not upload roots.conf: ${said(remote('roots.conf'))}` }).waitFor();

    await panel().locator('input[name=sftp-upload-folder]').setInputFiles(src);
    await page.getByRole('dialog', { name: /^Replace conf-copy\// }).getByRole('button', { name: 'Replace' }).click();
    const batch = panel().locator('.transfer[data-state="failed"]', { hasText: 'conf-copy' });
    await batch.waitFor();
    expect(await batch.innerText()).toContain(`1 of 2 files did not upload. conf-copy/roots.conf: ${said(remote('conf-copy', 'roots.conf'))}`);
    expect(readFileSync(remote('conf-copy', 'a.conf'), 'utf8')).toBe('a new\n');
    for (const path of [remote('roots.conf'), remote('conf-copy', 'roots.conf')]) {
      expect(readFileSync(path, 'utf8')).toBe('old\n');
      expect(statSync(path).uid).toBe(0);
    }
  });

  it('downloads a folder as a zip without a link to nowhere, and says why as a download of that link alone does', async () => {
    await showFolder();
    const me = accountIds(sshd.users.password.username);
    mkdirSync(remote('linked'));
    writeFileSync(remote('linked', 'ok.txt'), 'ok\n');
    symlinkSync('gone.txt', remote('linked', 'dead'));
    execFileSync('chown', ['-hR', `${me.uid}:${me.gid}`, remote('linked')]);
    const sentence = linkToNowhere('dead', 'gone.txt');
    await refresh();
    await row('linked').locator('.entry-name').dblclick();
    await expect.poll(() => panel().getAttribute('data-path')).toBe(remote('linked'));
    try {
      // Alone: nothing is fetched, and the reason is the listing's.
      await row('dead').locator('.entry-name').click({ button: 'right' });
      await page.getByRole('menuitem', { name: 'Download', exact: true }).click();
      await page.locator('.toasts .toast', { hasText: `Cannot download ${remote('linked', 'dead')}: ${sentence}.` }).waitFor();

      await panel().locator('.crumb').nth(-2).click();
      await expect.poll(() => panel().getAttribute('data-path')).toBe(remote());
      await row('linked').locator('.entry-name').click({ button: 'right' });
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('menuitem', { name: 'Download as zip' }).click()]);
      const chunks: Buffer[] = [];
      for await (const c of await download.createReadStream()) chunks.push(Buffer.from(c));
      const entries = await readZip(Buffer.concat(chunks));
      expect(Object.keys(entries).sort()).toEqual(['WRAITH-NOT-INCLUDED.txt', 'ok.txt']);
      expect(entries['WRAITH-NOT-INCLUDED.txt']?.data.toString()).toContain(`dead\tCannot open ${remote('linked', 'dead')}: ${sentence}.`);
      const done = panel().locator('.transfer[data-state="done"]', { hasText: 'linked.zip' });
      await done.waitFor({ timeout: 20_000 });
      expect(await done.getByRole('note').innerText()).toContain('1 item could not be read and was left out: dead.');
    } finally {
      if ((await panel().getAttribute('data-path')) !== remote()) await panel().locator('.crumb').nth(-2).click();
    }
  });

  it('keeps the sort order and "Show hidden files" when the panel closes and opens again, and after a reload', async () => {
    const me = accountIds(sshd.users.password.username);
    mkdirSync(remote('sorted'));
    writeFileSync(remote('sorted', 'a-small.txt'), 'a');
    writeFileSync(remote('sorted', 'b-big.txt'), 'b'.repeat(100));
    writeFileSync(remote('sorted', '.middle'), 'm'.repeat(10));
    execFileSync('chown', ['-R', `${me.uid}:${me.gid}`, remote('sorted')]);
    const names = () => panel().locator('tr.sftp-row').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-name') ?? ''));
    const hidden = () => panel().getByRole('button', { name: /hidden files$/ });
    const openSorted = async () => {
      await showFolder();
      await refresh();
      await row('sorted').locator('.entry-name').dblclick();
      await expect.poll(() => panel().getAttribute('data-path')).toBe(remote('sorted'));
    };
    const chosenKept = async () => {
      await expect.poll(names).toEqual(['b-big.txt', '.middle', 'a-small.txt']);
      expect(await panel().locator('th.col-size').getAttribute('aria-sort')).toBe('descending');
      expect(await hidden().getAttribute('aria-pressed')).toBe('true');
    };
    await openSorted();
    try {
      await expect.poll(names).toEqual(['a-small.txt', 'b-big.txt']);
      await hidden().click();
      await panel().getByRole('button', { name: /^Size/ }).click(); // largest first
      await chosenKept();

      await page.locator('.sftp-toggle').click();
      await panel().waitFor({ state: 'detached' });
      await page.locator('.sftp-toggle').click();
      await openSorted();
      await chosenKept();

      await reloadApp(page);
      await page.locator('.tab', { hasText: 'polish sshd' }).click();
      await page.locator('.tab.active.open').waitFor({ timeout: 30_000 });
      await openSorted();
      await chosenKept();
    } finally {
      // Back to what the other tests expect: by name, dot-files hidden.
      await panel().getByRole('button', { name: /^Name/ }).click();
      if ((await panel().locator('th.col-name').getAttribute('aria-sort')) !== 'ascending') await panel().getByRole('button', { name: /^Name/ }).click();
      if ((await hidden().getAttribute('aria-pressed')) === 'true') await hidden().click();
      await panel().locator('.crumb').nth(-2).click();
    }
  });

  it('widens the Files panel by a mouse drag of its splitter, and keeps the width after a reload', async () => {
    await showFolder();
    const splitter = page.getByRole('separator', { name: 'Resize the files panel' });
    const width = async () => Number(await splitter.getAttribute('aria-valuenow'));
    const before = await width();
    /** The splitter moved from the keyboard: each ← widens the panel on its right by 16 px. */
    const widen = async (steps: number) => {
      await splitter.focus();
      for (let i = 0; i < Math.abs(steps); i++) await splitter.press(steps > 0 ? 'ArrowLeft' : 'ArrowRight');
    };
    try {
      // Taken at its middle, as a person aims: the panel's rows beside it must not be what is grabbed.
      const b = (await splitter.boundingBox())!;
      await page.mouse.move(b.x + b.width / 2, b.y + b.height / 2);
      await page.mouse.down();
      await page.mouse.move(b.x + b.width / 2 - 80, b.y + b.height / 2, { steps: 8 });
      await page.mouse.up();
      await expect.poll(width).toBe(before + 80);
      expect(Math.round((await panel().boundingBox())!.width)).toBe(before + 80);

      await reloadApp(page);
      await page.locator('.tab', { hasText: 'polish sshd' }).click();
      await page.locator('.tab.active.open').waitFor({ timeout: 30_000 });
      await showFolder();
      await expect.poll(width).toBe(before + 80);
      expect(Math.round((await panel().boundingBox())!.width)).toBe(before + 80);
    } finally {
      await widen(-5);
      await expect.poll(width).toBe(before);
    }
  });

  it('downloads the items of a selection that can be, past those that cannot, then names these and says why', async () => {
    await showFolder();
    const me = accountIds(sshd.users.password.username);
    mkdirSync(remote('several'));
    symlinkSync('nowhere', remote('several', 'a-dead'));
    for (const name of ['b-ok.txt', 'c-gone.txt', 'd-ok.txt']) writeFileSync(remote('several', name), `${name}\n`);
    execFileSync('chown', ['-hR', `${me.uid}:${me.gid}`, remote('several')]);
    await refresh();
    await row('several').locator('.entry-name').dblclick();
    await expect.poll(() => panel().getAttribute('data-path')).toBe(remote('several'));
    const downloads: string[] = [];
    const onDownload = (d: Download) =>
      void d.createReadStream().then(async (stream) => {
        const chunks: Buffer[] = [];
        for await (const c of stream) chunks.push(Buffer.from(c));
        downloads.push(`${d.suggestedFilename()}=${Buffer.concat(chunks).toString().trim()}`);
      });
    page.on('download', onDownload);
    try {
      await row('d-ok.txt').waitFor();
      rmSync(remote('several', 'c-gone.txt')); // gone since the folder was listed
      await row('a-dead').locator('.entry-name').click();
      await row('d-ok.txt').locator('.entry-name').click({ modifiers: ['Shift'] });
      await row('a-dead').locator('.entry-name').click({ button: 'right' });
      await page.getByRole('menuitem', { name: 'Download 4 files' }).click();

      const said =
        `2 of 4 items did not download. a-dead: Cannot download ${remote('several', 'a-dead')}: ${linkToNowhere('a-dead', 'nowhere')}.; ` +
        `c-gone.txt: c-gone.txt does not exist in ${remote('several')}.`;
      await page.locator('.toasts .toast', { hasText: said }).waitFor();
      await expect.poll(() => [...downloads].sort()).toEqual(['b-ok.txt=b-ok.txt', 'd-ok.txt=d-ok.txt']);
      // What is gone leaves the list.
      await row('c-gone.txt').waitFor({ state: 'detached' });
    } finally {
      page.off('download', onDownload);
      if ((await panel().getAttribute('data-path')) !== remote()) await panel().locator('.crumb').nth(-2).click();
    }
  });

  // Last: the server's host key changes, for the tests after it would have to trust it again.
  it('steps the editor aside while the tab asks about the host key to reconnect, and brings it back with its text to save', async () => {
    await showFolder();
    put(remote('aside.txt'), 'first\n');
    await refresh();
    await row('aside.txt').locator('.entry-name').dblclick();
    const editor = page.getByRole('dialog', { name: 'Edit aside.txt' });
    const text = editor.getByRole('textbox', { name: 'Contents of aside.txt' });
    try {
      await expect.poll(() => editorText(editor)).toBe('first\n');
      await text.press('Control+End');
      await text.pressSequentially('kept aside\n');
      sshd.dropConnections();
      await editor.getByRole('alert').filter({ hasText: 'Not connected.' }).waitFor({ timeout: 20_000 });
      await sshd.restartWithNewHostKey();
      await editor.getByRole('button', { name: 'Reconnect' }).click();

      // The question is the tab's, behind the dialog: the dialog makes way, and the panel says where it went.
      const warning = page.locator('.tab-panel:visible').getByRole('alertdialog', { name: /host key of 127\.0\.0\.1:\d+ has changed/ });
      await warning.waitFor({ timeout: 20_000 });
      await editor.waitFor({ state: 'hidden' });
      expect(await panel().innerText()).toContain('The editor of');
      await warning.getByLabel("I have confirmed the new host key with the server's administrator").check();
      await warning.getByRole('button', { name: 'Forget old host key…' }).click();
      const card = page.locator('.tab-panel:visible').getByRole('alertdialog', { name: /New host key of 127\.0\.0\.1/ });
      await card.getByRole('button', { name: 'Trust and connect' }).click();

      // Connected again: the editor is back, its text as typed, and Save writes it.
      await editor.waitFor({ timeout: 30_000 });
      expect(await editorText(editor)).toBe('first\nkept aside\n');
      expect(await editor.getByRole('alert').filter({ hasText: 'Not connected.' }).count()).toBe(0);
      await text.press('Control+s');
      await expect.poll(() => readFileSync(remote('aside.txt'), 'utf8'), { timeout: 15_000 }).toBe('first\nkept aside\n');
    } finally {
      await closeEditor(editor);
    }
  }, 120_000);
});
