/**
 * Where the keys go after something is closed, in real Chromium with real local shells: never to
 * the page body, where typing reaches nothing until the next click. Kill and Close in the local
 * shell panel keep them in the panel (its terminal, so Enter relaunches; its Launch button);
 * closing a tab from its ×, or the others from the tab menu, after the question gives them to the
 * terminal in front; hiding the panel gives them back to the terminal in front, not to the
 * status-bar button that showed it (where Enter would show it again). This host asks before
 * closing a running tab. The tests run in order, each on what the one before left.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Locator, Page } from 'playwright-core';
import { type TestBrowser, openApp } from '../fixtures/browser.js';
import { activeSessionId, sessionIn, terminalText } from '../fixtures/terminal-page.js';
import { type WraithServer, startWraithServer } from '../fixtures/wraith-server.js';

let server: WraithServer;
let browser: TestBrowser;
let page: Page;

beforeAll(async () => {
  server = await startWraithServer({ settings: { 'ui.confirmCloseRunningTab': true } });
  browser = await openApp(server.openUrl);
  page = browser.page;
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const panel = () => page.getByRole('region', { name: 'Local shell' });
const front = () => page.locator('.tab-panel:visible');
const tabs = () => page.locator('.tab');

/** Whether the terminal in `scope` has the keys. */
function terminalHasKeys(scope: Locator): Promise<boolean> {
  return scope.locator('.xterm-helper-textarea').evaluate((t) => t === document.activeElement);
}

/** Whether something in the local shell panel has the keys (its terminal, or its Launch button). */
function keysInPanel(): Promise<boolean> {
  return panel().evaluate((p) => p.contains(document.activeElement));
}

function hasFocus(el: Locator): Promise<boolean> {
  return el.evaluate((node) => node === document.activeElement);
}


/** Types an echo where the keys are, without clicking anything, and waits for its answer in the session. */
async function keysReach(sessionId: string, word: string): Promise<void> {
  await page.keyboard.type(`echo ${word}-$((6*7))\n`);
  await expect.poll(async () => (await terminalText(page, sessionId)).split('\n').map((l) => l.trimEnd()), { timeout: 15_000 }).toContain(`${word}-42`);
}

describe('the local shell panel', () => {
  it('keeps the keys in its terminal after Kill, so Enter relaunches the shell, as the terminal says', async () => {
    await page.keyboard.press('Control+Shift+G');
    await panel().waitFor();
    const launch = panel().getByRole('button', { name: /^Launch/ }).last();
    await expect.poll(() => hasFocus(launch)).toBe(true);
    await page.keyboard.press('Enter');
    const id = await sessionIn(panel());
    await expect.poll(() => terminalHasKeys(panel())).toBe(true);
    await keysReach(id, 'before-kill');

    await panel().getByRole('button', { name: 'Kill' }).click();
    const ended = panel().locator('.pane-banner');
    await ended.waitFor();
    await expect.poll(async () => (await terminalText(page, id)).includes('Press Enter to relaunch.')).toBe(true);
    await expect.poll(() => terminalHasKeys(panel())).toBe(true);
    await page.keyboard.press('Enter');
    await ended.waitFor({ state: 'detached', timeout: 20_000 });
    await keysReach(await sessionIn(panel()), 'relaunched');
  });

  it('gives the keys to its Launch button after Close on an ended shell, so Enter starts another', async () => {
    await panel().getByRole('button', { name: 'Kill' }).click();
    const ended = panel().locator('.pane-banner');
    await ended.getByRole('button', { name: 'Close' }).click();
    await panel().locator('.terminal-pane').waitFor({ state: 'detached' });
    const launch = panel().getByRole('button', { name: /^Launch/ }).last();
    await expect.poll(() => hasFocus(launch)).toBe(true);
    await page.keyboard.press('Enter');
    const id = await sessionIn(panel());
    await expect.poll(() => terminalHasKeys(panel())).toBe(true);
    await keysReach(id, 'launched-again');
  });
});

describe('hiding the local shell panel', () => {
  it("gives the keys to the terminal in front, not to the status bar's Local shell button that showed it", async () => {
    // Four local shell tabs to work with in this file.
    for (let i = 0; i < 4; i++) {
      const before = await tabs().count();
      await panel().getByRole('button', { name: 'Open as tab' }).click();
      await expect.poll(() => tabs().count()).toBe(before + 1);
      await sessionIn(front());
    }
    const frontId = await activeSessionId(page);
    const statusButton = page.locator('.status-bar').getByRole('button', { name: /^Local shell/ });

    // Hidden from its own × first, then shown from the status bar's button.
    await panel().getByRole('button', { name: /^Hide panel/ }).click();
    await panel().waitFor({ state: 'hidden' });
    await statusButton.click();
    await panel().waitFor();
    await expect.poll(() => keysInPanel()).toBe(true);
    await page.keyboard.press('Control+Shift+G');
    await panel().waitFor({ state: 'hidden' });
    await expect.poll(() => terminalHasKeys(front())).toBe(true);
    // The line goes to the tab in front; Enter does not show the panel again.
    await keysReach(frontId, 'after-hide');
    expect(await panel().isVisible()).toBe(false);
  });

  it('gives the keys to the terminal in front when it was shown while nothing had them', async () => {
    const frontId = await activeSessionId(page);
    await page.evaluate(() => (document.activeElement instanceof HTMLElement ? document.activeElement.blur() : undefined));
    await page.keyboard.press('Control+Shift+G');
    await panel().waitFor();
    await expect.poll(() => keysInPanel()).toBe(true);
    await page.keyboard.press('Control+Shift+G');
    await panel().waitFor({ state: 'hidden' });
    await expect.poll(() => terminalHasKeys(front())).toBe(true);
    await keysReach(frontId, 'from-nothing');
  });
});

describe('closing tabs after the question', () => {
  it("gives the keys to the terminal in front after a tab in the back is closed from its ×; Cancel leaves them on the ×", async () => {
    const frontId = await activeSessionId(page);
    const count = await tabs().count();
    const back = page.locator('.tab:not(.active)').first();
    const backId = await back.getAttribute('id');

    await back.getByRole('button', { name: /^Close / }).click();
    const ask = page.getByRole('dialog', { name: /^Close / });
    await ask.getByRole('button', { name: 'Cancel' }).click();
    await ask.waitFor({ state: 'detached' });
    await expect.poll(() => hasFocus(back.getByRole('button', { name: /^Close / }))).toBe(true);
    expect(await tabs().count()).toBe(count);

    await back.getByRole('button', { name: /^Close / }).click();
    await ask.getByRole('button', { name: 'Close tab' }).click();
    await expect.poll(() => tabs().count()).toBe(count - 1);
    expect(await page.locator(`[id="${backId}"]`).count()).toBe(0);
    expect(await activeSessionId(page)).toBe(frontId);
    await expect.poll(() => terminalHasKeys(front())).toBe(true);
    await keysReach(frontId, 'after-x');
  });

  it("gives the keys to the kept tab's terminal after Close other tabs from the tab menu", async () => {
    const frontId = await activeSessionId(page);
    expect(await tabs().count()).toBeGreaterThan(1);
    await page.locator('.tab.active').click({ button: 'right' });
    await page.getByRole('menuitem', { name: 'Close other tabs' }).click();
    await page.getByRole('dialog', { name: /^Close \d+ tabs?\?$/ }).getByRole('button', { name: /^Close \d+ tabs?$/ }).click();
    await expect.poll(() => tabs().count()).toBe(1);
    expect(await activeSessionId(page)).toBe(frontId);
    await expect.poll(() => terminalHasKeys(front())).toBe(true);
    await keysReach(frontId, 'kept');
  });
});
