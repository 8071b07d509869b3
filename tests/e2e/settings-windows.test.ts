/**
 * Settings shared by several windows on one host, in real Chromium: two pages of one `wraith
 * serve` (two windows, or two browser tabs) and the CLI's kind of client. A change saved in one
 * reaches the others at once (their open terminals redraw with it, an open Settings dialog shows
 * it), and saving in a window that opened its Settings before the change does not put the old
 * values back: the dialog sends only what was changed in it. Saved connections another client
 * changes show in an open window too.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Locator, Page } from 'playwright-core';
import type { ContractClient } from '../../src-main/common/client.js';
import { connectWebSocket } from '../../src-main/server/ws-client.js';
import { type TestBrowser, openApp } from '../fixtures/browser.js';
import { until } from '../fixtures/poll.js';
import { terminalText } from '../fixtures/terminal-page.js';
import { type WraithServer, startWraithServer } from '../fixtures/wraith-server.js';

let server: WraithServer;
let browser: TestBrowser;
/** The window where a change is made. */
let pageA: Page;
/** The other window, with a local shell open: it only hears of the change. */
let pageB: Page;
/** The local shell's session in page B. */
let shellB: string;
/** What `wraith call` is: one more client of the host. */
let api: ContractClient;

async function openSettings(p: Page): Promise<Locator> {
  await p.getByRole('button', { name: 'Settings' }).click();
  const dialog = p.getByRole('dialog', { name: 'Settings' });
  await dialog.waitFor();
  return dialog;
}

async function saveSettings(dialog: Locator): Promise<void> {
  await dialog.getByRole('button', { name: 'Save' }).click();
  await dialog.waitFor({ state: 'detached' });
}

/** How page B's terminal is drawn (its xterm's options). */
const terminalB = () => pageB.evaluate((sid) => window.wraithInspect?.terminals.info(sid), shellB);

beforeAll(async () => {
  server = await startWraithServer();
  api = await connectWebSocket(server.url, server.token);
  browser = await openApp(server.openUrl);
  pageA = browser.page;
  pageB = await browser.context.newPage();
  pageB.on('pageerror', (err) => browser.pageErrors.push(err.message));
  pageB.on('console', (msg) => {
    if (msg.type() === 'error') browser.pageErrors.push(msg.text());
  });
  await pageB.goto(server.openUrl);
  await pageB.getByText('Host: connected').waitFor();
  await pageB.keyboard.press('Control+Shift+G');
  const panel = pageB.getByRole('region', { name: 'Local shell' });
  await panel.getByRole('button', { name: /^Launch/ }).last().click();
  const pane = panel.locator('.terminal-pane[data-session-id]');
  await pane.waitFor();
  shellB = (await pane.getAttribute('data-session-id')) ?? '';
  await until("page B's shell prompt", async () => /[$#]$/.test((await terminalText(pageB, shellB)).trimEnd()));
});

afterAll(async () => {
  api?.close();
  await browser?.close();
  await server?.stop();
});

describe('settings across windows', () => {
  // A test that failed with a dialog open leaves the next one a page it can use.
  afterEach(async () => {
    for (const p of [pageA, pageB]) {
      const dialog = p.getByRole('dialog', { name: 'Settings' });
      if (await dialog.isVisible()) await dialog.getByRole('button', { name: 'Cancel' }).click();
    }
  });

  it("applies a change saved in one window to the other's terminals; a save in the other's older dialog keeps it", async () => {
    expect(await terminalB()).toMatchObject({ cursorStyle: 'block' });
    // B's Settings opened before A's save: it shows what B knew then.
    const dialogB = await openSettings(pageB);
    expect(await dialogB.locator('select[name=cursorStyle]').inputValue()).toBe('block');

    const dialogA = await openSettings(pageA);
    await dialogA.locator('select[name=cursorStyle]').selectOption('bar');
    await saveSettings(dialogA);

    await expect.poll(terminalB).toMatchObject({ cursorStyle: 'bar' });
    // B changes only the colours: A's cursor stays.
    await dialogB.locator('select[name=theme]').selectOption('dracula');
    await saveSettings(dialogB);
    expect(await api.call('settings.get')).toMatchObject({ 'terminal.cursorStyle': 'bar', 'terminal.theme': 'dracula' });
    await expect.poll(terminalB).toMatchObject({ cursorStyle: 'bar', background: '#282a36' });
  });

  it('shows a change from the CLI in an open Settings dialog, keeps what was typed there, and saves only that', async () => {
    const dialogB = await openSettings(pageB);
    const scrollback = dialogB.locator('input[name=scrollback]');
    const lineHeight = dialogB.locator('input[name=lineHeight]');
    const copyOnSelect = dialogB.locator('input[name=copyOnSelect]');
    expect(await copyOnSelect.isChecked()).toBe(false);
    await lineHeight.fill('1.3');

    await api.call('settings.set', { 'terminal.scrollback': 4321, 'terminal.copyOnSelect': true, 'terminal.lineHeight': 1.5 });
    await expect.poll(terminalB).toMatchObject({ scrollback: 4321 });
    await expect.poll(() => scrollback.inputValue()).toBe('4321');
    expect(await copyOnSelect.isChecked()).toBe(true);
    // The field typed into keeps what was typed: that is the change this dialog saves.
    expect(await lineHeight.inputValue()).toBe('1.3');

    await dialogB.locator('input[name=confirmPaste]').setChecked(false);
    await saveSettings(dialogB);
    expect(await api.call('settings.get')).toMatchObject({
      'terminal.scrollback': 4321,
      'terminal.copyOnSelect': true,
      'terminal.lineHeight': 1.3,
      'terminal.confirmMultilinePaste': false,
    });
  });

  it('zooms from the zoom another window set, not from the one this window loaded with', async () => {
    const { 'terminal.fontSize': base, 'terminal.fontZoom': zoomBefore } = await api.call('settings.get');
    expect(zoomBefore).toBe(0);
    // Another window pressed Ctrl+= twice.
    await api.call('settings.set', { 'terminal.fontZoom': 2 });
    await expect.poll(async () => (await terminalB())?.fontSize).toBe(base + 2);
    await pageB.getByRole('region', { name: 'Local shell' }).locator('.xterm').click();
    await pageB.keyboard.press('Control+Equal');
    await expect.poll(async () => (await api.call('settings.get'))['terminal.fontZoom']).toBe(3);
    await expect.poll(async () => (await terminalB())?.fontSize).toBe(base + 3);
  });

  it('shows connections another client creates, renames and deletes in an open window, without a reload', async () => {
    const tree = pageB.getByRole('tree');
    const rowNamed = (name: string) => tree.getByRole('treeitem', { name: new RegExp(`^${name}, SSH`) });
    // What `wraith call connections.create …` does.
    const made = await api.call('connections.create', { name: 'made-elsewhere', kind: 'ssh', host: 'db1.example.com', port: 22, username: 'ops', authMethod: 'agent' });
    await rowNamed('made-elsewhere').waitFor({ timeout: 10_000 });
    await api.call('connections.update', { id: made.id, patch: { name: 'renamed-elsewhere' } });
    await rowNamed('renamed-elsewhere').waitFor({ timeout: 10_000 });
    expect(await rowNamed('made-elsewhere').count()).toBe(0);
    await api.call('connections.delete', { id: made.id });
    await rowNamed('renamed-elsewhere').waitFor({ state: 'detached', timeout: 10_000 });
  });

  it('leaves no errors in either page', () => {
    expect(browser.pageErrors).toEqual([]);
  });
});
