/**
 * The tabs show what the host runs, whoever started it, in real Chromium against `wraith serve`:
 * a shell the `wraith` command (a WebSocket client without an Origin, as the CLI is) or another
 * window starts comes as a tab at once, without taking the keys from the tab being typed in, and
 * one closed elsewhere stays as an ended tab. Kill of a shell that ignores the hang-up says
 * "Stopping…" until it is gone; a local tab reads the title or folder its shell reports. A
 * window's local shell panel stays its own while it is there (a reload included), and becomes a
 * tab everywhere a while after that window closed for good.
 * The tests run in order, each on the tabs the one before left.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Locator, Page } from 'playwright-core';
import type { ContractClient } from '../../src-main/common/client.js';
import { connectWebSocket } from '../../src-main/server/ws-client.js';
import { type TestBrowser, openApp } from '../fixtures/browser.js';
import { until } from '../fixtures/poll.js';
import { childrenOf, running } from '../fixtures/processes.js';
import { activeSessionId, sessionIn, terminalText } from '../fixtures/terminal-page.js';
import { type WraithServer, startWraithServer } from '../fixtures/wraith-server.js';

let server: WraithServer;
let browser: TestBrowser;
let page: Page;
let cli: ContractClient;
/** The local shell tab the first test opens in this window; it stays open for the tests after it. */
let mine = '';
/**
 * How long the host keeps a panel's shell for a window that went, here: a reload is back well
 * within it, and a window closed for good is waited for less than the 20 s a person's host waits.
 */
const PANEL_GRACE_MS = 5000;

beforeAll(async () => {
  server = await startWraithServer({ env: { WRAITH_PANEL_GRACE_MS: String(PANEL_GRACE_MS) } });
  cli = await connectWebSocket(server.url, server.token);
  browser = await openApp(server.openUrl);
  page = browser.page;
});

afterAll(async () => {
  cli?.close();
  await browser?.close();
  await server?.stop();
});

const tabs = () => page.locator('.tab');
const panel = () => page.getByRole('region', { name: 'Local shell' });
/** The tab strip's tab whose panel shows `sessionId`. */
async function tabOf(sessionId: string): Promise<Locator> {
  const panelId = await page.locator('.tab-panel', { has: page.locator(`.terminal-pane[data-session-id="${sessionId}"]`) }).getAttribute('id');
  return page.locator(`[role="tab"][aria-controls="${panelId}"]`);
}

async function lines(sessionId: string, on: Page = page): Promise<string[]> {
  return (await terminalText(on, sessionId)).split('\n').map((l) => l.trimEnd());
}

async function waitForLine(sessionId: string, line: string, on: Page = page): Promise<void> {
  await expect.poll(() => lines(sessionId, on), { timeout: 15_000 }).toContain(line);
}

/** Another window of the app, connected. */
async function newWindow(): Promise<Page> {
  const win = await browser.context.newPage();
  await win.goto(server.url);
  await win.getByText('Host: connected').waitFor();
  return win;
}

/** Launches a shell in the local shell panel of `win` and sees `echo <word>-$((4*4))` run in it; its session id. */
async function panelShellOf(win: Page, word: string): Promise<string> {
  const region = win.getByRole('region', { name: 'Local shell' });
  await win.keyboard.press('Control+Shift+G');
  await region.getByRole('button', { name: /^Launch/ }).last().click();
  const id = await sessionIn(region);
  await region.locator('.xterm').click();
  await win.keyboard.type(`echo ${word}-$((4*4))\n`);
  await waitForLine(id, `${word}-16`, win);
  return id;
}

/**
 * A panel shell whose connection goes at once, as a window closed for good: once this window
 * shows it as a tab, a whole grace has passed since the call. Nothing else here orders a test in time.
 */
async function graceClock(): Promise<string> {
  const clock = await connectWebSocket(server.url, server.token);
  try {
    return (await clock.call('pty.spawn', { shell: 'bash', cols: 80, rows: 24, panel: true })).sessionId;
  } finally {
    clock.close();
  }
}

/** Which tab panel the tab in front shows (null: no tab). */
function frontTab(): Promise<string | null> {
  return page.evaluate(() => document.querySelector('[role="tab"][aria-selected="true"]')?.getAttribute('aria-controls') ?? null);
}

/** Whether the keys are in the terminal of `scope`. */
function typingIn(scope: Locator): Promise<boolean> {
  return scope.locator('.xterm-helper-textarea').evaluate((t) => t === document.activeElement);
}

/** A local shell tab opened from the panel, the keys in its terminal; the panel hidden again. */
async function ownShellTab(): Promise<string> {
  await page.keyboard.press('Control+Shift+G');
  await panel().waitFor();
  await panel().getByRole('button', { name: 'Open as tab' }).click();
  await page.keyboard.press('Control+Shift+G');
  await panel().waitFor({ state: 'hidden' });
  const id = await activeSessionId(page);
  await page.locator('.tab-panel:visible .xterm').click();
  return id;
}

describe('sessions opened elsewhere', () => {
  it('a shell the wraith command starts comes as a tab marked CLI, in the back; typing in it works; closed by the command, it stays, ended', async () => {
    mine = await ownShellTab();
    await page.keyboard.type('echo mine-$((2*3))\n');
    await waitForLine(mine, 'mine-6');
    const front = page.locator('.tab-panel:visible');

    const { sessionId } = await cli.call('pty.spawn', { shell: 'bash', cols: 80, rows: 24 });
    await cli.call('terminal.write', { sessionId, data: 'echo from-cli-$((3*3))\n' });
    await expect.poll(() => page.locator(`.terminal-pane[data-session-id="${sessionId}"]`).count(), { timeout: 10_000 }).toBe(1);
    expect(await tabs().count()).toBe(2);
    const theirs = await tabOf(sessionId);
    expect(await theirs.locator('.tab-opener').innerText()).toBe('CLI');
    expect(await theirs.getAttribute('title')).toContain('opened by the wraith command');
    // The tab in front keeps the screen and the keys: typing goes on where it was.
    expect(await (await tabOf(mine)).getAttribute('aria-selected')).toBe('true');
    expect(await typingIn(front)).toBe(true);
    await page.keyboard.type('echo still-mine-$((2*2))\n');
    await waitForLine(mine, 'still-mine-4');
    expect(await lines(sessionId)).not.toContain('still-mine-4');

    // Taken over: its output so far is there, and what is typed in it reaches the shell.
    await theirs.click();
    await waitForLine(sessionId, 'from-cli-9');
    await page.locator('.tab-panel:visible .xterm').click();
    await page.keyboard.type('echo typed-here-$((5*5))\n');
    await waitForLine(sessionId, 'typed-here-25');
    const read = await cli.call('terminal.read', { sessionId, stripAnsi: true });
    expect(read.text).toMatch(/^typed-here-25\r?$/m);

    // Closed by the command: the tab stays, ended, with its output.
    await cli.call('sessions.close', { sessionId });
    const pane = page.locator(`.terminal-pane[data-session-id="${sessionId}"]`);
    await expect.poll(() => pane.getAttribute('data-phase')).toBe('ended');
    expect(await pane.locator('.pane-banner').innerText()).toContain('Session ended');
    expect(await lines(sessionId)).toContain('typed-here-25');
    expect(await tabs().count()).toBe(2);
    await pane.locator('.pane-banner').getByRole('button', { name: 'Close' }).click();
    await expect.poll(() => tabs().count()).toBe(1);
  });

  it("a shell another window opens comes as a tab here, once, and that window's own tab is not doubled", async () => {
    const other = await browser.context.newPage();
    try {
      await other.goto(server.url);
      await other.getByText('Host: connected').waitFor();
      const before = await tabs().count();
      await other.keyboard.press('Control+Shift+G');
      await other.getByRole('region', { name: 'Local shell' }).getByRole('button', { name: 'Open as tab' }).click();
      // That window shows this one's tab too (re-attached as it loaded); its own comes in front.
      const id = await sessionIn(other.locator('.tab-panel:visible'), mine);
      await expect.poll(() => page.locator(`.terminal-pane[data-session-id="${id}"]`).count(), { timeout: 10_000 }).toBe(1);
      expect(await tabs().count()).toBe(before + 1);
      // A window's session is not marked: only the CLI's and the XO's are.
      expect(await (await tabOf(id)).locator('.tab-opener').count()).toBe(0);
      // Its own shell: one tab there, whatever it heard first.
      expect(await other.locator(`.terminal-pane[data-session-id="${id}"]`).count()).toBe(1);
      expect(await other.locator('.tab').count()).toBe(before + 1);
      await other.locator('.tab-panel:visible .xterm').click();
      await other.keyboard.type('echo other-window-$((7*7))\n');
      await waitForLine(id, 'other-window-49', other);
      await waitForLine(id, 'other-window-49');
      // Closed there (a tab's close ends its session): here it stays, ended, in the back.
      await other.locator('.tab.active .tab-close').click();
      await expect.poll(() => page.locator(`.terminal-pane[data-session-id="${id}"]`).getAttribute('data-phase')).toBe('ended');
      expect(await (await tabOf(id)).getAttribute('class')).toContain('ended');
      await (await tabOf(id)).locator('.tab-close').click();
      await expect.poll(() => tabs().count()).toBe(before);
    } finally {
      await other.close();
    }
  });
  it("another window's local shell panel stays that window's: no tab of it here, as it starts nor after a reload; the CLI's shell still comes as a tab", async () => {
    const other = await browser.context.newPage();
    try {
      await other.goto(server.url);
      await other.getByText('Host: connected').waitFor();
      const before = await tabs().count();
      const running = async () => Number(/Sessions: (\d+)/.exec(await page.locator('.status-bar').innerText())?.[1] ?? NaN);
      const runningBefore = await running();
      const otherPanel = other.getByRole('region', { name: 'Local shell' });
      await other.keyboard.press('Control+Shift+G');
      await otherPanel.getByRole('button', { name: /^Launch/ }).last().click();
      const id = await sessionIn(otherPanel);
      await otherPanel.locator('.xterm').click();
      await other.keyboard.type('echo panel-there-$((8*8))\n');
      await waitForLine(id, 'panel-there-64', other);

      // A shell the command starts after it: this window hears of it after the panel's shell,
      // and makes a tab of it, and of it only.
      const { sessionId: fromCli } = await cli.call('pty.spawn', { shell: 'bash', cols: 80, rows: 24 });
      await expect.poll(() => page.locator(`.terminal-pane[data-session-id="${fromCli}"]`).count(), { timeout: 10_000 }).toBe(1);
      expect(await page.locator(`.terminal-pane[data-session-id="${id}"]`).count()).toBe(0);
      expect(await tabs().count()).toBe(before + 1);
      // "Sessions: N" here counts the new tab's shell, not the other window's panel shell, which
      // this window neither shows nor loses when it goes (so leaving it does not ask about it).
      await expect.poll(running).toBe(runningBefore + 1);
      // Nor as the other window shows it: in its panel, not as a tab of its own.
      await expect.poll(() => other.locator(`.terminal-pane[data-session-id="${fromCli}"]`).count(), { timeout: 10_000 }).toBe(1);
      expect(await other.locator(`.tab-panel .terminal-pane[data-session-id="${id}"]`).count()).toBe(0);

      // A reload here re-attaches the running sessions, the other window's panel shell not among them.
      await page.reload();
      await page.getByText('Host: connected').waitFor();
      await expect.poll(() => page.locator(`.terminal-pane[data-session-id="${fromCli}"]`).count(), { timeout: 10_000 }).toBe(1);
      expect(await page.locator(`.terminal-pane[data-session-id="${id}"]`).count()).toBe(0);
      expect(await tabs().count()).toBe(before + 1);

      // The other window's panel keeps its shell, running, its own reload included.
      await other.reload();
      await other.getByText('Host: connected').waitFor();
      await other.keyboard.press('Control+Shift+G');
      expect(await sessionIn(otherPanel)).toBe(id);
      expect(await other.locator(`.tab-panel .terminal-pane[data-session-id="${id}"]`).count()).toBe(0);
      await otherPanel.locator('.xterm').click();
      await other.keyboard.type('echo still-there-$((9*9))\n');
      await waitForLine(id, 'still-there-81', other);

      await cli.call('sessions.close', { sessionId: fromCli });
      await (await tabOf(fromCli)).locator('.tab-close').click();
      await expect.poll(() => tabs().count()).toBe(before);
      await cli.call('sessions.close', { sessionId: id });
    } finally {
      await other.close();
    }
  });

  it("a window closed for good with its panel shell running: a while later the shell is a tab here, in the back, running; a window opened then shows it too; that window reopened takes it back into its panel, and the tabs go", async () => {
    const other = await newWindow();
    const windows = [other];
    let id = '';
    try {
      id = await panelShellOf(other, 'left-behind');
      expect(await page.locator(`.terminal-pane[data-session-id="${id}"]`).count()).toBe(0);
      const front = await frontTab();

      await other.close();
      const pane = page.locator(`.terminal-pane[data-session-id="${id}"]`);
      await expect.poll(() => pane.count(), { timeout: PANEL_GRACE_MS + 15_000 }).toBe(1);
      expect(await pane.getAttribute('data-phase')).toBe('open');
      // In the back: the tab in front (the tests before left one) stays there.
      if (front !== null) expect(await frontTab()).toBe(front);
      // Taken over: its output is there, and typing reaches the shell.
      await (await tabOf(id)).click();
      await waitForLine(id, 'left-behind-16');
      await page.locator('.tab-panel:visible .xterm').click();
      await page.keyboard.type('echo taken-over-$((5*5))\n');
      await waitForLine(id, 'taken-over-25');

      // A window opened now shows it as a tab, as it loads.
      const third = await newWindow();
      windows.push(third);
      await expect.poll(() => third.locator(`.tab-panel .terminal-pane[data-session-id="${id}"]`).count(), { timeout: 10_000 }).toBe(1);

      // The closed window reopened (the browser gives a reopened tab its sessionStorage back): its
      // panel takes the shell back, and the other windows' tabs of it go, the shell running on.
      const reopened = await browser.context.newPage();
      windows.push(reopened);
      await reopened.addInitScript((sessionId) => sessionStorage.setItem('wraith.panelSession', sessionId), id);
      await reopened.goto(server.url);
      await reopened.getByText('Host: connected').waitFor();
      const reopenedPanel = reopened.getByRole('region', { name: 'Local shell' });
      await reopened.keyboard.press('Control+Shift+G');
      expect(await sessionIn(reopenedPanel)).toBe(id);
      await expect.poll(() => pane.count(), { timeout: 10_000 }).toBe(0);
      await expect.poll(() => third.locator(`.terminal-pane[data-session-id="${id}"]`).count(), { timeout: 10_000 }).toBe(0);
      await page.getByText(/went back to the local shell panel of the window it was started in/).first().waitFor();
      expect(await reopened.locator(`.tab-panel .terminal-pane[data-session-id="${id}"]`).count()).toBe(0);
      expect((await cli.call('sessions.list')).find((s) => s.id === id)).toMatchObject({ state: 'open', panel: true });
      await waitForLine(id, 'taken-over-25', reopened);
      await reopenedPanel.locator('.xterm').click();
      await reopened.keyboard.type('echo back-home-$((3*3))\n');
      await waitForLine(id, 'back-home-9', reopened);
    } finally {
      if (id) await cli.call('sessions.close', { sessionId: id }).catch(() => undefined);
      for (const win of windows) if (!win.isClosed()) await win.close();
    }
  });

  it("a reloaded window keeps its panel shell: once the grace its old connection started is over, still no tab of it here", async () => {
    const other = await newWindow();
    try {
      const id = await panelShellOf(other, 'reloaded');
      await other.reload();
      await other.getByText('Host: connected').waitFor();
      const otherPanel = other.getByRole('region', { name: 'Local shell' });
      await other.keyboard.press('Control+Shift+G');
      expect(await sessionIn(otherPanel)).toBe(id);

      // A grace later (the clock's shell, let go, comes here as a tab) the reloaded window's is still its panel's.
      const clock = await graceClock();
      await expect.poll(() => page.locator(`.terminal-pane[data-session-id="${clock}"]`).count(), { timeout: PANEL_GRACE_MS + 15_000 }).toBe(1);
      expect(await page.locator(`.terminal-pane[data-session-id="${id}"]`).count()).toBe(0);
      expect(await other.locator(`.tab-panel .terminal-pane[data-session-id="${id}"]`).count()).toBe(0);
      expect((await cli.call('sessions.list')).find((s) => s.id === id)?.panel).toBe(true);
      await otherPanel.locator('.xterm').click();
      await other.keyboard.type('echo kept-$((7*6))\n');
      await waitForLine(id, 'kept-42', other);

      const before = await tabs().count();
      await (await tabOf(clock)).locator('.tab-close').click();
      await expect.poll(() => tabs().count()).toBe(before - 1);
      await cli.call('sessions.close', { sessionId: id });
    } finally {
      await other.close();
    }
  });
});

describe('Kill in the local shell panel', () => {
  it('says "Stopping…" while a shell that ignores the hang-up and SIGTERM goes, then ends it and the job in front of it', async () => {
    await page.keyboard.press('Control+Shift+G');
    await panel().waitFor();
    await panel().getByRole('button', { name: /^(Launch|New shell)/ }).last().click();
    const id = await sessionIn(panel());
    await panel().locator('.xterm').click();
    await page.keyboard.type("echo shell-$$; trap '' HUP TERM; sleep 100\n");
    await expect.poll(async () => (await lines(id)).find((l) => /^shell-\d+$/.test(l))).toBeDefined();
    const shell = Number((await lines(id)).find((l) => /^shell-\d+$/.test(l))?.slice('shell-'.length));
    const job = await until('the sleep to start', () => childrenOf(shell)[0]);
    try {
      await panel().getByRole('button', { name: 'Kill' }).click();
      // It ignores SIGHUP: the panel says what is going on until the exit comes.
      await panel().getByRole('button', { name: 'Stopping…' }).waitFor();
      expect(await panel().getByRole('status').innerText()).toContain('Stopping bash…');
      await expect.poll(() => panel().locator('.terminal-pane').getAttribute('data-phase'), { timeout: 10_000 }).toBe('ended');
      expect(await panel().locator('.pane-banner').innerText()).toContain('Session ended — Relaunch?');
      expect(running(shell)).toBe(false);
      await expect.poll(() => running(job)).toBe(false);
      expect(await panel().getByRole('button', { name: 'Kill' }).isDisabled()).toBe(true);
    } finally {
      if (running(job)) process.kill(job, 'SIGKILL');
    }
    // The keys stayed in the panel: Enter relaunches, as the notice says.
    await page.keyboard.press('Enter');
    await expect.poll(() => panel().locator('.terminal-pane').getAttribute('data-phase'), { timeout: 10_000 }).toBe('open');
    await page.keyboard.press('Control+Shift+G');
    await panel().waitFor({ state: 'hidden' });
  });
});

describe("a local tab's name", () => {
  it('follows the folder the shell reports (OSC 7) and the title it sets (OSC 0/2); a renamed tab keeps its name', async () => {
    const id = await ownShellTab();
    const tab = await tabOf(id);
    const name = () => tab.locator('.tab-title').innerText();
    expect(await name()).toBe('bash');
    // The user's own prompt may set the title at every prompt: this shell's prompt sets none.
    await page.keyboard.type(`PROMPT_COMMAND=; PS1='$ '; printf '\\033]7;file://%s%s\\007' "$HOSTNAME" /usr/share/my%20docs; echo reported\n`);
    await waitForLine(id, 'reported');
    await expect.poll(name).toBe('bash — my docs');
    await page.keyboard.type(`printf '\\033]2;%s\\007' "deploy-$((6*7))"; echo titled\n`);
    await waitForLine(id, 'titled');
    await expect.poll(name).toBe('deploy-42');
    expect(await tab.getAttribute('title')).toBe('deploy-42 — bash — open');
    expect(await page.title()).toBe('deploy-42 — Wraith');

    await tab.click({ button: 'right' });
    await page.getByRole('menu', { name: 'Tab deploy-42' }).getByRole('menuitem', { name: 'Rename tab…' }).click();
    const ask = page.getByRole('dialog', { name: 'Rename tab' });
    expect(await ask.locator('input').inputValue()).toBe('deploy-42');
    await ask.locator('input').fill('my build');
    await ask.getByRole('button', { name: 'Rename' }).click();
    await expect.poll(name).toBe('my build');
    await page.locator('.tab-panel:visible .xterm').click();
    await page.keyboard.type(`printf '\\033]0;%s\\007' "other-$((2*2))"; echo retitled\n`);
    await waitForLine(id, 'retitled');
    await expect.poll(() => tab.getAttribute('title')).toContain('other-4');
    expect(await name()).toBe('my build');
  });
});
