/**
 * The window in real Chromium against a real `wraith serve`: connections survive a host restart,
 * the paste import, field validation errors, and the panel shortcuts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Locator, Page } from 'playwright-core';
import { type TestBrowser, openApp } from '../fixtures/browser.js';
import { type WraithServer, startWraithServer } from '../fixtures/wraith-server.js';

let server: WraithServer;
let browser: TestBrowser;
let page: Page;

const SSH_CONFIG = `Host web-a
  HostName 10.1.0.1
  User alice
  Port 2222

Host db-b
  HostName db.internal
  ProxyJump web-a

Host *
  ServerAliveInterval 30
`;

function tree() {
  return page.getByRole('tree', { name: 'Saved connections' });
}

beforeAll(async () => {
  server = await startWraithServer();
  browser = await openApp(server.openUrl);
  page = browser.page;
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe('the Wraith window in browser mode', () => {
  it('opens with honest empty states and the host connected', async () => {
    // Each panel loads on its own after the socket opens ("Loading…" first), so wait for each
    // state to appear rather than reading the text once.
    await page.getByRole('status').filter({ hasText: 'Host: connected' }).waitFor();
    await tree().getByText('No saved connections yet.').waitFor();
    await page.locator('.status-bar').getByText('Vault: not set up').waitFor();
    await page.locator('.status-bar').getByText('Sessions: 0').waitFor();
    // The browser keeps Ctrl+Tab and Ctrl+W for itself: the welcome says so, and what works instead.
    expect(await page.locator('.welcome .shortcuts').innerText()).toContain('a browser keeps these keys: use ← / → on the focused tab strip');
    // Served cross-origin isolated, so small frames can take the shared mailbox (shared-mailbox.ts).
    expect(await page.evaluate(() => crossOriginIsolated && typeof Atomics.waitAsync === 'function')).toBe(true);
  });

  it('creates a group and a connection in it through the UI', async () => {
    await page.locator('.connections .panel-head').getByRole('button', { name: 'New group' }).click();
    const groupDialog = page.getByRole('dialog', { name: 'New group' });
    await groupDialog.getByLabel('Group name').fill('Production');
    await groupDialog.getByRole('button', { name: 'Create' }).click();
    await tree().getByRole('treeitem', { name: /^Production, group/ }).waitFor();

    await page.locator('.connections .panel-head').getByRole('button', { name: 'New connection' }).click();
    const dialog = page.getByRole('dialog', { name: 'New connection' });
    await dialog.locator('input[name=name]').fill('web01');
    await dialog.locator('input[name=host]').fill('10.0.0.5');
    await dialog.locator('input[name=username]').fill('deploy');
    await dialog.locator('select[name=authMethod]').selectOption('agent');
    await dialog.locator('select[name=groupId]').selectOption({ label: 'Production' });
    await dialog.locator('input[name=tags]').fill('prod, web');
    await dialog.getByRole('button', { name: 'Create' }).click();
    await dialog.waitFor({ state: 'detached' });

    const row = tree().getByRole('treeitem', { name: 'web01, SSH deploy@10.0.0.5' });
    await row.waitFor();
    expect(await row.getAttribute('aria-level')).toBe('2'); // inside the group
    expect(await tree().getByRole('treeitem', { name: /^Production, group, 1 connections/ }).count()).toBe(1);
  });

  it('shows validation errors on the fields the host rejected', async () => {
    await page.locator('.connections .panel-head').getByRole('button', { name: 'New connection' }).click();
    const dialog = page.getByRole('dialog', { name: 'New connection' });
    await dialog.locator('input[name=name]').fill('broken');
    await dialog.locator('input[name=host]').fill('bad host!');
    await dialog.locator('input[name=port]').fill('70000');
    await dialog.getByRole('button', { name: 'Create' }).click();

    const hostField = dialog.locator('.field', { has: page.locator('input[name=host]') });
    const portField = dialog.locator('.field', { has: page.locator('input[name=port]') });
    await hostField.locator('.field-error').waitFor();
    expect(await hostField.locator('.field-error').innerText()).toContain('A host name has letters');
    expect(await portField.locator('.field-error').innerText()).toBe('A port is a whole number from 1 to 65535.');
    expect(await dialog.locator('input[name=port]').getAttribute('aria-invalid')).toBe('true');
    expect(await dialog.locator('.field-error').count()).toBe(2); // the name was fine

    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect(await tree().getByRole('treeitem', { name: /^broken/ }).count()).toBe(0);
  });

  it('says what a port is when the port typed is not a number', async () => {
    await page.locator('.connections .panel-head').getByRole('button', { name: 'New connection' }).click();
    const dialog = page.getByRole('dialog', { name: 'New connection' });
    await dialog.locator('input[name=name]').fill('abc-port');
    await dialog.locator('input[name=host]').fill('10.0.0.6');
    await dialog.locator('input[name=port]').fill('abc');
    await dialog.getByRole('button', { name: 'Create' }).click();
    const portField = dialog.locator('.field', { has: page.locator('input[name=port]') });
    await portField.locator('.field-error').waitFor();
    expect(await portField.locator('.field-error').innerText()).toBe('A port is a whole number from 1 to 65535.');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect(await tree().getByRole('treeitem', { name: /^abc-port/ }).count()).toBe(0);
  });

  it('moves the user and port of "user@host:port" typed in Host into their own fields', async () => {
    await page.locator('.connections .panel-head').getByRole('button', { name: 'New connection' }).click();
    const dialog = page.getByRole('dialog', { name: 'New connection' });
    await dialog.locator('input[name=name]').fill('pasted');
    await dialog.locator('input[name=host]').fill('ops@10.0.0.7:2222');
    await dialog.locator('input[name=host]').press('Tab');
    expect(await dialog.locator('input[name=host]').inputValue()).toBe('10.0.0.7');
    expect(await dialog.locator('input[name=port]').inputValue()).toBe('2222');
    expect(await dialog.locator('input[name=username]').inputValue()).toBe('ops');
    // Saved straight from the field (Enter, no blur) it is split the same way.
    await dialog.locator('input[name=host]').fill('[::1]:2200');
    await dialog.locator('input[name=port]').fill('');
    await dialog.locator('input[name=host]').press('Enter');
    await dialog.waitFor({ state: 'detached' });
    const item = tree().getByRole('treeitem', { name: /^pasted, SSH/ });
    await item.waitFor();
    await item.click({ button: 'right' });
    await page.getByRole('menuitem', { name: /^Edit/ }).click();
    const edit = page.getByRole('dialog', { name: 'Edit pasted' });
    expect([await edit.locator('input[name=host]').inputValue(), await edit.locator('input[name=port]').inputValue()]).toEqual(['::1', '2200']);
    await edit.getByRole('button', { name: 'Cancel' }).click();
    await edit.waitFor({ state: 'detached' });
    await item.click({ button: 'right' });
    await page.getByRole('menuitem', { name: 'Delete…' }).click();
    await page.getByRole('dialog', { name: 'Delete connection' }).getByRole('button', { name: 'Delete' }).click();
    await item.waitFor({ state: 'detached' });
  });

  it('refuses a blank font family and a blank scrollback in Settings on their fields, in words, and saves neither', async () => {
    const openSettings = async () => {
      await page.getByRole('button', { name: 'Settings' }).click();
      return page.getByRole('dialog', { name: 'Settings' });
    };
    const fieldError = (dialog: Locator, name: string) =>
      dialog.locator('.field', { has: page.locator(`input[name=${name}]`) }).locator('.field-error');

    const dialog = await openSettings();
    const family = await dialog.locator('input[name=fontFamily]').inputValue();
    const scrollback = await dialog.locator('input[name=scrollback]').inputValue();
    expect(family).not.toBe('');
    await dialog.locator('input[name=fontFamily]').fill('   ');
    await dialog.locator('input[name=scrollback]').fill('');
    await dialog.getByRole('button', { name: 'Save' }).click();
    // Refused: the dialog stays, saying why on the field.
    await expect.poll(() => fieldError(dialog, 'fontFamily').count(), { timeout: 10_000 }).toBe(1);
    expect(await fieldError(dialog, 'fontFamily').innerText()).toContain('Name at least one font');
    expect(await fieldError(dialog, 'scrollback').innerText()).toBe('Must be a whole number from 0 to 200000.');
    // The default list stays in sight in the cleared field.
    expect(await dialog.locator('input[name=fontFamily]').getAttribute('placeholder')).toBe(family);

    // Numbers out of range or not numbers: the range, not zod's wording.
    await dialog.locator('input[name=fontFamily]').fill(family);
    await dialog.locator('input[name=fontSize]').fill('abc');
    await dialog.locator('input[name=scrollback]').fill('-5');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => fieldError(dialog, 'fontSize').innerText()).toBe('Must be a whole number from 6 to 48.');
    expect(await fieldError(dialog, 'scrollback').innerText()).toBe('Must be a whole number from 0 to 200000.');
    expect(await fieldError(dialog, 'fontFamily').count()).toBe(0);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });

    const again = await openSettings();
    expect(await again.locator('input[name=fontFamily]').inputValue()).toBe(family);
    expect(await again.locator('input[name=scrollback]').inputValue()).toBe(scrollback);
    await again.getByRole('button', { name: 'Cancel' }).click();
    await again.waitFor({ state: 'detached' });
  });

  it('imports pasted ~/.ssh/config text', async () => {
    await page.locator('.connections .panel-head').getByRole('button', { name: 'Import from SSH config' }).click();
    const dialog = page.getByRole('dialog', { name: 'Import from SSH config' });
    await dialog.locator('textarea[name=sshConfigText]').fill(SSH_CONFIG);
    await dialog.getByRole('button', { name: 'Import pasted text' }).click();
    await dialog.locator('.import-result').waitFor();
    expect(await dialog.locator('.import-result').innerText()).toContain('Imported 2 connections');
    await dialog.getByRole('button', { name: 'Close' }).first().click();

    await tree().getByRole('treeitem', { name: 'web-a, SSH alice@10.1.0.1:2222' }).waitFor();
    await tree().getByRole('treeitem', { name: /^db-b, SSH/ }).waitFor();

    // The filter box narrows the tree.
    await page.getByLabel('Filter connections').fill('alice');
    await expect.poll(() => tree().getByRole('treeitem').count()).toBe(1);
    await page.getByLabel('Filter connections').fill('');
    await expect.poll(() => tree().getByRole('treeitem').count()).toBe(4);
  });

  it('moves through the tree with the keyboard', async () => {
    await tree().getByRole('treeitem', { name: /^Production, group/ }).focus();
    await page.keyboard.press('ArrowDown');
    const focused = await page.evaluate(() => document.activeElement?.getAttribute('aria-label'));
    expect(focused).toBe('web01, SSH deploy@10.0.0.5');
    await page.keyboard.press('ArrowLeft'); // back to the parent group
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toMatch(/^Production, group/);
    await page.keyboard.press('ArrowLeft'); // collapse it
    expect(await tree().getByRole('treeitem', { name: /^Production, group/ }).getAttribute('aria-expanded')).toBe('false');
    expect(await tree().getByRole('treeitem', { name: /^web01/ }).count()).toBe(0);
    await page.keyboard.press('ArrowRight');
    await tree().getByRole('treeitem', { name: /^web01/ }).waitFor();
  });

  it('toggles the XO panel with Ctrl+Shift+K and the local shell panel with Ctrl+Shift+G', async () => {
    await page.locator('.welcome').click();
    const xo = page.getByRole('complementary', { name: 'XO copilot' });
    expect(await xo.count()).toBe(0);
    await page.keyboard.press('Control+Shift+K');
    await xo.waitFor();
    await xo.getByRole('radiogroup', { name: 'XO control mode' }).waitFor();
    expect(await xo.getByRole('heading', { name: 'XO' }).count()).toBe(1);
    expect(Math.round((await xo.boundingBox())?.width ?? 0)).toBe(320);
    await page.keyboard.press('Control+Shift+K');
    await xo.waitFor({ state: 'detached' });

    const shell = page.getByRole('region', { name: 'Local shell' });
    await page.keyboard.press('Control+Shift+G');
    await shell.waitFor();
    await shell.locator('.empty').waitFor();
    await page.keyboard.press('Control+Shift+G');
    await shell.waitFor({ state: 'detached' });
  });

  it('stays usable in a small window: the welcome scrolls under the local shell panel instead of covering it, the XO fits', async () => {
    await page.setViewportSize({ width: 600, height: 500 });
    try {
      const shell = page.getByRole('region', { name: 'Local shell' });
      await page.keyboard.press('Control+Shift+G');
      await shell.waitFor();
      // A trial click fails when another element would take the click.
      await shell.getByRole('button', { name: 'Open as tab' }).click({ trial: true, timeout: 3000 });
      await shell.getByRole('button', { name: /^Launch/ }).last().click({ trial: true, timeout: 3000 });
      const bar = await page.locator('.status-bar').boundingBox();
      expect(bar?.height).toBeLessThanOrEqual(30); // one line
      await page.keyboard.press('Control+Shift+G');
      await shell.waitFor({ state: 'detached' });

      // The XO fits beside the connections: every column gives way, none is cut off at the edge.
      await page.keyboard.press('Control+Shift+K');
      const xo = page.getByRole('complementary', { name: 'XO copilot' });
      await xo.waitFor();
      const box = await xo.boundingBox();
      expect((box?.x ?? 0) + (box?.width ?? 0)).toBeLessThanOrEqual(600.5);
      expect(box?.width).toBeGreaterThanOrEqual(240);
      await page.keyboard.press('Control+Shift+K');
      await xo.waitFor({ state: 'detached' });
    } finally {
      await page.setViewportSize({ width: 1400, height: 860 });
    }
  });

  it('sets up the vault with a master password from the status bar', async () => {
    await page.locator('.status-bar').getByRole('button', { name: /Vault: not set up/ }).click();
    const dialog = page.getByRole('dialog', { name: 'Set up the vault' });
    await dialog.getByLabel('No master password: keep the key in a file instead').check();
    expect(await dialog.getByRole('alert').innerText()).toContain('Anyone who can read your files');
    await dialog.getByLabel('No master password: keep the key in a file instead').uncheck();
    await dialog.locator('input[name=master-password]').fill('short');
    await dialog.locator('input[name=master-password-confirm]').fill('short');
    await dialog.getByRole('button', { name: 'Set master password' }).click();
    await expect.poll(() => dialog.getByRole('alert').innerText()).toBe('Use at least 8 characters.');
    await dialog.locator('input[name=master-password]').fill('correct horse battery');
    await dialog.locator('input[name=master-password-confirm]').fill('correct horse battery');
    await dialog.getByRole('button', { name: 'Set master password' }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.locator('.status-bar').getByText('Vault: unlocked').waitFor();
  });

  it('keeps groups and connections across a host restart', async () => {
    await page.screenshot({ path: '/tmp/wraith-main.png' });
    await server.restart();
    // The page still points at the old host: it says so while it retries.
    const banner = page.getByRole('alert').filter({ hasText: 'Disconnected from Wraith — reconnecting' });
    await banner.waitFor();

    await page.goto(server.openUrl); // a new launch prints a new URL (port and token)
    await page.getByText('Host: connected').waitFor();
    await tree().getByRole('treeitem', { name: 'web01, SSH deploy@10.0.0.5' }).waitFor();
    expect(await tree().getByRole('treeitem', { name: /^Production, group/ }).count()).toBe(1);
    expect(await tree().getByRole('treeitem', { name: /^web-a, SSH/ }).count()).toBe(1);
    expect(await page.getByRole('button', { name: '#prod' }).count()).toBe(1);
  });

  it('asks for the master password after the restart, and says so when it is wrong', async () => {
    await page.locator('.status-bar').getByRole('button', { name: /Vault: locked/ }).click();
    const dialog = page.getByRole('dialog', { name: 'Unlock the vault' });
    await dialog.locator('input[name=master-password]').fill('not the password');
    await dialog.getByRole('button', { name: 'Unlock' }).click();
    await dialog.getByRole('alert').waitFor();
    expect(await dialog.getByRole('alert').innerText()).toBe('Wrong master password.');
    await dialog.locator('input[name=master-password]').fill('correct horse battery');
    await dialog.getByRole('button', { name: 'Unlock' }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.locator('.status-bar').getByText('Vault: unlocked').waitFor();
  });

  it('logged no errors in the page', () => {
    // Failed reconnect attempts to the stopped host are expected console noise, nothing else is.
    const errors = browser.pageErrors.filter((e) => !/WebSocket connection to .* failed/.test(e));
    expect(errors).toEqual([]);
  });
});
