/**
 * Connections, tabs and the terminal pane's cards, in real Chromium against a real sshd: the
 * connection form refuses what could never connect, on its fields; the jump-host picker tells two
 * hops to one host apart; Cancel on a question a Reconnect asked keeps the tab; a tab whose saved
 * connection was deleted says so instead of offering a Reconnect that cannot work; a renamed tab
 * keeps its name across a reload; closing a running tab asks first (and can be told not to); and a
 * tab closed while it still connects gives its connect up.
 * The connections are saved (and the vault set up) before the page opens; each test opens the
 * tabs it needs, so each can run alone (`-t`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Locator, Page } from 'playwright-core';
import type { ContractClient } from '../../src-main/common/client.js';
import { type AppWithSshd, startAppWithSshd } from '../fixtures/app-with-sshd.js';
import { reloadApp } from '../fixtures/browser.js';
import { type DelayProxy, startDelayProxy } from '../fixtures/delay-proxy.js';
import { freePort } from '../fixtures/net.js';
import { type SshdHandle, savePasswordConnection } from '../fixtures/sshd.js';
import { activeSessionId as sessionInFront, terminalText as textOf, typeAndSee as typeIn } from '../fixtures/terminal-page.js';

let app: AppWithSshd;
let sshd: SshdHandle;
let page: Page;
let api: ContractClient;
/** sshd a quarter of a second away each way: connecting takes seconds, time to close the tab first. */
let distant: DelayProxy;

beforeAll(async () => {
  app = await startAppWithSshd({
    // The question before closing a running tab is on, as it is for a person (tests elsewhere turn it off).
    server: { settings: { 'ui.confirmCloseRunningTab': true } },
    beforeOpen: saveConnections,
  });
  page = app.page;
  await row('web02').waitFor();
});

afterAll(async () => {
  await app?.stop();
  await distant?.close();
});

/** The connections the tests open, saved (the vault set up with a key file) before the page loads. */
async function saveConnections(host: { sshd: SshdHandle; api: ContractClient }): Promise<void> {
  ({ sshd, api } = host);
  await api.call('vault.init', { protection: 'keyfile' });
  // Jump hosts to pick from: two on one host, on different ports, and one on an IPv6 address.
  const bastion = await api.call('connections.create', { name: 'bastion', kind: 'ssh', host: '10.9.8.7', username: 'ops', authMethod: 'agent' });
  // Goes through bastion: bastion cannot be deleted while it does.
  await api.call('connections.create', { name: 'behind bastion', kind: 'ssh', host: '10.9.8.8', username: 'ops', authMethod: 'agent', jumpHostId: bastion.id });
  await api.call('connections.create', { name: 'bastion alt', kind: 'ssh', host: '10.9.8.7', port: 2222, username: 'ops', authMethod: 'agent' });
  await api.call('connections.create', { name: 'v6 hop', kind: 'ssh', host: 'fd00::7', port: 2200, username: 'ops', authMethod: 'agent' });
  // A connection whose password is not saved: a new tab asks for it, and so does each Reconnect.
  await api.call('connections.create', { name: 'nopw', kind: 'ssh', host: sshd.host, port: sshd.port, username: sshd.users.password.username, authMethod: 'password' });
  await savePasswordConnection(api, sshd, 'doomed');
  await savePasswordConnection(api, sshd, 'gone elsewhere');
  await savePasswordConnection(api, sshd, 'web01');
  await savePasswordConnection(api, sshd, 'web02');
  // Nothing listens on its port: its tab cannot open.
  await api.call('connections.create', { name: 'dead end', kind: 'ssh', host: sshd.host, port: await freePort(), username: 'nobody', authMethod: 'agent' });
  distant = await startDelayProxy(sshd.port, 250);
  await api.call('hostkeys.trust', { kind: 'ssh', host: sshd.host, port: distant.port, keyType: sshd.hostKeyType, fingerprint: sshd.hostKeyFingerprint });
  const { username, password } = sshd.users.password;
  await api.call('connections.create', { name: 'far away', kind: 'ssh', host: sshd.host, port: distant.port, username, authMethod: 'password', secrets: { password } });
}

const tree = () => page.getByRole('tree', { name: 'Saved connections' });
const row = (name: string) => tree().getByRole('treeitem', { name: new RegExp(`^${name}, SSH`) });
const visiblePanel = () => page.locator('.tab-panel:visible');
const banner = () => visiblePanel().locator('.pane-banner.warn');
const tabs = () => page.locator('.tab');
const tabTitles = () => page.locator('.tab .tab-title').allInnerTexts();

const terminalText = (sessionId: string) => textOf(page, sessionId);
const activeSessionId = () => sessionInFront(page);

async function waitOpen(): Promise<void> {
  await expect.poll(() => page.locator('.tab.active').getAttribute('class'), { timeout: 20_000 }).toContain('open');
}

const typeAndSee = (sessionId: string, command: string, line: string) => typeIn(page, sessionId, command, line);

function hasFocus(el: Locator): Promise<boolean> {
  return el.evaluate((node) => node === document.activeElement);
}

const terminalHasFocus = () => page.evaluate(() => document.activeElement?.closest('.tab-panel .xterm') != null);

async function openNewConnectionDialog(): Promise<Locator> {
  await page.locator('.connections .panel-head').getByRole('button', { name: 'New connection' }).click();
  return page.getByRole('dialog', { name: 'New connection' });
}

/** The error shown under the dialog's field that holds `control` (an input, a textarea). */
const fieldError = (dialog: Locator, control: string) => dialog.locator('.field', { has: page.locator(control) }).locator('.field-error');

describe('the connection form', () => {
  it('refuses on its field, in words, an SSH connection without a user name, the key method without a key, and pasted text that is no private key; a real key saves and connects', async () => {
    const dialog = await openNewConnectionDialog();
    await dialog.locator('input[name=name]').fill('keyed');
    await dialog.locator('input[name=host]').fill(sshd.host);
    await dialog.locator('input[name=port]').fill(String(sshd.port));
    await dialog.locator('input[name=password]').fill('some password');
    await dialog.getByRole('button', { name: 'Create' }).click();

    // No user name: said under User, which takes the keys; nothing is saved.
    const userError = fieldError(dialog, 'input[name=username]');
    await expect.poll(() => userError.count(), { timeout: 10_000 }).toBe(1);
    expect(await userError.innerText()).toMatch(/^Enter the user name to log in as/);
    expect(await dialog.locator('input[name=username]').getAttribute('aria-invalid')).toBe('true');
    await expect.poll(() => hasFocus(dialog.locator('input[name=username]'))).toBe(true);

    // The key method with no key: said under the key file field.
    await dialog.locator('input[name=username]').fill(sshd.users.key.username);
    await dialog.locator('select[name=authMethod]').selectOption('key');
    await dialog.getByRole('button', { name: 'Create' }).click();
    const keyFileError = fieldError(dialog, 'input[name=keyPath]');
    await expect.poll(() => keyFileError.count(), { timeout: 10_000 }).toBe(1);
    expect(await keyFileError.innerText()).toContain('Private key authentication needs a key');
    expect(await userError.count()).toBe(0);

    // Pasted text that is not a private key, and the public half of one: said under the pasted key.
    const pastedError = fieldError(dialog, 'textarea[name=privateKey]');
    await dialog.locator('textarea[name=privateKey]').fill('correct horse battery staple');
    await dialog.getByRole('button', { name: 'Create' }).click();
    await expect.poll(() => pastedError.count(), { timeout: 10_000 }).toBe(1);
    expect(await pastedError.innerText()).toMatch(/^This is not a private key\. Paste the whole key file/);
    expect(await keyFileError.count()).toBe(0);
    await expect.poll(() => hasFocus(dialog.locator('textarea[name=privateKey]'))).toBe(true);

    const publicKey = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOFsWr7zMYdXhsr1O0m/F4BjyhFGWDAyVvOU8sJ3Yx6k wraith@test';
    await dialog.locator('textarea[name=privateKey]').fill(publicKey);
    await dialog.getByRole('button', { name: 'Create' }).click();
    await expect.poll(() => pastedError.innerText()).toMatch(/^This is a public key/);
    expect(await tree().getByRole('treeitem', { name: /^keyed/ }).count()).toBe(0);

    // The real private key saves, and logs in.
    await dialog.locator('textarea[name=privateKey]').fill(sshd.users.key.privateKey);
    await dialog.getByRole('button', { name: 'Create' }).click();
    await dialog.waitFor({ state: 'detached' });
    await row('keyed').dblclick();
    await waitOpen();
    await typeAndSee(await activeSessionId(), 'echo "$(whoami)-$((6*7))"', `${sshd.users.key.username}-42`);
  });

  it('shows the port of each jump host that is not on port 22, so two hops to one host differ', async () => {
    const dialog = await openNewConnectionDialog();
    const options = await dialog.locator('select[name=jumpHostId] option').allInnerTexts();
    expect(options).toEqual(
      expect.arrayContaining([
        'bastion (ops@10.9.8.7)',
        'bastion alt (ops@10.9.8.7:2222)',
        'v6 hop (ops@[fd00::7]:2200)',
        `web01 (${sshd.users.password.username}@${sshd.host}:${sshd.port})`,
      ]),
    );
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
  });
});

describe('the tree filter', () => {
  it('matches the address as the rows show it (user@host:port)', async () => {
    const filter = page.getByRole('searchbox', { name: 'Filter connections' });
    await filter.fill('ops@10.9.8.7');
    await expect.poll(() => tree().getByRole('treeitem').filter({ hasText: 'ops@' }).allInnerTexts()).toHaveLength(2);
    expect(await row('bastion').count()).toBe(1);
    expect(await row('bastion alt').count()).toBe(1);
    await filter.fill('ops@10.9.8.7:2222');
    await expect.poll(() => row('bastion').count()).toBe(0);
    expect(await row('bastion alt').count()).toBe(1);
    await filter.fill('');
    await row('web02').waitFor();
  });

  it('shows the jump host a connection goes through on its row, by its name, and finds it by that', async () => {
    const behind = row('behind bastion');
    expect(await behind.locator('.sub').innerText()).toBe('ops@10.9.8.8 via bastion');
    expect(await behind.getAttribute('aria-label')).toBe('behind bastion, SSH ops@10.9.8.8 via bastion');
    const filter = page.getByRole('searchbox', { name: 'Filter connections' });
    await filter.fill('via bastion');
    await expect.poll(() => tree().getByRole('treeitem').allInnerTexts()).toHaveLength(1);
    expect(await behind.count()).toBe(1);
    await filter.fill('');
    // Renamed elsewhere, the jump host is named anew on the rows that go through it.
    const bastion = (await api.call('connections.list', { query: 'bastion' })).connections.find((c) => c.name === 'bastion');
    if (!bastion) throw new Error('bastion is not saved');
    await api.call('connections.update', { id: bastion.id, patch: { name: 'gateway' } });
    await expect.poll(() => behind.locator('.sub').innerText()).toBe('ops@10.9.8.8 via gateway');
    await api.call('connections.update', { id: bastion.id, patch: { name: 'bastion' } });
    await expect.poll(() => behind.locator('.sub').innerText()).toBe('ops@10.9.8.8 via bastion');
  });
});

describe('deleting a jump host', () => {
  it('says which connections go through it instead of asking, and keeps it', async () => {
    await row('bastion').click({ button: 'right' });
    await page.getByRole('menuitem', { name: 'Delete…' }).click();
    await page.locator('.toasts .toast', { hasText: '"bastion" is the jump host of "behind bastion": give it another jump host (or none) before deleting it.' }).waitFor();
    expect(await page.getByRole('dialog', { name: 'Delete connection' }).count()).toBe(0);
    expect(await row('bastion').count()).toBe(1);
    expect((await api.call('connections.list')).connections.some((c) => c.name === 'bastion')).toBe(true);
  });
});

describe('Cancel on a question a Reconnect asked', () => {
  it('goes back to "Disconnected — Reconnect" with the scrollback kept, for the password, unknown and changed host key cards; a tab that never opened still closes', async () => {
    // A connection whose password is not saved: the new tab asks for it, and so does each Reconnect.
    await row('nopw').dblclick();
    const card = (name: RegExp) => visiblePanel().getByRole('alertdialog', { name });
    const passwordCard = () => card(/^Password for /);
    await passwordCard().waitFor({ timeout: 20_000 });
    await passwordCard().getByLabel('Password', { exact: true }).fill(sshd.users.password.password);
    await page.keyboard.press('Enter');
    await waitOpen();
    const id = await activeSessionId();
    await typeAndSee(id, 'echo "kept-$((40+2))"', 'kept-42');
    const count = await tabs().count();

    const dropped = async () => {
      sshd.dropConnections();
      await banner().getByRole('button', { name: 'Reconnect' }).waitFor({ timeout: 20_000 });
    };
    /** Back where Reconnect was: the same tab, its banner, its output, the keys in the terminal. */
    const backToDisconnected = async (why: string) => {
      await banner().getByRole('button', { name: 'Reconnect' }).waitFor();
      expect(await banner().innerText()).toContain(`Disconnected — Not reconnected: ${why}.`);
      expect(await tabs().count()).toBe(count);
      expect(await page.locator('.tab.active .tab-title').innerText()).toBe('nopw');
      expect(await visiblePanel().getByRole('alertdialog').count()).toBe(0);
      expect(await terminalText(id)).toContain('kept-42');
      await expect.poll(terminalHasFocus).toBe(true);
    };

    // The password card, by its Cancel button.
    await dropped();
    await banner().getByRole('button', { name: 'Reconnect' }).click();
    await passwordCard().waitFor({ timeout: 20_000 });
    expect(await passwordCard().getByRole('button', { name: 'Close tab' }).count()).toBe(1);
    expect(await passwordCard().getByRole('button', { name: 'Cancel' }).count()).toBe(1);
    await passwordCard().getByRole('button', { name: 'Cancel' }).click();
    await backToDisconnected('no password was given');

    // The unknown host key card (the key was forgotten meanwhile), by Escape.
    await api.call('hostkeys.forget', { kind: 'ssh', host: sshd.host, port: sshd.port });
    await banner().getByRole('button', { name: 'Reconnect' }).click();
    const unknown = card(/^First connection to 127\.0\.0\.1/);
    await unknown.waitFor({ timeout: 20_000 });
    await expect.poll(() => hasFocus(unknown.getByRole('button', { name: 'Trust and connect' }))).toBe(true);
    await page.keyboard.press('Escape');
    await backToDisconnected("the server's host key was not trusted");

    // The changed host key card (another key is trusted for it: a well-formed fingerprint, not this server's), by its Cancel button.
    await api.call('hostkeys.trust', { kind: 'ssh', host: sshd.host, port: sshd.port, keyType: 'ssh-ed25519', fingerprint: `SHA256:${'0'.repeat(43)}` });
    await banner().getByRole('button', { name: 'Reconnect' }).click();
    const changed = card(/host key of 127\.0\.0\.1:\d+ has changed/);
    await changed.waitFor({ timeout: 20_000 });
    expect(await changed.getByRole('button', { name: 'Cancel' }).count()).toBe(1);
    await changed.getByRole('button', { name: 'Cancel' }).click();
    await backToDisconnected("the server's host key has changed");

    // Reconnect still works from there, in the same tab, with its output.
    await api.call('hostkeys.forget', { kind: 'ssh', host: sshd.host, port: sshd.port });
    await api.call('hostkeys.trust', { kind: 'ssh', host: sshd.host, port: sshd.port, keyType: sshd.hostKeyType, fingerprint: sshd.hostKeyFingerprint });
    await banner().getByRole('button', { name: 'Reconnect' }).click();
    await passwordCard().waitFor({ timeout: 20_000 });
    await passwordCard().getByLabel('Password', { exact: true }).fill(sshd.users.password.password);
    await page.keyboard.press('Enter');
    await waitOpen();
    expect(await activeSessionId()).toBe(id);
    await typeAndSee(id, 'echo "again-$((40+3))"', 'again-43');
    expect(await terminalText(id)).toContain('kept-42');

    // A tab that never opened still closes on Cancel: it has nothing to go back to.
    await api.call('hostkeys.forget', { kind: 'ssh', host: sshd.host, port: sshd.port });
    await row('nopw').dblclick();
    const fresh = card(/^First connection to 127\.0\.0\.1/);
    await fresh.waitFor({ timeout: 20_000 });
    expect(await fresh.getByRole('button', { name: 'Close tab' }).count()).toBe(0);
    await fresh.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => tabs().count()).toBe(count);
    await api.call('hostkeys.trust', { kind: 'ssh', host: sshd.host, port: sshd.port, keyType: sshd.hostKeyType, fingerprint: sshd.hostKeyFingerprint });
  });
});

describe('a tab whose saved connection was deleted', () => {
  it('keeps its name, says the connection was deleted instead of offering Reconnect, and never shows the connection id — deleted here or elsewhere', async () => {
    const list = (await api.call('connections.list')).connections;
    const idOf = (name: string) => list.find((c) => c.name === name)?.id ?? '';
    const sessionOf: Record<string, string> = {};
    for (const name of ['doomed', 'gone elsewhere']) {
      await row(name).dblclick();
      await waitOpen();
      sessionOf[name] = await activeSessionId();
      await typeAndSee(sessionOf[name], `echo "${name.replace(' ', '-')}-$((6*7))"`, `${name.replace(' ', '-')}-42`);
    }
    const tabOf = (name: string) => page.locator('.tab', { has: page.locator('.tab-title', { hasText: new RegExp(`^${name}$`) }) });

    // Deleted from the list here: the question says what becomes of its tab.
    await row('doomed').click({ button: 'right' });
    await page.getByRole('menuitem', { name: 'Delete…' }).click();
    const confirm = page.getByRole('dialog', { name: 'Delete connection' });
    expect(await confirm.innerText()).toContain('Its open tab stays open until closed, but cannot reconnect.');
    await confirm.getByRole('button', { name: 'Delete' }).click();
    await row('doomed').waitFor({ state: 'detached' });
    // Deleted elsewhere (the CLI, another window): this window's list hears of it (connections.changed).
    await api.call('connections.delete', { id: idOf('gone elsewhere') });
    await row('gone elsewhere').waitFor({ state: 'detached' });

    sshd.dropConnections();
    await tabOf('doomed').click();
    await expect.poll(() => banner().innerText(), { timeout: 20_000 }).toContain('The saved connection doomed was deleted, so this tab cannot reconnect.');
    expect(await banner().getByRole('button', { name: 'Reconnect' }).count()).toBe(0);
    expect(await banner().getByRole('button', { name: 'Close tab' }).count()).toBe(1);
    await expect.poll(() => terminalText(sessionOf.doomed ?? '')).toContain('this tab cannot reconnect');
    // Enter in the terminal, which reconnects a dropped tab, does nothing here; the tab menu offers neither Reconnect nor Duplicate.
    await visiblePanel().locator('.xterm').click();
    await page.keyboard.press('Enter');
    await tabOf('doomed').click({ button: 'right' });
    const menu = page.getByRole('menu', { name: 'Tab doomed' });
    await menu.waitFor();
    expect(await menu.getByRole('menuitem', { name: 'Reconnect', exact: true }).count()).toBe(0);
    expect(await menu.getByRole('menuitem', { name: 'Duplicate tab' }).isDisabled()).toBe(true);
    await page.keyboard.press('Escape');
    await menu.waitFor({ state: 'detached' });
    expect(await banner().innerText()).toContain('was deleted');

    // The one deleted elsewhere says the same, without offering a Reconnect that could only fail.
    await tabOf('gone elsewhere').click();
    await expect.poll(() => banner().innerText(), { timeout: 20_000 }).toContain('The saved connection gone elsewhere was deleted, so this tab cannot reconnect.');
    expect(await banner().getByRole('button', { name: 'Reconnect' }).count()).toBe(0);

    const shown = await page.locator('body').innerText();
    for (const name of ['doomed', 'gone elsewhere']) expect(shown).not.toContain(idOf(name));
    expect(shown).not.toContain('No connection with id');
    expect(await tabTitles()).toEqual(expect.arrayContaining(['doomed', 'gone elsewhere']));

    // A dropped tab closes without a question.
    const count = await tabs().count();
    await banner().getByRole('button', { name: 'Close tab' }).click();
    await tabOf('doomed').getByRole('button', { name: 'Close doomed' }).click();
    await expect.poll(() => tabs().count()).toBe(count - 2);
    expect(await page.getByRole('dialog').count()).toBe(0);
  });
});

describe('a renamed tab', () => {
  it('keeps the name it was given across a page reload; the others keep theirs', async () => {
    await row('web01').dblclick();
    await waitOpen();
    const id = await activeSessionId();
    await page.locator('.tab.active').click({ button: 'right' });
    await page.getByRole('menuitem', { name: 'Rename tab…' }).click();
    const rename = page.getByRole('dialog', { name: 'Rename tab' });
    // It opens with the tab's name selected whole, so typing replaces it (not appends to it).
    const box = rename.getByRole('textbox');
    const selectedWhole = () =>
      box.evaluate((el: HTMLInputElement) => el.value.length > 0 && document.activeElement === el && el.selectionStart === 0 && el.selectionEnd === el.value.length);
    await expect.poll(selectedWhole).toBe(true);
    await page.keyboard.type('prod shell');
    expect(await box.inputValue()).toBe('prod shell');
    await rename.getByRole('button', { name: 'Rename' }).click();
    await expect.poll(tabTitles).toContain('prod shell');
    const before = await tabTitles();

    await reloadApp(page);
    await expect.poll(async () => [...(await tabTitles())].sort()).toEqual([...before].sort());
    // The renamed tab is the same session, re-attached.
    await page.locator('.tab', { hasText: 'prod shell' }).click();
    expect(await activeSessionId()).toBe(id);
  });
});

describe('closing a running tab', () => {
  it('asks first, with Cancel focused, whether by Ctrl+Shift+W, the × or a middle click', async () => {
    await row('web02').dblclick();
    await waitOpen();
    const id = await activeSessionId();
    const count = await tabs().count();
    const question = page.getByRole('dialog', { name: 'Close web02?' });

    await visiblePanel().locator('.xterm').click();
    await page.keyboard.press('Control+Shift+W');
    await expect.poll(() => question.count(), { timeout: 10_000 }).toBe(1);
    expect(await question.innerText()).toContain('The SSH session to web02 is running');
    expect(await question.innerText()).toContain('turns this question off');
    await expect.poll(() => hasFocus(question.getByRole('button', { name: 'Cancel' }))).toBe(true);
    // Enter right after the shortcut keeps the tab.
    await page.keyboard.press('Enter');
    await question.waitFor({ state: 'detached' });
    expect(await tabs().count()).toBe(count);
    await expect.poll(terminalHasFocus).toBe(true);
    await typeAndSee(id, 'echo "still-$((6*7))"', 'still-42');

    await page.locator('.tab.active').getByRole('button', { name: 'Close web02' }).click();
    await question.waitFor();
    await page.keyboard.press('Escape');
    await question.waitFor({ state: 'detached' });
    expect(await tabs().count()).toBe(count);

    await page.locator('.tab.active').click({ button: 'middle' });
    await question.waitFor();
    await question.getByRole('button', { name: 'Close tab' }).click();
    await expect.poll(() => tabs().count()).toBe(count - 1);
    expect(await page.locator('.tab', { hasText: 'web02' }).count()).toBe(0);
    await expect.poll(async () => (await api.call('sessions.list')).some((s) => s.id === id)).toBe(false);
  });

  it('does not ask for a tab whose connection dropped, nor at all once turned off in Settings', async () => {
    await row('web01').dblclick();
    await waitOpen();
    let count = await tabs().count();
    sshd.dropConnections();
    await banner().getByRole('button', { name: 'Reconnect' }).waitFor({ timeout: 20_000 });
    await visiblePanel().locator('.xterm').click();
    await page.keyboard.press('Control+Shift+W');
    await expect.poll(() => tabs().count()).toBe(count - 1);
    expect(await page.getByRole('dialog').count()).toBe(0);

    await page.getByRole('button', { name: 'Settings' }).click();
    const settings = page.getByRole('dialog', { name: 'Settings' });
    const ask = settings.getByLabel('Ask before closing a tab whose session is running');
    expect(await ask.count()).toBe(1);
    expect(await ask.isChecked()).toBe(true);
    await ask.uncheck();
    await settings.getByRole('button', { name: 'Save' }).click();
    await settings.waitFor({ state: 'detached' });
    expect((await api.call('settings.get'))['ui.confirmCloseRunningTab']).toBe(false);

    await row('web01').dblclick();
    await waitOpen();
    count = await tabs().count();
    await page.locator('.tab.active').click({ button: 'middle' });
    await expect.poll(() => tabs().count()).toBe(count - 1);
    expect(await page.getByRole('dialog').count()).toBe(0);
    // Nor did the page log an error on the way.
    expect(app.browser.pageErrors.filter((e) => !/WebSocket connection to .* failed/.test(e))).toEqual([]);
  });
});

describe('a tab closed while it connects', () => {
  it('gives the connect up, instead of leaving a session running where no tab shows it', async () => {
    const connectionId = (await api.call('connections.list')).connections.find((c) => c.name === 'far away')?.id;
    const states: string[] = [];
    api.subscribe(['session.']);
    const off = api.on('session.changed', (s) => s.connectionId === connectionId && states.push(s.state));
    try {
      const count = await tabs().count();
      const before = distant.openConnections();
      await row('far away').dblclick();
      const tab = page.locator('.tab.active');
      await expect.poll(() => tab.locator('.tab-title').innerText()).toBe('far away');
      expect(await tab.getAttribute('class')).toContain('starting');
      await expect.poll(() => distant.openConnections()).toBe(before + 1); // the connect is under way
      // Nothing to lose yet: it closes without a question.
      await tab.getByRole('button', { name: 'Close far away' }).click();
      await expect.poll(() => tabs().count()).toBe(count);

      // The page cancels its ssh.open: the host drops the half-made connection, and no session
      // ever opens for the tab that is gone.
      await expect.poll(() => distant.openConnections(), { timeout: 20_000 }).toBe(before);
      expect(states).not.toContain('open');
      expect((await api.call('sessions.list')).filter((s) => s.connectionId === connectionId && s.state !== 'closed')).toEqual([]);
      expect(await page.locator('.tab', { hasText: 'far away' }).count()).toBe(0);
    } finally {
      off();
    }
  });
});

describe('a tab that could not open', () => {
  it('gives the keys to a failed tab\'s Try again when the tab comes back to the front, not to the terminal under its card', async () => {
    try {
      await row('dead end').dblclick();
      const failed = visiblePanel().getByRole('alert').filter({ hasText: 'Could not open dead end' });
      await failed.waitFor({ timeout: 20_000 });
      const tryAgain = failed.getByRole('button', { name: 'Try again' });
      await row('web02').dblclick();
      await waitOpen();
      await page.locator('.tab', { has: page.locator('.tab-title', { hasText: /^dead end$/ }) }).click();
      await expect.poll(() => hasFocus(tryAgain)).toBe(true);
    } finally {
      for (const title of ['dead end', 'web02']) {
        const tab = page.locator('.tab', { has: page.locator('.tab-title', { hasText: new RegExp(`^${title}$`) }) });
        if (await tab.count()) await tab.click({ button: 'middle' });
        const ask = page.getByRole('dialog', { name: `Close ${title}?` });
        if (await ask.count()) await ask.getByRole('button', { name: 'Close tab' }).click();
      }
    }
  });
});
