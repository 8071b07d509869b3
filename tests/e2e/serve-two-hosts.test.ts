/**
 * Two `wraith serve` hosts opened side by side in one browser, as two jump hosts forwarded to two
 * local ports are: the browser shares cookies across the ports of 127.0.0.1, and opening the
 * second must not take the first page's token away. The first page's WebSocket comes back after
 * a cut, the page reloads, and its links (HTTP, with the cookie) are still let in.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { type TestBrowser, launchBrowser } from '../fixtures/browser.js';
import { type WraithServer, startWraithServer } from '../fixtures/wraith-server.js';
import { type WsCutter, startWsCutter } from '../fixtures/ws-cutter.js';

let first: WraithServer;
let second: WraithServer;
let forward: WsCutter;
let browser: TestBrowser;

beforeAll(async () => {
  first = await startWraithServer();
  second = await startWraithServer();
  // The first is reached through a forward of its own (as `ssh -L` gives), which can cut its WebSocket.
  forward = await startWsCutter(Number(new URL(first.url).port));
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await forward?.close();
  await first?.stop();
  await second?.stop();
});

/** Opens `url` in `page` and waits until the page says it reached its host. */
async function open(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await page.getByText('Host: connected').waitFor({ timeout: 15_000 });
}

/** The status the page's own host answers a download link with (404: no such link, past the token check). */
const linkStatus = (page: Page) => page.evaluate(async () => (await fetch('/download/no-such-ticket/x.bin')).status);

it('keeps the first page working after a second host is opened in the same browser', async () => {
  const firstPage = browser.page;
  await open(firstPage, `http://127.0.0.1:${forward.port}/?token=${first.token}`);
  const secondPage = await browser.context.newPage();
  await open(secondPage, second.openUrl);

  // The first page's WebSocket drops and comes back: the host takes it again.
  forward.cut();
  await firstPage.getByText('Host: disconnected — reconnecting…').waitFor();
  forward.restore();
  await firstPage.getByText('Host: connected').waitFor({ timeout: 15_000 });

  // Reloaded, it is served and reaches its host again; its links are let in.
  const reloaded = await firstPage.reload();
  expect(reloaded?.status()).toBe(200);
  await firstPage.getByText('Host: connected').waitFor({ timeout: 15_000 });
  expect(await linkStatus(firstPage)).toBe(404);

  // And the second page is as well off.
  expect((await secondPage.reload())?.status()).toBe(200);
  await secondPage.getByText('Host: connected').waitFor({ timeout: 15_000 });
  expect(await linkStatus(secondPage)).toBe(404);
}, 60_000);
