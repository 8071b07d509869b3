/**
 * `wraith serve` as a jump host's users meet it: opened in Chromium by a name it never printed
 * (Chromium resolves wraith-jump.test to 127.0.0.1, as a jump host's DNS name would resolve to it),
 * against a real sshd: the page reaches its host, a terminal echoes, and a file uploads as a PUT.
 */
import { createHash, randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { openSshTab, waitForTail } from '../../bench/wraith-tab.js';
import { type TestBrowser, launchBrowser } from '../fixtures/browser.js';
import { type SshdHandle, startSshd } from '../fixtures/sshd.js';
import { type WraithServer, startWraithServer } from '../fixtures/wraith-server.js';

const NAME = 'wraith-jump.test';
let sshd: SshdHandle;
let server: WraithServer;
let browser: TestBrowser;
let page: Page;
let home: string;

beforeAll(async () => {
  sshd = await startSshd();
  home = execFileSync('getent', ['passwd', sshd.users.password.username], { encoding: 'utf8' }).split(':')[5] ?? '';
  server = await startWraithServer();
  browser = await launchBrowser({ extraArgs: [`--host-resolver-rules=MAP ${NAME} 127.0.0.1`] });
  page = browser.page;
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await sshd?.stop();
  if (home) rmSync(`${home}/by-name.bin`, { force: true });
});

describe('opened by another name than the one it printed', () => {
  it('reaches its host, runs a terminal and uploads a file', async () => {
    const port = new URL(server.url).port;
    await page.goto(`http://${NAME}:${port}/?token=${server.token}`);
    expect(new URL(page.url()).host).toBe(`${NAME}:${port}`);
    await page.getByText('Host: connected').waitFor({ timeout: 15_000 });

    const sessionId = await openSshTab(page, sshd);
    await page.keyboard.type('echo by-$((6*7))-name\n');
    await waitForTail(page, sessionId, 'by-42-name');

    // The Files panel's upload is a PUT to the host, Origin-checked like the WebSocket.
    await page.keyboard.press('Control+Shift+E');
    const panel = page.getByRole('complementary', { name: 'Files' });
    await expect.poll(() => panel.getAttribute('data-path'), { timeout: 15_000 }).toBe(home);
    const payload = randomBytes(256 * 1024);
    await panel.locator('input[name=sftp-upload]').setInputFiles({ name: 'by-name.bin', mimeType: 'application/octet-stream', buffer: payload });
    const transfer = panel.locator('.transfer').filter({ hasText: 'by-name.bin' });
    await expect.poll(() => transfer.getAttribute('data-state'), { timeout: 20_000 }).toBe('done');
    const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
    expect(sha(readFileSync(`${home}/by-name.bin`))).toBe(sha(payload));
  });
});
