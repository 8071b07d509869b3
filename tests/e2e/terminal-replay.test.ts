/**
 * What an SSH tab shows when it reads its session's output back — after a page reload, or after
 * its link to the host dropped and came back — in real Chromium against a real sshd: queries in
 * the output read back are not answered again (the answers would be typed into the program), a
 * catch-up that lost output to the ring buffer starts in the modes where it starts, and the
 * "Disconnected" lines the tab wrote are written again where they were. The page goes through a
 * forward that can cut its WebSocket. The tests run in order, in the same tab.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import type { ContractClient } from '../../src-main/common/client.js';
import { connectWebSocket } from '../../src-main/server/ws-client.js';
import { formatEndTime } from '../../src-renderer/features/terminal/end-notice.js';
import { type TestBrowser, openApp } from '../fixtures/browser.js';
import { until } from '../fixtures/poll.js';
import { type SshdHandle, savePasswordConnection, startSshd } from '../fixtures/sshd.js';
import { activeSessionId, terminalText, typeAndSee } from '../fixtures/terminal-page.js';
import { type WraithServer, startWraithServer } from '../fixtures/wraith-server.js';
import { type WsCutter, startWsCutter } from '../fixtures/ws-cutter.js';

let sshd: SshdHandle;
let server: WraithServer;
let cutter: WsCutter;
let browser: TestBrowser;
let page: Page;
let api: ContractClient;

beforeAll(async () => {
  sshd = await startSshd();
  server = await startWraithServer();
  cutter = await startWsCutter(Number(new URL(server.url).port));
  api = await connectWebSocket(server.url, server.token);
  await savePasswordConnection(api, sshd, 'web01');
  browser = await openApp(`http://127.0.0.1:${cutter.port}/?token=${server.token}`);
  page = browser.page;
});

afterAll(async () => {
  api?.close();
  await browser?.close();
  await cutter?.close();
  await server?.stop();
  await sshd?.stop();
});

/** The lines the terminal shows (its active screen and scrollback), trailing blanks dropped. */
const lines = (id: string) => async () => (await terminalText(page, id)).split('\n').map((l) => l.trimEnd());
const hostHas = async (id: string, text: string) => (await api.call('terminal.read', { sessionId: id, maxBytes: 64 * 1024, stripAnsi: true })).text.includes(text);

async function reload(): Promise<void> {
  await page.reload();
  await page.getByText('Host: connected').waitFor();
}

describe('output read back after a reload', () => {
  it('has its queries answered once, when they came: nothing reaches the program after the reload, and a query made now is answered', async () => {
    await page.getByRole('treeitem', { name: /^web01, SSH/ }).dblclick();
    const id = await activeSessionId(page);
    // Device attributes (DA1) and the cursor position (DSR 6), answered now and read; then cat
    // shows every byte that reaches the program (keys not echoed, each passed on at once).
    await typeAndSee(page, id, "stty -icanon -echo; printf '\\033[6n\\033[c'; IFS= read -r -d c reply; echo \"asked-$((6*7))\"; cat -v", 'asked-42');

    await reload();
    await expect.poll(lines(id), { timeout: 15_000 }).toContain('asked-42');
    // Typed after the output read back: whatever the page sent before (an answer) comes first.
    await page.locator('.tab-panel:visible .xterm').click();
    await page.keyboard.type('typed');
    await expect.poll(async () => (await lines(id)()).some((l) => l.endsWith('typed')), { timeout: 10_000 }).toBe(true);
    const shown = await lines(id)();
    expect(shown[shown.indexOf('asked-42') + 1]).toBe('typed');

    // A query made after the reload is answered, as programs (vim) need.
    await page.keyboard.press('Control+C');
    await typeAndSee(page, id, "stty sane; stty -icanon -echo; printf '\\033[c'; IFS= read -r -d c reply; stty sane; echo \"reply:${reply:1}\"", 'reply:[?1;2');
  });
});

describe('a catch-up after the link to the host dropped', () => {
  it('starts in the modes where the output kept starts, when the ring buffer lost the sequences that set them', async () => {
    const id = await activeSessionId(page);
    // After the cut: as vim with mouse=a sets up (alternate screen, SGR mouse reports), then more
    // output than the ring buffer keeps (1,200 lines of 1,000 bytes; it keeps 1 MiB). Then it reads
    // one mouse report and shows its bytes; a key later, it leaves.
    await page.locator('.tab-panel:visible .xterm').click();
    await page.keyboard.type(
      "echo \"start-$((6*7))\"; sleep 3; printf '\\033[?1049h\\033[?1000h\\033[?1006h'; for i in $(seq 1200); do printf '%01000d\\n' 0; done; " +
        'stty -icanon -echo; echo "flood-$((6*7))"; IFS= read -r -d m report; stty sane; printf %s "$report" | od -An -tx1; ' +
        "read -r -n 1 key; printf '\\033[?1006l\\033[?1000l\\033[?1049l'; echo \"left-$((6*7))\"\n",
    );
    // The line must reach the shell before the cut (keys on their way would be lost with the link).
    await until('the command running', () => hostHas(id, '\nstart-42'));
    cutter.cut();
    await page.getByText('Host: disconnected — reconnecting…').waitFor();
    await until('the flood done on the host', () => hostHas(id, 'flood-42'), 30_000);
    // The modes were set in output the ring buffer no longer has.
    const kept = await api.call('terminal.read', { sessionId: id, maxBytes: 4 * 1024 * 1024 });
    expect(kept.text).not.toContain('\x1b[?1049h');
    expect(kept.restore).toBe('\x1b[?1049h\x1b[?1000;1006h');
    cutter.restore();
    await page.getByText('Host: connected').waitFor({ timeout: 15_000 });

    await expect.poll(lines(id), { timeout: 15_000 }).toContain('flood-42');
    // A click is a mouse report to the program (SGR: ESC [ <), as it would have been without the cut.
    await page.locator('.tab-panel:visible .xterm').click({ position: { x: 200, y: 100 } });
    await expect.poll(async () => (await lines(id)()).some((l) => l.startsWith(' 1b 5b 3c')), { timeout: 10_000 }).toBe(true);
    // It leaves the alternate screen: the normal one is back, without the program's screen on it.
    await page.keyboard.press('q');
    await expect.poll(lines(id), { timeout: 10_000 }).toContain('left-42');
    expect(await terminalText(page, id)).not.toContain('flood-42');
  }, 90_000);
});

describe('the lines a tab wrote when its connection dropped', () => {
  const banner = () => page.locator('.tab-panel:visible .pane-banner');
  /** The line the tab writes where the connection dropped, as the host has the drop. */
  const noticeOf = (end: { at: string; reason: string | null }) => `— Disconnected at ${formatEndTime(new Date(end.at))}: ${end.reason ?? ''}`;

  it('are written again after a reload, where they were, with when it dropped', async () => {
    const id = await activeSessionId(page);
    await typeAndSee(page, id, 'clear; echo "before-$((6*7))"', 'before-42');
    sshd.dropConnections();
    await banner().getByRole('button', { name: 'Reconnect' }).waitFor({ timeout: 20_000 });
    await expect.poll(async () => (await terminalText(page, id)).includes('Press Enter to reconnect.')).toBe(true);
    await banner().getByRole('button', { name: 'Reconnect' }).click();
    await banner().waitFor({ state: 'detached', timeout: 20_000 });
    await typeAndSee(page, id, 'echo "after-$((6*7))"', 'after-42');

    // The host has the drop beside the output, not in it.
    const [end] = (await api.call('terminal.read', { sessionId: id, maxBytes: 256 * 1024 })).ends;
    if (!end) throw new Error('the host kept no end of the dropped connection');
    expect((await api.call('terminal.read', { sessionId: id, maxBytes: 256 * 1024 })).text).not.toContain('Disconnected');

    await reload();
    await expect.poll(lines(id), { timeout: 15_000 }).toContain('after-42');
    const shown = await lines(id)();
    expect(end.reason).toMatch(/^Connection to web01 lost/);
    const notice = shown.indexOf(noticeOf(end));
    expect(notice).toBeGreaterThan(shown.indexOf('before-42'));
    expect(notice).toBeLessThan(shown.indexOf('after-42'));
  }, 60_000);

  it('a tab still disconnected says so once after a reload, with the time it dropped and what Enter does', async () => {
    const id = await activeSessionId(page);
    sshd.dropConnections();
    await banner().getByRole('button', { name: 'Reconnect' }).waitFor({ timeout: 20_000 });
    const ends = (await api.call('terminal.read', { sessionId: id, maxBytes: 256 * 1024 })).ends;
    const last = ends[ends.length - 1];
    if (!last || ends.length !== 2) throw new Error(`the host kept ${ends.length} ends, not 2`);

    await reload();
    await banner().getByRole('button', { name: 'Reconnect' }).waitFor();
    const current = `${noticeOf(last)} Press Enter to reconnect.`;
    await expect.poll(lines(id), { timeout: 15_000 }).toContain(current);
    const shown = await lines(id)();
    expect(shown.filter((l) => l.startsWith('— Disconnected'))).toEqual([noticeOf(ends[0] ?? last), current]);
  }, 60_000);
});
