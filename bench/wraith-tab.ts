/**
 * Set-up the browser benches share: an SSH tab opened through Wraith's UI the way a person opens
 * one (new connection, vault, host-key card), and waiting for a line in its terminal.
 */
import type { Page } from 'playwright-core';
import { createSshConnectionInUi } from '../tests/fixtures/browser.js';
import type { SshdHandle } from '../tests/fixtures/sshd.js';

/** tsx (esbuild keepNames) wraps named functions in `__name(...)`; page functions need the helper too. */
export const NAME_SHIM = 'globalThis.__name ??= (f) => f';

/** What waitForTail needs of a page: Playwright's, or a bare DevTools session (cdp-page.ts). */
export interface PageEvaluator {
  evaluate<A, R>(fn: (arg: A) => R | Promise<R>, arg: A): Promise<R>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Saves a password connection to `s` (setting up the vault), opens it, trusts the host key the
 * card shows (checked against the sshd's), and waits for the shell. Returns the tab's session id.
 */
export async function openSshTab(page: Page, s: SshdHandle): Promise<string> {
  await createSshConnectionInUi(page, { name: 'bench sshd', host: s.host, port: s.port, ...s.users.password });

  await page.getByRole('treeitem', { name: /^bench sshd, SSH/ }).dblclick();
  const card = page.getByRole('alertdialog', { name: /First connection to 127\.0\.0\.1/ });
  await card.waitFor();
  const shown = await card.locator('.fingerprint').innerText();
  if (shown !== s.hostKeyFingerprint) throw new Error(`host key card shows ${shown}, sshd has ${s.hostKeyFingerprint}`);
  await card.getByRole('button', { name: 'Trust and connect' }).click();
  const pane = page.locator('.tab-panel:visible .terminal-pane[data-session-id]');
  await pane.waitFor();
  const id = await pane.getAttribute('data-session-id');
  if (!id) throw new Error('the terminal has no session id');
  await page.locator('.tab-panel:visible .xterm').click();
  await page.keyboard.type('echo ready-$((20+1))\n');
  await waitForTail(page, id, 'ready-21');
  return id;
}

/** Waits (20 s at most) for `line` among the last 60 lines of the tab's terminal. */
export async function waitForTail(page: PageEvaluator, id: string, line: string): Promise<void> {
  const until = Date.now() + 20_000;
  while (Date.now() < until) {
    const tail = await page.evaluate(([sid, rows]) => window.wraithInspect?.terminals.tail(sid, rows) ?? '', [id, 60] as const);
    if (tail.split('\n').some((l) => l.trimEnd() === line)) return;
    await sleep(100);
  }
  throw new Error(`"${line}" did not appear in the terminal within 20 s`);
}
