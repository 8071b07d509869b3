/**
 * What programs in an SSH tab set up outlive a reload, and what they may do to the local
 * clipboard, in real Chromium against a real sshd: a full-screen program's alternate screen and
 * mouse reports come back with the tab even when the sequences that set them are older than the
 * output read back, and a program may copy to the clipboard with OSC 52 (never read it). The tests
 * run in order, in the same tab.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { type AppWithSshd, startAppWithSshd } from '../fixtures/app-with-sshd.js';
import { reloadApp } from '../fixtures/browser.js';
import { activeSessionId, terminalText, typeAndSee } from '../fixtures/terminal-page.js';
import { recordToasts } from '../fixtures/toasts.js';

let app: AppWithSshd;
let page: Page;

beforeAll(async () => {
  app = await startAppWithSshd({ connection: 'web01' });
  page = app.page;
});

afterAll(() => app?.stop());

/** The lines the terminal shows (its active screen and scrollback), trailing blanks dropped. */
const lines = (id: string) => async () => (await terminalText(page, id)).split('\n').map((l) => l.trimEnd());

const clipboard = () => page.evaluate(() => navigator.clipboard.readText());

/** A shell command that copies `text` (computed by the shell, so the typed line never holds it) with OSC 52. */
const osc52Copy = (shellText: string) => `printf '\\033]52;c;%s\\a' "$(printf '%s' "${shellText}" | base64 -w0)"`;

describe('a tab reloaded while a full-screen program runs', () => {
  it('starts in the modes the program set long before: a click reaches it, and leaving gives back the normal screen', async () => {
    await page.getByRole('treeitem', { name: /^web01, SSH/ }).dblclick();
    const id = await activeSessionId(page);
    await typeAndSee(page, id, 'echo "shell-$((6*7))"', 'shell-42');
    // As vim with mouse=a sets up (alternate screen, SGR mouse reports), then more output than a
    // reload reads back (300 lines of 1,000 bytes; it reads 256 KiB). Then it reads one mouse
    // report (up to the release's final "m") and shows its bytes; a key later, it leaves.
    await page.keyboard.type(
      "printf '\\033[?1049h\\033[?1000h\\033[?1006h'; for i in $(seq 300); do printf '%01000d\\n' 0; done; " +
        'stty -icanon -echo; echo "flood-$((6*7))"; IFS= read -r -d m report; stty sane; printf %s "$report" | od -An -tx1; ' +
        "read -r -n 1 key; printf '\\033[?1006l\\033[?1000l\\033[?1049l'; echo \"left-$((6*7))\"\n",
    );
    await expect.poll(lines(id), { timeout: 15_000 }).toContain('flood-42');

    await reloadApp(page);
    await expect.poll(lines(id), { timeout: 15_000 }).toContain('flood-42');
    // A click is a mouse report to the program (SGR: ESC [ <), as it was before the reload.
    await page.locator('.tab-panel:visible .xterm').click({ position: { x: 200, y: 100 } });
    await expect.poll(async () => (await lines(id)()).some((l) => l.startsWith(' 1b 5b 3c')), { timeout: 10_000 }).toBe(true);

    // The program leaves the alternate screen: the normal one is back, without the program's screen on it.
    await page.keyboard.press('q');
    await expect.poll(lines(id), { timeout: 10_000 }).toContain('left-42');
    const normal = await terminalText(page, id);
    expect(normal).not.toContain('flood-42');
    expect(normal).not.toContain('0000000000');
  });
});

describe('OSC 52', () => {
  it('a program copies to the clipboard, said once per tab', async () => {
    await app.browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(app.server.openUrl).origin });
    const id = await activeSessionId(page);
    const toasts = await recordToasts(page);
    await page.evaluate(() => navigator.clipboard.writeText('before'));

    await typeAndSee(page, id, `${osc52Copy('copied-$((6*7))')}; echo "sent-$((1+1))"`, 'sent-2');
    await expect.poll(clipboard).toBe('copied-42');
    await expect.poll(toasts).toContain('web01 copied 9 characters to your clipboard.');
    // Another copy in the same tab: copied, not said again.
    await typeAndSee(page, id, `${osc52Copy('again-$((6*7))')}; echo "sent-$((1+2))"`, 'sent-3');
    await expect.poll(clipboard).toBe('again-42');
    expect((await toasts()).filter((t) => t.includes('clipboard'))).toEqual(['web01 copied 9 characters to your clipboard.']);
  });

  it('output read back after a reload copies nothing again', async () => {
    const id = await activeSessionId(page);
    await page.evaluate(() => navigator.clipboard.writeText('before-reload'));
    await reloadApp(page);
    const toasts = await recordToasts(page);
    // The copies above are in what is read back.
    await expect.poll(lines(id), { timeout: 15_000 }).toContain('sent-3');
    expect(await clipboard()).toBe('before-reload');
    // A copy made now is the first of this page's tab: it is said, and the replayed ones were not.
    await typeAndSee(page, id, `${osc52Copy('fresh-$((6*7))')}; echo "sent-$((2+2))"`, 'sent-4');
    await expect.poll(clipboard).toBe('fresh-42');
    await expect.poll(toasts).toContain('web01 copied 8 characters to your clipboard.');
    expect((await toasts()).filter((t) => t.includes('clipboard'))).toEqual(['web01 copied 8 characters to your clipboard.']);
  });

  it('a query for the clipboard is never answered', async () => {
    // The first reply the program reads is the one to the device-attributes query sent after it.
    const id = await activeSessionId(page);
    await typeAndSee(page, id, "stty -icanon -echo; printf '\\033]52;c;?\\a\\033[c'; IFS= read -r -d c reply; stty sane; echo \"reply:${reply:1}\"", 'reply:[?1;2');
  });

  it('more than 1 MB is not copied, and the tab says why', async () => {
    const id = await activeSessionId(page);
    const toasts = await recordToasts(page);
    await typeAndSee(page, id, `printf '\\033]52;c;%s\\a' "$(head -c 2097152 /dev/zero | base64 -w0)"; echo "sent-$((2+3))"`, 'sent-5');
    await expect.poll(toasts).toContain('Not copied: web01 tried to copy 2.0 MB to your clipboard, more than the 1.0 MB a program may copy at once.');
    expect(await clipboard()).toBe('fresh-42');
  });

  it('Settings can turn it off', async () => {
    const id = await activeSessionId(page);
    await page.getByRole('button', { name: 'Settings' }).click();
    const dialog = page.getByRole('dialog', { name: 'Settings' });
    const allow = dialog.locator('input[name=osc52Copy]');
    expect(await allow.isChecked()).toBe(true);
    await allow.uncheck();
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect((await app.api.call('settings.get'))['terminal.osc52Copy']).toBe(false);

    await page.evaluate(() => navigator.clipboard.writeText('kept'));
    await typeAndSee(page, id, `${osc52Copy('off-$((6*7))')}; echo "sent-$((3+3))"`, 'sent-6');
    expect(await clipboard()).toBe('kept');

    // On again (from elsewhere: the window follows, as its Settings dialog shows), the same copy reaches the clipboard.
    await app.api.call('settings.set', { 'terminal.osc52Copy': true });
    await page.getByRole('button', { name: 'Settings' }).click();
    await expect.poll(() => allow.isChecked()).toBe(true);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    await typeAndSee(page, id, `${osc52Copy('on-$((6*7))')}; echo "sent-$((3+4))"`, 'sent-7');
    await expect.poll(clipboard).toBe('on-42');
  });
});
