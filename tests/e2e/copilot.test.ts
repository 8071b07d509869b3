/**
 * The XO panel in real Chromium against a real `wraith serve`, a real sshd and the fake Claude:
 * Ctrl+Shift+K opens the panel, a message goes out, the XO's act waits on a tool card, the
 * Commander approves it, and the command runs in the terminal tab.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AppWithSshd, startAppWithSshd } from '../fixtures/app-with-sshd.js';
import { type FakeAnthropic, type RecordedRequest, startFakeAnthropic } from '../fixtures/fake-anthropic.js';

let fake: FakeAnthropic;
let app: AppWithSshd;
let page: Page;
const marker = `xo-was-here-${Math.random().toString(36).slice(2, 8)}`;

/** The session the Commander is looking at, as the XO is told in the first user turn. */
function focusedSession(req: RecordedRequest): string {
  const m = /looking at session ([^:]+):/.exec(JSON.stringify(req.body.messages));
  if (!m?.[1]) throw new Error('no focused session in the request');
  return m[1];
}

/** What the terminal tab of a session shows, read through the renderer's inspector. */
function terminalText(sessionId: string): Promise<string> {
  return page.evaluate((id) => {
    const inspect: unknown = Reflect.get(window, 'wraithInspect');
    if (typeof inspect !== 'object' || inspect === null || !('terminals' in inspect)) return '';
    const t = inspect.terminals;
    if (typeof t !== 'object' || t === null || !('text' in t) || typeof t.text !== 'function') return '';
    const out: unknown = t.text(id);
    return typeof out === 'string' ? out : '';
  }, sessionId);
}

beforeAll(async () => {
  fake = await startFakeAnthropic();
  app = await startAppWithSshd({ connection: 'web01', server: { env: { ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: 'sk-ant-e2e' } } });
  page = app.page;
});

afterAll(async () => {
  await app?.stop();
  await fake?.stop();
});

describe('the XO panel', () => {
  it('opens with Ctrl+Shift+K, sends a message, and runs an approved command in the terminal tab', async () => {
    // Open web01 in a tab.
    await page.getByRole('treeitem', { name: /^web01, SSH/ }).dblclick();
    let sessionId = '';
    await expect
      .poll(async () => (sessionId = (await app.api.call('sessions.list')).find((s) => s.state === 'open')?.id ?? ''), { timeout: 15_000 })
      .not.toBe('');

    await page.keyboard.press('Control+Shift+K');
    const panel = page.getByRole('region', { name: 'XO copilot' });
    await panel.waitFor();
    expect(await panel.getByRole('heading', { name: 'XO' }).count()).toBe(1);
    expect(await panel.getByRole('radio', { name: 'Ask' }).getAttribute('aria-checked')).toBe('true');

    fake.enqueue(
      (req) => ({
        content: [
          { type: 'text', text: 'Aye, Commander. Marking the terminal.' },
          { type: 'tool_use', id: 'toolu_e2e', name: 'terminal_write', input: { sessionId: focusedSession(req), text: `echo ${marker}\n` } },
        ],
      }),
      { content: [{ type: 'text', text: 'Done — the marker is **in the terminal**.\n\n```sh\necho ok\n```' }] },
    );
    await panel.getByLabel('Message to the XO').fill('Leave a marker in my terminal');
    await panel.getByLabel('Message to the XO').press('Enter');

    const card = panel.locator('.tool-card[data-tool="terminal_write"]');
    await card.locator('[data-testid="approval-exact"]').waitFor();
    expect(await card.locator('.tool-summary').innerText()).toBe(`Typed \`echo ${marker}⏎\` in web01 (SSH)`);
    expect(await card.locator('[data-testid="approval-exact"]').innerText()).toContain(`echo ${marker}`);
    expect(await card.getAttribute('data-status')).toBe('pending');
    expect(await panel.locator('.msg.user').innerText()).toBe('Leave a marker in my terminal');
    // The tab the XO wants to act in is marked, waiting for the Commander.
    const tab = page.getByRole('tab', { name: /web01/ });
    expect(await tab.locator('.xo-marker.waiting').count()).toBe(1);
    // Not typed until approved.
    const before = await terminalText(sessionId);
    expect(before).not.toContain(`echo ${marker}`);

    await card.getByRole('button', { name: 'Approve', exact: true }).click();
    await expect.poll(() => card.getAttribute('data-status'), { timeout: 10_000 }).toBe('ok');
    await expect
      .poll(() => terminalText(sessionId), { timeout: 10_000 })
      .toMatch(new RegExp(`\\n${marker}`));
    // When the run is over, the marker goes.
    await expect.poll(() => tab.locator('.xo-marker').count(), { timeout: 10_000 }).toBe(0);

    // The answer is rendered markdown, with a copy button on the code block.
    const last = panel.locator('.msg.xo').last();
    await last.locator('strong', { hasText: 'in the terminal' }).waitFor();
    expect(await last.locator('button.copy-code').count()).toBe(1);
    await expect.poll(() => panel.getByTestId('xo-tokens').innerText()).toMatch(/\d/);
    expect(app.browser.pageErrors).toEqual([]);
  });

  it('shows the Auto indicator, and Esc stops a run', async () => {
    const panel = page.getByRole('region', { name: 'XO copilot' });
    await panel.getByRole('button', { name: 'New conversation' }).click();
    expect(await panel.locator('.msg').count()).toBe(0);
    await panel.getByRole('radio', { name: 'Auto' }).click();
    await panel.getByText('AUTO', { exact: true }).waitFor();
    expect((await app.api.call('ai.mode.get')).mode).toBe('auto');

    fake.enqueue({ content: [{ type: 'text', text: 'Thinking very slowly about this one, Commander' }], chunkSize: 3, stallAfterEvents: 6 });
    await panel.getByLabel('Message to the XO').fill('Take your time');
    await panel.getByLabel('Message to the XO').press('Enter');
    await panel.getByText('XO is working').waitFor();
    await panel.getByLabel('Message to the XO').press('Escape');
    await panel.getByText('Stopped.').waitFor();
    expect(await panel.getByText('XO is working').count()).toBe(0);
    await panel.getByRole('radio', { name: 'Ask' }).click();
  });

  it('lists past conversations in the menu', async () => {
    const panel = page.getByRole('region', { name: 'XO copilot' });
    await panel.getByRole('button', { name: 'Conversations' }).click();
    const menu = panel.getByRole('dialog', { name: 'Conversations' });
    await menu.getByRole('button', { name: 'Leave a marker in my terminal', exact: true }).waitFor();
    await menu.getByLabel('Search conversations').fill('time');
    await expect.poll(() => menu.locator('.conv-open').allInnerTexts()).toEqual(['Take your time']);
  });
});
