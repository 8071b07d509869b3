/**
 * A connection saved without its password, in real Chromium against the real sshd: the tab asks
 * for the password in place (after the host key question), shows the server's refusal and asks
 * again, connects with the right one, and — only when "Save in the vault" is ticked — the next
 * open connects without asking. The tests run in order: each goes on from the tabs the last left.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Locator, Page } from 'playwright-core';
import { type TestBrowser, fillNewSshConnection, openApp } from '../fixtures/browser.js';
import { type SshdHandle, startSshd } from '../fixtures/sshd.js';
import { echoWorks as echoIn } from '../fixtures/terminal-page.js';
import { type WraithServer, startWraithServer } from '../fixtures/wraith-server.js';

let sshd: SshdHandle;
let server: WraithServer;
let browser: TestBrowser;
let page: Page;

const echoWorks = (word: string) => echoIn(page, word);

function hasFocus(el: Locator): Promise<boolean> {
  return el.evaluate((node) => node === document.activeElement);
}

const row = () => page.getByRole('treeitem', { name: /^nopw, SSH/ });
const passwordCard = () => page.locator('.tab-panel:visible').getByRole('alertdialog', { name: /^Password for wraith-pw@127\.0\.0\.1/ });
const passwordField = () => passwordCard().getByLabel('Password', { exact: true });

beforeAll(async () => {
  sshd = await startSshd();
  server = await startWraithServer();
  browser = await openApp(server.openUrl);
  page = browser.page;
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await sshd?.stop();
});

describe('a connection saved without its password', () => {
  it('is saved with the password left empty', async () => {
    const dialog = await fillNewSshConnection(page, { name: 'nopw', host: sshd.host, port: sshd.port, username: sshd.users.password.username, password: '' });
    await dialog.waitFor({ state: 'detached' });
    await row().waitFor();
  });

  it('asks for the password in the tab once the host key is trusted; a wrong one shows the refusal and asks again; the right one connects', async () => {
    await row().dblclick();
    const hostKey = page.getByRole('alertdialog', { name: /First connection to 127\.0\.0\.1/ });
    await hostKey.waitFor();
    await hostKey.getByRole('button', { name: 'Trust and connect' }).click();

    await passwordCard().waitFor({ timeout: 20_000 });
    expect(await passwordField().getAttribute('type')).toBe('password');
    await expect.poll(() => hasFocus(passwordField())).toBe(true);
    expect(await passwordCard().getByLabel('Save in the vault').isChecked()).toBe(false);

    // Typed as a person does, Enter connects.
    await page.keyboard.type('not-the-password');
    await page.keyboard.press('Enter');
    const refusal = passwordCard().locator('.refusal');
    await refusal.waitFor({ timeout: 20_000 });
    expect(await refusal.innerText()).toMatch(/refused the login with that password/);
    expect(await refusal.innerText()).not.toContain('not-the-password');
    // Asked again: an empty field, with the keys.
    expect(await passwordField().inputValue()).toBe('');
    await expect.poll(() => hasFocus(passwordField())).toBe(true);
    expect(await page.locator('.tab').count()).toBe(1);

    await page.keyboard.type(sshd.users.password.password);
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('.tab.active').getAttribute('class'), { timeout: 20_000 }).toContain('open');
    expect(await passwordCard().count()).toBe(0);
    await echoWorks('typed-password');
  });

  it('did not save it: the next tab asks again, and Escape closes that tab', async () => {
    await row().dblclick();
    await passwordCard().waitFor({ timeout: 20_000 });
    expect(await page.locator('.tab').count()).toBe(2);
    await expect.poll(() => hasFocus(passwordField())).toBe(true);
    await page.keyboard.press('Escape');
    await expect.poll(() => page.locator('.tab').count()).toBe(1);
  });

  it('with "Save in the vault" ticked, saves it (setting up the vault on the way), and the next open connects without asking', async () => {
    await row().dblclick();
    await passwordCard().waitFor({ timeout: 20_000 });
    await passwordField().fill(sshd.users.password.password);
    await passwordCard().getByLabel('Save in the vault').check();
    await passwordCard().getByRole('button', { name: 'Connect' }).click();
    // No vault yet: it is set up first, then the connect goes on with the same password.
    const vault = page.getByRole('dialog', { name: 'Set up the vault' });
    await vault.waitFor({ timeout: 20_000 });
    await vault.locator('input[name=master-password]').fill('correct horse battery');
    await vault.locator('input[name=master-password-confirm]').fill('correct horse battery');
    await vault.getByRole('button', { name: 'Set master password' }).click();
    await expect.poll(() => page.locator('.tab.active').getAttribute('class'), { timeout: 20_000 }).toContain('open');
    await echoWorks('saved-password');
    expect(await page.locator('.tab').count()).toBe(2);

    await row().dblclick();
    await expect.poll(() => page.locator('.tab').count()).toBe(3);
    await expect.poll(() => page.locator('.tab.active').getAttribute('class'), { timeout: 20_000 }).toContain('open');
    expect(await passwordCard().count()).toBe(0);
    await echoWorks('no-question');
  });
});
