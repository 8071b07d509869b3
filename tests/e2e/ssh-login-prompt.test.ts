/**
 * Logins typed in the tab, in real Chromium against the real sshd: the server's own
 * keyboard-interactive prompt is asked in the tab that connects (opens or reconnects), by keyboard,
 * and asks again after a refusal (saying so); the rest of the window stays usable meanwhile, and
 * closing the tab gives the login up; the tab's password card gives up after three refusals, as ssh
 * does, with Try again asking anew; and a jump host and its target that both have no saved password
 * are each asked for once; a login prompt no tab waits for (the CLI's) is asked over the window,
 * naming its connection at once, and leaves the window at once when its open is given up; a tab
 * closed while its open still connects gives the open up. The tests run in order on one page.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import type { EventPayload } from '../../src-main/common/contract/index.js';
import { connectWebSocket } from '../../src-main/server/ws-client.js';
import { startDelayProxy } from '../fixtures/delay-proxy.js';
import { failure } from '../fixtures/errors.js';
import { until } from '../fixtures/poll.js';
import { type TestBrowser, fillNewSshConnection, launchBrowser, openApp } from '../fixtures/browser.js';
import { type SshdHandle, askingConnection, startSshd } from '../fixtures/sshd.js';
import { activeSessionId, echoWorks as echoIn } from '../fixtures/terminal-page.js';
import { type WraithServer, startWraithServer } from '../fixtures/wraith-server.js';

let sshd: SshdHandle;
let server: WraithServer;
let browser: TestBrowser;
let page: Page;

const echoWorks = (word: string) => echoIn(page, word);
/** The window's login dialog: prompts no tab of this window waits for. */
const loginDialog = () => page.getByRole('dialog', { name: /^Login to / });
/** The login card of the tab in front. */
const loginCard = () => page.locator('.tab-panel:visible').getByRole('alertdialog', { name: /^Login to / });
/** Any tab's login card, shown or not. */
const anyLoginCard = () => page.locator('.tab-panel').getByRole('alertdialog', { name: /^Login to /, includeHidden: true });
/** Whether the keys are in `selector` (inside the tab in front). */
const keysIn = (selector: string) =>
  page.evaluate((sel) => {
    const el = document.activeElement;
    return !!el?.closest(sel) && !!el.closest('.tab-panel')?.checkVisibility();
  }, selector);

/** Saves a keyboard-interactive connection to the sshd (or `port`) through the New connection dialog. */
async function saveAskingConnection(name: string, port = sshd.port): Promise<void> {
  await page.locator('.connections .panel-head').getByRole('button', { name: 'New connection' }).click();
  const form = page.getByRole('dialog', { name: 'New connection' });
  await form.locator('input[name=name]').fill(name);
  await form.locator('input[name=host]').fill(sshd.host);
  await form.locator('input[name=port]').fill(String(port));
  await form.locator('input[name=username]').fill(sshd.users.password.username);
  await form.locator('select[name=authMethod]').selectOption('keyboard-interactive');
  await form.getByRole('button', { name: 'Create' }).click();
  await form.waitFor({ state: 'detached' });
}

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
  it("the server's own password prompt is asked in the tab, by keyboard, and again after a wrong answer, saying it was refused; the right one connects", async () => {
    await saveAskingConnection('twofactor');

    await page.getByRole('treeitem', { name: /^twofactor, SSH/ }).dblclick();
    const hostKey = page.getByRole('alertdialog', { name: /First connection to 127\.0\.0\.1/ });
    await hostKey.waitFor();
    await hostKey.getByRole('button', { name: 'Trust and connect' }).click();

    // Over the tab that connects, not over the window: the card names the connection, and its
    // first field has the keys.
    await loginCard().waitFor({ timeout: 20_000 });
    expect(await loginDialog().count()).toBe(0);
    expect(await loginCard().getByRole('heading').innerText()).toBe(`Login to twofactor (${sshd.host})`);
    expect(await loginCard().getByRole('alert').count()).toBe(0);
    expect(await keysIn('.login-prompt input')).toBe(true);
    await page.keyboard.type('not-the-password');
    await page.keyboard.press('Enter');

    // Asked again (a new round: an empty field with the keys), saying the last answer was refused.
    const refusal = loginCard().getByRole('alert');
    await refusal.waitFor({ timeout: 20_000 });
    expect(await refusal.innerText()).toMatch(/refused that answer: permission denied, please try again \(2 of 3\)/);
    expect(await loginCard().getByLabel(/password/i).inputValue()).toBe('');
    expect(await keysIn('.login-prompt input')).toBe(true);
    await page.keyboard.type(sshd.users.password.password);
    await page.keyboard.press('Enter');

    await expect.poll(() => page.locator('.tab.active').getAttribute('class'), { timeout: 20_000 }).toContain('open');
    expect(await anyLoginCard().count()).toBe(0);
    // The keys went with the tab, to its terminal.
    await expect.poll(() => keysIn('.xterm')).toBe(true);
    await echoWorks('second-try');
  });

  it('Escape on the card cancels the login: the tab says so, with the keys on Try again, which asks anew', async () => {
    await page.getByRole('treeitem', { name: /^twofactor, SSH/ }).dblclick();
    await loginCard().waitFor({ timeout: 20_000 });
    expect(await keysIn('.login-prompt input')).toBe(true);
    await page.keyboard.press('Escape');

    const failed = page.locator('.tab-panel:visible').getByRole('alert').filter({ hasText: 'Could not open twofactor' });
    await failed.waitFor({ timeout: 20_000 });
    expect(await failed.innerText()).toMatch(/The login to twofactor was cancelled/);
    await expect.poll(() => keysIn('.card')).toBe(true);
    expect(await page.evaluate(() => document.activeElement?.textContent?.trim())).toBe('Try again');
    await page.keyboard.press('Enter');
    await loginCard().waitFor({ timeout: 20_000 });
    await expect.poll(() => keysIn('.login-prompt input')).toBe(true);
    await page.keyboard.type(sshd.users.password.password);
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('.tab.active').getAttribute('class'), { timeout: 20_000 }).toContain('open');
    await echoWorks('after-escape');
  });

  it("a Reconnect's login is asked in its tab too", async () => {
    const sessionId = await activeSessionId(page);
    sshd.dropConnections();
    await expect.poll(() => page.locator('.tab.active').getAttribute('class'), { timeout: 20_000 }).toContain('disconnected');
    await page.locator('.tab-panel:visible').getByRole('button', { name: 'Reconnect' }).click();
    await loginCard().waitFor({ timeout: 20_000 });
    expect(await loginDialog().count()).toBe(0);
    await loginCard().getByLabel(/password/i).fill(sshd.users.password.password);
    await loginCard().getByLabel(/password/i).press('Enter');
    await expect.poll(() => page.locator('.tab.active').getAttribute('class'), { timeout: 20_000 }).toContain('open');
    // The same session, reconnected (its scrollback kept).
    expect(await activeSessionId(page)).toBe(sessionId);
    await echoWorks('reconnected');
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
  it('closing a tab while its login card is up gives the login up: the prompt is withdrawn, no session, no connection on the server; the other tabs stay usable meanwhile', async () => {
    const cli = await connectWebSocket(server.url, server.token);
    cli.subscribe(['ssh.prompt']);
    const asked: EventPayload<'ssh.prompt'>[] = [];
    const withdrawn: string[] = [];
    cli.on('ssh.prompt', (p) => asked.push(p));
    cli.on('ssh.prompt_closed', (p) => withdrawn.push(p.promptId));
    try {
      await saveAskingConnection('closed-at-card');
      const connectionId = (await cli.call('connections.list')).connections.find((c) => c.name === 'closed-at-card')?.id;
      expect(connectionId).toBeTruthy();
      const before = sshd.heldConnections();

      await page.getByRole('treeitem', { name: /^closed-at-card, SSH/ }).dblclick();
      await loginCard().waitFor({ timeout: 20_000 });
      expect(sshd.heldConnections()).toBe(before + 1);
      const prompt = asked.find((p) => p.connectionId === connectionId);
      if (!prompt) throw new Error('no ssh.prompt for closed-at-card');

      // The window is not held by the question: another tab comes to the front, and the card
      // stays with its own tab, which says in the strip that it waits for an answer.
      await page.getByRole('tab', { name: /twofactor/ }).first().click();
      expect(await loginCard().count()).toBe(0);
      expect(await anyLoginCard().count()).toBe(1);
      expect(await loginDialog().count()).toBe(0);
      expect(await page.getByRole('tab', { name: /closed-at-card/ }).getAttribute('title')).toMatch(/asks for your login answer/);

      await page.getByRole('button', { name: 'Close closed-at-card' }).click();
      // Withdrawn now, not when the prompt (for a tab that is gone) would have timed out, and
      // shown nowhere meanwhile, over the window neither.
      await until('the prompt withdrawn', () => withdrawn.includes(prompt.promptId), 10_000);
      expect(await anyLoginCard().count()).toBe(0);
      expect(await loginDialog().count()).toBe(0);
      await until('the login connection closed on the server', () => sshd.heldConnections() === before, 20_000);
      expect((await cli.call('sessions.list')).some((s) => s.connectionId === connectionId)).toBe(false);
      const late = await failure(cli.call('ssh.answer', { promptId: prompt.promptId, answers: [sshd.users.password.password] }));
      expect(late.code).toBe('ENOTFOUND');
    } finally {
      cli.close();
    }
  });

  it('a login prompt no tab of the window waits for is asked over the window, naming its connection at once, though the window has not read that connection yet', async () => {
    // A second window whose timers stand still once it is up: it hears connections.changed but
    // does not read the list again (it waits for the burst to end first), as a window a moment late.
    const late = await launchBrowser();
    const cli = await connectWebSocket(server.url, server.token);
    try {
      await late.page.clock.install();
      await late.page.goto(server.openUrl);
      await late.page.getByText('Host: connected').waitFor();
      await late.page.clock.pauseAt(Date.now() + 1000);
      const conn = await askingConnection(cli, sshd, 'saved-just-now');
      const opening = failure(cli.call('ssh.open', { connectionId: conn.id }));
      const dialog = late.page.getByRole('dialog', { name: /^Login to / });
      await dialog.waitFor({ timeout: 20_000 });
      expect(await dialog.getByRole('heading', { name: /^Login to / }).innerText()).toBe(`Login to saved-just-now (${sshd.host})`);
      expect(await dialog.innerText()).toContain(`saved-just-now (${sshd.host}) asks:`);
      // Not yet in the window's list: the name came with the prompt.
      expect(await late.page.getByRole('treeitem', { name: /^saved-just-now, SSH/ }).count()).toBe(0);
      cli.close();
      await opening;
    } finally {
      cli.close();
      await late.close();
    }
  });

  it('the login card of an open whose caller goes away (a CLI) is taken down at once', async () => {
    const cli = await connectWebSocket(server.url, server.token);
    try {
      await cli.call('hostkeys.trust', { kind: 'ssh', host: sshd.host, port: sshd.port, keyType: sshd.hostKeyType, fingerprint: sshd.hostKeyFingerprint });
      const conn = await askingConnection(cli, sshd, 'asked-elsewhere');
      const opening = failure(cli.call('ssh.open', { connectionId: conn.id }));
      // Every window shows the server's question, whoever asked to connect.
      await loginDialog().waitFor({ timeout: 20_000 });
      // The card names the connection at once: the prompt says which it is.
      expect(await loginDialog().innerText()).toContain(`asked-elsewhere (${sshd.host}) asks:`);
      cli.close();
      await opening;
      // The prompt would wait 120 s for an answer nobody can use: its card goes now.
      await loginDialog().waitFor({ state: 'detached', timeout: 10_000 });
    } finally {
      cli.close();
    }
  });

  it('a tab closed while its open still connects gives the open up: no login card comes, no session, no login on the server', async () => {
    // A far server: its login prompt comes several round trips after the connection is made, and
    // the tab is closed before its card comes.
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
      expect(await anyLoginCard().count()).toBe(0); // still connecting: its card has not come yet
      await page.getByRole('button', { name: 'Close far-away' }).click();

      // Given up on the host: the connection to the server ends now, not when the prompt it would
      // have shown (for a tab that is gone) timed out.
      await until('the login connection closed on the server', () => connections() === before, 20_000);
      expect(await loginDialog().count()).toBe(0);
      expect(await anyLoginCard().count()).toBe(0);
      expect((await cli.call('sessions.list')).some((s) => s.connectionId === connectionId)).toBe(false);
      expect(logins()).toBe(loginsBefore);
    } finally {
      cli.close();
      await far.close();
    }
  });
});

describe('several windows', () => {
  it("another window's tab's login prompt is asked in that tab only, never over this window, and withdrawn when that window closes; the CLI's is asked in both", async () => {
    const cli = await connectWebSocket(server.url, server.token);
    cli.subscribe(['ssh.prompt']);
    const asked: EventPayload<'ssh.prompt'>[] = [];
    const withdrawn: string[] = [];
    cli.on('ssh.prompt', (p) => asked.push(p));
    cli.on('ssh.prompt_closed', (p) => withdrawn.push(p.promptId));
    const other = await browser.context.newPage();
    try {
      await cli.call('hostkeys.trust', { kind: 'ssh', host: sshd.host, port: sshd.port, keyType: sshd.hostKeyType, fingerprint: sshd.hostKeyFingerprint });
      const tabs = await askingConnection(cli, sshd, 'asked-in-other-tab');
      const cliOnly = await askingConnection(cli, sshd, 'asked-by-cli');
      await other.goto(server.url);
      await other.getByText('Host: connected').waitFor();
      const before = sshd.heldConnections();

      // The other window's tab connects and asks its login in place.
      await other.getByRole('treeitem', { name: /^asked-in-other-tab, SSH/ }).dblclick();
      await other.locator('.tab-panel:visible').getByRole('alertdialog', { name: /^Login to asked-in-other-tab/ }).waitFor({ timeout: 20_000 });
      const tabPrompt = asked.find((p) => p.connectionId === tabs.id);
      if (!tabPrompt) throw new Error('no ssh.prompt for asked-in-other-tab');
      expect(tabPrompt.promptTag).toBeDefined();

      // A login the CLI starts next: this window hears it after the tab's, and asks it (and only
      // it) over the window, as the other window does beside its tab's card.
      const opening = failure(cli.call('ssh.open', { connectionId: cliOnly.id }));
      for (const win of [page, other]) {
        const dialog = win.getByRole('dialog', { name: /^Login to / });
        await dialog.waitFor({ timeout: 20_000 });
        expect(await dialog.getByRole('heading', { name: /^Login to / }).innerText()).toBe(`Login to asked-by-cli (${sshd.host})`);
      }
      expect(await anyLoginCard().count()).toBe(0);
      // The CLI goes: its login is given up, and its dialog leaves both windows; nothing takes its place here.
      cli.close();
      await opening;
      await other.getByRole('dialog', { name: /^Login to / }).waitFor({ state: 'detached', timeout: 10_000 });
      await loginDialog().waitFor({ state: 'detached', timeout: 10_000 });
      expect(await loginDialog().count()).toBe(0);
      expect(withdrawn).not.toContain(tabPrompt.promptId);
      expect(await other.locator('.tab-panel:visible').getByRole('alertdialog', { name: /^Login to asked-in-other-tab/ }).count()).toBe(1);

      // The window whose tab asks closes: its connect is given up, the prompt withdrawn, and the
      // login's connection to the server ends; this window showed it at no point.
      const watcher = await connectWebSocket(server.url, server.token);
      try {
        watcher.subscribe(['ssh.prompt']);
        const gone: string[] = [];
        watcher.on('ssh.prompt_closed', (p) => gone.push(p.promptId));
        await other.close();
        await until('the prompt withdrawn', () => gone.includes(tabPrompt.promptId), 10_000);
        await until('the login connection closed on the server', () => sshd.heldConnections() === before, 20_000);
        expect((await watcher.call('sessions.list')).some((s) => s.connectionId === tabs.id)).toBe(false);
      } finally {
        watcher.close();
      }
      expect(await loginDialog().count()).toBe(0);
      expect(await anyLoginCard().count()).toBe(0);
    } finally {
      cli.close();
      if (!other.isClosed()) await other.close();
    }
  });
});
