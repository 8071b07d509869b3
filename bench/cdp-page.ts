/**
 * A Chromium that Playwright can leave, and a bare DevTools-protocol driver for a page in it.
 *
 * Why: Playwright enables the Network domain on every page and on every worker it auto-attaches
 * to, so each WebSocket frame the app receives is copied (base64) into a DevTools event, routed
 * through the browser process and parsed by the Node process running the bench. For a 4 MiB
 * `cat` that was 1,294 `Network.webSocketFrameReceived` events; during a 64 MiB flood the browser
 * main thread spent ~550 ms and the bench's Node ~300 ms on them, on a 2-core machine where the
 * tab's own main thread already shares the cores with sshd, the host and the socket. A person's
 * browser has none of that, and the xterm-only anchors receive no frames at all, so it taxed only
 * Wraith's side of the comparison.
 *
 * So the UI set-up runs under Playwright (connected over CDP), and the timed parts run after it
 * disconnected, through `CdpPage`: one DevTools session on the page target that only evaluates
 * script, sends input and (when asked) profiles. It enables no Network domain and attaches to no
 * worker.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { CHROMIUM } from '../tests/fixtures/browser.js';

export interface DetachableChromium {
  /** ws://… for chromium.connectOverCDP. */
  readonly wsEndpoint: string;
  /** http://127.0.0.1:PORT, the DevTools HTTP endpoint (target list, new/close target). */
  readonly httpBase: string;
  close(): Promise<void>;
}

/**
 * Debian's Chromium, headless, fresh profile, DevTools on a free loopback port. The flags are the
 * test fixture's plus what Playwright's own launch adds that matters for timing (no background
 * throttling of timers or renderers); the first page gets the fixture's viewport.
 */
export async function launchDetachableChromium(extraArgs: string[] = [], viewport = { width: 1400, height: 860 }): Promise<DetachableChromium> {
  // Headless Chromium takes window decorations out of --window-size (1400x860 gave the page
  // 1400x717): start again with the difference added until the page gets `viewport`, as
  // Playwright's viewport option gave the tab before.
  let window = viewport;
  for (let attempt = 0; attempt < 4; attempt++) {
    const chrome = await launchOnce(extraArgs, window);
    const got = await firstPageSize(chrome.httpBase).catch(async (err: unknown) => {
      await chrome.close();
      throw err;
    });
    if (got.w === viewport.width && got.h === viewport.height) return chrome;
    await chrome.close();
    window = { width: window.width + viewport.width - got.w, height: window.height + viewport.height - got.h };
  }
  throw new Error(`Chromium would not give its page ${viewport.width}x${viewport.height}`);
}

async function launchOnce(extraArgs: string[], windowSize: { width: number; height: number }): Promise<DetachableChromium> {
  const profile = mkdtempSync(join(tmpdir(), 'wraith-chromium-cdp-'));
  const proc: ChildProcess = spawn(
    CHROMIUM,
    [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-background-timer-throttling',
      '--disable-backgrounding-occluded-windows',
      '--disable-renderer-backgrounding',
      '--no-first-run',
      '--no-default-browser-check',
      `--window-size=${windowSize.width},${windowSize.height}`,
      '--remote-debugging-address=127.0.0.1',
      '--remote-debugging-port=0',
      `--user-data-dir=${profile}`,
      ...extraArgs,
      'about:blank',
    ],
    // Its own process group, so closing ends the helpers (zygote, GPU, network) with it.
    { stdio: ['ignore', 'ignore', 'pipe'], detached: true },
  );
  const wsEndpoint = await new Promise<string>((resolve, reject) => {
    let err = '';
    const timer = setTimeout(() => reject(new Error(`Chromium printed no DevTools endpoint within 20 s:\n${err}`)), 20_000);
    proc.stderr?.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /DevTools listening on (ws:\/\/\S+)/.exec(err);
      if (m?.[1]) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`Chromium exited (${code}) before DevTools listened:\n${err}`));
    });
  });
  const httpBase = `http://${new URL(wsEndpoint).host}`;
  return {
    wsEndpoint,
    httpBase,
    async close() {
      const group = -(proc.pid ?? 0);
      const alive = () => {
        try {
          process.kill(group, 0);
          return true;
        } catch {
          return false;
        }
      };
      if (proc.pid && alive()) {
        process.kill(group, 'SIGTERM');
        for (let i = 0; i < 50 && alive(); i++) await new Promise((r) => setTimeout(r, 100));
        if (alive()) process.kill(group, 'SIGKILL');
        for (let i = 0; i < 20 && alive(); i++) await new Promise((r) => setTimeout(r, 100));
      }
      rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    },
  };
}

/** The first page's inner size once it holds still (just after start it can read 56 px more). */
async function firstPageSize(httpBase: string): Promise<{ w: number; h: number }> {
  const page = await CdpPage.attach(httpBase, () => true);
  try {
    let last = '';
    for (let i = 0; i < 20; i++) {
      const size = await page.evaluate(() => ({ w: innerWidth, h: innerHeight }), null);
      if (JSON.stringify(size) === last) return size;
      last = JSON.stringify(size);
      await new Promise((r) => setTimeout(r, 300));
    }
    throw new Error(`Chromium's page size kept changing (last ${last})`);
  } finally {
    await page.close();
  }
}

interface TargetInfo {
  id: string;
  type: string;
  url: string;
  webSocketDebuggerUrl: string;
}

/** One DevTools session on one page target: evaluate, input, and whatever domain a caller sends. */
export class CdpPage {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private readonly listeners = new Map<string, ((params: unknown) => void)[]>();

  private constructor(
    private readonly ws: WebSocket,
    private readonly httpBase: string,
    readonly targetId: string,
  ) {
    ws.on('message', (raw: Buffer) => {
      const m = JSON.parse(raw.toString()) as { id?: number; result?: unknown; error?: { message: string }; method?: string; params?: unknown };
      if (m.id !== undefined) {
        const p = this.pending.get(m.id);
        this.pending.delete(m.id);
        if (m.error) p?.reject(new Error(m.error.message));
        else p?.resolve(m.result);
      } else if (m.method) {
        for (const l of this.listeners.get(m.method) ?? []) l(m.params);
      }
    });
    ws.on('close', () => {
      for (const p of this.pending.values()) p.reject(new Error('the DevTools session closed'));
      this.pending.clear();
    });
  }

  private static async connect(httpBase: string, target: TargetInfo): Promise<CdpPage> {
    const ws = new WebSocket(target.webSocketDebuggerUrl, { perMessageDeflate: false, maxPayload: 1 << 30 });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return new CdpPage(ws, httpBase, target.id);
  }

  /** Attaches to the first page target whose URL passes `match`. */
  static async attach(httpBase: string, match: (url: string) => boolean): Promise<CdpPage> {
    const targets = (await (await fetch(`${httpBase}/json/list`)).json()) as TargetInfo[];
    const target = targets.find((t) => t.type === 'page' && match(t.url));
    if (!target) throw new Error(`no page target matches; pages: ${targets.filter((t) => t.type === 'page').map((t) => t.url).join(', ')}`);
    return CdpPage.connect(httpBase, target);
  }

  /** Opens a new page target on `url` and attaches to it. */
  static async open(httpBase: string, url: string): Promise<CdpPage> {
    const target = (await (await fetch(`${httpBase}/json/new?${encodeURI(url)}`, { method: 'PUT' })).json()) as TargetInfo;
    const page = await CdpPage.connect(httpBase, target);
    await page.evaluate(() => new Promise<void>((resolve) => (document.readyState === 'complete' ? resolve() : addEventListener('load', () => resolve(), { once: true }))), null);
    return page;
  }

  send<T = unknown>(method: string, params: Record<string, unknown> = {}): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.ws.send(JSON.stringify({ id, method, params }));
    });
  }

  once<T = unknown>(event: string): Promise<T> {
    return new Promise<T>((resolve) => {
      const list = this.listeners.get(event) ?? [];
      const l = (p: unknown) => {
        this.listeners.set(event, (this.listeners.get(event) ?? []).filter((x) => x !== l));
        resolve(p as T);
      };
      list.push(l);
      this.listeners.set(event, list);
    });
  }

  /** Runs `fn(arg)` in the page (a promise is awaited) and returns its JSON value. */
  async evaluate<A, R>(fn: (arg: A) => R | Promise<R>, arg: A): Promise<R> {
    // tsx (esbuild keepNames) may call __name inside page functions; give the page the helper.
    const expression = `(globalThis.__name ??= (f) => f, (${fn.toString()})(${JSON.stringify(arg)}))`;
    const r = await this.send<{ result: { value?: unknown }; exceptionDetails?: { text: string; exception?: { description?: string } } }>('Runtime.evaluate', {
      expression,
      awaitPromise: true,
      returnByValue: true,
      userGesture: true,
    });
    if (r.exceptionDetails) throw new Error(r.exceptionDetails.exception?.description ?? r.exceptionDetails.text);
    return r.result.value as R;
  }

  bringToFront(): Promise<unknown> {
    return this.send('Page.bringToFront');
  }

  /** A left click in the middle of the first visible element matching `selector`. */
  async click(selector: string): Promise<void> {
    const at = await this.evaluate((sel) => {
      for (const el of document.querySelectorAll(sel)) {
        const r = el.getBoundingClientRect();
        if (r.width > 0 && r.height > 0) return { x: r.left + r.width / 2, y: r.top + r.height / 2 };
      }
      return null;
    }, selector);
    if (!at) throw new Error(`no visible element matches ${selector}`);
    await this.send('Input.dispatchMouseEvent', { type: 'mouseMoved', x: at.x, y: at.y });
    await this.send('Input.dispatchMouseEvent', { type: 'mousePressed', x: at.x, y: at.y, button: 'left', clickCount: 1 });
    await this.send('Input.dispatchMouseEvent', { type: 'mouseReleased', x: at.x, y: at.y, button: 'left', clickCount: 1 });
  }

  /** Text as input events into the focused element; each "\n" is an Enter key press. */
  async type(text: string): Promise<void> {
    const lines = text.split('\n');
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i] ?? '';
      if (line) await this.send('Input.insertText', { text: line });
      if (i < lines.length - 1) await this.press('Enter');
    }
  }

  /** A key press the way Playwright sends it: Enter, Control+C, or one lower-case letter. */
  async press(key: string): Promise<void> {
    if (key === 'Enter') {
      const k = { key: 'Enter', code: 'Enter', windowsVirtualKeyCode: 13 };
      await this.send('Input.dispatchKeyEvent', { type: 'keyDown', ...k, text: '\r', unmodifiedText: '\r' });
      await this.send('Input.dispatchKeyEvent', { type: 'keyUp', ...k });
      return;
    }
    if (key === 'Control+C') {
      const ctrl = { key: 'Control', code: 'ControlLeft', windowsVirtualKeyCode: 17 };
      const c = { key: 'c', code: 'KeyC', windowsVirtualKeyCode: 67 };
      await this.send('Input.dispatchKeyEvent', { type: 'rawKeyDown', ...ctrl, modifiers: 2 });
      await this.send('Input.dispatchKeyEvent', { type: 'rawKeyDown', ...c, modifiers: 2 });
      await this.send('Input.dispatchKeyEvent', { type: 'keyUp', ...c, modifiers: 2 });
      await this.send('Input.dispatchKeyEvent', { type: 'keyUp', ...ctrl });
      return;
    }
    if (!/^[a-z]$/.test(key)) throw new Error(`CdpPage.press: unsupported key ${key}`);
    const k = { key, code: `Key${key.toUpperCase()}`, windowsVirtualKeyCode: key.toUpperCase().charCodeAt(0) };
    await this.send('Input.dispatchKeyEvent', { type: 'keyDown', ...k, text: key, unmodifiedText: key });
    await this.send('Input.dispatchKeyEvent', { type: 'keyUp', ...k });
  }

  /** Ends this session; with `closeTarget`, closes the page too. */
  async close(closeTarget = false): Promise<void> {
    this.ws.close();
    if (closeTarget) await fetch(`${this.httpBase}/json/close/${this.targetId}`).catch(() => undefined);
  }
}
