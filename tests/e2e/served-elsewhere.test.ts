/**
 * `wraith serve` as a jump host's users meet it, against a real sshd:
 * - opened in Chromium by a name it never printed (Chromium resolves wraith-jump.test to
 *   127.0.0.1, as a jump host's DNS name would): the page reaches its host, a terminal echoes,
 *   and a file uploads as a PUT;
 * - through a forward on another port whose WebSocket is cut and kept away for a while (as a proxy
 *   that drops WebSockets does) while an upload's PUT and a download go on: both end as they
 *   should once the page is back; and a terminal shows the output its shell wrote meanwhile, once,
 *   and is not left paused by the credit its lost output took; the XO's act that asked for the
 *   Commander meanwhile is shown to approve, and a run that ended meanwhile is shown ended; an SSH
 *   session that dropped meanwhile shows "Disconnected — Reconnect", and reconnects;
 * - through the same forward when every connection is cut (the network dropped): an upload goes on
 *   from where the host had it, with a second PUT, and lands whole.
 */
import { createHash, randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page, Request } from 'playwright-core';
import { openSshTab, waitForTail } from '../../bench/wraith-tab.js';
import { type TestBrowser, launchBrowser } from '../fixtures/browser.js';
import { type SshdHandle, startSshd } from '../fixtures/sshd.js';
import { type WraithServer, startWraithServer } from '../fixtures/wraith-server.js';
import { type WsCutter, startWsCutter } from '../fixtures/ws-cutter.js';
import { connectWebSocket } from '../../src-main/server/ws-client.js';
import type { ContractClient } from '../../src-main/common/client.js';
import type { TransferInfo } from '../../src-main/common/contract/sftp.js';
import { until } from '../fixtures/poll.js';
import { type FakeAnthropic, type ScriptedTurn, startFakeAnthropic } from '../fixtures/fake-anthropic.js';

const NAME = 'wraith-jump.test';
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
let sshd: SshdHandle;
let server: WraithServer;
let browser: TestBrowser;
let page: Page;
let home: string;

beforeAll(async () => {
  sshd = await startSshd();
  home = execFileSync('getent', ['passwd', sshd.users.password.username], { encoding: 'utf8' }).split(':')[5] ?? '';
  server = await startWraithServer();
  browser = await launchBrowser({ extraArgs: [`--host-resolver-rules=MAP ${NAME} 127.0.0.1`] });
  page = browser.page;
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await sshd?.stop();
  if (home) for (const f of ['by-name.bin', 'across-cut.bin', 'cut-down.bin', 'resumed.bin']) rmSync(`${home}/${f}`, { force: true });
});

describe('opened by another name than the one it printed', () => {
  it('reaches its host, runs a terminal and uploads a file', async () => {
    const port = new URL(server.url).port;
    await page.goto(`http://${NAME}:${port}/?token=${server.token}`);
    expect(new URL(page.url()).host).toBe(`${NAME}:${port}`);
    await page.getByText('Host: connected').waitFor({ timeout: 15_000 });

    const sessionId = await openSshTab(page, sshd);
    await page.keyboard.type('echo by-$((6*7))-name\n');
    await waitForTail(page, sessionId, 'by-42-name');

    // The Files panel's upload is a PUT to the host, Origin-checked like the WebSocket.
    await page.keyboard.press('Control+Shift+E');
    const panel = page.getByRole('complementary', { name: 'Files' });
    await expect.poll(() => panel.getAttribute('data-path'), { timeout: 15_000 }).toBe(home);
    const payload = randomBytes(256 * 1024);
    await panel.locator('input[name=sftp-upload]').setInputFiles({ name: 'by-name.bin', mimeType: 'application/octet-stream', buffer: payload });
    const transfer = panel.locator('.transfer').filter({ hasText: 'by-name.bin' });
    await expect.poll(() => transfer.getAttribute('data-state'), { timeout: 20_000 }).toBe('done');
    expect(sha(readFileSync(`${home}/by-name.bin`))).toBe(sha(payload));
  });
});

describe('through a forward whose WebSocket is cut while files move', () => {
  let host: WraithServer;
  let cutter: WsCutter;
  let b: TestBrowser;
  let p: Page;
  let client: ContractClient;
  let fake: FakeAnthropic;
  let sessionId = '';
  const localDir = mkdtempSync(join(tmpdir(), 'wraith-cut-'));
  const big = join(localDir, 'across-cut.bin');
  const panel = () => p.getByRole('complementary', { name: 'Files' });
  const transferRow = (name: string) => panel().locator('.transfer').filter({ hasText: name });
  const hostTransfer = async (remotePath: string): Promise<TransferInfo | undefined> =>
    (await client.call('sftp.transfers')).find((t) => t.remotePath === remotePath);
  /** Cuts the page's WebSocket (or, with `all`, every connection of the page) and waits until the page says so. */
  const goAway = async (all = false) => {
    if (all) cutter.cutAll();
    else cutter.cut();
    await p.getByText('Host: disconnected — reconnecting…').waitFor();
  };
  /** Lets the page's connections through again and waits until it has reconnected. */
  const comeBack = async () => {
    cutter.restore();
    await p.getByText('Host: connected').waitFor({ timeout: 15_000 });
  };

  beforeAll(async () => {
    fake = await startFakeAnthropic();
    host = await startWraithServer({ env: { ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: 'sk-ant-e2e' } });
    cutter = await startWsCutter(Number(new URL(host.url).port));
    client = await connectWebSocket(host.url, host.token);
    b = await launchBrowser();
    p = b.page;
    // 256 MiB, sparse: seconds of transfer, time for the cut.
    execFileSync('truncate', ['-s', '256M', big]);
    execFileSync('truncate', ['-s', '256M', `${home}/cut-down.bin`]);
  });
  afterAll(async () => {
    client?.close();
    await b?.close();
    await cutter?.close();
    await host?.stop();
    await fake?.stop();
    rmSync(localDir, { recursive: true, force: true });
  });

  it('opens through the forward, and an upload whose PUT ends while the WebSocket is away lands once it is back', async () => {
    await p.goto(`http://127.0.0.1:${cutter.port}/?token=${host.token}`);
    await p.getByText('Host: connected').waitFor({ timeout: 15_000 });
    sessionId = await openSshTab(p, sshd);
    await p.keyboard.press('Control+Shift+E');
    await expect.poll(() => panel().getAttribute('data-path'), { timeout: 15_000 }).toBe(home);

    const remotePath = `${home}/across-cut.bin`;
    await panel().locator('input[name=sftp-upload]').setInputFiles(big);
    const row = transferRow('across-cut.bin');
    await until('the upload under way on the host', async () => ((await hostTransfer(remotePath))?.bytes ?? 0) > 0);
    await goAway();
    // The PUT goes on without the WebSocket, to its last byte...
    await until('every byte on the host', async () => {
      const t = await hostTransfer(remotePath);
      return t !== undefined && t.bytes === t.totalBytes;
    }, 60_000);
    // ...and the page, which cannot end the upload yet, waits for its link instead of failing it.
    await p.waitForTimeout(1500);
    expect(await row.getAttribute('data-state')).toBe('running');
    expect((await hostTransfer(remotePath))?.state).toBe('running');

    await comeBack();
    await expect.poll(() => row.getAttribute('data-state'), { timeout: 20_000 }).toBe('done');
    expect(statSync(remotePath).size).toBe(256 * 1024 * 1024);
    expect(readdirSync(home).filter((n) => n.includes('across-cut.bin.wraith-part'))).toEqual([]);
  }, 90_000);

  it("shows a download done that ended while the WebSocket was away", async () => {
    const remotePath = `${home}/cut-down.bin`;
    const file = panel().locator('tr.sftp-row[data-name="cut-down.bin"]');
    await panel().getByRole('button', { name: 'Refresh' }).click();
    await file.locator('.entry-name').click({ button: 'right' });
    const [download] = await Promise.all([p.waitForEvent('download'), p.getByRole('menuitem', { name: 'Download' }).click()]);
    const row = transferRow('cut-down.bin');
    await until('the download under way on the host', async () => ((await hostTransfer(remotePath))?.bytes ?? 0) > 0);
    await goAway();
    // The browser's own download (HTTP, not the WebSocket) goes on to its end.
    await until('the download done on the host', async () => (await hostTransfer(remotePath))?.state === 'done', 60_000);
    expect(await download.failure()).toBeNull();
    expect(await row.getAttribute('data-state')).toBe('running'); // nobody told the page yet

    await comeBack();
    await expect.poll(() => row.getAttribute('data-state'), { timeout: 20_000 }).toBe('done');
    expect(cutter.webSockets).toBe(3);
  }, 90_000);

  const hostHas = async (text: string) => (await client.call('terminal.read', { sessionId, maxBytes: 64 * 1024 })).text.includes(text);

  it('shows the output a shell wrote while the WebSocket was away, once', async () => {
    await p.locator('.tab-panel:visible .xterm').click();
    await p.keyboard.type('sleep 3; seq 1 3000 | tail -n 2; echo away-$((40+2))\n');
    // The line must have reached the shell before the cut (keys still on their way would be lost
    // with the link); its output comes after the sleep, while the page is away.
    await until('the command line at the shell', () => hostHas('echo away-$((40+2))'));
    await goAway();
    await until('the shell done on the host', () => hostHas('away-42'));
    // Typing meanwhile goes nowhere, and the page says so (once).
    await p.keyboard.type('lost');
    await p.locator('.toasts .toast', { hasText: 'Not sent: the link to the Wraith host is down' }).waitFor();
    expect(await p.locator('.toasts .toast', { hasText: 'Not sent' }).count()).toBe(1);
    await comeBack();
    await waitForTail(p, sessionId, 'away-42');
    const lines = (await p.evaluate(([sid]) => window.wraithInspect?.terminals.tail(sid, 60) ?? '', [sessionId] as const)).split('\n').map((l) => l.trimEnd());
    expect(lines.filter((l) => l === 'away-42')).toHaveLength(1);
    expect(lines.filter((l) => l === '3000')).toHaveLength(1);
    expect(lines.indexOf('2999')).toBe(lines.indexOf('3000') - 1);
  });

  it('credits the output of a flood that never reached the page, so the rest flows at once', async () => {
    // A flood while away: the host pauses the shell once 2 MiB are owed by the view, and those
    // bytes never reach it. Shown after the reconnect, they are credited, and the rest flows at
    // once (the host's own stall timer would free it only after 30 s).
    // 6 MB in lines of 99 zeros; the command is kept short enough not to wrap, so that its echo
    // can be found in the host's ring as typed.
    await p.keyboard.type('sleep 3; yes $(printf %099d) | head -60000; echo flood-$((1+1))\n');
    await until('the command line at the shell', () => hostHas('echo flood-$((1+1))'));
    await goAway();
    await until('the flood under way on the host', () => hostHas('0'.repeat(99)));
    await p.waitForTimeout(1000);
    expect(await hostHas('flood-2')).toBe(false); // paused by flow control, not finished
    await comeBack();
    await waitForTail(p, sessionId, 'flood-2');
  });

  it("shows the XO's act that asked for approval while the WebSocket was away, and a run that ended meanwhile", async () => {
    await p.keyboard.press('Control+Shift+K');
    const xo = p.getByRole('region', { name: 'XO copilot' });
    await xo.waitFor();
    /** Sends `message`; the XO's answer (`turn`, then `more`) comes only once the page is cut off. */
    const sendAnsweredWhileAway = async (message: string, turn: ScriptedTurn, ...more: ScriptedTurn[]) => {
      let answer: () => void = () => {};
      const away = new Promise<void>((r) => (answer = r));
      fake.enqueue(async () => {
        await away;
        return turn;
      }, ...more);
      const before = fake.requests.length;
      await xo.getByLabel('Message to the XO').fill(message);
      await xo.getByLabel('Message to the XO').press('Enter');
      await fake.waitForRequests(before + 1);
      await goAway();
      answer();
    };

    await sendAnsweredWhileAway(
      'Mark my terminal',
      { content: [{ type: 'text', text: 'Aye.' }, { type: 'tool_use', id: 'toolu_away', name: 'terminal_write', input: { sessionId, text: 'echo xo-$((5*5))\n' } }] },
      { content: [{ type: 'text', text: 'Marked while you were away.' }] },
    );
    await until('the act waiting on the host', async () => (await client.call('ai.runs'))[0]?.approvals.length === 1);
    await comeBack();
    const card = xo.locator('.tool-card[data-tool="terminal_write"]');
    await card.locator('[data-testid="approval-exact"]').waitFor({ timeout: 15_000 });
    expect(await card.getAttribute('data-status')).toBe('pending');
    await card.getByRole('button', { name: 'Approve', exact: true }).click();
    await waitForTail(p, sessionId, 'xo-25');
    await expect.poll(() => card.getAttribute('data-status'), { timeout: 10_000 }).toBe('ok');
    await xo.getByText('Marked while you were away.').waitFor({ timeout: 10_000 });

    // A whole run that ends while the page is away: shown ended, with its answer, once back.
    await sendAnsweredWhileAway('Anything new?', { content: [{ type: 'text', text: 'All quiet on web01.' }] });
    await until('the run over on the host', async () => (await client.call('ai.runs')).length === 0);
    await comeBack();
    await xo.getByText('All quiet on web01.').waitFor({ timeout: 15_000 });
    await expect.poll(() => xo.getByText('XO is working…').count(), { timeout: 10_000 }).toBe(0);

    // What only the panel knows (an error the run ended with) is still there, in its place, once back.
    const refusal = 'prompt is too long: 210000 tokens > 200000 maximum';
    fake.enqueue({ error: { status: 400, type: 'invalid_request_error', message: refusal } });
    await xo.getByLabel('Message to the XO').fill('Read the whole log');
    await xo.getByLabel('Message to the XO').press('Enter');
    await xo.getByText(refusal).waitFor({ timeout: 15_000 });
    const shown = () => xo.locator('.messages > .msg, .messages > .tool-card').allInnerTexts();
    const before = await shown();
    // Marks what is on screen now: the panel draws the conversation anew once it has reloaded it.
    await xo.locator('.messages > .msg').first().evaluate((el) => el.setAttribute('data-before-cut', ''));
    await goAway();
    await comeBack();
    await until('the conversation reloaded', async () => (await xo.locator('[data-before-cut]').count()) === 0);
    expect(await shown()).toEqual(before);
  });

  it('shows an SSH session that dropped while the WebSocket was away as disconnected, and reconnects it', async () => {
    await goAway();
    sshd.dropConnections();
    await until('the session disconnected on the host', async () => (await client.call('sessions.list')).find((s) => s.id === sessionId)?.state === 'disconnected');
    await comeBack();
    const card = p.getByRole('alert').filter({ hasText: 'Disconnected —' });
    await card.waitFor({ timeout: 15_000 });
    expect(await p.locator('.tab.active').getAttribute('class')).toContain('disconnected');
    await card.getByRole('button', { name: 'Reconnect' }).click();
    await expect.poll(() => p.locator('.tab.active').getAttribute('class'), { timeout: 20_000 }).toContain('open');
    await p.locator('.tab-panel:visible .xterm').click();
    await p.keyboard.type('echo back-$((2*50))\n');
    await waitForTail(p, sessionId, 'back-100');
  });

  it('resumes an upload whose PUT the network cut off, from where the host had it', async () => {
    const data = randomBytes(96 * 1024 * 1024);
    const local = join(localDir, 'resumed.bin');
    writeFileSync(local, data);
    const remotePath = `${home}/resumed.bin`;
    const puts: string[] = [];
    const onRequest = (r: Request) => {
      if (r.method() === 'PUT') puts.push(r.url());
    };
    p.on('request', onRequest);
    await panel().locator('input[name=sftp-upload]').setInputFiles(local);
    const row = transferRow('resumed.bin');
    await until('part of it on the host', async () => ((await hostTransfer(remotePath))?.bytes ?? 0) > 8 * 1024 * 1024);
    await goAway(true);
    expect((await hostTransfer(remotePath))?.bytes ?? 0).toBeLessThan(data.length);
    cutter.restore();
    await expect.poll(() => row.getAttribute('data-state'), { timeout: 60_000 }).toBe('done');
    p.off('request', onRequest);
    expect(puts).toHaveLength(2);
    expect(sha(readFileSync(remotePath))).toBe(sha(data));
    expect(readdirSync(home).filter((n) => n.includes('resumed.bin.wraith-part'))).toEqual([]);
  }, 90_000);
});
