/**
 * Logins typed in the tab, in real Chromium against the real sshd: the server's own
 * keyboard-interactive prompt asks again after a refusal (saying so); the tab's password card gives
 * up after three refusals, as ssh does, with Try again asking anew; and a jump host and its target
 * that both have no saved password are each asked for once; a login prompt whose open is given up
 * (its caller went away) leaves the window at once; a tab closed while its open still connects
 * gives the open up. The tests run in order on one page.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { connectWebSocket } from '../../src-main/server/ws-client.js';
import { startDelayProxy } from '../fixtures/delay-proxy.js';
import { failure } from '../fixtures/errors.js';
import { until } from '../fixtures/poll.js';
import { type TestBrowser, fillNewSshConnection, openApp } from '../fixtures/browser.js';
import { type SshdHandle, startSshd } from '../fixtures/sshd.js';
import { echoWorks as echoIn } from '../fixtures/terminal-page.js';
import { type WraithServer, startWraithServer } from '../fixtures/wraith-server.js';

let sshd: SshdHandle;
let server: WraithServer;
let browser: TestBrowser;
let page: Page;

const echoWorks = (word: string) => echoIn(page, word);
const loginDialog = () => page.getByRole('dialog', { name: /^Login to / });

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

describe('mistyped logins', () => {
  it("the server's own password prompt asks again after a wrong answer, saying it was refused; the right one connects", async () => {
    await page.locator('.connections .panel-head').getByRole('button', { name: 'New connection' }).click();
    const form = page.getByRole('dialog', { name: 'New connection' });
    await form.locator('input[name=name]').fill('twofactor');
    await form.locator('input[name=host]').fill(sshd.host);
    await form.locator('input[name=port]').fill(String(sshd.port));
    await form.locator('input[name=username]').fill(sshd.users.password.username);
    await form.locator('select[name=authMethod]').selectOption('keyboard-interactive');
    await form.getByRole('button', { name: 'Create' }).click();
    await form.waitFor({ state: 'detached' });

    await page.getByRole('treeitem', { name: /^twofactor, SSH/ }).dblclick();
    const hostKey = page.getByRole('alertdialog', { name: /First connection to 127\.0\.0\.1/ });
    await hostKey.waitFor();
    await hostKey.getByRole('button', { name: 'Trust and connect' }).click();

    await loginDialog().waitFor({ timeout: 20_000 });
    expect(await loginDialog().getByRole('alert').count()).toBe(0);
    await loginDialog().getByLabel(/password/i).fill('not-the-password');
    await loginDialog().getByRole('button', { name: 'Send' }).click();

    // Asked again (a new round: an empty field), saying the last answer was refused.
    const refusal = loginDialog().getByRole('alert');
    await refusal.waitFor({ timeout: 20_000 });
    expect(await refusal.innerText()).toMatch(/refused that answer: permission denied, please try again \(2 of 3\)/);
    expect(await loginDialog().getByLabel(/password/i).inputValue()).toBe('');
    await loginDialog().getByLabel(/password/i).fill(sshd.users.password.password);
    await loginDialog().getByRole('button', { name: 'Send' }).click();

    await expect.poll(() => page.locator('.tab.active').getAttribute('class'), { timeout: 20_000 }).toContain('open');
    expect(await loginDialog().count()).toBe(0);
    await echoWorks('second-try');
  });

  it("the tab's password card gives up after three refusals; Try again asks anew", async () => {
    const dialog = await fillNewSshConnection(page, { name: 'nopw', host: sshd.host, port: sshd.port, username: sshd.users.password.username, password: '' });
    await dialog.waitFor({ state: 'detached' });
    await page.getByRole('treeitem', { name: /^nopw, SSH/ }).dblclick();
    const card = () => page.locator('.tab-panel:visible').getByRole('alertdialog', { name: /^Password for wraith-pw@127\.0\.0\.1/ });
    const field = () => card().getByLabel('Password', { exact: true });

    for (let refusals = 0; refusals < 3; refusals++) {
      await field().waitFor({ timeout: 20_000 });
      expect(await field().inputValue()).toBe('');
      await field().fill(`wrong-${refusals}`);
      await field().press('Enter');
      if (refusals < 2) await expect.poll(() => card().locator('.refusal').count(), { timeout: 20_000 }).toBe(1);
    }

    // The third refusal ends the asking: the tab says the login failed and offers Try again.
    const failed = page.locator('.tab-panel:visible').getByRole('alert').filter({ hasText: 'Could not open nopw' });
    await failed.waitFor({ timeout: 20_000 });
    expect(await failed.innerText()).toMatch(/refused the login with that password/);
    expect(await card().count()).toBe(0);

    await failed.getByRole('button', { name: 'Try again' }).click();
    await field().waitFor({ timeout: 20_000 });
    expect(await card().locator('.refusal').count()).toBe(0);
    await field().fill(sshd.users.password.password);
    await field().press('Enter');
    await expect.poll(() => page.locator('.tab.active').getAttribute('class'), { timeout: 20_000 }).toContain('open');
    await echoWorks('after-three');
  });

  it('a jump host and its target, neither with a saved password: each card comes once, and the tab connects', async () => {
    const bastionForm = await fillNewSshConnection(page, { name: 'bastion', host: sshd.host, port: sshd.port, username: sshd.users.password.username, password: '' });
    await bastionForm.waitFor({ state: 'detached' });
    // The target is the same sshd, reached through a forward on the bastion.
    await page.locator('.connections .panel-head').getByRole('button', { name: 'New connection' }).click();
    const form = page.getByRole('dialog', { name: 'New connection' });
    await form.locator('input[name=name]').fill('behind');
    await form.locator('input[name=host]').fill(sshd.host);
    await form.locator('input[name=port]').fill(String(sshd.port));
    await form.locator('input[name=username]').fill(sshd.users.password.username);
    const bastion = await form.locator('select[name=jumpHostId] option', { hasText: 'bastion' }).getAttribute('value');
    await form.locator('select[name=jumpHostId]').selectOption(bastion ?? '');
    await form.getByRole('button', { name: 'Create' }).click();
    await form.waitFor({ state: 'detached' });

    const asked: string[] = [];
    const card = () => page.locator('.tab-panel:visible').getByRole('alertdialog', { name: /^Password for / });
    await page.getByRole('treeitem', { name: /^behind, SSH/ }).dblclick();
    const title = () => card().locator('h3').innerText();
    for (const hop of ['bastion', 'behind']) {
      await card().waitFor({ timeout: 20_000 });
      asked.push(await title());
      expect(await title()).toContain(`(${hop})`);
      await card().getByLabel('Password', { exact: true }).fill(sshd.users.password.password);
      await card().getByLabel('Password', { exact: true }).press('Enter');
      // The next card, or the open terminal, takes this one's place.
      await expect.poll(async () => (await card().count()) === 0 || !(await title()).includes(`(${hop})`), { timeout: 20_000 }).toBe(true);
    }
    await expect.poll(() => page.locator('.tab.active').getAttribute('class'), { timeout: 20_000 }).toContain('open');
    expect(await card().count()).toBe(0);
    expect(asked).toHaveLength(2);
    await echoWorks('through-bastion');
  });
});

describe('a login given up', () => {
  it('the login card of an open whose caller goes away (a CLI) is taken down at once', async () => {
    const cli = await connectWebSocket(server.url, server.token);
    try {
      await cli.call('hostkeys.trust', { kind: 'ssh', host: sshd.host, port: sshd.port, keyType: sshd.hostKeyType, fingerprint: sshd.hostKeyFingerprint });
      const conn = await cli.call('connections.create', {
        name: 'asked-elsewhere',
        kind: 'ssh',
        host: sshd.host,
        port: sshd.port,
        username: sshd.users.password.username,
        authMethod: 'keyboard-interactive',
      });
      const opening = failure(cli.call('ssh.open', { connectionId: conn.id }));
      // Every window shows the server's question, whoever asked to connect.
      await loginDialog().waitFor({ timeout: 20_000 });
      // The card names the connection once the page has heard of it (connections.changed): the
      // prompt can come first, from a connection saved a moment ago elsewhere.
      await expect.poll(() => loginDialog().innerText()).toContain('asked-elsewhere');
      cli.close();
      await opening;
      // The prompt would wait 120 s for an answer nobody can use: its card goes now.
      await loginDialog().waitFor({ state: 'detached', timeout: 10_000 });
    } finally {
      cli.close();
    }
  });

  it('a tab closed while its open still connects gives the open up: no login card comes, no session, no login on the server', async () => {
    // A far server: its login prompt comes several round trips after the connection is made. The
    // card, once up, is modal (the tab strip behind it is inert), so the tab is closed before it.
    const far = await startDelayProxy(sshd.port, 500);
    const cli = await connectWebSocket(server.url, server.token);
    try {
      await cli.call('hostkeys.trust', { kind: 'ssh', host: sshd.host, port: far.port, keyType: sshd.hostKeyType, fingerprint: sshd.hostKeyFingerprint });
      await page.locator('.connections .panel-head').getByRole('button', { name: 'New connection' }).click();
      const form = page.getByRole('dialog', { name: 'New connection' });
      await form.locator('input[name=name]').fill('far-away');
      await form.locator('input[name=host]').fill(sshd.host);
      await form.locator('input[name=port]').fill(String(far.port));
      await form.locator('input[name=username]').fill(sshd.users.password.username);
      await form.locator('select[name=authMethod]').selectOption('keyboard-interactive');
      await form.getByRole('button', { name: 'Create' }).click();
      await form.waitFor({ state: 'detached' });
      const connectionId = (await cli.call('connections.list')).connections.find((c) => c.name === 'far-away')?.id;
      expect(connectionId).toBeTruthy();

      const connections = () => sshd.heldConnections();
      const logins = () => (sshd.readLog().match(/Accepted keyboard-interactive/g) ?? []).length;
      const before = connections();
      const loginsBefore = logins();

      await page.getByRole('treeitem', { name: /^far-away, SSH/ }).dblclick();
      await until('the login under way on the server', () => connections() === before + 1);
      expect(await loginDialog().count()).toBe(0); // still connecting: its card has not come yet
      await page.getByRole('button', { name: 'Close far-away' }).click();

      // Given up on the host: the connection to the server ends now, not when the prompt it would
      // have shown (for a tab that is gone) timed out.
      await until('the login connection closed on the server', () => connections() === before, 20_000);
      expect(await loginDialog().count()).toBe(0);
      expect((await cli.call('sessions.list')).some((s) => s.connectionId === connectionId)).toBe(false);
      expect(logins()).toBe(loginsBefore);
    } finally {
      cli.close();
      await far.close();
    }
  });
});
