/**
 * The RDP tab in real Chromium against a real RDP server (freerdp-shadow-cli sharing an Xvfb
 * display): certificate trust, the desktop's pixels on the canvas (live updates too), clicks that
 * land where xdotool says (through the fit scale and at 1:1), typed keys that reach an X window,
 * the screenshot download, "Disconnected — Reconnect" when the server dies, a repaint of what
 * changed while the page's own link to the host was cut, and the certificate questions on
 * Reconnect (a server with a new certificate, a certificate forgotten). The page reaches `wraith serve` through
 * a forward that can cut its WebSocket (tests/fixtures/ws-cutter.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import type { ContractClient } from '../../src-main/common/client.js';
import { connectWebSocket } from '../../src-main/server/ws-client.js';
import { type TestBrowser, openApp } from '../fixtures/browser.js';
import { type RdpTestServer, startRdpServer } from '../fixtures/rdp-server.js';
import { type WraithServer, startWraithServer } from '../fixtures/wraith-server.js';
import { type WsCutter, startWsCutter } from '../fixtures/ws-cutter.js';
import { canvasPixel } from '../fixtures/rdp-page.js';


let rdp: RdpTestServer;
let server: WraithServer;
let client: ContractClient;
let browser: TestBrowser;
let page: Page;
let cutter: WsCutter;

const pane = () => page.locator('.tab-panel:visible .rdp-pane');
const canvas = () => pane().locator('canvas.rdp-canvas');

const pixel = (x: number, y: number) => canvasPixel(page, x, y);

function hex(color: string): number[] {
  const n = Number.parseInt(color.slice(1), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255, 255];
}

/**
 * Waits until the canvas pixel shows `color`. Within 8 a channel: sessions use the graphics
 * pipeline with H.264 (AVC444) by default, which brings colours back a few units off.
 */
async function waitForColour(x: number, y: number, color: string): Promise<void> {
  const want = hex(color);
  try {
    await expect
      .poll(async () => {
        const got = await pixel(x, y);
        return got.length === 4 && got.every((v, i) => Math.abs(v - want[i]!) <= 8) ? want : got;
      }, { timeout: 15_000 })
      .toEqual(want);
  } catch (err) {
    await page.screenshot({ path: '/tmp/wraith-rdp-failure.png' });
    throw err;
  }
}

/** The page point over desktop pixel (x, y), whatever the view's scale. */
async function pagePoint(x: number, y: number): Promise<{ x: number; y: number }> {
  const box = await canvas().boundingBox();
  const size = await canvas().evaluate((c: HTMLCanvasElement) => ({ w: c.width, h: c.height }));
  if (!box) throw new Error('the canvas is not visible');
  return { x: box.x + ((x + 0.5) / size.w) * box.width, y: box.y + ((y + 0.5) / size.h) * box.height };
}

async function clickDesktop(x: number, y: number): Promise<void> {
  const p = await pagePoint(x, y);
  await page.mouse.click(p.x, p.y);
}

beforeAll(async () => {
  rdp = await startRdpServer({ width: 1024, height: 768 });
  await rdp.x('xsetroot', ['-solid', '#3366cc']);
  server = await startWraithServer();
  client = await connectWebSocket(server.url, new URL(server.openUrl).searchParams.get('token') ?? '');
  await client.call('connections.create', { name: 'test desktop', kind: 'rdp', host: rdp.host, port: rdp.port, rdpOptions: { security: 'tls' } });
  cutter = await startWsCutter(Number(new URL(server.url).port));
  browser = await openApp(`http://127.0.0.1:${cutter.port}/?token=${server.token}`);
  page = browser.page;
});

afterAll(async () => {
  await browser?.close();
  await cutter?.close();
  client?.close();
  await server?.stop();
  await rdp?.dispose();
});

describe('the RDP tab (needs Xvfb, freerdp2-shadow-x11, winpr-utils, xdotool: scripts/test.sh installs them)', () => {
  it('opens from the tree, asks about the certificate, and shows the desktop once trusted', async () => {
    await page.getByRole('treeitem', { name: /^test desktop, RDP/ }).dblclick();
    const card = page.getByRole('alertdialog', { name: new RegExp(`First connection to 127\\.0\\.0\\.1:${rdp.port}`) });
    await card.waitFor({ timeout: 20_000 });
    const fingerprint = await card.locator('.fingerprint').innerText();
    expect(fingerprint.length).toBeGreaterThan(20);
    await page.screenshot({ path: '/tmp/wraith-rdp-certificate.png' });
    expect(await page.locator('.tab.active .tab-kind').innerText()).toBe('RDP');
    await card.getByRole('button', { name: 'Trust and connect' }).click();

    await expect.poll(() => pane().getAttribute('data-phase'), { timeout: 20_000 }).toBe('open');
    await waitForColour(512, 384, '#3366cc');
    await waitForColour(3, 3, '#3366cc');
    expect(await canvas().evaluate((c: HTMLCanvasElement) => [c.width, c.height])).toEqual([1024, 768]);
    // The host remembered the certificate as trusted, the way SSH host keys are.
    const trusted = await client.call('hostkeys.list');
    expect(trusted.some((k) => k.kind === 'rdp' && k.port === rdp.port && k.fingerprint === fingerprint)).toBe(true);
    expect(await page.locator('.tab.active').getAttribute('class')).toContain('open');
  });

  it('paints what changes on the remote display', async () => {
    const before = Number(await pane().getAttribute('data-frames'));
    await rdp.x('xsetroot', ['-solid', '#cc6633']);
    await waitForColour(512, 384, '#cc6633');
    await waitForColour(1020, 764, '#cc6633');
    expect(Number(await pane().getAttribute('data-frames'))).toBeGreaterThan(before);
  });

  it('maps clicks through the fit scale, and at 1:1', async () => {
    const scale = Number(await pane().getAttribute('data-scale'));
    expect(scale).toBeGreaterThan(0);
    expect(scale).not.toBe(1); // the tab is smaller than 1024x768: the mapping really scales
    await clickDesktop(700, 500);
    await expect.poll(() => rdp.mouseLocation(), { timeout: 10_000 }).toEqual({ x: 700, y: 500 });
    await clickDesktop(37, 611);
    await expect.poll(() => rdp.mouseLocation(), { timeout: 10_000 }).toEqual({ x: 37, y: 611 });

    await pane().getByRole('button', { name: '1:1' }).click();
    await expect.poll(() => pane().getAttribute('data-scale')).toBe('1');
    const box = await canvas().boundingBox();
    expect(box?.width).toBe(1024);
    await clickDesktop(300, 200);
    await expect.poll(() => rdp.mouseLocation(), { timeout: 10_000 }).toEqual({ x: 300, y: 200 });
    await pane().getByRole('button', { name: 'Fit' }).click();
    await expect.poll(async () => Number(await pane().getAttribute('data-scale'))).toBe(scale);
  });

  it('captures the keyboard while focused, sends keys to the remote window, and releases on Ctrl+Alt+Enter', async () => {
    const xev = rdp.spawnX('xev', ['-geometry', '200x200+780+40', '-event', 'keyboard']);
    // xev's window appears on the desktop (white), then the pointer over it gives it the keyboard.
    await waitForColour(880, 140, '#ffffff');
    await clickDesktop(880, 140);
    const pill = pane().locator('.capture-pill');
    await pill.waitFor();
    expect(await pill.innerText()).toContain('Keyboard captured');
    await page.keyboard.type('wr');
    await page.keyboard.press('Shift+KeyA');
    await expect.poll(() => xev.output(), { timeout: 10_000 }).toMatch(/keysym 0x77, w\)[\s\S]*keysym 0x72, r\)[\s\S]*keysym 0x41, A\)/);
    expect(xev.output()).toMatch(/KeyRelease event[\s\S]*keysym 0x72, r\)/);

    await page.keyboard.press('Control+Alt+Enter');
    await pill.waitFor({ state: 'detached' });
    expect(await page.evaluate(() => document.activeElement?.classList.contains('rdp-canvas') ?? false)).toBe(false);
    xev.proc.kill();
    await waitForColour(880, 140, '#cc6633');
  });

  it('saves a full-size PNG screenshot', async () => {
    const [download] = await Promise.all([page.waitForEvent('download'), pane().getByRole('button', { name: 'Screenshot' }).click()]);
    expect(download.suggestedFilename()).toMatch(/^test_desktop-\d{8}-\d{6}\.png$/);
    const stream = await download.createReadStream();
    const chunks: Buffer[] = [];
    for await (const c of stream) chunks.push(Buffer.from(c));
    const png = Buffer.concat(chunks);
    expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([1024, 768]);
  });

  it('shows "Disconnected" with the reason when the server dies, and reconnects in the same tab', async () => {
    const id = await pane().getAttribute('data-session-id');
    await rdp.killServer();
    const card = page.getByRole('alert').filter({ hasText: 'Disconnected from test desktop' });
    await card.waitFor({ timeout: 20_000 });
    expect(await pane().getAttribute('data-phase')).toBe('disconnected');
    expect(await page.locator('.tab.active').getAttribute('class')).toContain('disconnected');
    await page.screenshot({ path: '/tmp/wraith-rdp-disconnected.png' });

    await rdp.restartServer();
    await rdp.x('xsetroot', ['-solid', '#33aa55']);
    await card.getByRole('button', { name: 'Reconnect' }).click();
    await expect.poll(() => pane().getAttribute('data-phase'), { timeout: 20_000 }).toBe('open');
    expect(await pane().getAttribute('data-session-id')).toBe(id);
    await waitForColour(512, 384, '#33aa55');
  });

  it('re-attaches the open desktop after a page reload and paints it whole', async () => {
    const id = await pane().getAttribute('data-session-id');
    await page.reload();
    await page.getByText('Host: connected').waitFor();
    await expect.poll(() => pane().getAttribute('data-session-id'), { timeout: 15_000 }).toBe(id);
    await waitForColour(512, 384, '#33aa55');
    await rdp.x('xsetroot', ['-solid', '#8844aa']);
    await waitForColour(100, 700, '#8844aa');
  });

  it("repaints what changed while the page's link to the host was cut", async () => {
    const before = Number(await pane().getAttribute('data-frames'));
    cutter.cut();
    await page.getByText('Host: disconnected — reconnecting…').waitFor();
    await rdp.x('xsetroot', ['-solid', '#22bbbb']);
    // The host has the new desktop; the page, cut off, has not heard.
    await expect
      .poll(async () => {
        const fb = await client.call('rdp.framebuffer', { sessionId: (await pane().getAttribute('data-session-id')) ?? '' });
        const at = (384 * fb.width + 512) * 4;
        return [0x22, 0xbb, 0xbb].every((want, i) => Math.abs((fb.data[at + i] ?? 0) - want) <= 8);
      }, { timeout: 15_000 })
      .toBe(true);
    cutter.restore();
    await page.getByText('Host: connected').waitFor({ timeout: 15_000 });
    await waitForColour(512, 384, '#22bbbb');
    // And it keeps painting: the frames lost while away took no credits with them.
    await rdp.x('xsetroot', ['-solid', '#aa8822']);
    await waitForColour(512, 384, '#aa8822');
    expect(Number(await pane().getAttribute('data-frames'))).toBeGreaterThan(before);
  });

  it('asks about a changed certificate on Reconnect; forgetting it and trusting the new one reconnects the same tab', async () => {
    const id = await pane().getAttribute('data-session-id');
    const old = (await client.call('hostkeys.list')).find((k) => k.kind === 'rdp' && k.port === rdp.port)?.fingerprint;
    expect(old).toBeTruthy();
    await rdp.killServer();
    const disconnected = pane().getByRole('alert').filter({ hasText: 'Disconnected from test desktop' });
    await disconnected.waitFor({ timeout: 20_000 });
    await rdp.restartServer({ newCertificate: true });
    // Painted while the tab is away: seeing it later proves the reconnected session paints.
    await rdp.x('xsetroot', ['-solid', '#5544cc']);
    await disconnected.getByRole('button', { name: 'Reconnect' }).click();

    // The warning a new tab shows, not a "Disconnected" card whose Reconnect fails for ever.
    const warning = pane().getByRole('alertdialog', { name: /certificate of 127\.0\.0\.1:\d+ has changed/ });
    await warning.waitFor({ timeout: 20_000 });
    const [presented, trusted] = await warning.locator('.fingerprint').allInnerTexts();
    expect(trusted).toBe(old);
    expect(presented).toBeTruthy();
    expect(presented).not.toBe(old);
    await warning.getByLabel("I have confirmed the new certificate with the server's administrator").check();
    await warning.getByRole('button', { name: 'Forget old certificate…' }).click();

    // Forgetting leads to the question about the new certificate, in the same tab: not called a first connection.
    const card = pane().getByRole('alertdialog', { name: new RegExp(`New certificate of 127\\.0\\.0\\.1:${rdp.port}`) });
    await card.waitFor({ timeout: 20_000 });
    expect(await card.locator('.fingerprint').innerText()).toBe(presented);
    await card.getByRole('button', { name: 'Trust and connect' }).click();
    await expect.poll(() => pane().getAttribute('data-phase'), { timeout: 20_000 }).toBe('open');
    expect(await pane().getAttribute('data-session-id')).toBe(id);
    expect(await page.locator('.tab').count()).toBe(1);
    await waitForColour(512, 384, '#5544cc');
    const known = (await client.call('hostkeys.list')).filter((k) => k.kind === 'rdp' && k.port === rdp.port);
    expect(known.map((k) => k.fingerprint)).toEqual([presented]);
  });

  it('asks the first-connection question on Reconnect when the certificate was forgotten, and trusting reconnects the same tab', async () => {
    const id = await pane().getAttribute('data-session-id');
    const fingerprint = (await client.call('hostkeys.list')).find((k) => k.kind === 'rdp' && k.port === rdp.port)?.fingerprint;
    expect(fingerprint).toBeTruthy();
    await rdp.killServer();
    const disconnected = pane().getByRole('alert').filter({ hasText: 'Disconnected from test desktop' });
    await disconnected.waitFor({ timeout: 20_000 });
    await client.call('hostkeys.forget', { kind: 'rdp', host: rdp.host, port: rdp.port });
    await rdp.restartServer();
    await rdp.x('xsetroot', ['-solid', '#cc3388']);
    await disconnected.getByRole('button', { name: 'Reconnect' }).click();

    const card = pane().getByRole('alertdialog', { name: new RegExp(`First connection to 127\\.0\\.0\\.1:${rdp.port}`) });
    await card.waitFor({ timeout: 20_000 });
    expect(await card.locator('.fingerprint').innerText()).toBe(fingerprint);
    await card.getByRole('button', { name: 'Trust and connect' }).click();
    await expect.poll(() => pane().getAttribute('data-phase'), { timeout: 20_000 }).toBe('open');
    expect(await pane().getAttribute('data-session-id')).toBe(id);
    expect(await page.locator('.tab').count()).toBe(1);
    await waitForColour(512, 384, '#cc3388');
    const known = (await client.call('hostkeys.list')).filter((k) => k.kind === 'rdp' && k.port === rdp.port);
    expect(known.map((k) => k.fingerprint)).toEqual([fingerprint]);
  });

  it('takes a screenshot of the window with the desktop open, with no page errors', async () => {
    await clickDesktop(500, 300);
    await pane().locator('.capture-pill').waitFor();
    await page.screenshot({ path: '/tmp/wraith-rdp.png' });
    const errors = browser.pageErrors.filter((e) => !/WebSocket connection to .* failed/.test(e));
    expect(errors).toEqual([]);
  });

  it('closing the tab ends the RDP session on the host', async () => {
    expect((await client.call('sessions.list')).filter((s) => s.kind === 'rdp')).toHaveLength(1);
    await page.getByRole('button', { name: 'Close test desktop' }).click();
    await expect.poll(async () => (await client.call('sessions.list')).filter((s) => s.kind === 'rdp')).toEqual([]);
    expect(await page.locator('.tab').count()).toBe(0);
  });
});
