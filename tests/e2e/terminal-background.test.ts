/**
 * A tab not in front shares the page's main thread with the tab that is: its output is written in
 * small pieces that yield to the front tab (output-feeder.ts), in real Chromium against a real
 * sshd. The tests check that the tab in front and the ones behind it are told apart as tabs are
 * switched, and that a flood written in pieces behind the front tab arrives whole and in order.
 * They run in order, with the same two tabs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { type AppWithSshd, startAppWithSshd } from '../fixtures/app-with-sshd.js';
import { activeSessionId, sessionIn, terminalText, typeAndSee } from '../fixtures/terminal-page.js';

let app: AppWithSshd;
let page: Page;
let first: string;
let second: string;

beforeAll(async () => {
  app = await startAppWithSshd({ connection: 'web01' });
  page = app.page;
});

afterAll(() => app?.stop());

const inBackground = (id: string) => () => page.evaluate((sid) => window.wraithInspect?.terminals.info(sid)?.outputInBackground ?? null, id);
const lines = async (id: string) => (await terminalText(page, id)).split('\n').map((l) => l.trimEnd());

describe('output of a tab that is not in front', () => {
  it('is written as background output while another tab is in front, and as front output again once shown', async () => {
    const item = page.getByRole('treeitem', { name: /^web01, SSH/ });
    await item.dblclick();
    first = await activeSessionId(page);
    await typeAndSee(page, first, 'echo "first-$((6*7))"', 'first-42');
    expect(await inBackground(first)()).toBe(false);

    await item.dblclick();
    second = await sessionIn(page.locator('.tab-panel:visible'), first);
    await typeAndSee(page, second, 'echo "second-$((6*7))"', 'second-42');
    expect(await inBackground(second)()).toBe(false);
    await expect.poll(inBackground(first)).toBe(true);

    await page.getByRole('tab').first().click();
    await expect.poll(inBackground(first)).toBe(false);
    await expect.poll(inBackground(second)).toBe(true);
  });

  it('arrives whole and in order behind the tab in front, which goes on echoing meanwhile', async () => {
    // The second tab (behind) prints 300,000 numbered lines (~2 MB, more than one write of any
    // size), then a marker; the first (in front) is typed in while that runs.
    await page.getByRole('tab').nth(1).click();
    await page.locator('.tab-panel:visible .xterm').click();
    await page.keyboard.type('sleep 1; seq 1 300000; echo "flood-$((6*7))"\n');
    await page.getByRole('tab').first().click();
    await expect.poll(inBackground(second)).toBe(true);
    await typeAndSee(page, first, 'echo "typed-$((6*7))"', 'typed-42');

    await expect.poll(() => lines(second), { timeout: 60_000 }).toContain('flood-42');
    // The scrollback keeps the last lines: consecutive numbers up to 300000, nothing lost or swapped.
    const text = await lines(second);
    const end = text.indexOf('flood-42');
    const numbers = text.slice(Math.max(0, end - 2000), end).map(Number);
    expect(numbers[numbers.length - 1]).toBe(300000);
    expect(numbers.every((n, i) => i === 0 || n === (numbers[i - 1] ?? 0) + 1)).toBe(true);
  });
});
