/**
 * The Known hosts dialog in real Chromium against a real sshd: the key trusted on first connect
 * is listed and can be forgotten; a known_hosts file hashed by OpenSSH (ssh-keyscan -H) is
 * imported, and the next connection goes through without asking; the filter finds the hashed
 * entry by the host it stands for.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { type TestBrowser, createSshConnectionInUi, openApp } from '../fixtures/browser.js';
import { type SshdHandle, startSshd } from '../fixtures/sshd.js';
import { type WraithServer, startWraithServer } from '../fixtures/wraith-server.js';

let sshd: SshdHandle;
let server: WraithServer;
let browser: TestBrowser;
let page: Page;
let files: string;

const dialog = () => page.getByRole('dialog', { name: 'Known hosts' });
const table = () => dialog().getByRole('table', { name: 'Trusted keys' });

beforeAll(async () => {
  sshd = await startSshd();
  files = mkdtempSync(join(tmpdir(), 'wraith-e2e-known-hosts-'));
  server = await startWraithServer();
  browser = await openApp(server.openUrl);
  page = browser.page;
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await sshd?.stop();
  if (files) rmSync(files, { recursive: true, force: true });
});

async function openTab(): Promise<void> {
  await page.getByRole('treeitem', { name: /^kh sshd, SSH/ }).dblclick();
}

async function closeTab(): Promise<void> {
  await page.locator('.tab-panel:visible .xterm').click();
  await page.keyboard.press('Control+Shift+W');
  await expect.poll(() => page.locator('.tab').count()).toBe(0);
}

describe('the Known hosts dialog', () => {
  it('explains itself while nothing is trusted', async () => {
    await createSshConnectionInUi(page, { name: 'kh sshd', host: sshd.host, port: sshd.port, ...sshd.users.password });
    await page.getByRole('button', { name: 'Known hosts' }).click();
    await expect.poll(() => dialog().innerText()).toContain('No trusted keys yet');
    await dialog().getByRole('button', { name: 'Close' }).last().click();
    await dialog().waitFor({ state: 'detached' });
  });

  it('lists the key trusted on first connect, and forgets it after asking', async () => {
    await openTab();
    await page.getByRole('alertdialog', { name: /First connection/ }).getByRole('button', { name: 'Trust and connect' }).click();
    await expect.poll(() => page.locator('.tab.active').getAttribute('class'), { timeout: 20_000 }).toContain('open');
    await closeTab();

    await page.getByRole('button', { name: 'Known hosts' }).click();
    const row = table().locator(`tr[data-host="${sshd.host}"]`);
    await expect.poll(() => row.innerText()).toContain(`${sshd.host}:${sshd.port}`);
    expect(await row.innerText()).toContain('ssh-ed25519');
    expect(await row.locator('.fingerprint').innerText()).toBe(sshd.hostKeyFingerprint);

    await row.getByRole('button', { name: `Forget ${sshd.host}:${sshd.port}` }).click();
    const confirm = page.getByRole('dialog', { name: 'Forget a trusted key' });
    await confirm.getByRole('button', { name: 'Forget' }).click();
    await expect.poll(() => dialog().innerText()).toContain('No trusted keys yet');
  });

  it('imports a known_hosts file hashed by OpenSSH; the server is then trusted without asking', async () => {
    const scanned = execFileSync('ssh-keyscan', ['-H', '-t', 'ed25519', '-p', String(sshd.port), sshd.host], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    const path = join(files, 'known_hosts');
    writeFileSync(path, scanned);

    await dialog().getByRole('textbox', { name: 'known_hosts file of the host machine' }).fill(path);
    await dialog().getByRole('button', { name: 'Import known_hosts' }).click();
    await expect.poll(() => dialog().getByRole('status').innerText()).toBe('Imported 1 new host key.');
    const row = table().locator('tbody tr');
    expect(await row.count()).toBe(1);
    expect(await row.innerText()).toContain('hashed name');
    expect(await row.locator('.fingerprint').innerText()).toBe(sshd.hostKeyFingerprint);

    // A wrong path says which file it looked for.
    await dialog().getByRole('textbox', { name: 'known_hosts file of the host machine' }).fill(join(files, 'missing'));
    await dialog().getByRole('button', { name: 'Import known_hosts' }).click();
    await expect.poll(() => dialog().getByRole('alert').innerText()).toContain(`No known_hosts file at ${join(files, 'missing')}`);
    await dialog().getByRole('button', { name: 'Close' }).last().click();

    await openTab();
    await expect.poll(() => page.locator('.tab.active').getAttribute('class'), { timeout: 20_000 }).toContain('open');
    expect(await page.getByRole('alertdialog', { name: /First connection/ }).count()).toBe(0);
  });

  it('the filter finds a hashed entry by the host it stands for; it is forgotten from there', async () => {
    await page.getByRole('button', { name: 'Known hosts' }).click();
    const filter = dialog().getByRole('searchbox', { name: 'Filter known hosts' });
    const rows = table().locator('tbody tr');
    const nothing = () => dialog().getByText('Nothing matches the filter.').count();

    await filter.fill('10.9.9.9');
    await expect.poll(nothing).toBe(1);
    // The hashed name is of "[127.0.0.1]:port": the saved connection tells the port.
    await filter.fill(sshd.host);
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.innerText()).toContain('hashed name');
    await filter.fill(`${sshd.host}:1`);
    await expect.poll(nothing).toBe(1);
    await filter.fill(`${sshd.host}:${sshd.port}`);
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.locator('.fingerprint').innerText()).toBe(sshd.hostKeyFingerprint);

    await rows.getByRole('button', { name: 'Forget hashed name' }).click();
    await page.getByRole('dialog', { name: 'Forget a trusted key' }).getByRole('button', { name: 'Forget' }).click();
    await expect.poll(() => dialog().innerText()).toContain('No trusted keys yet');
  });
});
