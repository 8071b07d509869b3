/**
 * Where the keys go and what tabs are called, in real Chromium against a real sshd, with a live
 * SSH terminal in front the whole time (where keys that lose their way end up, typed into a
 * server's shell): the connection tree's context menu gives them back to its row (or to the new
 * row of a Duplicate, the next row after a Delete); after the last refused password the failure
 * card has them, so Enter is Try again; the password card says which try it is; and a tab of a
 * connection follows the connection's name, unless the tab itself was renamed.
 * The tests run in order, each on the tabs the one before left.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Locator, Page } from 'playwright-core';
import { type AppWithSshd, startAppWithSshd } from '../fixtures/app-with-sshd.js';
import { reloadApp } from '../fixtures/browser.js';
import { activeSessionId, typeAndSee } from '../fixtures/terminal-page.js';

let app: AppWithSshd;
let page: Page;

beforeAll(async () => {
  app = await startAppWithSshd({
    connection: 'target-pw',
    beforeOpen: async ({ sshd, api }) => {
      // Its password is not saved: each tab asks for it.
      await api.call('connections.create', { name: 'target-nosave', kind: 'ssh', host: sshd.host, port: sshd.port, username: sshd.users.password.username, authMethod: 'password' });
      await api.call('connections.groups.create', { name: 'servers', parentId: null });
    },
  });
  page = app.page;
  await row('target-pw').waitFor();
});

afterAll(() => app?.stop());

const tree = () => page.getByRole('tree', { name: 'Saved connections' });
const row = (name: string) => tree().getByRole('treeitem', { name: new RegExp(`^${name.replace(/[()]/g, '\\$&')}, SSH`) });
const groupRow = (name: string) => tree().getByRole('treeitem', { name: new RegExp(`^${name}, group`) });
const visiblePanel = () => page.locator('.tab-panel:visible');
const tabTitles = () => page.locator('.tab .tab-title').allInnerTexts();

function hasFocus(el: Locator): Promise<boolean> {
  return el.evaluate((node) => node === document.activeElement);
}

/** What has the keys, as a person would name it (for a readable failure). */
const focused = () => page.evaluate(() => {
  const a = document.activeElement;
  return a ? `${a.tagName} ${a.getAttribute('aria-label') ?? a.textContent?.trim().slice(0, 40) ?? ''}` : 'nothing';
});

async function waitOpen(): Promise<void> {
  await expect.poll(() => page.locator('.tab.active').getAttribute('class'), { timeout: 20_000 }).toContain('open');
}

/** Opens `target`'s context menu from the keyboard (Shift+F10 on its focused row) and picks `item` with the arrow keys. */
async function fromMenu(target: Locator, item: string): Promise<void> {
  await target.focus();
  await page.keyboard.press('Shift+F10');
  const menu = page.getByRole('menu');
  await menu.waitFor();
  const items = await menu.getByRole('menuitem').allInnerTexts();
  const at = items.indexOf(item);
  expect(at).toBeGreaterThanOrEqual(0);
  for (let i = 0; i < at; i++) await page.keyboard.press('ArrowDown');
  await expect.poll(() => hasFocus(menu.getByRole('menuitem', { name: item }))).toBe(true);
  await page.keyboard.press('Enter');
  await menu.waitFor({ state: 'detached' });
}

describe("the connection tree's context menu, with a live terminal in front", () => {
  it('gives the keys back to the row after Edit… and Delete… are cancelled, to the copy after Duplicate, to the next row after a Delete', async () => {
    await row('target-pw').dblclick();
    await waitOpen();
    const id = await activeSessionId(page);
    await typeAndSee(page, id, 'echo "live-$((6*7))"', 'live-42');

    // Edit…, then Escape.
    await fromMenu(row('target-pw'), 'Edit…');
    const edit = page.getByRole('dialog', { name: 'Edit target-pw' });
    await edit.waitFor();
    await page.keyboard.press('Escape');
    await edit.waitFor({ state: 'detached' });
    await expect.poll(focused).toMatch(/^DIV target-pw, SSH/);

    // Delete…, then Escape on the question: nothing deleted, the keys on the row.
    await fromMenu(row('target-pw'), 'Delete…');
    const confirm = page.getByRole('dialog', { name: 'Delete connection' });
    await confirm.waitFor();
    await page.keyboard.press('Escape');
    await confirm.waitFor({ state: 'detached' });
    await expect.poll(focused).toMatch(/^DIV target-pw, SSH/);

    // Duplicate: the copy's row has them (Delete there deletes the copy, not a character in the shell).
    await fromMenu(row('target-pw'), 'Duplicate');
    await row('target-pw (copy)').waitFor();
    await expect.poll(focused).toMatch(/^DIV target-pw \(copy\), SSH/);

    // Delete… on the copy, confirmed: the row in its place takes the keys (the last row: the one before it).
    await fromMenu(row('target-pw (copy)'), 'Delete…');
    await confirm.getByRole('button', { name: 'Delete' }).click();
    await row('target-pw (copy)').waitFor({ state: 'detached' });
    await expect.poll(focused).toMatch(/^DIV target-pw, SSH/);

    // A group's menu the same: Rename…, then Escape.
    await fromMenu(groupRow('servers'), 'Rename…');
    const rename = page.getByRole('dialog', { name: 'Rename group' });
    await rename.waitFor();
    await page.keyboard.press('Escape');
    await rename.waitFor({ state: 'detached' });
    await expect.poll(focused).toMatch(/^DIV servers, group/);
  });
});

describe('a password typed wrong three times', () => {
  it('says which try each is, then leaves the keys on the failure card, where Enter tries again', async () => {
    await row('target-nosave').dblclick();
    const passwordCard = visiblePanel().getByRole('alertdialog', { name: /^Password for / });
    const refusal = passwordCard.locator('.refusal');
    const field = passwordCard.getByLabel('Password', { exact: true });
    for (const attempt of [1, 2, 3]) {
      await passwordCard.waitFor({ timeout: 20_000 });
      await expect.poll(() => hasFocus(field)).toBe(true);
      if (attempt === 1) expect(await refusal.count()).toBe(0);
      else expect(await refusal.innerText()).toMatch(new RegExp(`refused the login with that password: permission denied, please try again \\(${attempt} of 3\\)\\.$`));
      await page.keyboard.type(`wrong-${attempt}`);
      await page.keyboard.press('Enter');
      if (attempt < 3) await expect.poll(() => refusal.innerText().catch(() => ''), { timeout: 20_000 }).toContain(`(${attempt + 1} of 3)`);
    }
    const failed = visiblePanel().getByRole('alert').filter({ hasText: 'Could not open target-nosave' });
    await failed.waitFor({ timeout: 20_000 });
    expect(await failed.innerText()).toContain('EAUTH');
    await expect.poll(() => hasFocus(failed.getByRole('button', { name: 'Try again' }))).toBe(true);

    // Enter is Try again: asked anew, from the first try.
    await page.keyboard.press('Enter');
    await passwordCard.waitFor({ timeout: 20_000 });
    await expect.poll(() => hasFocus(field)).toBe(true);
    expect(await refusal.count()).toBe(0);
    await page.keyboard.type(app.sshd.users.password.password);
    await page.keyboard.press('Enter');
    await waitOpen();
    await typeAndSee(page, await activeSessionId(page), 'echo "in-$((6*7))"', 'in-42');
  });
});

describe('a renamed connection', () => {
  it('renames its tabs, here and after a reload, except one given a name of its own with Rename tab', async () => {
    const tabOf = (title: string) => page.locator('.tab', { has: page.locator('.tab-title', { hasText: new RegExp(`^${title}$`) }) });
    // A second tab of target-pw, named by hand.
    await row('target-pw').dblclick();
    await waitOpen();
    expect((await tabTitles()).filter((t) => t === 'target-pw')).toHaveLength(2);
    await page.locator('.tab.active').click({ button: 'right' });
    await page.getByRole('menuitem', { name: 'Rename tab…' }).click();
    const renameTab = page.getByRole('dialog', { name: 'Rename tab' });
    await renameTab.getByRole('textbox').fill('my shell');
    await renameTab.getByRole('button', { name: 'Rename' }).click();
    await tabOf('my shell').waitFor();

    // F2 on its row: the connection's own name.
    await row('target-pw').focus();
    await page.keyboard.press('F2');
    const edit = page.getByRole('dialog', { name: 'Edit target-pw' });
    await edit.locator('input[name=name]').fill('prod-web');
    await edit.getByRole('button', { name: 'Save' }).click();
    await edit.waitFor({ state: 'detached' });
    await row('prod-web').waitFor();
    await expect.poll(tabTitles).toEqual(['prod-web', 'target-nosave', 'my shell']);

    // The tab and the host's messages about it use one name.
    await tabOf('prod-web').click();
    await waitOpen();
    await typeAndSee(page, await activeSessionId(page), 'echo "renamed-$((6*7))"', 'renamed-42');

    // A reload re-attaches the sessions (the host still calls the first one target-pw): the same names.
    await reloadApp(page);
    await expect.poll(async () => (await tabTitles()).sort()).toEqual(['my shell', 'prod-web', 'target-nosave']);
  });
});
