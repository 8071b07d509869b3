/**
 * Tabs re-attached after a page reload, and the keys that close tabs, in real Chromium against a
 * real sshd: a dropped SSH tab still says why, and is not left in a dropped full-screen program's
 * modes; a local shell (panel or tab) whose session ended
 * starts the same shell again; Ctrl+Shift+W in the local shell panel and Ctrl+W in a terminal's
 * Find field close no tab, and no window-wide key acts behind an open file editor. Closing a
 * running tab does not ask here (the test hosts' setting), so a wrong close would happen at once.
 * The tests run in order, each on what the one before left.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Locator, Page } from 'playwright-core';
import { type AppWithSshd, startAppWithSshd } from '../fixtures/app-with-sshd.js';
import { reloadApp } from '../fixtures/browser.js';
import { activeSessionId, sessionIn, terminalText, typeAndSee } from '../fixtures/terminal-page.js';

let app: AppWithSshd;
let page: Page;

beforeAll(async () => {
  app = await startAppWithSshd({ connection: 'db01' });
  page = app.page;
});

afterAll(() => app?.stop());

const panel = () => page.getByRole('region', { name: 'Local shell' });
const tabs = () => page.locator('.tab');
const banner = (scope: Locator) => scope.locator('.pane-banner');
/** The tab titled exactly `title` (hasText alone would take "sh" for the SSH badge of another). */
const tabTitled = (title: string) => page.locator('.tab', { has: page.locator('.tab-title', { hasText: new RegExp(`^${title}$`) }) });


/** Types `command` in the terminal in `scope` and waits until `line` is one of the session's lines. */
async function typeIn(scope: Locator, sessionId: string, command: string, line: string): Promise<void> {
  await scope.locator('.xterm').click();
  await page.keyboard.type(`${command}\n`);
  await expect.poll(async () => (await terminalText(page, sessionId)).split('\n').map((l) => l.trimEnd()), { timeout: 15_000 }).toContain(line);
}

/** Waits until the terminal in `scope` has (re)started: open, or failed with a card saying why. */
async function settled(scope: Locator): Promise<void> {
  await expect.poll(() => scope.locator('.terminal-pane').getAttribute('data-phase'), { timeout: 20_000 }).toMatch(/^(open|failed)$/);
}

async function showPanel(): Promise<void> {
  if (!(await panel().isVisible())) await page.keyboard.press('Control+Shift+G');
  await panel().waitFor();
}

/** The shell the host says a session runs. */
async function shellOf(sessionId: string): Promise<string | undefined> {
  return (await app.api.call('sessions.list')).find((s) => s.id === sessionId)?.shell;
}

describe('after a page reload', () => {
  it('a dropped SSH tab says why it dropped, as the host has it', async () => {
    await page.getByRole('treeitem', { name: /^db01, SSH/ }).dblclick();
    const id = await activeSessionId(page);
    await typeAndSee(page, id, 'echo "db-$((6*7))"', 'db-42');
    app.sshd.dropConnections();
    const front = page.locator('.tab-panel:visible');
    await banner(front).getByRole('button', { name: 'Reconnect' }).waitFor({ timeout: 20_000 });

    await reloadApp(page);
    const reason = (await app.api.call('sessions.list')).find((s) => s.id === id)?.reason;
    expect(reason).toMatch(/^Connection to db01 lost/);
    await banner(front).getByRole('button', { name: 'Reconnect' }).waitFor();
    expect(await banner(front).innerText()).toContain(`Disconnected — ${reason}`);

    // It reconnects from there, the same session.
    await banner(front).getByRole('button', { name: 'Reconnect' }).click();
    await banner(front).waitFor({ state: 'detached', timeout: 20_000 });
    await typeAndSee(page, id, 'echo "back-$((6*7))"', 'back-42');
  });

  it('a tab re-attached to a dropped session resets the modes its full-screen program left, after the output read back', async () => {
    const front = page.locator('.tab-panel:visible');
    const id = await activeSessionId(page);
    const xterm = front.locator('.xterm');
    await typeAndSee(page, id, 'echo "before-$((4*4))"', 'before-16');
    // As vim or mc set it up: alternate screen, mouse reports (SGR), the cursor hidden.
    await xterm.click();
    await page.keyboard.type("printf '\\033[?1049h\\033[?1000h\\033[?1006h\\033[?25l'; echo full-screen; sleep 600\n");
    await expect.poll(async () => (await terminalText(page, id)).includes('full-screen')).toBe(true);
    app.sshd.dropConnections();
    await banner(front).getByRole('button', { name: 'Reconnect' }).waitFor({ timeout: 20_000 });

    await reloadApp(page);
    await banner(front).getByRole('button', { name: 'Reconnect' }).waitFor();
    // The output read back, then the normal screen with the notice, as a tab that saw the drop has it.
    await expect.poll(async () => (await terminalText(page, id)).split('\n').map((l) => l.trimEnd()), { timeout: 15_000 }).toContain('before-16');
    expect(await terminalText(page, id)).toMatch(/— Disconnected at \d\d:\d\d:\d\d: Connection to db01 lost.* Press Enter to reconnect\.$/);
    // A right click is the terminal's menu, not a mouse report for a program long gone.
    await xterm.click({ button: 'right', position: { x: 200, y: 40 } });
    const menu = page.getByRole('menu', { name: 'Terminal' });
    await menu.waitFor({ timeout: 3_000 });
    await page.keyboard.press('Escape');
    await menu.waitFor({ state: 'detached' });

    await banner(front).getByRole('button', { name: 'Reconnect' }).click();
    await banner(front).waitFor({ state: 'detached', timeout: 20_000 });
    await xterm.click({ position: { x: 200, y: 40 } });
    await typeAndSee(page, id, 'echo "clicked-$((2*3))"', 'clicked-6');

    // Reloaded again, the open session's output is read back, the old program's modes in it:
    // the host put the reset after them when it dropped, so the new shell's screen is shown.
    await reloadApp(page);
    await expect.poll(async () => (await terminalText(page, id)).split('\n').map((l) => l.trimEnd()), { timeout: 15_000 }).toContain('clicked-6');
    await xterm.click({ button: 'right', position: { x: 200, y: 40 } });
    await menu.waitFor({ timeout: 3_000 });
    await page.keyboard.press('Escape');
    await menu.waitFor({ state: 'detached' });
  });

  it('a local shell re-attached in the panel or a tab starts the same shell again once its session is gone (Kill, or closed elsewhere)', async () => {
    // Not the default shell: a relaunch must start the one that ran, not whichever is default.
    const sh = (await app.api.call('pty.shells')).find((s) => s.name === 'sh' && !s.isDefault);
    if (!sh) throw new Error('this machine has no sh besides its default shell');
    await showPanel();
    await panel().locator('select[name=shell]').selectOption(sh.path);
    await panel().getByRole('button', { name: /^Launch/ }).last().click();
    const panelId = await sessionIn(panel());
    await typeIn(panel(), panelId, 'echo "panel-$((6*7))"', 'panel-42');
    await panel().getByRole('button', { name: 'Open as tab' }).click();
    await tabTitled('sh').and(page.locator('.tab.active')).waitFor();
    const tabId = await activeSessionId(page);
    const front = page.locator('.tab-panel:visible');
    await typeIn(front, tabId, 'echo "tab-$((6*7))"', 'tab-42');
    expect([await shellOf(panelId), await shellOf(tabId)]).toEqual([sh.path, sh.path]);

    await reloadApp(page);
    await showPanel();
    expect(await sessionIn(panel())).toBe(panelId);

    // The panel: Kill, then Relaunch.
    await panel().getByRole('button', { name: 'Kill' }).click();
    await banner(panel()).getByRole('button', { name: 'Relaunch' }).click();
    await settled(panel());
    expect(await panel().locator('.pane-overlay').allInnerTexts()).toEqual([]);
    const relaunched = await sessionIn(panel(), panelId);
    expect(await banner(panel()).count()).toBe(0);
    expect(await shellOf(relaunched)).toBe(sh.path);
    await typeIn(panel(), relaunched, 'echo "relaunched-$((6*7))"', 'relaunched-42');

    // The tab: its session closed elsewhere, then Enter in the terminal, as its notice says.
    await tabTitled('sh').click();
    expect(await activeSessionId(page)).toBe(tabId);
    await app.api.call('sessions.close', { sessionId: tabId });
    await banner(front).getByRole('button', { name: 'Relaunch' }).waitFor();
    await front.locator('.xterm').click();
    await page.keyboard.press('Enter');
    await settled(front);
    expect(await front.locator('.pane-overlay').allInnerTexts()).toEqual([]);
    const again = await sessionIn(front, tabId);
    expect(await banner(front).count()).toBe(0);
    expect(await shellOf(again)).toBe(sh.path);
    await typeIn(front, again, 'echo "again-$((6*7))"', 'again-42');
  });
});

describe('the keys that close tabs', () => {
  it('close no tab from the local shell panel (Ctrl+Shift+W), nor from a terminal\'s Find field (Ctrl+W); Ctrl+Shift+W there closes it', async () => {
    await tabTitled('db01').click();
    const sshId = await activeSessionId(page);
    const count = await tabs().count();
    const ssh = page.locator('.tab-panel:visible');

    // Ctrl+Shift+W in the panel's terminal: the tab above stays, and so does its session.
    await showPanel();
    const panelId = await sessionIn(panel());
    await panel().locator('.xterm').click();
    await page.keyboard.press('Control+Shift+W');
    await typeIn(panel(), panelId, 'echo "kept-$((6*7))"', 'kept-42');
    expect(await tabs().count()).toBe(count);
    expect((await app.api.call('sessions.list')).find((s) => s.id === sshId)?.state).toBe('open');
    // Nor from the panel's other controls (its shell picker).
    await panel().locator('select[name=shell]').focus();
    await page.keyboard.press('Control+Shift+W');
    await page.keyboard.press('Control+W');
    await typeIn(panel(), panelId, 'echo "still-$((6*7))"', 'still-42');
    expect(await tabs().count()).toBe(count);

    // Ctrl+W in the SSH tab's Find field: no tab closes (in the terminal it is the shell's).
    await tabTitled('db01').click();
    await ssh.locator('.xterm').click();
    await page.keyboard.press('Control+Shift+F');
    const field = ssh.getByRole('searchbox', { name: 'Find in terminal' });
    await expect.poll(() => field.evaluate((el) => el === document.activeElement)).toBe(true);
    await page.keyboard.type('back');
    await page.keyboard.press('Control+W');
    await typeAndSee(page, sshId, 'echo "open-$((6*7))"', 'open-42');
    expect(await tabs().count()).toBe(count);
    expect((await app.api.call('sessions.list')).find((s) => s.id === sshId)?.state).toBe('open');

    // Ctrl+Shift+W there closes the tab, as it does from the terminal.
    await field.click();
    await page.keyboard.press('Control+Shift+W');
    await expect.poll(() => tabs().count()).toBe(count - 1);
    expect(await tabTitled('db01').count()).toBe(0);
  });

  it('leave the page behind an open file editor alone: Ctrl+Shift+E, Ctrl+PageDown and Ctrl+Shift+W keep the editor and its unsaved text', async () => {
    await page.getByRole('treeitem', { name: /^db01, SSH/ }).dblclick();
    const id = await activeSessionId(page);
    await typeAndSee(page, id, 'printf "first line\n" > keys-editor.txt; echo "made-$((6*7))"', 'made-42');
    const count = await tabs().count();
    expect(count).toBeGreaterThan(1); // another tab to go to
    await page.keyboard.press('Control+Shift+E');
    const files = page.getByRole('complementary', { name: 'Files' });
    await files.locator('tr.sftp-row[data-name="keys-editor.txt"]').locator('.entry-name').dblclick();
    const editor = page.getByRole('dialog', { name: 'Edit keys-editor.txt' });
    const text = editor.getByRole('textbox', { name: 'Contents of keys-editor.txt' });
    await text.click();
    await text.press('Control+End');
    await text.pressSequentially('unsaved words');
    const typed = () => editor.locator('.cm-line').evaluateAll((ls) => ls.map((l) => l.textContent ?? '').join('\n'));
    await expect.poll(typed).toContain('unsaved words');

    for (const keys of ['Control+Shift+E', 'Control+PageDown', 'Control+Shift+W']) {
      await page.keyboard.press(keys);
      expect(await editor.isVisible()).toBe(true);
      expect(await typed()).toContain('unsaved words');
      expect(await tabs().count()).toBe(count);
      expect(await page.locator('.tab.active .tab-title').innerText()).toBe('db01');
    }
    expect(await files.isVisible()).toBe(true);
    await editor.getByRole('button', { name: 'Close', exact: true }).last().click();
    await page.getByRole('dialog', { name: 'Discard changes?' }).getByRole('button', { name: 'Discard' }).click();
    await editor.waitFor({ state: 'detached' });
  });
});
