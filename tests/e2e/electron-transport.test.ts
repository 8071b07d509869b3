/**
 * The renderer's Electron transport, in Chromium: no Electron runtime can run here, so the test
 * plays the preload and the main process. The page gets `window.wraith = {electron, connect}`;
 * connect() posts a MessagePort as 'wraith:port' exactly as src-main/electron/preload.cts does, and
 * the other end of the port is relayed (by this test, standing in for the main process) to a real
 * `wraith serve`. The app must pick the Electron path, and everything must work through it.
 */
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { WebSocket } from 'ws';
import { decodeFrame, encodeFrame } from '../../src-main/server/codec.js';
import { type TestBrowser, launchBrowser } from '../fixtures/browser.js';
import { type WraithServer, startWraithServer } from '../fixtures/wraith-server.js';
import { type SshdHandle, homeOf, startSshd } from '../fixtures/sshd.js';
import { connectNewSshInUi } from '../fixtures/ui-connection.js';

let server: WraithServer;
let browser: TestBrowser;
let page: Page;
let socket: WebSocket;
const seenByMain: string[] = [];

// Bytes cross the test's page<->Node hop as {__b64}; inside the page they are Uint8Array again,
// so the port itself carries real Uint8Array by structured clone.
function toPage(v: unknown): unknown {
  if (v instanceof Uint8Array) return { __b64: Buffer.from(v).toString('base64') };
  if (Array.isArray(v)) return v.map(toPage);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, toPage(x)]));
  return v;
}
function fromPage(v: unknown): unknown {
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    const o = Object.entries(v);
    const b64 = o.find(([k]) => k === '__b64')?.[1];
    if (o.length === 1 && typeof b64 === 'string') return new Uint8Array(Buffer.from(b64, 'base64'));
    return Object.fromEntries(o.map(([k, x]) => [k, fromPage(x)]));
  }
  return Array.isArray(v) ? v.map(fromPage) : v;
}

const FAKE_PRELOAD = `(() => {
  const decode = (v) => {
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      if (typeof v.__b64 === 'string' && Object.keys(v).length === 1) return Uint8Array.from(atob(v.__b64), (c) => c.charCodeAt(0));
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, decode(x)]));
    }
    return Array.isArray(v) ? v.map(decode) : v;
  };
  const encode = (v) => {
    if (v instanceof Uint8Array) { let s = ''; for (const b of v) s += String.fromCharCode(b); return { __b64: btoa(s) }; }
    if (Array.isArray(v)) return v.map(encode);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, encode(x)]));
    return v;
  };
  // Counts WebSockets the page opens: on the Electron path there must be none.
  window.__wsOpened = 0;
  const NativeWebSocket = window.WebSocket;
  window.WebSocket = class extends NativeWebSocket {
    constructor(...args) { super(...args); window.__wsOpened++; }
  };
  let mainEnd = null;
  window.__wraithFromMain = (m) => mainEnd && mainEnd.postMessage(decode(m));
  window.wraith = Object.freeze({
    electron: true,
    // webUtils.getPathForFile stands in: the test names where each picked file is on disk.
    pathForFile(file) {
      return (window.__filePaths ?? {})[file.name] ?? '';
    },
    connect() {
      const { port1, port2 } = new MessageChannel();
      mainEnd = port2;
      port2.onmessage = (ev) => window.__wraithToMain(encode(ev.data));
      window.postMessage('wraith:port', '*', [port1]);
    },
  });
})();`;

beforeAll(async () => {
  server = await startWraithServer();
  const token = new URL(server.openUrl).searchParams.get('token') ?? '';
  socket = new WebSocket(server.url.replace(/^http/, 'ws') + '/ws', { headers: { authorization: `Bearer ${token}` } });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  browser = await launchBrowser();
  page = browser.page;
  let chain = Promise.resolve();
  socket.on('message', (data: Buffer) => {
    const message = toPage(decodeFrame(data));
    chain = chain.then(() => page.evaluate((m) => Reflect.get(window, '__wraithFromMain')?.(m), message)).catch(() => undefined);
  });
  await page.exposeBinding('__wraithToMain', (_source, message: unknown) => {
    const m = fromPage(message);
    if (m && typeof m === 'object' && 'method' in m && typeof m.method === 'string') seenByMain.push(m.method);
    socket.send(encodeFrame(m));
  });
  await page.addInitScript({ content: FAKE_PRELOAD });
  // The page itself still comes from wraith serve (its files); only the contract goes through the port.
  await page.goto(server.openUrl);
});

afterAll(async () => {
  socket?.close();
  await browser?.close();
  await server?.stop();
});

describe('the Electron transport (MessagePort from the preload)', () => {
  it('connects through the port, not a WebSocket of its own', async () => {
    await page.getByText('Host: connected').waitFor();
    expect(await page.locator('.status-bar').innerText()).not.toContain('(browser)');
    expect(seenByMain).toEqual(expect.arrayContaining(['settings.get', 'vault.status', 'connections.list', 'sessions.list']));
    // The renderer opened no WebSocket: the only one to the host is this test's relay.
    expect(await page.evaluate(() => Reflect.get(window, '__wsOpened'))).toBe(0);
  });

  it('calls and events work through it (a group created in the UI)', async () => {
    await page.locator('.connections .panel-head').getByRole('button', { name: 'New group' }).click();
    const dialog = page.getByRole('dialog', { name: 'New group' });
    await dialog.getByLabel('Group name').fill('Via port');
    await dialog.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('treeitem', { name: /^Via port, group/ }).waitFor();
    expect(seenByMain).toContain('connections.groups.create');
  });

  it('carries terminal bytes both ways (a local shell tab)', async () => {
    await page.keyboard.press('Control+Shift+G');
    const panel = page.getByRole('region', { name: 'Local shell' });
    await panel.getByRole('button', { name: 'Open as tab' }).click();
    const pane = page.locator('.tab-panel:visible .terminal-pane[data-session-id]');
    await pane.waitFor();
    const id = (await pane.getAttribute('data-session-id')) ?? '';
    await page.locator('.tab-panel:visible .xterm').click();
    await page.keyboard.type('echo port-$((3*14))\n');
    await expect
      .poll(async () => (await page.evaluate((sid) => window.wraithInspect?.terminals.text(sid) ?? '', id)).split('\n').map((l) => l.trimEnd()), { timeout: 15_000 })
      .toContain('port-42');
    expect(seenByMain).toContain('terminal.ack'); // credit flowed back through the port
  });

  describe('files picked in the desktop app are read by the host, by their path on disk', () => {
    let sshd: SshdHandle;
    let local: string;
    let home: string;
    const name = `native-${process.pid}.bin`;
    const big = `native-big-${process.pid}.bin`;
    const files = () => page.getByRole('complementary', { name: 'Files' });
    const data = randomBytes(6 * 1024 * 1024 + 7);
    const pick = async (n: string) => {
      await page.evaluate(([k, p]) => Reflect.set(window, '__filePaths', { [k]: p }), [n, join(local, n)] as const);
      await files().locator('input[name=sftp-upload]').setInputFiles(join(local, n));
    };
    const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
    // Only this test's temps: other test files upload into the same user's home at the same time.
    const leftovers = () => readdirSync(home).filter((n) => n.includes('wraith-part') && (n.includes(name) || n.includes(big)));

    beforeAll(async () => {
      sshd = await startSshd();
      local = mkdtempSync(join(tmpdir(), 'wraith-native-up-'));
      const u = sshd.users.password;
      home = homeOf(u.username);
      writeFileSync(join(local, name), data);
      execFileSync('truncate', ['-s', '2G', join(local, big)]);
      await connectNewSshInUi(page, { name: 'native up', host: sshd.host, port: sshd.port, ...u });
      await page.keyboard.press('Control+Shift+E');
      await files().and(page.locator(`[data-path="${home}"]`)).waitFor({ timeout: 20_000 });
    }, 60_000);

    afterAll(async () => {
      for (const n of [name, big]) rmSync(join(home, n), { force: true });
      rmSync(local, { recursive: true, force: true });
      await sshd?.stop();
    });

    it('uploads with sftp.upload: the same bytes on the server, and no chunk sent by the page', async () => {
      const before = seenByMain.length;
      await pick(name);
      const transfer = files().locator('.transfer').filter({ hasText: name });
      await expect.poll(() => transfer.getAttribute('data-state'), { timeout: 30_000 }).toBe('done');
      expect(sha(readFileSync(join(home, name)))).toBe(sha(data));
      const calls = seenByMain.slice(before);
      expect(calls).toContain('sftp.upload');
      expect(calls.filter((m) => m.startsWith('sftp.upload') && m !== 'sftp.upload')).toEqual([]);
      expect(leftovers()).toEqual([]);
    });

    it('asks before replacing a file that is there, then replaces it', async () => {
      writeFileSync(join(home, name), 'older');
      await pick(name);
      const ask = page.getByRole('dialog', { name: `Replace ${name}?` });
      await ask.getByRole('button', { name: 'Replace' }).click();
      await expect.poll(() => readFileSync(join(home, name)).length, { timeout: 30_000 }).toBe(data.length);
      expect(sha(readFileSync(join(home, name)))).toBe(sha(data));
    });

    it('cancels from the transfers list: the host stops, and nothing is left on the server', async () => {
      await pick(big);
      const transfer = files().locator('.transfer').filter({ hasText: big });
      await expect.poll(async () => Number((await transfer.getByRole('progressbar').getAttribute('aria-valuenow')) ?? 0), { timeout: 30_000 }).toBeGreaterThan(0);
      await transfer.getByRole('button', { name: `Cancel upload of ${big}` }).click();
      await expect.poll(() => transfer.getAttribute('data-state'), { timeout: 20_000 }).toBe('cancelled');
      expect(await transfer.innerText()).toContain('Cancelled — nothing was left behind');
      expect(readdirSync(home)).not.toContain(big);
      expect(leftovers()).toEqual([]);
    });
  });
});
