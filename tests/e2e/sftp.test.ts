/**
 * The SFTP panel of an SSH tab in real Chromium against a real OpenSSH sshd: browse, mkdir,
 * upload (file input, folder input) streamed in chunks and checked by sha256 on the server,
 * an upload's progress and its cancel from the transfers list,
 * sort, hidden files, rename, chmod, edit in place (CRLF files keep their line ends; a binary file
 * is refused), download,
 * a folder as a zip, the path bar and the terminal's folder, multi-select, delete with confirmation,
 * replacing another user's file (the transfers list says its owner changed), a symlink's
 * permissions (its target's), names kept as typed, a file that cannot replace a folder.
 */
import { createHash, randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Locator, Page, Request } from 'playwright-core';
import { type TestBrowser, openApp } from '../fixtures/browser.js';
import { startDelayProxy } from '../fixtures/delay-proxy.js';
import { type SshdHandle, accountIds, homeOf, startSshd } from '../fixtures/sshd.js';
import { type WraithServer, startWraithServer } from '../fixtures/wraith-server.js';
import { connectNewSshInUi } from '../fixtures/ui-connection.js';
import { readZip } from '../fixtures/zip.js';

let sshd: SshdHandle;
let server: WraithServer;
let browser: TestBrowser;
let page: Page;
let home: string;
let localDir: string;
const folder = `e2e-sftp-${process.pid}-${Date.now().toString(36)}`;
/** 3.5 MiB of random bytes: several upload chunks. */
const payload = randomBytes(3.5 * 1024 * 1024);
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

const panel = () => page.getByRole('complementary', { name: 'Files' });
const row = (name: string): Locator => panel().locator(`tr.sftp-row[data-name="${name}"]`);
const remote = (...parts: string[]) => join(home, folder, ...parts);

async function names(): Promise<string[]> {
  return panel().locator('tr.sftp-row').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-name') ?? ''));
}

/** The text in a file editor dialog, as its lines show it (CodeMirror draws one .cm-line per line). */
/** The editor's text, or null while it has none on screen: an open editor always shows at least
 *  one line, even for an empty file, so "no lines" is never mistaken for an empty file. */
async function editorText(dialog: Locator): Promise<string | null> {
  const lines = await dialog.locator('.cm-line').evaluateAll((ls) => ls.map((l) => l.textContent ?? ''));
  return lines.length ? lines.join('\n') : null;
}

async function menu(name: string, item: string): Promise<void> {
  await row(name).locator('.entry-name').click({ button: 'right' });
  await page.getByRole('menuitem', { name: item }).click();
}

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: `/tmp/${name}.png` });
}

/**
 * Saves a password connection `name` to `s`'s users at 127.0.0.1:`port` (the vault is set up by
 * then), opens it trusting its host key, shows the Files panel, runs `body`, and closes the tab.
 */
async function inNewTab(name: string, s: SshdHandle, port: number, body: () => Promise<void>): Promise<void> {
  const tab = page.locator('.tab', { hasText: name });
  try {
    await connectNewSshInUi(page, { name, host: s.host, port, ...s.users.password }, { vaultReady: true });
    if (!(await panel().count())) await page.getByRole('button', { name: 'Files', exact: true }).click();
    await body();
  } finally {
    await tab.getByRole('button', { name: /^Close / }).click();
    await expect.poll(() => tab.count()).toBe(0);
  }
}

beforeAll(async () => {
  sshd = await startSshd();
  home = homeOf(sshd.users.password.username);
  localDir = mkdtempSync(join(tmpdir(), 'wraith-sftp-e2e-'));
  mkdirSync(join(localDir, 'tree', 'sub'), { recursive: true });
  writeFileSync(join(localDir, 'tree', 'a.txt'), 'alpha\n');
  writeFileSync(join(localDir, 'tree', 'sub', 'b.txt'), 'beta\n');
  server = await startWraithServer();
  browser = await openApp(server.openUrl);
  page = browser.page;
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await sshd?.stop();
  if (home) rmSync(join(home, folder), { recursive: true, force: true });
  if (localDir) rmSync(localDir, { recursive: true, force: true });
});

describe('the SFTP panel of an SSH tab', () => {
  it('opens an SSH tab (vault, host key) and shows the home folder with Ctrl+Shift+E', async () => {
    await connectNewSshInUi(page, { name: 'files sshd', host: sshd.host, port: sshd.port, ...sshd.users.password });

    // The toggle sits beside the tabs; the shortcut works from inside the terminal too.
    const toggle = page.getByRole('button', { name: 'Files', exact: true });
    expect(await toggle.getAttribute('aria-pressed')).toBe('false');
    await page.locator('.tab-panel:visible .xterm').click();
    await page.keyboard.press('Control+Shift+E');
    await panel().waitFor();
    expect(await toggle.getAttribute('aria-pressed')).toBe('true');
    await expect.poll(() => panel().getAttribute('data-path'), { timeout: 15_000 }).toBe(home);
    const crumbs = await panel().locator('.crumb').allInnerTexts();
    expect(crumbs).toEqual(['/', ...home.split('/').filter(Boolean)]);
  });

  it('creates a folder, enters it with a double-click, and explains the empty folder', async () => {
    await panel().getByRole('button', { name: 'New folder' }).click();
    const ask = page.getByRole('dialog', { name: 'New folder' });
    await ask.locator('input').fill(folder);
    await ask.getByRole('button', { name: 'Create' }).click();
    await row(folder).locator('.entry-name').dblclick();
    await expect.poll(() => panel().getAttribute('data-path')).toBe(remote());
    await expect.poll(() => panel().locator('.sftp-empty').innerText()).toContain('This folder is empty');
    await shot('wraith-sftp-empty');
    expect(statSync(remote()).isDirectory()).toBe(true);
  });

  it("opens a folder double-clicked on its row's ⋯ button too, rather than opening and closing the menu", async () => {
    // Up to the home folder (its crumb), then a double-click on the button in the middle of the
    // folder's row: its first click opens the menu, its second lands on the backdrop.
    await panel().locator('.crumb').nth(-2).click();
    await expect.poll(() => panel().getAttribute('data-path')).toBe(home);
    await row(folder).hover();
    const box = await row(folder).locator('.row-menu').boundingBox();
    if (!box) throw new Error('the ⋯ button of the folder row is not shown on hover');
    await page.mouse.dblclick(box.x + box.width / 2, box.y + box.height / 2);
    await expect.poll(() => panel().getAttribute('data-path')).toBe(remote());
    expect(await page.locator('.sftp-menu').count()).toBe(0);
    // One click on it still opens the menu, whose first item for a folder is Open.
    await panel().locator('.crumb').nth(-2).click();
    await expect.poll(() => panel().getAttribute('data-path')).toBe(home);
    await row(folder).hover();
    await row(folder).locator('.row-menu').click();
    await page.locator('.sftp-menu').getByRole('menuitem', { name: 'Open', exact: true }).click();
    await expect.poll(() => panel().getAttribute('data-path')).toBe(remote());
  });

  it('makes the folders on the way of a new folder named with slashes, and selects the first', async () => {
    const ask = page.getByRole('dialog', { name: 'New folder' });
    try {
      await panel().getByRole('button', { name: 'New folder' }).click();
      await ask.locator('input').fill('logs/2026/');
      await ask.getByRole('button', { name: 'Create' }).click();
      await expect.poll(() => existsSync(remote('logs', '2026')) && statSync(remote('logs', '2026')).isDirectory()).toBe(true);
      await expect.poll(() => row('logs').getAttribute('aria-selected')).toBe('true');
      // The last part must be new, as a folder named without slashes must: the dialog says so, the name kept.
      await panel().getByRole('button', { name: 'New folder' }).click();
      await ask.locator('input').fill('logs/2026');
      await ask.getByRole('button', { name: 'Create' }).click();
      await expect.poll(() => ask.getByRole('alert').innerText({ timeout: 500 }).catch(() => '')).toContain(`Cannot create ${remote('logs', '2026')}`);
      expect(await ask.locator('input').inputValue()).toBe('logs/2026');
    } finally {
      if (await ask.count()) await ask.getByRole('button', { name: 'Cancel' }).click();
      rmSync(remote('logs'), { recursive: true, force: true });
      await panel().getByRole('button', { name: 'Refresh' }).click();
      await row('logs').waitFor({ state: 'detached' });
    }
  });

  it('uploads a file chosen in the file input, sent as the body of one PUT to its upload link, equal on the server', async () => {
    // Served by `wraith serve`, the browser sends the File itself (sftp.uploadLink), not chunks through the page.
    const puts: string[] = [];
    const onRequest = (r: Request) => {
      if (r.method() === 'PUT') puts.push(new URL(r.url()).pathname.split('/')[1] ?? '');
    };
    page.on('request', onRequest);
    await panel().locator('input[name=sftp-upload]').setInputFiles({ name: 'random.bin', mimeType: 'application/octet-stream', buffer: payload });
    await row('random.bin').waitFor({ timeout: 20_000 });
    const transfer = panel().locator('.transfer').filter({ hasText: 'random.bin' });
    await expect.poll(() => transfer.getAttribute('data-state'), { timeout: 20_000 }).toBe('done');
    await expect.poll(() => transfer.innerText()).toContain('Uploaded 3.5 MB');
    // In sight in the transfers list, so no note on top of it.
    expect(await page.locator('.toasts .toast', { hasText: 'random.bin' }).count()).toBe(0);
    expect(sha256(readFileSync(remote('random.bin')))).toBe(sha256(payload));
    expect(readdirSync(remote()).filter((n) => n.includes('wraith-part'))).toEqual([]);
    await expect.poll(() => row('random.bin').locator('.col-size').innerText()).toBe('3.5 MB');
    page.off('request', onRequest);
    expect(puts).toEqual(['upload']);
  });

  it("shows an upload's progress, and cancels it from the transfers list leaving nothing behind", async () => {
    // 512 MiB (sparse, read back as zeros): seconds of transfer, time enough to press Cancel.
    const big = join(localDir, 'big.bin');
    execFileSync('truncate', ['-s', '512M', big]);
    await panel().locator('input[name=sftp-upload]').setInputFiles(big);
    const transfer = panel().locator('.transfer').filter({ hasText: 'big.bin' });
    const progress = transfer.getByRole('progressbar', { name: 'big.bin progress' });
    await expect.poll(async () => Number((await progress.getAttribute('aria-valuenow')) ?? 0), { timeout: 20_000 }).toBeGreaterThan(0);
    expect(await transfer.locator('.transfer-meta').innerText()).toMatch(/ of 512 MB/);
    // The bar draws it from its left end, no further than the figure it states (it glides there).
    const drawn = () =>
      progress.evaluate((bar) => {
        const track = bar.getBoundingClientRect();
        const fill = (bar.firstElementChild as HTMLElement).getBoundingClientRect();
        return { offset: Math.round(fill.left - track.left), share: fill.width / track.width, stated: Number(bar.getAttribute('aria-valuenow')) / 100 };
      });
    await expect.poll(async () => (await drawn()).share, { timeout: 20_000 }).toBeGreaterThan(0);
    const seen = await drawn();
    expect(seen.offset).toBe(0);
    expect(seen.share).toBeLessThanOrEqual(seen.stated + 0.01);
    await transfer.getByRole('button', { name: 'Cancel upload of big.bin' }).click();
    await expect.poll(() => transfer.getAttribute('data-state'), { timeout: 20_000 }).toBe('cancelled');
    expect(await transfer.innerText()).toContain('Cancelled — nothing was left behind');
    // Neither the file nor its temporary name is on the server, and the listing does not show it.
    expect(readdirSync(remote()).filter((n) => n.includes('big.bin') || n.includes('wraith-part'))).toEqual([]);
    expect(await names()).not.toContain('big.bin');
  });

  it('starts the cancelled upload again from its row, and it lands whole', async () => {
    const rows = panel().locator('.transfer').filter({ hasText: 'big.bin' });
    await rows.getByRole('button', { name: 'Retry upload of big.bin' }).click();
    // The new transfer takes the old row's place.
    await expect.poll(() => rows.getAttribute('data-state')).toBe('running');
    expect(await rows.count()).toBe(1);
    await expect.poll(() => rows.getAttribute('data-state'), { timeout: 80_000 }).toBe('done');
    expect(statSync(remote('big.bin')).size).toBe(512 * 1024 * 1024);
    // Only a failed or cancelled transfer is offered again.
    expect(await rows.getByRole('button', { name: /^Retry/ }).count()).toBe(0);
    rmSync(remote('big.bin'));
  }, 90_000);

  it('keeps a transfer in sight with the panel closed: progress on the Files button, a note when it ends', async () => {
    const big = join(localDir, 'quiet.bin');
    execFileSync('truncate', ['-s', '512M', big]);
    await panel().locator('input[name=sftp-upload]').setInputFiles(big);
    const toggle = page.locator('.sftp-toggle');
    await toggle.click(); // hide the panel while the upload runs
    await panel().waitFor({ state: 'detached' });
    await expect.poll(() => toggle.getAttribute('aria-label'), { timeout: 20_000 }).toMatch(/^Files, 1 transfer running, \d+%$/);
    expect(await toggle.locator('.sftp-toggle-progress').innerText()).toMatch(/^\d+%$/);
    await page.locator('.toasts .toast', { hasText: 'Uploaded quiet.bin.' }).waitFor({ timeout: 60_000 });
    expect(await toggle.getAttribute('aria-label')).toBe('Files');
    expect(statSync(remote('quiet.bin')).size).toBe(512 * 1024 * 1024);
    rmSync(remote('quiet.bin'));
    await toggle.click();
    await panel().waitFor();
  }, 90_000); // its waits (20 s for progress, 60 s for the end) are longer than the 30 s default

  it('uploads a file dropped on the panel, showing where it will go while dragging', async () => {
    const target = await panel().elementHandle();
    const data = await page.evaluateHandle(() => {
      const dt = new DataTransfer();
      dt.items.add(new File(['dropped by drag and drop\n'], 'dropped.txt', { type: 'text/plain' }));
      return dt;
    });
    await target?.dispatchEvent('dragenter', { dataTransfer: data });
    const hint = panel().locator('.drop-hint');
    expect(await hint.innerText()).toContain(`Drop to upload to ${remote()}`);
    await target?.dispatchEvent('dragover', { dataTransfer: data });
    await target?.dispatchEvent('drop', { dataTransfer: data });
    await hint.waitFor({ state: 'detached' });
    await row('dropped.txt').waitFor({ timeout: 20_000 });
    await expect.poll(() => existsSync(remote('dropped.txt')) && readFileSync(remote('dropped.txt'), 'utf8')).toBe('dropped by drag and drop\n');
    await menu('dropped.txt', 'Delete…');
    await page.getByRole('dialog', { name: 'Delete dropped.txt?' }).getByRole('button', { name: 'Delete' }).click();
    await row('dropped.txt').waitFor({ state: 'detached' });
  });

  it('uploads a folder with its sub-folders', async () => {
    await panel().locator('input[name=sftp-upload-folder]').setInputFiles(join(localDir, 'tree'));
    await row('tree').waitFor({ timeout: 20_000 });
    await expect.poll(() => existsSync(remote('tree', 'sub', 'b.txt')) && readFileSync(remote('tree', 'sub', 'b.txt'), 'utf8'), { timeout: 20_000 }).toBe('beta\n');
    expect(readFileSync(remote('tree', 'a.txt'), 'utf8')).toBe('alpha\n');
    // One row for the folder, counting its files.
    await expect.poll(() => panel().locator('.transfer[data-state="done"]', { hasText: 'tree' }).innerText()).toContain('Uploaded 2 files');
  });

  it('says once why a folder cannot be uploaded where the user may not create it, and sends none of its files', async () => {
    const locked = remote('locked');
    mkdirSync(locked, { mode: 0o755 }); // root's, as the tests run: the SFTP user may not write in it
    try {
      await row('locked').locator('.entry-name').dblclick();
      await expect.poll(() => panel().getAttribute('data-path')).toBe(locked);
      const rowsBefore = await panel().locator('.transfer').count();
      await panel().locator('input[name=sftp-upload-folder]').setInputFiles(join(localDir, 'tree'));
      await page.locator('.toasts .toast', { hasText: `Upload failed: Cannot create directory ${locked}/tree: permission denied` }).waitFor();
      // No batch started whose every file would fail on the missing folder.
      await new Promise((r) => setTimeout(r, 500));
      expect(await panel().locator('.transfer').count()).toBe(rowsBefore);
      expect(await page.locator('.toasts .toast', { hasText: 'did not upload' }).count()).toBe(0);
    } finally {
      await panel().locator('.crumb').nth(-2).click();
      await expect.poll(() => panel().getAttribute('data-path')).toBe(remote());
      rmSync(locked, { recursive: true, force: true });
    }
  });

  it('uploads a folder of many files as one row: Cancel leaves no partial file, Retry sends the rest, a second upload asks once', async () => {
    const src = join(localDir, 'many-up');
    mkdirSync(join(src, 'sub'), { recursive: true });
    for (let i = 0; i < 150; i++) writeFileSync(join(src, i % 2 ? 'sub' : '', `f${i}.txt`), `file ${i}\n`);
    // 300 MiB (sparse): seconds of transfer, time enough to press Cancel while it is under way.
    execFileSync('truncate', ['-s', '300M', join(src, 'big.bin')]);
    const up = remote('many-up');
    const parts = () => (existsSync(up) ? readdirSync(up, { recursive: true, encoding: 'utf8' }).filter((n) => n.includes('wraith-part')) : []);
    const landed = () => (existsSync(up) ? readdirSync(up, { recursive: true, encoding: 'utf8' }).filter((n) => /f\d+\.txt$/.test(n)).length : 0);
    const batch = panel().locator('.transfer').filter({ hasText: 'many-up' });

    try {
      await panel().locator('input[name=sftp-upload-folder]').setInputFiles(src);
      await expect.poll(() => parts().some((n) => n.includes('big.bin')), { timeout: 30_000 }).toBe(true);
      expect(await panel().locator('.transfer[data-state="running"]').count()).toBe(1); // the batch's, not a row per file
      // The big file's bytes count while it goes, not only once it has landed (the small ones are 1.2 KB).
      await expect.poll(() => batch.locator('.transfer-meta').innerText(), { timeout: 30_000 }).toMatch(/files · [\d.]+ MB of/);
      expect(await batch.getAttribute('data-state')).toBe('running');
      await batch.getByRole('button', { name: 'Cancel upload of many-up' }).click();
      await expect.poll(() => batch.getAttribute('data-state'), { timeout: 20_000 }).toBe('cancelled');
      // What is true of it: the files that had arrived stay, and so does the folder made for them.
      expect(await batch.innerText()).toMatch(
        /Cancelled — (\d+ of 151 files had arrived and stay on the server;|none of the 151 files had arrived, and) no partial file was left\. The folder many-up was made for this upload and stays\./,
      );
      expect(parts()).toEqual([]);
      expect(existsSync(join(up, 'big.bin'))).toBe(false);

      await batch.getByRole('button', { name: 'Retry upload of many-up' }).click();
      await expect.poll(() => existsSync(join(up, 'big.bin')) && statSync(join(up, 'big.bin')).size, { timeout: 60_000 }).toBe(300 * 1024 * 1024);
      await expect.poll(() => landed(), { timeout: 20_000 }).toBe(150);
      expect(readFileSync(join(up, 'sub', 'f7.txt'), 'utf8')).toBe('file 7\n');
      await expect.poll(() => panel().locator('.transfer[data-state="running"]').count(), { timeout: 20_000 }).toBe(0);

      // Again: every file is there. One question for the whole batch; keeping them uploads nothing.
      await panel().locator('input[name=sftp-upload-folder]').setInputFiles(src);
      const ask = page.getByRole('dialog', { name: /^Replace many-up\// });
      await ask.waitFor();
      expect(await ask.innerText()).toContain('Your answer applies to every existing file in this upload.');
      await ask.getByRole('button', { name: 'Cancel' }).click();
      const again = panel().locator('.transfer[data-state="done"]').filter({ hasText: 'many-up' }).getByRole('note');
      await expect.poll(() => again.innerText().catch(() => ''), { timeout: 20_000 }).toContain('151 files that were already there were kept.');
      // Nothing was sent, and the row does not count the kept files' bytes as if it had been.
      const kept = panel().locator('.transfer[data-state="done"]').filter({ hasText: '151 files that were already there were kept.' });
      expect(await kept.locator('.transfer-meta').innerText()).toBe('✓ Nothing uploaded');
      expect(await page.getByRole('dialog', { name: /^Replace/ }).count()).toBe(0);
    } finally {
      rmSync(up, { recursive: true, force: true });
      rmSync(src, { recursive: true, force: true });
      await panel().getByRole('button', { name: 'Refresh' }).click();
    }
  }, 120_000);

  it('sorts by size and hides dot-files until asked', async () => {
    await panel().locator('input[name=sftp-upload]').setInputFiles([
      { name: 'small.txt', mimeType: 'text/plain', buffer: Buffer.from('hello\n') },
      { name: '.hidden-note', mimeType: 'text/plain', buffer: Buffer.from('psst\n') },
    ]);
    await row('small.txt').waitFor({ timeout: 20_000 });
    await expect.poll(() => existsSync(remote('.hidden-note'))).toBe(true);
    await panel().getByRole('button', { name: 'Refresh' }).click();
    expect(await names()).not.toContain('.hidden-note');
    await panel().getByRole('button', { name: 'Show hidden files' }).click();
    await row('.hidden-note').waitFor();

    await panel().getByRole('button', { name: /^Size/ }).click(); // largest first
    expect(await names()).toEqual(['tree', 'random.bin', 'small.txt', '.hidden-note']); // 6 bytes, then 5
    expect(await panel().locator('th.col-size').getAttribute('aria-sort')).toBe('descending');
    await panel().getByRole('button', { name: /^Name/ }).click();
    expect(await names()).toEqual(['tree', '.hidden-note', 'random.bin', 'small.txt']);
    await panel().getByRole('button', { name: 'Show hidden files' }).click();
    await row('.hidden-note').waitFor({ state: 'detached' });
  });

  it('filters the rows by name (Ctrl+F), says when nothing matches, and Esc or another folder brings every row back', async () => {
    await row('small.txt').locator('.entry-name').click();
    await page.keyboard.press('Control+f');
    const field = panel().getByRole('textbox', { name: 'Filter by name' });
    await expect.poll(() => field.evaluate((el) => el === document.activeElement)).toBe(true);
    await field.fill('RAND');
    await expect.poll(names).toEqual(['random.bin']);
    expect(await panel().locator('.sftp-filter').innerText()).toContain('1 of 3');
    // The selected row the filter hides is no longer selected: actions name what is shown.
    expect(await panel().locator('tr.sftp-row[aria-selected="true"]').count()).toBe(0);
    await page.keyboard.press('Enter');
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('data-name'))).toBe('random.bin');

    await field.fill('zzz');
    await expect.poll(names).toEqual([]);
    expect(await panel().locator('.sftp-empty').innerText()).toContain('Nothing in this folder matches “zzz”.');
    await field.press('Escape');
    await field.waitFor({ state: 'detached' });
    expect(await names()).toEqual(['tree', 'random.bin', 'small.txt']);

    // A filter belongs to its folder.
    await panel().getByRole('button', { name: 'Filter by name' }).click();
    await field.fill('tr');
    await expect.poll(names).toEqual(['tree']);
    await row('tree').locator('.entry-name').dblclick();
    await field.waitFor({ state: 'detached' });
    await row('a.txt').waitFor();
    await panel().getByRole('button', { name: 'Up one folder' }).click();
    await row('small.txt').waitFor();
  });

  it('renames a file', async () => {
    await menu('small.txt', 'Rename…');
    const ask = page.getByRole('dialog', { name: 'Rename small.txt' });
    await ask.locator('input').fill('notes.txt');
    await ask.getByRole('button', { name: 'Rename' }).click();
    await row('notes.txt').waitFor();
    await row('small.txt').waitFor({ state: 'detached' });
    expect(existsSync(remote('small.txt'))).toBe(false);
    expect(readFileSync(remote('notes.txt'), 'utf8')).toBe('hello\n');
  });

  it('moves a row into a folder by dragging it there, and back out onto a crumb; typing a name jumps to it', async () => {
    await row('notes.txt').locator('.entry-name').dragTo(row('tree').locator('.entry-name'));
    await row('notes.txt').waitFor({ state: 'detached' });
    expect(existsSync(remote('tree', 'notes.txt'))).toBe(true);
    expect(existsSync(remote('notes.txt'))).toBe(false);
    await page.locator('.toasts .toast', { hasText: `Moved notes.txt to ${remote('tree')}.` }).waitFor();

    await row('tree').locator('.entry-name').dblclick();
    await row('notes.txt').waitFor();
    // Onto the crumb of the folder above: out of tree again.
    await row('notes.txt').locator('.entry-name').dragTo(panel().locator('.crumb', { hasText: folder }));
    await row('notes.txt').waitFor({ state: 'detached' });
    expect(existsSync(remote('notes.txt'))).toBe(true);
    // Nothing moves into the folder it is already in, or into itself.
    await row('sub').locator('.entry-name').dragTo(panel().locator('.crumb', { hasText: 'tree' }));
    await row('sub').locator('.entry-name').dragTo(row('sub').locator('.entry-name'));
    expect(existsSync(remote('tree', 'sub', 'b.txt'))).toBe(true);
    await panel().getByRole('button', { name: 'Up one folder' }).click();
    await row('notes.txt').waitFor();

    // Onto the terminal: the path is typed at the prompt, ready for a command around it.
    await row('notes.txt').locator('.entry-name').dragTo(page.locator('.tab-panel:visible .xterm'));
    await expect.poll(() => page.locator('.tab-panel:visible .xterm-rows').innerText()).toContain(`$ ${remote('notes.txt')}`);
    await page.keyboard.press('Control+C');

    // Type-ahead: letters typed on the list go to the first row starting with them.
    await row('tree').locator('.entry-name').click();
    await page.keyboard.type('no');
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('data-name'))).toBe('notes.txt');
    await page.waitForTimeout(1100); // a pause of a second starts a new search
    await page.keyboard.type('r');
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('data-name'))).toBe('random.bin');
  });

  it('changes permissions with the octal dialog', async () => {
    await menu('notes.txt', 'Permissions…');
    const dialog = page.getByRole('dialog', { name: 'Permissions of notes.txt' });
    await dialog.locator('input[name=mode]').fill('640');
    expect(await dialog.getByLabel('Others read').isChecked()).toBe(false);
    expect(await dialog.getByLabel('Group read').isChecked()).toBe(true);
    await dialog.getByLabel('Owner execute').check();
    expect(await dialog.locator('input[name=mode]').inputValue()).toBe('740');
    await dialog.getByRole('button', { name: 'Apply' }).click();
    await dialog.waitFor({ state: 'detached' });
    await expect.poll(() => statSync(remote('notes.txt')).mode & 0o7777).toBe(0o740);
  });

  it("changes a symlink's permissions on the file it points to, showing that file's mode, not the link's 0777", async () => {
    const me = accountIds(sshd.users.password.username);
    writeFileSync(remote('private.txt'), 'secret\n', { mode: 0o600 });
    chownSync(remote('private.txt'), me.uid, me.gid);
    execFileSync('ln', ['-s', 'private.txt', remote('to-private')]);
    execFileSync('chown', ['-h', `${me.uid}:${me.gid}`, remote('to-private')]);
    try {
      await panel().getByRole('button', { name: 'Refresh' }).click();
      await menu('to-private', 'Permissions…');
      const dialog = page.getByRole('dialog', { name: 'Permissions of private.txt' });
      expect(await dialog.locator('input[name=mode]').inputValue()).toBe('600');
      expect(await dialog.getByRole('note').innerText()).toContain(`to-private is a link: this changes ${remote('private.txt')}`);
      // Applied as shown, nothing changes: the file stays private.
      await dialog.getByRole('button', { name: 'Apply' }).click();
      await dialog.waitFor({ state: 'detached' });
      await menu('to-private', 'Permissions…');
      await dialog.locator('input[name=mode]').fill('640');
      await dialog.getByRole('button', { name: 'Apply' }).click();
      await expect.poll(() => statSync(remote('private.txt')).mode & 0o7777).toBe(0o640);
    } finally {
      rmSync(remote('to-private'));
      rmSync(remote('private.txt'));
      await panel().getByRole('button', { name: 'Refresh' }).click();
      await row('private.txt').waitFor({ state: 'detached' });
    }
  });

  it('names what is typed: spaces kept, long names whole, a/../b is b; a row gone from the server goes from the list', async () => {
    const me = accountIds(sshd.users.password.username);
    const spaced = ' spaced .txt';
    writeFileSync(remote(spaced), 'x\n');
    chownSync(remote(spaced), me.uid, me.gid);
    const long = `${'l'.repeat(240)}.txt`;
    try {
      await panel().getByRole('button', { name: 'Refresh' }).click();
      // F2 then Enter, changing nothing: the name stays what it was, spaces and all.
      await row(spaced).locator('.entry-name').click();
      await page.keyboard.press('F2');
      // (Accessible names fold runs of spaces, so the dialog is found by the start of its title.)
      const ask = page.getByRole('dialog', { name: /^Rename / });
      // The part before the extension is selected, ready to be typed over.
      expect(await ask.locator('input').evaluate((el: HTMLInputElement) => el.value.slice(el.selectionStart ?? 0, el.selectionEnd ?? 0))).toBe(' spaced ');
      await page.keyboard.press('Enter');
      await ask.waitFor({ state: 'detached' });
      expect(existsSync(remote(spaced))).toBe(true);
      expect(existsSync(remote('spaced .txt'))).toBe(false);
      // A name longer than 200 characters arrives whole.
      await menu(spaced, 'Rename…');
      await ask.locator('input').fill(long);
      await ask.getByRole('button', { name: 'Rename' }).click();
      await row(long).waitFor();
      expect(existsSync(remote(long))).toBe(true);

      // "a/../b" makes b, and no folder a on the way.
      await panel().getByRole('button', { name: 'New folder' }).click();
      const make = page.getByRole('dialog', { name: 'New folder' });
      await make.locator('input').fill('stray/../kept');
      await make.getByRole('button', { name: 'Create' }).click();
      await expect.poll(() => row('kept').getAttribute('aria-selected')).toBe('true');
      expect(existsSync(remote('kept'))).toBe(true);
      expect(existsSync(remote('stray'))).toBe(false);

      // Deleted on the server behind the panel's back: the failed rename says so and the row goes.
      rmSync(remote(long));
      await menu(long, 'Rename…');
      await ask.locator('input').fill('whatever.txt');
      await ask.getByRole('button', { name: 'Rename' }).click();
      await page.locator('.toasts .toast', { hasText: `Could not rename ${long}` }).waitFor();
      await row(long).waitFor({ state: 'detached' });
    } finally {
      for (const n of [spaced, long, 'kept', 'stray']) rmSync(remote(n), { recursive: true, force: true });
      await panel().getByRole('button', { name: 'Refresh' }).click();
      await row('kept').waitFor({ state: 'detached' });
    }
  });

  it('says at once that a file cannot replace a folder of its name, without asking to replace it', async () => {
    await panel().locator('input[name=sftp-upload]').setInputFiles({ name: 'tree', mimeType: 'text/plain', buffer: Buffer.from('not a folder\n') });
    await page.locator('.toasts .toast', { hasText: `Could not upload tree: Cannot upload a file to ${remote('tree')}: a folder of that name is there` }).waitFor();
    expect(await page.getByRole('dialog', { name: 'Replace tree?' }).count()).toBe(0);
    expect(statSync(remote('tree')).isDirectory()).toBe(true);
  });

  it('keeps the keys in the list: into a folder and out, into an empty one, after a rename, a delete and a menu', async () => {
    const me = accountIds(sshd.users.password.username);
    mkdirSync(remote('void'));
    chownSync(remote('void'), me.uid, me.gid);
    writeFileSync(remote('keys-1.txt'), 'k\n');
    chownSync(remote('keys-1.txt'), me.uid, me.gid);
    const focused = () => page.evaluate(() => document.activeElement?.getAttribute('data-name') ?? document.activeElement?.className ?? null);
    try {
      await panel().getByRole('button', { name: 'Refresh' }).click();
      await row('tree').locator('.entry-name').click();
      await page.keyboard.press('Enter');
      await expect.poll(() => panel().getAttribute('data-path')).toBe(remote('tree'));
      await expect.poll(focused).toBe('sub'); // folders first
      // Back up: the folder just left has the keys.
      await page.keyboard.press('Backspace');
      await expect.poll(() => panel().getAttribute('data-path')).toBe(remote());
      await expect.poll(focused).toBe('tree');
      // An empty folder has no row to hold them: the list does, and Backspace still goes up.
      await row('void').locator('.entry-name').click();
      await page.keyboard.press('Enter');
      await expect.poll(() => panel().getAttribute('data-path')).toBe(remote('void'));
      await expect.poll(focused).toBe('sftp-list');
      await page.keyboard.press('Backspace');
      await expect.poll(focused).toBe('void');

      // Renamed with F2: the renamed row has them.
      await row('keys-1.txt').locator('.entry-name').click();
      await page.keyboard.press('F2');
      await page.keyboard.type('keys-2');
      await page.keyboard.press('Enter');
      await expect.poll(focused).toBe('keys-2.txt');
      // Delete asks with Cancel focused: Enter keeps the file, and the row keeps the keys.
      await page.keyboard.press('Delete');
      await page.getByRole('dialog', { name: 'Delete keys-2.txt?' }).waitFor();
      await page.keyboard.press('Enter');
      await expect.poll(focused).toBe('keys-2.txt');
      expect(existsSync(remote('keys-2.txt'))).toBe(true);
      await page.keyboard.press('Delete');
      await page.getByRole('dialog', { name: 'Delete keys-2.txt?' }).getByRole('button', { name: 'Delete' }).click();
      await row('keys-2.txt').waitFor({ state: 'detached' });
      await expect.poll(async () => typeof (await focused()) === 'string' && (await page.evaluate(() => document.activeElement?.matches('tr.sftp-row') ?? false))).toBe(true);
      // A row's menu closed with Escape gives the keys back to its row.
      await row('void').locator('.entry-name').click();
      await page.keyboard.press('Shift+F10');
      await page.locator('.sftp-menu').waitFor();
      await page.keyboard.press('Escape');
      await page.locator('.sftp-menu').waitFor({ state: 'detached' });
      await expect.poll(focused).toBe('void');
    } finally {
      for (const n of ['void', 'keys-1.txt', 'keys-2.txt']) rmSync(remote(n), { recursive: true, force: true });
      await panel().getByRole('button', { name: 'Refresh' }).click();
      await row('void').waitFor({ state: 'detached' });
    }
  });

  it('edits a text file in place, and refuses a binary one with the server\'s reason', async () => {
    await row('notes.txt').locator('.entry-name').dblclick();
    const editor = page.getByRole('dialog', { name: 'Edit notes.txt' });
    const text = editor.getByRole('textbox', { name: 'Contents of notes.txt' });
    await expect.poll(() => editorText(editor)).toBe('hello\n');
    expect(await editor.locator('.cm-gutters').innerText()).toContain('1'); // line numbers
    await text.press('Control+End');
    await text.pressSequentially('edited in wraith\n');
    await expect.poll(() => editor.innerText()).toContain('modified');
    // Ctrl+F searches inside the file; Escape closes the search, not the dialog.
    await text.press('Control+f');
    const find = editor.getByRole('textbox', { name: 'Find' });
    await find.pressSequentially('wraith'); // CodeMirror takes the query on key up
    await expect.poll(() => editor.locator('.cm-searchMatch').count()).toBe(1);
    await find.press('Escape');
    await find.waitFor({ state: 'detached' });
    expect(await editor.isVisible()).toBe(true);
    await shot('wraith-sftp-editor');
    await text.press('Control+s');
    await expect.poll(() => readFileSync(remote('notes.txt'), 'utf8')).toBe('hello\nedited in wraith\n');
    expect(statSync(remote('notes.txt')).mode & 0o7777).toBe(0o740); // the file kept its mode
    await editor.getByRole('button', { name: 'Close', exact: true }).last().click();
    await editor.waitFor({ state: 'detached' });

    // A Windows-format file keeps its CRLF line ends (a textarea alone turns them into LF).
    const me = accountIds(sshd.users.password.username);
    writeFileSync(remote('dos.ini'), '[a]\r\nx=1\r\n');
    execFileSync('chown', [`${me.uid}:${me.gid}`, remote('dos.ini')]);
    await panel().getByRole('button', { name: 'Refresh' }).click();
    await row('dos.ini').locator('.entry-name').dblclick();
    const dos = page.getByRole('dialog', { name: 'Edit dos.ini' });
    const dosText = dos.getByRole('textbox', { name: 'Contents of dos.ini' });
    await expect.poll(() => editorText(dos)).toBe('[a]\nx=1\n');
    expect(await dos.locator('.editor-path').innerText()).toMatch(/INI[\s\S]*CRLF/); // highlighted as INI, saved with CRLF
    await dosText.press('Control+End');
    await dosText.pressSequentially('y=2\n');
    await dosText.press('Control+s');
    await expect.poll(() => readFileSync(remote('dos.ini'), 'utf8')).toBe('[a]\r\nx=1\r\ny=2\r\n');
    await dos.getByRole('button', { name: 'Close', exact: true }).last().click();
    await dos.waitFor({ state: 'detached' });
    rmSync(remote('dos.ini'));
    await panel().getByRole('button', { name: 'Refresh' }).click();
    await row('dos.ini').waitFor({ state: 'detached' });

    // Changed on the server while open: the save stops and says when, in the page's own words and
    // time (not the host's ISO stamp); Overwrite then saves this version.
    writeFileSync(remote('race.txt'), 'one\n');
    execFileSync('chown', [`${me.uid}:${me.gid}`, remote('race.txt')]);
    await panel().getByRole('button', { name: 'Refresh' }).click();
    await row('race.txt').locator('.entry-name').dblclick();
    const race = page.getByRole('dialog', { name: 'Edit race.txt' });
    const raceText = race.getByRole('textbox', { name: 'Contents of race.txt' });
    await expect.poll(() => editorText(race)).toBe('one\n');
    writeFileSync(remote('race.txt'), 'two\n');
    const when = new Date(new Date().getFullYear(), 0, 15, 9, 30);
    utimesSync(remote('race.txt'), when, when);
    await raceText.press('Control+End');
    await raceText.pressSequentially('mine\n');
    await raceText.press('Control+s');
    const banner = race.getByRole('alert');
    await expect.poll(() => banner.innerText().catch(() => '')).toContain('race.txt changed on the server since it was opened (modified Jan 15 ');
    expect(await banner.innerText()).not.toMatch(/\d{4}-\d\d-\d\dT|another name/);
    expect(readFileSync(remote('race.txt'), 'utf8')).toBe('two\n');
    await banner.getByRole('button', { name: "Overwrite the server's version" }).click();
    await expect.poll(() => readFileSync(remote('race.txt'), 'utf8')).toBe('one\nmine\n');
    await race.getByRole('button', { name: 'Close', exact: true }).last().click();
    await race.waitFor({ state: 'detached' });

    // A file this user may not read: the reason, and no advice to download what cannot be read.
    writeFileSync(remote('root-only.txt'), 'secret\n', { mode: 0o600 });
    await panel().getByRole('button', { name: 'Refresh' }).click();
    await row('root-only.txt').locator('.entry-name').dblclick();
    const denied = page.getByRole('dialog', { name: 'Edit root-only.txt' });
    await denied.getByRole('alert').waitFor();
    expect(await denied.getByRole('alert').innerText()).toMatch(/permission denied/i);
    expect(await denied.getByRole('alert').innerText()).not.toContain('Download it instead');
    await denied.getByRole('button', { name: 'Close', exact: true }).last().click();
    await denied.waitFor({ state: 'detached' });
    for (const n of ['race.txt', 'root-only.txt']) rmSync(remote(n));
    await panel().getByRole('button', { name: 'Refresh' }).click();
    await row('race.txt').waitFor({ state: 'detached' });

    await row('random.bin').locator('.entry-name').dblclick();
    const refused = page.getByRole('dialog', { name: 'Edit random.bin' });
    const alert = refused.getByRole('alert');
    await alert.waitFor();
    expect(await alert.innerText()).toMatch(/cannot be edited here[\s\S]*(binary|text|5 MB|large)/i);
    expect(await refused.getByRole('button', { name: 'Save' }).count()).toBe(0);
    await refused.getByRole('button', { name: 'Close', exact: true }).last().click();
  });

  it("downloads a file with the same bytes, streamed by the host into the browser's own download", async () => {
    const [download] = await Promise.all([page.waitForEvent('download'), menu('random.bin', 'Download')]);
    expect(download.suggestedFilename()).toBe('random.bin');
    // A one-time link the host streams (sftp.downloadLink), not a Blob assembled in the page.
    expect(new URL(download.url()).pathname).toMatch(/^\/download\/[\w-]+\/random\.bin$/);
    const chunks: Buffer[] = [];
    for await (const c of await download.createReadStream()) chunks.push(Buffer.from(c));
    expect(sha256(Buffer.concat(chunks))).toBe(sha256(payload));
    const transfer = panel().locator('.transfer[data-state="done"]').filter({ hasText: 'Downloaded' });
    await transfer.waitFor();
  });

  it("goes to a typed path (Ctrl+L), to a file's folder with the file selected, and to the terminal's folder", async () => {
    const bar = panel().getByRole('textbox', { name: 'Go to path' });
    // With a row's menu open: the folder it was for goes, and the menu with it (its Delete… would
    // act on a row no longer shown). The keys reach the panel from the menu.
    await row('notes.txt').locator('.entry-name').click({ button: 'right' });
    await page.locator('.sftp-menu').waitFor();
    await page.keyboard.press('Control+L');
    expect(await bar.inputValue()).toBe(remote());
    await bar.fill('/usr/share');
    await bar.press('Enter');
    await expect.poll(() => panel().getAttribute('data-path')).toBe('/usr/share');
    await bar.waitFor({ state: 'detached' });
    expect(await page.locator('.sftp-menu').count()).toBe(0);

    // A path that is not there keeps the field open with the server's reason; Escape leaves the folder as it was.
    await page.keyboard.press('Control+L');
    await bar.fill('/no/such/place');
    await bar.press('Enter');
    await expect.poll(() => panel().locator('#sftp-path-error').innerText().catch(() => '')).toBe('/no/such/place: no such file or folder on the server.');
    expect(await bar.getAttribute('aria-invalid')).toBe('true');
    await bar.press('Escape');
    await bar.waitFor({ state: 'detached' });
    expect(await panel().getAttribute('data-path')).toBe('/usr/share');

    // The shell moves; the button follows it (found over exec: this bash does not send OSC 7).
    await page.locator('.tab-panel:visible .xterm').click();
    await page.keyboard.type('cd /var/log\n');
    await expect.poll(() => page.locator('.tab-panel:visible .xterm-rows').innerText(), { timeout: 15_000 }).toMatch(/:\/var\/log\$ *$/m);
    await panel().getByRole('button', { name: "Go to the terminal's folder" }).click();
    await expect.poll(() => panel().getAttribute('data-path')).toBe('/var/log');

    // Beside the crumbs is the other way in; ~ is the home folder, and a file opens its folder.
    const crumbs = panel().locator('.crumbs ol');
    const box = await crumbs.boundingBox();
    await crumbs.click({ position: { x: (box?.width ?? 10) - 4, y: (box?.height ?? 10) / 2 } });
    expect(await bar.inputValue()).toBe('/var/log');
    await bar.fill(`~/${folder}/notes.txt`);
    await bar.press('Enter');
    await expect.poll(() => panel().getAttribute('data-path')).toBe(remote());
    expect(await row('notes.txt').getAttribute('aria-selected')).toBe('true');
    expect(await row('notes.txt').evaluate((el) => el === document.activeElement)).toBe(true);
  });

  it("follows the terminal's folder after each command; a folder browsed by hand stays until the shell moves", async () => {
    const follow = panel().getByRole('button', { name: "Follow the terminal's folder" });
    const term = page.locator('.tab-panel:visible .xterm');
    const screen = () => page.locator('.tab-panel:visible .xterm-rows').innerText();
    // Every folder the panel lists from here on, in order.
    await panel().evaluate((el) => {
      const seen: string[] = [];
      window.sftpPathsSeen = seen;
      new MutationObserver(() => seen.push(el.getAttribute('data-path') ?? '')).observe(el, { attributes: true, attributeFilter: ['data-path'] });
    });
    const seen = () => page.evaluate(() => window.sftpPathsSeen ?? []);

    // On: the panel goes to where the shell is now (the last test left it in /var/log).
    expect(await follow.getAttribute('aria-pressed')).toBe('false');
    const looks = () => follow.evaluate((el) => `${getComputedStyle(el).color} ${getComputedStyle(el).backgroundColor}`);
    await page.mouse.move(0, 0);
    const offLook = await looks();
    await follow.click();
    expect(await follow.getAttribute('aria-pressed')).toBe('true');
    await page.mouse.move(0, 0); // not hovered: the look is the toggle's own, not the hover's
    expect(await looks()).not.toBe(offLook);
    await expect.poll(() => panel().getAttribute('data-path')).toBe('/var/log');

    await term.click();
    await page.keyboard.type('cd /usr/share && echo moved-$((1+1))\n');
    await expect.poll(() => panel().getAttribute('data-path'), { timeout: 15_000 }).toBe('/usr/share');

    // Browsed by hand: a command that does not move the shell leaves the panel where it is.
    await panel().locator('.crumb', { hasText: '/' }).first().click();
    await expect.poll(() => panel().getAttribute('data-path')).toBe('/');
    await term.click();
    await page.keyboard.type('echo stays-$((2+1))\n');
    await expect.poll(screen).toMatch(/^stays-3 *$/m);
    await page.waitForTimeout(1500); // the panel asks where the shell is once the output pauses
    await page.keyboard.type(`cd ~/${folder} && echo moved-$((3+1))\n`);
    await expect.poll(() => panel().getAttribute('data-path'), { timeout: 15_000 }).toBe(remote());
    expect(await seen()).toEqual(['/var/log', '/usr/share', '/', remote()]);

    // Off: the shell moves alone.
    await follow.click();
    expect(await follow.getAttribute('aria-pressed')).toBe('false');
    await term.click();
    await page.keyboard.type('cd /tmp && echo alone-$((4+1))\n');
    await expect.poll(screen).toMatch(/^alone-5 *$/m);
    await page.waitForTimeout(1500);
    expect(await panel().getAttribute('data-path')).toBe(remote());
  });

  it('creates a new file into the editor (never over one), copies a path, and opens a terminal in a folder', async () => {
    await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(server.openUrl).origin });
    await panel().getByRole('button', { name: 'New file' }).click();
    const ask = page.getByRole('dialog', { name: 'New file' });
    await ask.locator('input').fill('todo.md');
    await ask.getByRole('button', { name: 'Create' }).click();
    const editor = page.getByRole('dialog', { name: 'Edit todo.md' });
    const text = editor.getByRole('textbox', { name: 'Contents of todo.md' });
    await expect.poll(() => editorText(editor)).toBe('');
    expect(readFileSync(remote('todo.md'), 'utf8')).toBe('');
    await text.pressSequentially('- renew certs\n');
    await text.press('Control+s');
    await expect.poll(() => readFileSync(remote('todo.md'), 'utf8')).toBe('- renew certs\n');
    await editor.getByRole('button', { name: 'Close', exact: true }).last().click();
    await editor.waitFor({ state: 'detached' });
    await panel().getByRole('button', { name: 'New file' }).click();
    await ask.locator('input').fill('todo.md');
    await ask.getByRole('button', { name: 'Create' }).click();
    await expect.poll(() => ask.getByRole('alert').innerText({ timeout: 500 }).catch(() => '')).toContain('already there');
    await ask.getByRole('button', { name: 'Cancel' }).click();
    await ask.waitFor({ state: 'detached' });
    expect(readFileSync(remote('todo.md'), 'utf8')).toBe('- renew certs\n');

    await menu('todo.md', 'Copy path');
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(remote('todo.md'));

    const tabs = await page.locator('.tab').count();
    await menu('tree', 'Open a terminal here');
    await expect.poll(() => page.locator('.tab').count()).toBe(tabs + 1);
    const pane = page.locator('.tab-panel:visible .terminal-pane[data-session-id]');
    await pane.waitFor({ timeout: 20_000 });
    const id = (await pane.getAttribute('data-session-id')) ?? '';
    await page.locator('.tab-panel:visible .xterm').click();
    await page.keyboard.type('pwd\n');
    const lines = async () => ((await page.evaluate((sid) => window.wraithInspect?.terminals.text(sid) ?? '', id)) ?? '').split('\n').map((l) => l.trimEnd());
    await expect.poll(lines, { timeout: 15_000 }).toContain(remote('tree'));
    await page.locator('.tab.active').getByRole('button', { name: /^Close/ }).click();
    await panel().waitFor();
    expect(await panel().getAttribute('data-path')).toBe(remote());
  });

  it('selects several rows (Shift, Ctrl, Ctrl+A), downloads the files among them and deletes them after one confirmation', async () => {
    await panel().locator('input[name=sftp-upload]').setInputFiles(
      ['m1.txt', 'm2.txt', 'm3.txt'].map((name) => ({ name, mimeType: 'text/plain', buffer: Buffer.from(`${name}\n`) })),
    );
    await row('m3.txt').waitFor({ timeout: 20_000 });
    const selectedNames = () => panel().locator('tr.sftp-row[aria-selected="true"]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-name')));
    const footer = panel().locator('.sftp-selection');

    await row('m1.txt').locator('.entry-name').click();
    await row('m3.txt').locator('.entry-name').click({ modifiers: ['Shift'] });
    expect(await selectedNames()).toEqual(['m1.txt', 'm2.txt', 'm3.txt']);
    expect(await footer.innerText()).toContain('3 selected · 21 B in files');
    await row('m2.txt').locator('.entry-name').click({ modifiers: ['Control'] });
    expect(await selectedNames()).toEqual(['m1.txt', 'm3.txt']);
    await page.keyboard.press('Control+A');
    expect((await selectedNames()).length).toBe((await names()).length);
    await page.keyboard.press('Escape');
    expect(await selectedNames()).toEqual(['m2.txt']);
    await footer.waitFor({ state: 'detached' });

    // Back to m1 + m3, plus the tree folder: with a folder among them the menu speaks of items.
    await row('m1.txt').locator('.entry-name').click();
    await row('m3.txt').locator('.entry-name').click({ modifiers: ['Control'] });
    await row('tree').locator('.entry-name').click({ modifiers: ['Control'] });
    await row('m1.txt').locator('.entry-name').click({ button: 'right' });
    expect(await page.getByRole('menuitem').allInnerTexts()).toEqual(['Download 3 items', 'Copy 3 paths', 'Delete 3 items…']);
    await page.keyboard.press('Escape');
    await row('tree').locator('.entry-name').click({ modifiers: ['Control'] });

    await row('m1.txt').locator('.entry-name').click({ button: 'right' });
    const downloads: string[] = [];
    const got = new Promise<void>((resolve) => {
      page.on('download', async (d) => {
        const chunks: Buffer[] = [];
        for await (const c of await d.createReadStream()) chunks.push(Buffer.from(c));
        downloads.push(`${d.suggestedFilename()}=${Buffer.concat(chunks).toString().trim()}`);
        if (downloads.length === 2) resolve();
      });
    });
    await page.getByRole('menuitem', { name: 'Download 2 files' }).click();
    await got;
    expect(downloads.sort()).toEqual(['m1.txt=m1.txt', 'm3.txt=m3.txt']);

    await row('m3.txt').focus();
    await page.keyboard.press('Delete');
    const confirm = page.getByRole('dialog', { name: 'Delete 2 items?' });
    expect(await confirm.innerText()).toContain('m1.txt, m3.txt will be deleted');
    await confirm.getByRole('button', { name: 'Delete 2 items' }).click();
    await row('m1.txt').waitFor({ state: 'detached' });
    await row('m3.txt').waitFor({ state: 'detached' });
    expect(existsSync(remote('m1.txt')) || existsSync(remote('m3.txt'))).toBe(false);
    expect(readFileSync(remote('m2.txt'), 'utf8')).toBe('m2.txt\n');
    expect(existsSync(remote('tree'))).toBe(true);
  });

  it("replaces another user's file after asking, and the transfers list says the owner changed", async () => {
    const them = accountIds(sshd.users.key.username);
    writeFileSync(remote('theirs.txt'), 'old\n');
    execFileSync('chown', [`${them.uid}:${them.gid}`, remote('theirs.txt')]);
    execFileSync('chmod', ['0666', remote('theirs.txt')]);
    await panel().getByRole('button', { name: 'Refresh' }).click();
    await row('theirs.txt').waitFor();
    await panel().locator('input[name=sftp-upload]').setInputFiles({ name: 'theirs.txt', mimeType: 'text/plain', buffer: Buffer.from('new\n') });
    await page.getByRole('dialog', { name: 'Replace theirs.txt?' }).getByRole('button', { name: 'Replace' }).click();
    const note = panel().locator('.transfer', { hasText: 'theirs.txt' }).getByRole('note');
    await expect.poll(() => note.innerText().catch(() => ''), { timeout: 20_000 }).toContain(`${remote('theirs.txt')} had owner:group ${them.uid}:${them.gid}`);
    expect(await note.innerText()).toContain('only root may give a file to another user');
    expect(readFileSync(remote('theirs.txt'), 'utf8')).toBe('new\n');
    rmSync(remote('theirs.txt'));
    await panel().getByRole('button', { name: 'Refresh' }).click();
    await row('theirs.txt').waitFor({ state: 'detached' });
  });

  it('downloads a folder as a zip of it', async () => {
    const [download] = await Promise.all([page.waitForEvent('download'), menu('tree', 'Download as zip')]);
    expect(download.suggestedFilename()).toBe('tree.zip');
    const chunks: Buffer[] = [];
    for await (const c of await download.createReadStream()) chunks.push(Buffer.from(c));
    const entries = await readZip(Buffer.concat(chunks));
    expect(Object.keys(entries).sort()).toEqual(['a.txt', 'sub/', 'sub/b.txt']);
    expect(entries['sub/b.txt']?.data.toString()).toBe('beta\n');
    await panel().locator('.transfer[data-state="done"]').filter({ hasText: 'tree.zip' }).waitFor();
  });

  it('deletes a file and a folder only after confirmation', async () => {
    await menu('random.bin', 'Delete…');
    const confirm = page.getByRole('dialog', { name: 'Delete random.bin?' });
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    expect(existsSync(remote('random.bin'))).toBe(true);

    await menu('random.bin', 'Delete…');
    await confirm.getByRole('button', { name: 'Delete' }).click();
    await row('random.bin').waitFor({ state: 'detached' });
    expect(existsSync(remote('random.bin'))).toBe(false);

    await menu('tree', 'Delete…');
    const confirmTree = page.getByRole('dialog', { name: 'Delete tree?' });
    expect(await confirmTree.innerText()).toContain('everything in it');
    await confirmTree.getByRole('button', { name: 'Delete' }).click();
    await row('tree').waitFor({ state: 'detached' });
    expect(existsSync(remote('tree'))).toBe(false);
  });

  it('draws only the rows near the view in a folder of 3000 files, and keys still reach every row', async () => {
    const { uid, gid } = accountIds(sshd.users.password.username);
    const many = remote('many');
    mkdirSync(many);
    chownSync(many, uid, gid);
    for (let i = 1; i <= 3000; i++) {
      const f = join(many, `f-${String(i).padStart(4, '0')}.log`);
      writeFileSync(f, '');
      chownSync(f, uid, gid);
    }
    const list = panel().locator('.sftp-list');
    /** The focused row's name, and whether the whole row is in sight below the list's sticky header. */
    const focused = () =>
      list.evaluate((l) => {
        const f = document.activeElement as HTMLElement;
        const head = l.querySelector('thead')?.getBoundingClientRect().bottom ?? 0;
        const r = f.getBoundingClientRect();
        return { name: f.dataset.name ?? null, inSight: r.top >= head - 1 && r.bottom <= l.getBoundingClientRect().bottom + 1 };
      });
    try {
      await panel().getByRole('button', { name: 'Refresh' }).click();
      await row('many').locator('.entry-name').dblclick();
      await row('f-0001.log').waitFor();
      // A window of rows, not 3000 (the table still says how many there are, for screen readers).
      expect(await panel().locator('tr.sftp-row').count()).toBeLessThan(200);
      expect(await panel().locator('table.sftp-table').getAttribute('aria-rowcount')).toBe('3001');
      await row('f-0001.log').locator('.entry-name').click();
      await page.keyboard.press('End');
      await expect.poll(focused).toEqual({ name: 'f-3000.log', inSight: true });
      await page.keyboard.press('PageUp');
      await expect.poll(async () => (await focused()).name).not.toBe('f-3000.log');
      await page.keyboard.type('f-1500');
      await expect.poll(focused).toEqual({ name: 'f-1500.log', inSight: true });
      await page.keyboard.press('ArrowDown');
      await expect.poll(focused).toEqual({ name: 'f-1501.log', inSight: true });
      // Scrolled far away by the wheel, the rows there are drawn and the focused row stays put.
      await list.hover();
      for (let k = 0; k < 4; k++) await page.mouse.wheel(0, -4000);
      await expect.poll(() => list.evaluate((l) => l.scrollTop)).toBeLessThan(1500 * 20);
      await expect.poll(async () => (await panel().locator('tr.sftp-row').evaluateAll((rs) => rs.filter((r) => {
        const b = r.getBoundingClientRect();
        return b.height > 0 && b.top >= 0 && b.bottom <= window.innerHeight;
      }).length)) > 10).toBe(true);
      expect((await focused()).name).toBe('f-1501.log');
      await page.keyboard.press('Home');
      await expect.poll(focused).toEqual({ name: 'f-0001.log', inSight: true });
      await page.keyboard.press('Control+a');
      await panel().locator('.sftp-selection', { hasText: '3000 selected' }).waitFor();
      await page.keyboard.press('Escape');
    } finally {
      await panel().getByRole('button', { name: 'Up one folder' }).click();
      rmSync(many, { recursive: true, force: true });
    }
  });

  it('finds names beyond the first 20 000 of a huge folder by filter and by path; says what an only-hidden folder holds', async () => {
    const { uid, gid } = accountIds(sshd.users.password.username);
    const huge = remote('huge');
    mkdirSync(huge);
    chownSync(huge, uid, gid);
    // 20 001 names before it: the listing stops at 20 000, and this one sorts last.
    for (let i = 0; i <= 20_000; i++) writeFileSync(join(huge, `f-${String(i).padStart(5, '0')}.log`), '');
    writeFileSync(join(huge, 'zz-last-config.yml'), 'x: 1\n');
    const hiddenOnly = remote('hidden-only');
    mkdirSync(hiddenOnly);
    chownSync(hiddenOnly, uid, gid);
    writeFileSync(join(hiddenOnly, '.env'), 'A=1\n');
    const bar = panel().getByRole('textbox', { name: 'Go to path' });
    const filterBox = panel().getByRole('textbox', { name: 'Filter by name' });
    try {
      // By path: the folder opens with the file shown (through the filter) and selected.
      await panel().locator('.sftp-list').focus();
      await page.keyboard.press('Control+L');
      await bar.fill(join(huge, 'zz-last-config.yml'));
      await bar.press('Enter');
      await expect.poll(() => panel().getAttribute('data-path'), { timeout: 20_000 }).toBe(huge);
      await panel().locator('.sftp-note', { hasText: 'Only the first 20000 entries are listed' }).waitFor();
      await expect.poll(() => row('zz-last-config.yml').getAttribute('aria-selected'), { timeout: 20_000 }).toBe('true');
      // By filter: the host searches every name, not only the 20 000 the page has.
      await filterBox.fill('ZZ-LAST');
      await expect.poll(names, { timeout: 20_000 }).toEqual(['zz-last-config.yml']);
      await filterBox.fill('f-20000');
      await expect.poll(names, { timeout: 20_000 }).toEqual(['f-20000.log']);
      await filterBox.press('Escape');

      await page.keyboard.press('Control+L');
      await bar.fill(hiddenOnly);
      await bar.press('Enter');
      await expect.poll(() => panel().getAttribute('data-path'), { timeout: 20_000 }).toBe(hiddenOnly);
      const empty = panel().locator('.sftp-empty');
      await expect.poll(() => empty.innerText()).toContain('Only hidden items here: 1 name starts with a dot.');
      await empty.getByRole('button', { name: 'Show hidden files' }).click();
      await row('.env').waitFor();
      // (The toggle keeps its name and says pressed or not.)
      await panel().locator('.head-actions').getByRole('button', { name: 'Show hidden files' }).click();
      await row('.env').waitFor({ state: 'detached' });
    } finally {
      await page.keyboard.press('Control+L');
      await bar.fill(remote());
      await bar.press('Enter');
      await expect.poll(() => panel().getAttribute('data-path')).toBe(remote());
      rmSync(huge, { recursive: true, force: true });
      rmSync(hiddenOnly, { recursive: true, force: true });
    }
  }, 90_000); // 20 001 files made and listed twice over SFTP

  it('marks a name that is not UTF-8 on the server, and says why deleting it cannot work', async () => {
    // "café.txt" in Latin-1 (é = 0xE9), as older systems and Samba shares leave them.
    const latin1 = Buffer.concat([Buffer.from(`${remote()}/caf`), Buffer.from([0xe9]), Buffer.from('.txt')]);
    writeFileSync(latin1, 'x');
    const { uid, gid } = accountIds(sshd.users.password.username);
    chownSync(latin1, uid, gid);
    try {
      await panel().getByRole('button', { name: 'Refresh' }).click();
      const shown = row('caf\uFFFD.txt');
      await shown.waitFor();
      expect(await shown.locator('.entry-name').getAttribute('class')).toContain('not-utf8');
      expect(await shown.getAttribute('title')).toContain('not UTF-8');
      await menu('caf\uFFFD.txt', 'Delete…');
      await page.getByRole('dialog', { name: 'Delete caf\uFFFD.txt?' }).getByRole('button', { name: 'Delete' }).click();
      await page.locator('.toasts .toast', { hasText: 'stands for bytes that are not UTF-8' }).waitFor();
      expect(existsSync(latin1)).toBe(true);
    } finally {
      rmSync(latin1);
    }
  });

  it('fits a 900 px window with the files and XO panels open: the terminal keeps room, nothing overlaps, names stay', async () => {
    await page.setViewportSize({ width: 900, height: 600 });
    const xo = page.getByRole('complementary', { name: 'XO copilot' });
    try {
      await page.keyboard.press('Control+Shift+K');
      await xo.waitFor();
      const box = async (l: Locator) => (await l.boundingBox()) ?? { x: 0, y: 0, width: 0, height: 0 };
      const center = await box(page.locator('.center'));
      const files = await box(panel());
      const term = await box(page.locator('.tab-panel:visible .xterm-host'));
      const xoBox = await box(xo);
      expect(files.x + files.width).toBeLessThanOrEqual(center.x + center.width + 0.5);
      expect(center.x + center.width).toBeLessThanOrEqual(xoBox.x + 0.5);
      expect(term.width).toBeGreaterThanOrEqual(120);
      // The Name column survives a narrow panel (Modified and Size go first).
      const name = await box(panel().locator('tbody tr td.col-name').first());
      expect(name.width).toBeGreaterThan(100);
    } finally {
      // Whatever the outcome, the tests after this one get the window they expect.
      if (await xo.count()) await page.keyboard.press('Control+Shift+K');
      await xo.waitFor({ state: 'detached' });
      await page.setViewportSize({ width: 1400, height: 860 });
    }
  });

  it('says it is opening, not that the folder is empty, while a distant server names the home folder', async () => {
    // 300 ms each way: the first listing is a round trip or two after the panel shows.
    const proxy = await startDelayProxy(sshd.port, 300);
    try {
      await inNewTab('distant sshd', sshd, proxy.port, async () => {
        await panel().waitFor();
        const first = await panel().innerText();
        expect(first).toContain("Opening this session's files");
        expect(first).not.toContain('This folder is empty');
        // Nothing to upload into yet: the buttons wait for the folder.
        expect(await panel().getByRole('button', { name: 'Upload a folder' }).isDisabled()).toBe(true);
        await expect.poll(() => panel().getAttribute('data-path'), { timeout: 15_000 }).toBe(home);
        expect(await panel().innerText()).not.toContain("Opening this session's files");
      });
    } finally {
      await proxy.close();
    }
  });

  it('says why when the server offers no SFTP at all, and does not name a folder it never had', async () => {
    const plain = await startSshd({ sftp: false });
    try {
      await inNewTab('no-sftp sshd', plain, plain.port, async () => {
        const alert = panel().getByRole('alert');
        await alert.waitFor({ timeout: 15_000 });
        const text = await alert.innerText();
        expect(text).toContain("Cannot open this session's files");
        expect(text).toContain('no-sftp sshd does not offer SFTP');
        expect(text).toContain('Subsystem sftp');
        // The home folder is what failed: no button to go there, nothing to upload into.
        expect(await alert.getByRole('button', { name: 'Go to the home folder' }).count()).toBe(0);
        expect(await panel().getByRole('button', { name: 'Upload files' }).isDisabled()).toBe(true);
        // The terminal is not affected.
        await page.locator('.tab-panel:visible .xterm').click();
        await page.keyboard.type('echo shell-$((6*7))\n');
        await expect.poll(() => page.locator('.tab-panel:visible .xterm-rows').innerText()).toContain('shell-42');
        // Trying again asks the server again (its log counts the requests), refused the same way.
        const asked = () => (plain.readLog().match(/subsystem request for sftp/g) ?? []).length;
        const before = asked();
        expect(before).toBeGreaterThan(0);
        await alert.getByRole('button', { name: 'Try again' }).click();
        await expect.poll(asked).toBeGreaterThan(before);
        await expect.poll(() => alert.innerText()).toContain('does not offer SFTP');
      });
    } finally {
      await plain.stop();
    }
  });

  it('takes a screenshot with the panel open and the page logged no errors', async () => {
    await shot('wraith-sftp');
    const errors = browser.pageErrors.filter((e) => !/WebSocket connection to .* failed/.test(e));
    expect(errors).toEqual([]);
  });
});
