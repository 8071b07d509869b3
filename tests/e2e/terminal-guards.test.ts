/**
 * What a terminal view guards a person against, in real Chromium with a local shell and a real
 * OpenSSH sshd: a paste that smuggles keys (an early end of bracketed paste, control characters,
 * a line end that runs at once), a paste too large for one write, a notice that lands inside the
 * output it follows, modes a dropped full-screen program left set, Find replacing the clipboard,
 * OSC 8 links past the app's opener, and Copy on a page without the Clipboard API.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Dialog, Locator, Page } from 'playwright-core';
import { type TestBrowser, launchBrowser, openApp } from '../fixtures/browser.js';
import { sessionIn } from '../fixtures/terminal-page.js';
import { type SshdHandle, startSshd } from '../fixtures/sshd.js';
import { connectNewSshInUi } from '../fixtures/ui-connection.js';
import { type WraithServer, startWraithServer } from '../fixtures/wraith-server.js';

let sshd: SshdHandle;
let server: WraithServer;
let browser: TestBrowser;
let page: Page;
let panel: Locator;
let work: string;

function terminalText(sessionId: string, p = page): Promise<string> {
  return p.evaluate((id) => window.wraithInspect?.terminals.text(id) ?? '', sessionId);
}

async function lines(sessionId: string): Promise<string[]> {
  return (await terminalText(sessionId)).split('\n').map((l) => l.trimEnd());
}

async function waitForLine(sessionId: string, line: string, timeout = 15_000): Promise<void> {
  await expect.poll(() => lines(sessionId), { timeout }).toContain(line);
}


/** Pastes `text` into the terminal in `scope` as the browser does (a paste event on xterm's textarea). */
function paste(scope: string, text: string): Promise<void> {
  return page.evaluate(
    ([s, t]) => {
      const target = document.querySelector(`${s} .xterm-helper-textarea`);
      const data = new DataTransfer();
      data.setData('text/plain', t);
      target?.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
    },
    [scope, text] as const,
  );
}

/** The on-screen box of the row in `scope` that reads exactly `line` (waits for it to be painted). */
async function renderedRow(scope: Locator, line: string) {
  const rows = scope.locator('.xterm-rows > div');
  const index = async () => (await rows.allInnerTexts()).findIndex((t) => t.trimEnd() === line);
  await expect.poll(index, { timeout: 10_000 }).toBeGreaterThanOrEqual(0);
  const box = await rows.nth(await index()).boundingBox();
  if (!box) throw new Error(`the row "${line}" has no box`);
  return box;
}

async function saveSettings(p: Page, values: Record<string, boolean | number>): Promise<void> {
  await p.getByRole('button', { name: 'Settings' }).click();
  const dialog = p.getByRole('dialog', { name: 'Settings' });
  for (const [name, value] of Object.entries(values)) {
    const input = dialog.locator(`[name=${name}]`);
    if (typeof value === 'boolean') await input.setChecked(value);
    else await input.fill(String(value));
  }
  await dialog.getByRole('button', { name: 'Save' }).click();
  await dialog.waitFor({ state: 'detached' });
}

/** Launches the shell of the local shell panel, shown; returns the session id. */
async function launchPanelShell(p: Page): Promise<string> {
  const region = p.getByRole('region', { name: 'Local shell' });
  await region.getByRole('button', { name: /^Launch/ }).last().click();
  const id = await sessionIn(region);
  await expect.poll(async () => (await terminalText(id, p)).trimEnd(), { timeout: 15_000 }).toMatch(/[$#]$/);
  return id;
}

/** The local shell panel's session, showing the panel and launching its shell when needed. */
async function panelShell(): Promise<string> {
  if (!(await panel.isVisible())) await page.keyboard.press('Control+Shift+G');
  await panel.waitFor();
  if ((await panel.locator('.terminal-pane[data-session-id]').count()) === 0) return launchPanelShell(page);
  return sessionIn(panel);
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'wraith-guards-'));
  sshd = await startSshd();
  server = await startWraithServer();
  browser = await openApp(server.openUrl);
  page = browser.page;
  panel = page.getByRole('region', { name: 'Local shell' });
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await sshd?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('pasting', () => {
  it('drops bracketed-paste markers from a paste, so its end cannot come early and run what follows', async () => {
    const id = await panelShell();
    await panel.locator('.xterm').click();
    const pwned = join(work, 'pwned');
    // bash has bracketed paste on at its prompt: a one-line paste lands on the command line.
    await paste('.bottom-panel', `echo harmless\x1b[201~; touch ${pwned}\n`);
    await expect.poll(async () => (await lines(id)).some((l) => l.endsWith(`echo harmless; touch ${pwned}`))).toBe(true);
    await page.waitForTimeout(500);
    expect(existsSync(pwned)).toBe(false);
    expect(await page.getByRole('dialog').count()).toBe(0);
    await page.keyboard.press('Control+C');
  });

  it('asks before pasting control characters, showing them', async () => {
    const id = await panelShell();
    await panel.locator('.xterm').click();
    await paste('.bottom-panel', 'echo one\x1b[Dtwo\x7f');
    const confirm = page.getByRole('dialog', { name: 'Paste control characters?' });
    await confirm.waitFor({ timeout: 5_000 });
    const shown = await confirm.innerText();
    expect(shown).toContain('control characters');
    expect(shown).toContain('echo one^[[Dtwo^?');
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await confirm.waitFor({ state: 'detached' });
    await page.keyboard.type('echo typed-$((3*3))\n');
    await waitForLine(id, 'typed-9');
    expect((await lines(id)).some((l) => l.includes('echo one'))).toBe(false);
  });

  it('asks before a one-line paste whose line end runs it, in a program without bracketed paste (sh)', async () => {
    const id = await panelShell();
    await panel.locator('.xterm').click();
    await page.keyboard.type('sh\n');
    await page.keyboard.type('echo in-$((2+3))-sh\n');
    await waitForLine(id, 'in-5-sh');
    await paste('.bottom-panel', 'echo ran-$((5*5))\n');
    const confirm = page.getByRole('dialog', { name: 'Paste and run?' });
    await confirm.waitFor({ timeout: 5_000 });
    expect(await confirm.innerText()).toContain('runs as a command at once');
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await confirm.waitFor({ state: 'detached' });
    await page.waitForTimeout(300);
    expect(await lines(id)).not.toContain('ran-25');
    await paste('.bottom-panel', 'echo ran-$((5*5))\n');
    await confirm.getByRole('button', { name: 'Paste' }).click();
    await waitForLine(id, 'ran-25');
    await page.keyboard.type('exit\n');
    await page.keyboard.type('echo back-in-$((2+2))\n');
    await waitForLine(id, 'back-in-4');
  });

  it('sends a paste over a million characters whole and in order', async () => {
    const id = await panelShell();
    await panel.locator('.xterm').click();
    const file = join(work, 'pasted.txt');
    await page.keyboard.type(`cat > ${file}\n`);
    await expect.poll(() => existsSync(file)).toBe(true);
    const big = Array.from({ length: 110_000 }, (_, i) => `line-${i}`).join('\n') + '\n';
    expect(big.length).toBeGreaterThan(1_100_000);
    try {
      await paste('.bottom-panel', big);
      const confirm = page.getByRole('dialog', { name: 'Paste several lines?' });
      await confirm.getByRole('button', { name: 'Paste' }).click();
      await confirm.waitFor({ state: 'detached' });
      await expect.poll(() => statSync(file).size, { timeout: 60_000, interval: 500 }).toBe(big.length);
    } finally {
      await page.keyboard.press('Control+D'); // cat ends, whatever came
    }
    expect(readFileSync(file, 'utf8')).toBe(big);
    await page.keyboard.type('clear; echo after-paste\n');
    await waitForLine(id, 'after-paste');
  }, 180_000);
});

describe('when a session ends', () => {
  it('writes the "ended" notice after all the output the shell wrote', async () => {
    const id = await panelShell();
    await panel.locator('.xterm').click();
    await page.keyboard.type('seq 1 300000; exit\n');
    const ended = panel.locator('.pane-banner');
    await ended.waitFor({ timeout: 90_000 });
    try {
      await expect.poll(() => lines(id), { timeout: 30_000 }).toContain('300000');
      const shown = await lines(id);
      const notice = shown.findIndex((l) => l.includes('Press Enter to relaunch.'));
      expect(notice).toBeGreaterThan(shown.indexOf('300000'));
      // nothing of the output after it
      expect(shown.slice(notice + 1).filter((l) => /^\d+$/.test(l))).toEqual([]);
    } finally {
      await ended.getByRole('button', { name: 'Relaunch' }).click();
      await ended.waitFor({ state: 'detached' });
    }
  }, 180_000);

  it('leaves the modes a dropped full-screen program set: Reconnect finds the normal screen, no mouse reports, the cursor shown', async () => {
    if (await panel.isVisible()) await page.keyboard.press('Control+Shift+G'); // the SSH tab gets the room
    await panel.waitFor({ state: 'detached' });
    const id = await connectNewSshInUi(page, { name: 'guards sshd', host: sshd.host, port: sshd.port, ...sshd.users.password });
    const tab = page.locator('.tab-panel:visible');
    const xterm = tab.locator('.xterm');
    await xterm.click();
    await page.keyboard.type('echo before-$((4*4))\n');
    await waitForLine(id, 'before-16');
    // A full-screen program as vim or mc sets it up: alternate screen, mouse reports (SGR), cursor hidden, red.
    await page.keyboard.type("printf '\\033[?1049h\\033[?1000h\\033[?1006h\\033[?25l\\033[31mfull-screen\\n'; sleep 600\n");
    await waitForLine(id, 'full-screen');
    expect(await lines(id)).not.toContain('before-16'); // the alternate screen is shown

    sshd.dropConnections();
    const banner = tab.locator('.pane-banner.warn');
    await banner.waitFor({ timeout: 20_000 });
    await expect.poll(async () => (await terminalText(id)).includes('Press Enter to reconnect.')).toBe(true);
    await banner.getByRole('button', { name: 'Reconnect' }).click();
    await banner.waitFor({ state: 'detached', timeout: 20_000 });

    // The normal screen again, with the scrollback and the notice.
    await expect.poll(() => lines(id)).toContain('before-16');
    // A right click is the terminal's menu again, not a mouse report for a program long gone.
    await xterm.click({ button: 'right', position: { x: 200, y: 40 } });
    const menu = page.getByRole('menu', { name: 'Terminal' });
    await menu.waitFor({ timeout: 3_000 });
    await page.keyboard.press('Escape');
    await menu.waitFor({ state: 'detached' });
    // A click sends nothing to the new shell: what is typed next runs as typed.
    await xterm.click({ position: { x: 200, y: 40 } });
    await page.keyboard.type('echo clicked-$((2*3))\n');
    await waitForLine(id, 'clicked-6');
    // The cursor is drawn, in the default colours.
    await expect.poll(() => tab.locator('.xterm-rows .xterm-cursor').count()).toBe(1);
    const row = tab.locator('.xterm-rows > div', { hasText: /^clicked-6\s*$/ });
    expect(await row.locator('[class*="xterm-fg-"]').count()).toBe(0);
  }, 90_000);
});

describe('the clipboard and links', () => {
  it('keeps the clipboard when Find selects a match with copy-on-select on; a mouse selection is still copied', async () => {
    await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(server.openUrl).origin });
    await saveSettings(page, { copyOnSelect: true });
    const id = await panelShell();
    await panel.locator('.xterm').click();
    await page.keyboard.type('echo needle-$((6*7))\n');
    await waitForLine(id, 'needle-42');
    await page.evaluate(() => navigator.clipboard.writeText('precious clipboard'));

    await page.keyboard.press('Control+Shift+F');
    const search = page.getByRole('searchbox', { name: 'Find in terminal' });
    await search.waitFor();
    await search.pressSequentially('needle');
    await expect.poll(() => page.evaluate((sid) => window.wraithInspect?.terminals.selection(sid) ?? '', id)).toBe('needle');
    await page.waitForTimeout(500); // a copy would have been written by now
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe('precious clipboard');
    await search.press('Escape');

    const box = await renderedRow(panel, 'needle-42');
    await page.mouse.dblclick(box.x + 4, box.y + box.height / 2);
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe('needle-42');
    await saveSettings(page, { copyOnSelect: false });
  });

  it('opens an OSC 8 hyperlink as a plain web link: its address shown on hover, no blocking confirm, through the app', async () => {
    await browser.context.route('https://wraith-link.invalid/**', (route) => route.fulfill({ status: 200, contentType: 'text/html', body: '<title>linked</title>' }));
    // xterm's own handler asks with confirm(), which blocks the page until answered: say no.
    const dialogs: string[] = [];
    const onDialog = (d: Dialog) => {
      dialogs.push(d.message());
      void d.dismiss();
    };
    page.on('dialog', onDialog);
    try {
      const id = await panelShell();
      await panel.locator('.xterm').click();
      await page.keyboard.type("clear; printf '\\033]8;;https://wraith-link.invalid/osc8\\033\\\\OSC8-LINK\\033]8;;\\033\\\\\\n'\n");
      await waitForLine(id, 'OSC8-LINK');
      const box = await renderedRow(panel, 'OSC8-LINK');
      // the link is underlined on hover, a tip shows where it goes (its text does not say), and
      // Ctrl+click opens it
      await page.mouse.move(box.x + 10, box.y + box.height / 2);
      await page.mouse.move(box.x + 20, box.y + box.height / 2);
      await expect.poll(() => panel.locator('.link-tip-uri').textContent()).toBe('https://wraith-link.invalid/osc8');
      await page.keyboard.down('Control');
      const [opened] = await Promise.all([browser.context.waitForEvent('page', { timeout: 10_000 }), page.mouse.click(box.x + 20, box.y + box.height / 2)]);
      await page.keyboard.up('Control');
      await opened.waitForLoadState();
      expect(opened.url()).toBe('https://wraith-link.invalid/osc8');
      await opened.close();
      expect(dialogs).toEqual([]);
    } finally {
      page.off('dialog', onDialog);
    }
  });

  it('copies without the Clipboard API (a page over plain http by a name), and says so when it cannot', async () => {
    const NAME = 'wraith-plain.test';
    const plain = await launchBrowser({ extraArgs: [`--host-resolver-rules=MAP ${NAME} 127.0.0.1`] });
    try {
      const p = plain.page;
      await p.goto(`http://${NAME}:${new URL(server.url).port}/?token=${server.token}`);
      await p.getByText('Host: connected').waitFor();
      expect(await p.evaluate(() => ({ secure: isSecureContext, api: 'clipboard' in navigator }))).toEqual({ secure: false, api: false });
      await p.keyboard.press('Control+Shift+G');
      const id = await launchPanelShell(p);
      const region = p.getByRole('region', { name: 'Local shell' });
      await region.locator('.xterm').click();
      await p.keyboard.type('echo copy-$((6*7))-me\n');
      await expect.poll(async () => (await terminalText(id, p)).split('\n').map((l) => l.trimEnd()), { timeout: 15_000 }).toContain('copy-42-me');
      // What reached the system clipboard, read on a secure page of the same browser.
      const reader = await plain.context.newPage();
      await reader.goto(server.url);
      await plain.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
      const clipboard = () => reader.evaluate(() => navigator.clipboard.readText());
      await reader.evaluate(() => navigator.clipboard.writeText('before'));

      const rows = region.locator('.xterm-rows > div');
      const row = async () => {
        const texts = await rows.allInnerTexts();
        const box = await rows.nth(texts.findIndex((t) => t.trimEnd() === 'copy-42-me')).boundingBox();
        if (!box) throw new Error('no row');
        return box;
      };
      const box = await row();
      await p.mouse.dblclick(box.x + 4, box.y + box.height / 2);
      await p.keyboard.press('Control+Shift+C');
      await expect.poll(clipboard).toBe('copy-42-me');

      // The menu's Copy too.
      await reader.evaluate(() => navigator.clipboard.writeText('before'));
      await p.mouse.dblclick(box.x + 4, box.y + box.height / 2);
      await p.mouse.click(box.x + 4, box.y + box.height / 2, { button: 'right' });
      await p.getByRole('menu', { name: 'Terminal' }).getByRole('menuitem', { name: /^Copy/ }).click();
      await expect.poll(clipboard).toBe('copy-42-me');

      // A browser that refuses the copy command too: a toast says nothing was copied.
      await reader.evaluate(() => navigator.clipboard.writeText('before'));
      await p.evaluate(() => (document.execCommand = () => false));
      await p.mouse.dblclick(box.x + 4, box.y + box.height / 2);
      await p.keyboard.press('Control+Shift+C');
      await expect.poll(() => p.locator('.toast').allInnerTexts()).toContain('Not copied: the browser did not let Wraith write to the clipboard.');
      expect(await clipboard()).toBe('before');
    } finally {
      await plain.close();
    }
  }, 90_000);
});
