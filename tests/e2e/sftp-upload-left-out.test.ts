/**
 * A folder upload that leaves out what it cannot copy, seen in the Files panel, in real Chromium
 * against a real OpenSSH sshd: a host upload of a local folder (`wraith call sftp.upload`) with a
 * named pipe and a link to nowhere in it shows in the transfers list with the notice that names
 * them, and only the rest is on the server. The notice names five; its row lists them all, each
 * with why, behind a toggle.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { type AppWithSshd, startAppWithSshd } from '../fixtures/app-with-sshd.js';
import { homeOf, mkdirOwned } from '../fixtures/sshd.js';
import { filesPanel, showFolder as showFolderAt } from '../fixtures/files-panel.js';
import { connectNewSshInUi } from '../fixtures/ui-connection.js';

let app: AppWithSshd;
let page: Page;
let home: string;
let localDir: string;
let sessionId: string;
const folder = `e2e-up-left-out-${process.pid}-${Date.now().toString(36)}`;

const panel = () => filesPanel(page);
const remote = (...parts: string[]) => join(home, folder, ...parts);
/** What a folder on the server holds, '/'-separated paths, sorted. */
const onServer = (path: string) => execFileSync('sh', ['-c', `cd '${path}' && find . -mindepth 1 | cut -c3- | sort`], { encoding: 'utf8' }).split('\n').filter(Boolean);

/** A local folder with a file, a named pipe and a link to nowhere. */
function localTree(name: string): string {
  const tree = join(localDir, name);
  mkdirSync(tree);
  writeFileSync(join(tree, 'ok.txt'), 'ok\n');
  execFileSync('mkfifo', [join(tree, 'pipe')]);
  symlinkSync('gone.txt', join(tree, 'dead'));
  return tree;
}

/** The Files panel open on the test's folder. */
const showFolder = () => showFolderAt(page, remote());

beforeAll(async () => {
  app = await startAppWithSshd();
  const { sshd } = app;
  page = app.page;
  home = homeOf(sshd.users.password.username);
  mkdirOwned(remote(), sshd.users.password.username);
  localDir = mkdtempSync(join(tmpdir(), 'wraith-up-left-out-'));
  page.setDefaultTimeout(20_000);
  sessionId = await connectNewSshInUi(page, { name: 'left-out sshd', host: sshd.host, port: sshd.port, ...sshd.users.password });
});

afterAll(async () => {
  await app?.stop();
  if (home) rmSync(join(home, folder), { recursive: true, force: true });
  if (localDir) rmSync(localDir, { recursive: true, force: true });
});

describe('a folder upload that leaves items out', () => {
  it('a host upload of a folder shows in the transfers list, named, with the notice that names what it left out', async () => {
    await showFolder();
    const tree = localTree('by-host');
    await app.api.call('sftp.upload', { sessionId, localPath: tree, remotePath: remote('by-host') });
    // The transfers list's only row: the host's transfer.
    const done = panel().locator('.transfer[data-state="done"]');
    await done.waitFor({ timeout: 20_000 });
    expect(await done.getByRole('note').innerText({ timeout: 2_000 })).toBe('2 items could not be read and were left out: dead, pipe.');
    // Named, though the page did not start it: the host's list says what it moves.
    await expect.poll(() => done.locator('.transfer-name').innerText()).toBe('by-host');
    expect(await done.locator('.transfer-name').getAttribute('title')).toBe(remote('by-host'));
    expect(onServer(remote('by-host'))).toEqual(['ok.txt']);
  });

  it('lists everything it left out, with why, beyond the five names of its notice, behind a toggle', async () => {
    await showFolder();
    const tree = join(localDir, 'many');
    mkdirSync(tree);
    writeFileSync(join(tree, 'ok.txt'), 'ok\n');
    for (const n of [1, 2, 3, 4, 5, 6]) execFileSync('mkfifo', [join(tree, `pipe${n}`)]);
    symlinkSync('gone.txt', join(tree, 'dead'));
    await app.api.call('sftp.upload', { sessionId, localPath: tree, remotePath: remote('many') });
    const row = panel().locator('.transfer[data-state="done"]').filter({ hasText: '7 items could not be read' });
    await row.waitFor({ timeout: 20_000 });
    expect(await row.getByRole('note').innerText()).toBe('7 items could not be read and were left out: dead, pipe1, pipe2, pipe3, pipe4 and 2 more.');
    const toggle = row.getByRole('button', { name: 'All 7 left out, and why', exact: true });
    expect(await toggle.getAttribute('aria-expanded')).toBe('false');
    await toggle.click();
    expect(await toggle.getAttribute('aria-expanded')).toBe('true');
    const list = row.getByRole('list', { name: 'Left out of many' });
    const fifo = (n: number) => `pipe${n} — pipe${n} is a named pipe (FIFO): one program passes data through it to another while both run, so it has no contents of its own to copy.`;
    await expect
      .poll(() => list.getByRole('listitem').allInnerTexts())
      .toEqual([`dead — Cannot upload local ${join(tree, 'dead')}: dead points to gone.txt, which does not exist.`, ...[1, 2, 3, 4, 5, 6].map(fifo)]);
    // The same toggle hides it again, from the keyboard too.
    await toggle.focus();
    await page.keyboard.press('Enter');
    expect(await toggle.getAttribute('aria-expanded')).toBe('false');
    expect(await list.count()).toBe(0);
    expect(onServer(remote('many'))).toEqual(['ok.txt']);
  });
});
