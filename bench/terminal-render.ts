/**
 * Issue-3 terminal figures that need a real browser, each beside its anchor in the same run:
 *
 *   1. SSH output throughput to the renderer. A real `wraith serve` and a real sshd; an SSH tab
 *      opened through the UI (vault, host-key trust, password) in headless Chromium. `cat FILE;
 *      echo MARK` is typed into the tab; the figure is the time, measured inside the page with
 *      performance.now(), from the Enter keydown to the moment xterm.js has *parsed* the marker
 *      line that follows the file's bytes (onWriteParsed of the tab's own Terminal, via the
 *      read-only wraithInspect hook). All bytes went sshd → ssh2 → ring buffer → WebSocket →
 *      xterm.write, with the renderer's credit acks pacing the host.
 *      Anchors: (a) OpenSSH `ssh -i key … 'cat FILE' > /dev/null` (key user, no pty, so LF line
 *      ends; printed with and without the connection set-up of `ssh … true`), and (b) the same
 *      bytes as the tab receives them (the pty turns LF into CRLF) written straight into a bare
 *      xterm.js Terminal (same cols/rows, scrollback, font and line height, unicode11, and the renderer the tab
 *      ended up with), 64 KiB chunks (≤ 16 MiB queued: xterm discards beyond 50 MB), until the
 *      last write callback — (b1) in the same page, as the issue words it: in the Wraith window,
 *      in the tab's own place (its terminal hidden meanwhile), so only the path from sshd differs;
 *      (b2) in a blank page of the same browser, the stricter figure with no app around it.
 *   2. Keystroke echo latency, p50/p99: in the tab a key is pressed (a DevTools key event) with the
 *      remote tty in `stty -icanon; cat >/dev/null` (the tty echoes each key); the in-page clock
 *      runs from the keydown event to xterm having parsed the echoed character (and to the next
 *      animation frame after that). Anchor: a plain ssh2 Client shell channel in Node running the
 *      same command: write a char, time until the echo arrives.
 *   3. Ctrl+C stop latency during a flood, p50/max: with PS1 set to a unique marker, `yes
 *      wraith-flood` runs in the tab for ~2 s, then Ctrl+C is pressed; the in-page clock runs from
 *      the Ctrl+C keydown to xterm having parsed the prompt that follows (bytes already in flight —
 *      pty, SSH window, the host's flow-control window, WebSocket — are rendered first, so this
 *      figure grows with the terminal flow-control window). Anchor: the same with `sleep 60`
 *      instead of the flood (nothing in flight: the fixed cost of the round trip and the prompt).
 *   4. Keystroke echo beside a flood, p50/p99/max: as 2, in the first tab, while a second tab of
 *      the same window (not shown) runs `yes`: both share the page's main thread and the host's
 *      WebSocket, so this is what a runaway log in one tab costs typing in another. Anchor: 2.
 *
 * How the page is driven: Playwright opens the app and the SSH tab through the UI and runs the
 * xterm-only anchors, then disconnects for each timed part on Wraith's tab, which runs over a bare
 * DevTools session (bench/cdp-page.ts). Playwright's DevTools instrumentation copies every
 * WebSocket frame the app receives into an event for the bench process; a person's browser does
 * not, and the anchors receive no frames, so timing Wraith under it measured the bench (about 15
 * points of the throughput ratio on this 2-core machine). `--playwright` times it that way anyway.
 *
 * Run: npm run build && node --import tsx bench/terminal-render.ts [--mb 64] [--rounds 2] [--keys 300] [--ctrlc 5] [--other-keys 100] [--dom] [--skip-throughput] [--playwright]
 * Needs root and openssh-server (the sshd harness), and /usr/bin/chromium.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { type Browser, type Page, chromium } from 'playwright-core';
import { Client, type ClientChannel } from 'ssh2';
import { WebSocketServer } from 'ws';
import type { Terminal as XTerm } from '@xterm/xterm';
import type { Unicode11Addon as XUnicode11 } from '@xterm/addon-unicode11';
import type { WebglAddon as XWebgl } from '@xterm/addon-webgl';
import { CdpPage, type DetachableChromium, launchDetachableChromium } from './cdp-page.js';
import { NAME_SHIM, openSshTab, waitForTail } from './wraith-tab.js';
import { type SshdHandle, startSshd } from '../tests/fixtures/sshd.js';
import { REPO_ROOT, type WraithServer, startWraithServer } from '../tests/fixtures/wraith-server.js';
import { ssh2EchoLatencies } from './ssh2-echo.js';
import type { TerminalShape } from '../src-renderer/features/terminal/terminal-inspect.js';
import { type CpuRoots, cpuSnapshot, cpuSplit, formatCpuSplit, formatPageMain } from './cpu-split.js';
import { numberArg, flagArg, stringArg } from './args.js';

const FILE_MIB = numberArg('mb', 64);
/** `--dom`: Chromium also gets --disable-webgl, so the tab falls back to xterm's DOM renderer (as on context loss). */
const DOM_ONLY = flagArg('dom');
const ROUNDS = numberArg('rounds', 2);
const KEYS = numberArg('keys', 300);
/** `--skip-throughput`: figures 2 and 3 only (the throughput runs take minutes and heat the machine). */
const SKIP_THROUGHPUT = flagArg('skip-throughput');
/** `--ctrlc N`: Ctrl+C stop-latency repetitions (figure 3). */
const CTRLC_REPS = numberArg('ctrlc', 5);
const FLOOD_MS = 2_000;
/** `--other-keys N`: keys timed in one tab while another tab of the window floods (figure 4); 0 skips it. */
const OTHER_TAB_KEYS = numberArg('other-keys', 100);
const CTRLC_TIMEOUT_MS = 60_000;
/** The tab's prompt during figure 3; the typed command splits it with quotes, so its echo never matches. */
const PROMPT = '__WRAITH_PS__>';
/** `--profile DIR`: a CPU profile (CDP Profiler) of each page during the throughput runs, saved to DIR, top self time printed. */
const PROFILE_DIR = stringArg('profile');
const WARMUP_KEYS = 20;
const CHUNK = 64 * 1024;
const THROUGHPUT_TIMEOUT_MS = 400_000;
const KEY_TIMEOUT_MS = 5_000;
/** Output of `echo __WRAITH_<round>_$((40+2))__`; the typed command line never contains it, each round has its own. */
const mark = (round: number) => `__WRAITH_${round}_42__`;
const markCommand = (round: number) => `echo __WRAITH_${round}_$((40+2))__`;

/** What this bench keeps on the pages' windows between evaluate calls. */
interface BenchState {
  done: Promise<{ parsed: number; frame: number; frames?: number }>;
}
declare global {
  interface Window {
    wraithBench?: BenchState;
    Terminal?: typeof XTerm;
    WebglAddon?: { WebglAddon: typeof XWebgl };
    Unicode11Addon?: { Unicode11Addon: typeof XUnicode11 };
    benchTerm?: XTerm;
    benchData?: Uint8Array;
  }
}

const mibps = (bytes: number, ms: number) => (bytes / 1048576 / (ms / 1000)).toFixed(1);
const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
const ms3 = (v: number) => `${v.toFixed(2)} ms`;
const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let sshd: SshdHandle | undefined;
let server: WraithServer | undefined;
let chrome: DetachableChromium | undefined;
/** Playwright, connected over CDP while it sets things up and runs the anchors; undefined while disconnected. */
let pw: Browser | undefined;
/** Errors the Wraith page logged while Playwright was attached (it hears nothing while disconnected). */
const pageErrors: string[] = [];
const ssh2Clients: Client[] = [];
/** `--playwright`: time Wraith's tab with Playwright attached (its DevTools copies every WebSocket frame). */
const VIA_PLAYWRIGHT = flagArg('playwright');


async function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no result within ${ms} ms`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * What the timed parts need of a page. Wraith's tab is timed through a bare CdpPage after
 * Playwright has disconnected (see cdp-page.ts: Playwright's DevTools instrumentation copies every
 * WebSocket frame); `--playwright` times it with Playwright attached instead, as before.
 */
interface BenchPage {
  evaluate<A, R>(fn: (arg: A) => R | Promise<R>, arg: A): Promise<R>;
  type(text: string): Promise<void>;
  press(key: string): Promise<void>;
  /** Clicks the first visible element matching a CSS selector. */
  click(selector: string): Promise<void>;
  bringToFront(): Promise<unknown>;
  send<T = unknown>(method: string, params?: Record<string, unknown>): Promise<T>;
  once<T = unknown>(event: string): Promise<T>;
}

async function playwrightBenchPage(page: Page): Promise<BenchPage> {
  const cdp = await page.context().newCDPSession(page);
  return {
    // Playwright's own typing unboxes handles in `arg`; the timed parts pass plain JSON.
    evaluate: <A, R>(fn: (arg: A) => R | Promise<R>, arg: A) => page.evaluate(fn as unknown as (arg: unknown) => R, arg as unknown),
    type: (text) => page.keyboard.type(text),
    press: (key) => page.keyboard.press(key),
    click: (selector) => page.locator(`${selector}:visible`).first().click(),
    bringToFront: () => page.bringToFront(),
    send: <T>(method: string, params?: Record<string, unknown>) => cdp.send(method as never, params as never) as Promise<T>,
    once: <T>(event: string) => new Promise<T>((resolve) => cdp.once(event as never, (p: unknown) => resolve(p as T))),
  };
}

/** The visible tab's terminal, for clicks (the hidden tabs' terminals have no size). */
const TAB_XTERM = '.tab-panel .xterm';

// ---------------------------------------------------------------- optional CPU profile
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples?: number[];
  timeDeltas?: number[];
}

/** Runs `fn` under the CDP sampling profiler of `page` when --profile is given; prints the top self time. */
async function profiled<T>(cdp: BenchPage, label: string, fn: () => Promise<T>): Promise<T> {
  if (!PROFILE_DIR) return fn();
  if (process.env.WRAITH_BENCH_TRACE) return traced(cdp, label, fn);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
  await cdp.send('Profiler.start');
  const result = await fn();
  const { profile } = await cdp.send<{ profile: CpuProfile }>('Profiler.stop');
  await cdp.send('Profiler.disable');
  mkdirSync(PROFILE_DIR, { recursive: true });
  writeFileSync(join(PROFILE_DIR, `${label}.cpuprofile`), JSON.stringify(profile));
  const byNode = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  let total = 0;
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  for (let i = 0; i < samples.length; i++) {
    const n = byNode.get(samples[i] ?? -1);
    const dt = (deltas[i + 1] ?? deltas[i] ?? 0) / 1000;
    if (!n) continue;
    const f = n.callFrame;
    const key = `${f.functionName || '(anonymous)'} ${f.url.split('/').pop() ?? ''}:${f.lineNumber + 1}:${f.columnNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + dt);
    total += dt;
  }
  console.log(`  profile ${label}: ${total.toFixed(0)} ms sampled, top self time:`);
  for (const [k, ms] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`    ${ms.toFixed(0).padStart(6)} ms ${((ms / total) * 100).toFixed(1).padStart(5)}%  ${k}`);
  return result;
}

/** A Chrome trace (devtools.timeline) of `fn`, saved to PROFILE_DIR/label.json for chrome://tracing or analysis. */
async function traced<T>(cdp: BenchPage, label: string, fn: () => Promise<T>): Promise<T> {
  await cdp.send('Tracing.start', {
    transferMode: 'ReturnAsStream',
    traceConfig: { includedCategories: ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'v8.execute', 'blink', 'cc', 'gpu', 'toplevel', 'disabled-by-default-devtools.timeline.frame'] },
  });
  const result = await fn();
  const done = cdp.once<{ stream?: string }>('Tracing.tracingComplete');
  await cdp.send('Tracing.end');
  const handle = (await done).stream ?? '';
  let text = '';
  for (;;) {
    const chunk = await cdp.send<{ data: string; base64Encoded?: boolean; eof?: boolean }>('IO.read', { handle });
    text += chunk.base64Encoded ? Buffer.from(chunk.data, 'base64').toString('utf8') : chunk.data;
    if (chunk.eof) break;
  }
  await cdp.send('IO.close', { handle });
  mkdirSync(PROFILE_DIR ?? '.', { recursive: true });
  writeFileSync(join(PROFILE_DIR ?? '.', `${label}.json`), text);
  return result;
}

/**
 * A reader of the CPU time the page's main thread has used (Chromium's Performance metric
 * "ThreadTime", counted while the domain stays enabled), in ms. Wall-clock figures on 2 cores also
 * measure who else ran meanwhile (sshd, cat, the host, the browser's network threads); this one
 * is the page's own work.
 */
async function mainThreadCpu(cdp: BenchPage): Promise<() => Promise<number>> {
  await cdp.send('Performance.enable');
  return async () => {
    const { metrics } = await cdp.send<{ metrics: { name: string; value: number }[] }>('Performance.getMetrics');
    const v = metrics.find((m) => m.name === 'ThreadTime')?.value;
    return v === undefined ? NaN : v * 1000;
  };
}

/** Frames the Wraith page has received so far, by path (wraithInspect.transport). */
function frameCounts(page: BenchPage): Promise<{ mailbox: number; posted: number }> {
  return page.evaluate(() => window.wraithInspect?.transport.frameCounts() ?? { mailbox: 0, posted: 0 }, null);
}

// ---------------------------------------------------------------- 1. throughput
/** Types the command, arms the in-page clock, presses Enter; resolves with the in-page ms. */
async function wraithThroughput(page: BenchPage, id: string, file: string, round: number): Promise<{ ms: number; frames: number }> {
  await page.bringToFront(); // the other page must not occlude this one (a hidden page does not render)
  await page.click(TAB_XTERM);
  await page.type(`cat ${file}; ${markCommand(round)}`);
  await page.evaluate(
    ([sid, mark]) => {
      const inspect = window.wraithInspect?.terminals;
      if (!inspect) throw new Error('window.wraithInspect is missing');
      let t0 = -1;
      let frames = 0;
      let counting = true;
      const tick = () => {
        if (t0 >= 0) frames++;
        if (counting) requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
      const onKey = (ev: KeyboardEvent) => {
        if (ev.key === 'Enter' && t0 < 0) t0 = performance.now();
      };
      document.addEventListener('keydown', onKey, true);
      window.wraithBench = {
        done: new Promise((resolve) => {
          const off = inspect.onWriteParsed(sid, () => {
            if (t0 < 0) return;
            const tail = inspect.tail(sid, 6) ?? '';
            if (!tail.split('\n').some((l) => l.trimEnd() === mark)) return;
            const parsed = performance.now() - t0;
            counting = false;
            off?.();
            document.removeEventListener('keydown', onKey, true);
            resolve({ parsed, frame: performance.now() - t0, frames });
          });
          if (!off) throw new Error(`no terminal for session ${sid}`);
        }),
      };
    },
    [id, mark(round)] as const,
  );
  await page.press('Enter');
  const r = await withTimeout(
    page.evaluate(() => window.wraithBench?.done ?? Promise.reject(new Error('bench state missing')), null),
    THROUGHPUT_TIMEOUT_MS,
    'Wraith cat',
  );
  return { ms: r.parsed, frames: r.frames ?? 0 };
}

async function opensshRun(s: SshdHandle, command: string): Promise<number> {
  const t0 = performance.now();
  await new Promise<void>((resolve, reject) => {
    const p = spawn(
      'ssh',
      ['-i', s.users.key.privateKeyPath, '-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null', '-o', 'LogLevel=ERROR', '-o', 'BatchMode=yes',
        '-p', String(s.port), `${s.users.key.username}@127.0.0.1`, command],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
    const timer = setTimeout(() => p.kill('SIGKILL'), THROUGHPUT_TIMEOUT_MS);
    p.once('error', reject);
    p.once('exit', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`ssh exited ${code}`));
    });
  });
  return performance.now() - t0;
}

/** The tab's terminal as the xterm-only anchors copy it (the inspector's shape, and which renderer it ended up with). */
type TermShape = Pick<TerminalShape, 'cols' | 'rows' | 'scrollback' | 'convertEol' | 'fontSize' | 'fontFamily' | 'lineHeight'> & { webgl: boolean };

/**
 * Mounts a bare xterm.js Terminal (with the tab's addons and shape) fed from memory, for the
 * xterm-only anchors. Scripts and bytes are served by a Playwright route under `base`, so they are
 * same-origin for the page (the app's CSP allows only 'self').
 *   - 'blank': `base` is a routed origin of its own; the page is an empty document.
 *   - 'tab': the Wraith window itself: the visible tab's own terminal is hidden and the bare one
 *     opens in its place (same container, size, CSS and pointer), so only our transport differs.
 */
async function mountBenchXterm(p: Page, base: string, where: 'blank' | 'tab', shape: TermShape, bytes: Buffer): Promise<void> {
  const lib = (pkg: string, file: string) => join(REPO_ROOT, 'node_modules', '@xterm', pkg, 'lib', file);
  const scripts: Record<string, string> = {
    'xterm.js': lib('xterm', 'xterm.js'),
    'addon-unicode11.js': lib('addon-unicode11', 'addon-unicode11.js'),
    'addon-webgl.js': lib('addon-webgl', 'addon-webgl.js'),
  };
  const PIECE = 4 * 1048576;
  await p.route(`${base}/__bench/**`, (route) => {
    const url = new URL(route.request().url());
    const name = url.pathname.split('/').pop() ?? '';
    if (name === 'blank') return void route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title>xterm only</title><body></body>' });
    const script = scripts[name];
    if (script) return void route.fulfill({ status: 200, contentType: 'text/javascript', body: readFileSync(script) });
    const i = Number(url.searchParams.get('i'));
    return void route.fulfill({ status: 200, body: bytes.subarray(i * PIECE, (i + 1) * PIECE), contentType: 'application/octet-stream' });
  });
  if (where === 'blank') await p.goto(`${base}/__bench/blank`);
  await p.addScriptTag({ url: `${base}/__bench/xterm.js` });
  await p.addScriptTag({ url: `${base}/__bench/addon-unicode11.js` });
  if (shape.webgl) await p.addScriptTag({ url: `${base}/__bench/addon-webgl.js` });
  const renderer = await p.evaluate(
    async ([sh, total, piece, base, where]) => {
      const T = window.Terminal;
      const U = window.Unicode11Addon;
      if (!T || !U) throw new Error('xterm.js did not load');
      const parts: Uint8Array[] = [];
      for (let i = 0; i * piece < total; i++) parts.push(new Uint8Array(await (await fetch(`${base}/__bench/data?i=${i}`)).arrayBuffer()));
      const all = new Uint8Array(total);
      let at = 0;
      for (const part of parts) {
        all.set(part, at);
        at += part.byteLength;
      }
      if (at !== total) throw new Error(`fetched ${at} of ${total} bytes`);
      const div = document.createElement('div');
      div.className = 'wraith-bench-xterm';
      if (where === 'tab') {
        const host = document.querySelector('.tab-panel:not([style*="none"]) .xterm-host');
        const own = host?.querySelector(':scope > .xterm');
        if (!host || !(own instanceof HTMLElement)) throw new Error('no visible terminal tab to stand in for');
        own.style.display = 'none';
        div.style.cssText = 'height:100%';
        host.appendChild(div);
      } else {
        div.style.cssText = 'position:absolute;inset:0';
        document.body.style.margin = '0';
        document.body.appendChild(div);
      }
      const term = new T({ cols: sh.cols, rows: sh.rows, scrollback: sh.scrollback, convertEol: sh.convertEol, fontSize: sh.fontSize, fontFamily: sh.fontFamily, lineHeight: sh.lineHeight, allowProposedApi: true, cursorBlink: true });
      term.loadAddon(new U.Unicode11Addon());
      term.unicode.activeVersion = '11';
      term.open(div);
      let used = 'dom';
      const W = window.WebglAddon;
      if (sh.webgl && W) {
        try {
          term.loadAddon(new W.WebglAddon());
          used = 'webgl';
        } catch {
          used = 'dom (webgl failed)';
        }
      }
      window.benchTerm = term;
      window.benchData = all;
      return used;
    },
    [shape, bytes.byteLength, PIECE, base, where] as const,
  );
  console.log(`  (xterm-only ${where === 'tab' ? "in the tab's place in the Wraith window" : 'in a blank page'}: ${shape.cols}x${shape.rows}, scrollback ${shape.scrollback}, renderer ${renderer})`);
}

/** Removes the bare terminal from the Wraith window and shows the tab's own again. */
async function unmountBenchXterm(p: Page): Promise<void> {
  await p.evaluate(() => {
    window.benchTerm?.dispose();
    window.benchTerm = undefined;
    window.benchData = undefined;
    const div = document.querySelector('.wraith-bench-xterm');
    const own = div?.parentElement?.querySelector(':scope > .xterm');
    div?.remove();
    if (own instanceof HTMLElement) own.style.display = '';
  });
}

async function xtermOnly(p: Page, chunk: number): Promise<{ ms: number; frames: number }> {
  await p.bringToFront();
  return withTimeout(
    p.evaluate(async (size) => {
      const term = window.benchTerm;
      const data = window.benchData;
      if (!term || !data) throw new Error('xterm page not prepared');
      term.reset();
      await new Promise((r) => requestAnimationFrame(r));
      let frames = 0;
      let counting = true;
      const tick = () => {
        frames++;
        if (counting) requestAnimationFrame(tick);
      };
      const t0 = performance.now();
      requestAnimationFrame(tick);
      // xterm discards writes beyond 50 MB pending: keep up to 16 MiB queued, refilled from the
      // write callbacks, so the parser never waits for data (an upper bound for any feeder).
      const maxInFlight = Math.max(1, Math.floor((16 * 1048576) / size));
      await new Promise<void>((resolve) => {
        let at = 0;
        let inFlight = 0;
        const pump = () => {
          while (inFlight < maxInFlight && at < data.byteLength) {
            const last = at + size >= data.byteLength;
            inFlight++;
            term.write(data.subarray(at, at + size), () => {
              inFlight--;
              if (last) resolve();
              else pump();
            });
            at += size;
          }
        };
        pump();
      });
      counting = false;
      return { ms: performance.now() - t0, frames };
    }, chunk),
    THROUGHPUT_TIMEOUT_MS,
    'xterm-only write',
  );
}

// ---------------------------------------------------------------- 2. keystroke echo
const keyChar = (i: number) => String.fromCharCode(97 + (i % 26));
/** The last characters the screen shows once key `i` is echoed (8 of the a–z cycle: unambiguous). */
function expectedSuffix(i: number): string {
  let s = '';
  for (let k = Math.max(0, i - 7); k <= i; k++) s += keyChar(k);
  return s;
}

async function wraithEcho(page: BenchPage, id: string, keys = KEYS): Promise<{ parsed: number[]; frame: number[] }> {
  await page.click(TAB_XTERM);
  await page.type('clear; stty -icanon; cat >/dev/null\n');
  await sleep(800);
  const parsed: number[] = [];
  const frame: number[] = [];
  for (let i = 0; i < keys + WARMUP_KEYS; i++) {
    await page.evaluate(
      ([sid, want]) => {
        const inspect = window.wraithInspect?.terminals;
        if (!inspect) throw new Error('window.wraithInspect is missing');
        const rows = inspect.info(sid)?.rows ?? 24;
        let t0 = -1;
        const onKey = () => {
          if (t0 < 0) t0 = performance.now();
        };
        document.addEventListener('keydown', onKey, true);
        window.wraithBench = {
          done: new Promise((resolve) => {
            const off = inspect.onWriteParsed(sid, () => {
              if (t0 < 0 || !(inspect.tail(sid, rows) ?? '').endsWith(want)) return;
              const p = performance.now() - t0;
              off?.();
              document.removeEventListener('keydown', onKey, true);
              requestAnimationFrame(() => resolve({ parsed: p, frame: performance.now() - t0 }));
            });
          }),
        };
      },
      [id, expectedSuffix(i)] as const,
    );
    await page.press(keyChar(i));
    const r = await withTimeout(
      page.evaluate(() => window.wraithBench?.done ?? Promise.reject(new Error('bench state missing')), null),
      KEY_TIMEOUT_MS,
      `echo of key ${i}`,
    );
    if (i >= WARMUP_KEYS) {
      parsed.push(r.parsed);
      frame.push(r.frame);
    }
  }
  await page.press('Control+C');
  return { parsed: parsed.sort((a, b) => a - b), frame: frame.sort((a, b) => a - b) };
}

// ---------------------------------------------------------------- 3. Ctrl+C during a flood
async function setPrompt(page: BenchPage, id: string): Promise<void> {
  await page.bringToFront();
  await page.click(TAB_XTERM);
  await page.type(`PS1='__WRAITH''_PS__> '; clear\n`);
  await waitForTail(page, id, PROMPT);
}

/** Runs `command` `reps` times, pressing Ctrl+C after FLOOD_MS; in-page ms from the keydown to the prompt parsed. */
async function wraithCtrlC(page: BenchPage, id: string, command: string, reps: number): Promise<number[]> {
  const lat: number[] = [];
  for (let i = 0; i < reps; i++) {
    await page.type(command);
    await page.evaluate(
      ([sid, prompt]) => {
        const inspect = window.wraithInspect?.terminals;
        if (!inspect) throw new Error('window.wraithInspect is missing');
        const rows = inspect.info(sid)?.rows ?? 24;
        let t0 = -1;
        const onKey = (ev: KeyboardEvent) => {
          if (t0 < 0 && ev.ctrlKey && (ev.key === 'c' || ev.key === 'C')) t0 = performance.now();
        };
        document.addEventListener('keydown', onKey, true);
        window.wraithBench = {
          done: new Promise((resolve) => {
            const off = inspect.onWriteParsed(sid, () => {
              if (t0 < 0) return;
              // The last non-blank line: after `clear` the prompt sits near the top of a mostly blank screen.
              const last = (inspect.tail(sid, rows) ?? '').split('\n').pop() ?? '';
              if (last.trimEnd() !== prompt) return;
              const parsed = performance.now() - t0;
              off?.();
              document.removeEventListener('keydown', onKey, true);
              resolve({ parsed, frame: parsed });
            });
            if (!off) throw new Error(`no terminal for session ${sid}`);
          }),
        };
      },
      [id, PROMPT] as const,
    );
    await page.press('Enter');
    await sleep(FLOOD_MS);
    await page.press('Control+C');
    const r = await withTimeout(
      page.evaluate(() => window.wraithBench?.done ?? Promise.reject(new Error('bench state missing')), null),
      CTRLC_TIMEOUT_MS,
      `prompt after Ctrl+C ${i}`,
    );
    lat.push(r.parsed);
    console.log(`  ${command} rep ${i + 1}: ${ms3(r.parsed)} (load ${load()})`);
    await sleep(300);
  }
  return lat.sort((a, b) => a - b);
}

// ---------------------------------------------------------------- 4. echo beside a flooding tab
/**
 * Opens a second tab on the same saved connection (its key is trusted by now), starts a flood of
 * `yes` in it and makes the first tab active again: the flood goes on in a tab no one looks at,
 * as a runaway log does. Returns a function that stops the flood and ends the second tab's shell.
 */
async function floodInAnotherTab(page: Page, firstId: string): Promise<(page: Page) => Promise<void>> {
  const tabs = page.getByRole('tab');
  const before = await tabs.count();
  await page.getByRole('treeitem', { name: /^bench sshd, SSH/ }).dblclick();
  const pane = page.locator('.tab-panel:visible .terminal-pane[data-session-id]');
  const until = Date.now() + 20_000;
  let otherId: string | null = null;
  while (Date.now() < until && (!otherId || otherId === firstId)) {
    otherId = await pane.getAttribute('data-session-id').catch(() => null);
    if (!otherId || otherId === firstId) await sleep(100);
  }
  if (!otherId || otherId === firstId || (await tabs.count()) !== before + 1) throw new Error('the second tab did not open');
  const other = otherId;
  await page.locator('.tab-panel:visible .xterm').click();
  await page.keyboard.type('echo other-$((20+2))\n');
  await waitForTail(page, other, 'other-22');
  await page.keyboard.type('yes wraith-other-tab-flood\n');
  await sleep(1_000);
  await tabs.nth(before - 1).click();
  const shown = await pane.getAttribute('data-session-id');
  if (shown !== firstId) throw new Error(`the first tab is not the active one again (${shown})`);
  // Playwright reconnects after the timed part (onWraithTab), so the stop gets the page anew.
  return async (now: Page) => {
    const nowTabs = now.getByRole('tab');
    await nowTabs.nth(before).click();
    await now.locator('.tab-panel:visible .xterm').click();
    await now.keyboard.press('Control+C');
    await now.keyboard.type('exit\n');
    await nowTabs.nth(before - 1).click();
  };
}

/**
 * The browser's own floor under any web terminal: a one-byte WebSocket echo round trip between a
 * blank page of the same browser and a Node `ws` echo server on loopback (no Wraith at all).
 */
async function browserWebSocketEcho(count: number): Promise<number[]> {
  const http = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>ws floor</title>'));
  const wss = new WebSocketServer({ server: http });
  wss.on('connection', (ws) => ws.on('message', (m) => ws.send(m as Buffer, { binary: true })));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const port = (http.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}/`;
  // Timed the way the tab is: bare CDP, or Playwright with --playwright.
  let p: BenchPage;
  let close: () => Promise<void>;
  if (VIA_PLAYWRIGHT) {
    const pp = await connected().contexts()[0]!.newPage();
    await pp.goto(url);
    p = await playwrightBenchPage(pp);
    close = () => pp.close();
  } else {
    const cp = await CdpPage.open(requireChrome().httpBase, url);
    p = cp;
    close = () => cp.close(true);
  }
  try {
    return await p.evaluate(
      async ([port, count]) => {
        const ws = new WebSocket(`ws://127.0.0.1:${port}/`);
        ws.binaryType = 'arraybuffer';
        await new Promise((resolve) => (ws.onopen = resolve));
        const times: number[] = [];
        for (let i = 0; i < count; i++) {
          const t0 = performance.now();
          await new Promise((resolve) => {
            ws.onmessage = resolve;
            ws.send(new Uint8Array([i & 0xff]));
          });
          times.push(performance.now() - t0);
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        ws.close();
        return times;
      },
      [port, count] as const,
    );
  } finally {
    await close();
    wss.close();
    http.close();
  }
}

async function ssh2Echo(s: SshdHandle): Promise<number[]> {
  const c = new Client();
  ssh2Clients.push(c);
  await new Promise<void>((resolve, reject) => {
    c.once('ready', () => resolve());
    c.once('error', reject);
    c.connect({ host: s.host, port: s.port, username: s.users.key.username, privateKey: s.users.key.privateKey });
  });
  const chan = await new Promise<ClientChannel>((resolve, reject) => c.shell({ term: 'xterm-256color', cols: 200, rows: 50 }, (e, ch) => (e ? reject(e) : resolve(ch))));
  try {
    return await ssh2EchoLatencies(chan, KEYS, { warmup: WARMUP_KEYS, timeoutMs: KEY_TIMEOUT_MS });
  } finally {
    c.end();
  }
}

function requireChrome(): DetachableChromium {
  if (!chrome) throw new Error('Chromium is not running');
  return chrome;
}
function connected(): Browser {
  if (!pw) throw new Error('Playwright is not connected');
  return pw;
}
const isWraith = (url: string) => server !== undefined && url.startsWith(server.url);
const isBlank = (url: string) => url.startsWith('http://xterm-bench.invalid');

/** Connects Playwright over CDP; the pages it finds are the ones it left. */
async function connectPlaywright(): Promise<void> {
  pw = await chromium.connectOverCDP(requireChrome().wsEndpoint);
  const wraith = pw.contexts()[0]?.pages().find((p) => isWraith(p.url()));
  if (wraith) collectErrors(wraith);
}

function collectErrors(page: Page): void {
  page.on('pageerror', (err) => pageErrors.push(err.message));
  page.on('console', (msg) => {
    if (msg.type() === 'error') pageErrors.push(msg.text());
  });
}

/** The default context's page whose URL passes `match` (Playwright connected). */
function pwPage(match: (url: string) => boolean): Page {
  const page = connected().contexts()[0]?.pages().find((p) => match(p.url()));
  if (!page) throw new Error('page not found after reconnecting Playwright');
  return page;
}

/**
 * Runs a timed part on the Wraith tab: over a bare CDP session with Playwright disconnected (and
 * reconnected after), or through Playwright with --playwright.
 */
async function onWraithTab<T>(fn: (page: BenchPage) => Promise<T>): Promise<T> {
  if (VIA_PLAYWRIGHT) return fn(await playwrightBenchPage(pwPage(isWraith)));
  // For a connectOverCDP browser, close() only disconnects: pages and the default context stay.
  await pw?.close();
  pw = undefined;
  const page = await CdpPage.attach(requireChrome().httpBase, isWraith);
  try {
    return await fn(page);
  } finally {
    await page.close();
    await connectPlaywright();
  }
}

// ---------------------------------------------------------------- main
try {
  console.log(
    `terminal-render bench: ${FILE_MIB} MiB file, ${ROUNDS} rounds, ${KEYS} keys; load average at start ${load()}${DOM_ONLY ? ', --dom (WebGL disabled)' : ''}; ` +
      `Wraith's tab timed ${VIA_PLAYWRIGHT ? 'with Playwright attached (--playwright)' : 'over bare CDP, Playwright disconnected'}`,
  );
  sshd = await startSshd();
  server = await startWraithServer();
  // With --dom WebGL is disabled, so the tab uses xterm's DOM renderer.
  chrome = await launchDetachableChromium(DOM_ONLY ? ['--disable-webgl'] : []);
  await connectPlaywright();
  const context = connected().contexts()[0];
  if (!context) throw new Error('Chromium has no default context');
  {
    const page = context.pages()[0] ?? (await context.newPage());
    await page.addInitScript(NAME_SHIM);
    collectErrors(page);
    await page.goto(server.openUrl);
  }
  let page = pwPage(isWraith);
  await page.getByText('Host: connected').waitFor();
  const id = await openSshTab(page, sshd);

  // Text lines (base64, 100 columns) readable by both test users; the tab sees them with CRLF.
  const file = join(sshd.dir, 'bench-render.txt');
  execFileSync('sh', ['-c', `head -c ${Math.round((FILE_MIB * 1048576 * 100) / 101 * 0.75)} /dev/urandom | base64 -w 100 > ${file} && chmod 644 ${file}`]);
  const lf = readFileSync(file);
  const crlf = Buffer.from(lf.toString('latin1').replaceAll('\n', '\r\n'), 'latin1');
  console.log(`file: ${(lf.byteLength / 1048576).toFixed(1)} MiB, ${lf.toString('latin1').split('\n').length - 1} lines of 100 chars (${(crlf.byteLength / 1048576).toFixed(1)} MiB as CRLF through a pty)`);

  const info = await page.evaluate((sid) => window.wraithInspect?.terminals.info(sid) ?? null, id);
  const renderer = await page.locator('.tab-panel:visible .terminal-pane').getAttribute('data-renderer');
  if (!info) throw new Error('wraithInspect.info gave nothing: is the renderer built with the bench hook (npm run build)?');
  const viewport = await page.evaluate(() => `${innerWidth}x${innerHeight}`);
  console.log(`Wraith tab: ${info.cols}x${info.rows}, scrollback ${info.scrollback}, line height ${info.lineHeight}, convertEol ${info.convertEol}, renderer ${renderer}; page ${viewport}`);
  const shape = { ...info, webgl: renderer === 'webgl' };
  {
    const xp = await context.newPage();
    await xp.addInitScript(NAME_SHIM);
    await mountBenchXterm(xp, 'http://xterm-bench.invalid', 'blank', shape, crlf);
  }

  console.log(SKIP_THROUGHPUT ? '\n1. SSH output throughput: skipped (--skip-throughput)' : '\n1. SSH output throughput (cat of the file over loopback)');
  const res = { ssh: [] as number[], sshNet: [] as number[], wraith: [] as number[], xterm: [] as number[], inTab: [] as number[], cpuRatio: [] as number[] };
  for (let r = 1; r <= (SKIP_THROUGHPUT ? 0 : ROUNDS); r++) {
    const setup = Math.min(await opensshRun(sshd, 'true'), await opensshRun(sshd, 'true'), await opensshRun(sshd, 'true'));
    const o = await opensshRun(sshd, `cat ${file}`);
    res.ssh.push(lf.byteLength / o);
    res.sshNet.push(lf.byteLength / (o - setup));
    const host = server;
    const roots: CpuRoots = { host: host.process.pid, sshd: Number(readFileSync(join(sshd.dir, 'sshd.pid'), 'utf8')) };
    const { wr, wraithMainCpu, hostCpu, wraithSplit, wsFrames } = await onWraithTab(async (tab) => {
      const pageCpu = await mainThreadCpu(tab);
      const f0 = await frameCounts(tab);
      const main0 = await pageCpu();
      const snap0 = cpuSnapshot();
      const wr = await profiled(tab, `wraith-${r}`, () => wraithThroughput(tab, id, file, r));
      const wraithSplit = cpuSplit(snap0, cpuSnapshot(), roots);
      const f1 = await frameCounts(tab);
      const wsFrames = { mailbox: f1.mailbox - f0.mailbox, posted: f1.posted - f0.posted };
      // The split already read the host's CPU from /proc for the same span.
      return { wr, wraithMainCpu: (await pageCpu()) - main0, hostCpu: wraithSplit.groups.get('host') ?? NaN, wraithSplit, wsFrames };
    });
    const w = wr.ms;
    res.wraith.push(crlf.byteLength / w);
    // The anchor: the same bytes written straight into xterm.js in the same page.
    page = pwPage(isWraith);
    const tabPw = await playwrightBenchPage(page);
    await mountBenchXterm(page, new URL(server.openUrl).origin, 'tab', shape, crlf);
    const tabCpu = await mainThreadCpu(tabPw);
    const tab0 = await tabCpu();
    const snap1 = cpuSnapshot();
    const tr = await profiled(tabPw, `in-tab-${r}`, () => xtermOnly(page, CHUNK));
    const inTabSplit = cpuSplit(snap1, cpuSnapshot(), roots);
    const inTabMainCpu = (await tabCpu()) - tab0;
    res.cpuRatio.push(inTabMainCpu / wraithMainCpu);
    await unmountBenchXterm(page);
    res.inTab.push(crlf.byteLength / tr.ms);
    const xp = pwPage(isBlank);
    const xr = await profiled(await playwrightBenchPage(xp), `xterm-${r}`, () => xtermOnly(xp, CHUNK));
    const x = xr.ms;
    res.xterm.push(crlf.byteLength / x);
    console.log(
      `  round ${r} (load ${load()}): OpenSSH ${mibps(lf.byteLength, o)} MiB/s (${mibps(lf.byteLength, o - setup)} without its ${setup.toFixed(0)} ms set-up)` +
        ` | Wraith tab ${mibps(crlf.byteLength, w)} MiB/s (${(w / 1000).toFixed(2)} s, ${wr.frames} frames)` +
        ` | xterm.js only, same window ${mibps(crlf.byteLength, tr.ms)} MiB/s (${(tr.ms / 1000).toFixed(2)} s, ${tr.frames} frames)` +
        ` | xterm.js only, blank page ${mibps(crlf.byteLength, x)} MiB/s (${(x / 1000).toFixed(2)} s, ${xr.frames} frames)` +
        ` | Wraith/same-window ${((tr.ms / w) * 100).toFixed(0)}%, Wraith/blank ${((x / w) * 100).toFixed(0)}%`,
    );
    console.log(`    host process CPU during the Wraith run: ${hostCpu.toFixed(0)} ms (${(hostCpu / (crlf.byteLength / 1048576)).toFixed(1)} ms per MiB, ${((hostCpu / w) * 100).toFixed(0)}% of a core)`);
    const nFrames = wsFrames.mailbox + wsFrames.posted;
    console.log(`    host → page messages: ${nFrames} (${wsFrames.mailbox} through the mailbox, ${wsFrames.posted} posted), ${(crlf.byteLength / 1024 / Math.max(1, nFrames)).toFixed(1)} KiB of output each on average`);
    console.log(
      `    page main-thread CPU for the same bytes: Wraith tab ${wraithMainCpu.toFixed(0)} ms (${((wraithMainCpu / w) * 100).toFixed(0)}% of its wall time), ` +
        `xterm.js only in the same window ${inTabMainCpu.toFixed(0)} ms (${((inTabMainCpu / tr.ms) * 100).toFixed(0)}%) → xterm-only/Wraith ${((inTabMainCpu / wraithMainCpu) * 100).toFixed(0)}%`,
    );
    console.log(`    whole machine during the Wraith run: ${formatCpuSplit(wraithSplit)}`);
    console.log(`    whole machine during xterm.js only : ${formatCpuSplit(inTabSplit)}`);
    console.log(`    the page's main thread during the Wraith run: ${formatPageMain(wraithSplit)}; during xterm.js only: ${formatPageMain(inTabSplit)}`);
  }
  if (!SKIP_THROUGHPUT) {
    const best = (v: number[]) => Math.max(...v);
    const f = (bpms: number) => (bpms * 1000 / 1048576).toFixed(1);
    console.log(`  best: OpenSSH ${f(best(res.ssh))} MiB/s (net of set-up ${f(best(res.sshNet))}), Wraith tab ${f(best(res.wraith))} MiB/s, xterm.js only in the same window ${f(best(res.inTab))} MiB/s, in a blank page ${f(best(res.xterm))} MiB/s`);
    console.log(`  ratio Wraith / xterm-only in the same window (best rounds): ${((best(res.wraith) / best(res.inTab)) * 100).toFixed(0)}%  (target ≥ 85%)`);
    console.log(`  ratio Wraith / xterm-only in a blank page (best rounds): ${((best(res.wraith) / best(res.xterm)) * 100).toFixed(0)}%  (the stricter anchor: no app around it)`);
    const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor((v.length - 1) / 2)] ?? NaN;
    console.log(`  the page's own main-thread CPU for the bytes, xterm-only / Wraith (median round): ${(median(res.cpuRatio) * 100).toFixed(0)}%  (what the tab costs the page beyond xterm.js itself)`);
    const canvases = (p: Page, sel: string) => p.$$eval(sel, (els) => els.map((c) => (c instanceof HTMLCanvasElement ? `${c.width}x${c.height}` : '?')).join(','));
    console.log(`  canvases after the runs: Wraith tab ${await canvases(page, '.tab-panel:visible .xterm-screen canvas')}, xterm-only page ${await canvases(pwPage(isBlank), '.xterm-screen canvas')}; tab renderer now ${await page.locator('.tab-panel:visible .terminal-pane').getAttribute('data-renderer')}`);
  }
  await pwPage(isBlank).close();

  console.log(`\n2. Keystroke echo latency (${KEYS} keys after ${WARMUP_KEYS} warm-up, remote tty echo under stty -icanon; cat)`);
  const e2 = await ssh2Echo(sshd);
  const { ew, floor, paths } = await onWraithTab(async (tab) => {
    await tab.bringToFront();
    const c0 = await frameCounts(tab);
    const ew = await profiled(tab, 'echo', () => wraithEcho(tab, id));
    const c1 = await frameCounts(tab);
    const floor = (await browserWebSocketEcho(KEYS)).sort((a, b) => a - b);
    return { ew, floor, paths: { mailbox: c1.mailbox - c0.mailbox, posted: c1.posted - c0.posted } };
  });
  console.log(`  ssh2 alone (Node, write → echo data)       : p50 ${ms3(pct(e2, 50))}  p99 ${ms3(pct(e2, 99))}`);
  console.log(`  Wraith tab (keydown → echo parsed by xterm): p50 ${ms3(pct(ew.parsed, 50))}  p99 ${ms3(pct(ew.parsed, 99))}  added p50 ${ms3(pct(ew.parsed, 50) - pct(e2, 50))}, p99 ${ms3(pct(ew.parsed, 99) - pct(e2, 99))} (target ≤ 3 ms at p99)`);
  console.log(`  Wraith tab (keydown → next frame after)    : p50 ${ms3(pct(ew.frame, 50))}  p99 ${ms3(pct(ew.frame, 99))}`);
  console.log(`  frames the tab received meanwhile: ${paths.mailbox} through the shared mailbox, ${paths.posted} posted (the mailbox needs a cross-origin isolated page)`);
  console.log(`  the browser's floor: WebSocket echo page ↔ Node ws, no Wraith: p50 ${ms3(pct(floor, 50))}  p99 ${ms3(pct(floor, 99))} (part of "added" for any web terminal)`);

  console.log(`\n3. Ctrl+C stop latency (yes wraith-flood for ${FLOOD_MS} ms, keydown → next prompt parsed by xterm, ${CTRLC_REPS} reps)`);
  const { idle, cc } = await onWraithTab(async (tab) => {
    await setPrompt(tab, id);
    const idle = await wraithCtrlC(tab, id, 'sleep 60', 3);
    const cc = await wraithCtrlC(tab, id, 'yes wraith-flood', CTRLC_REPS);
    await tab.type('clear\n');
    return { idle, cc };
  });
  console.log(`  anchor, no flood (sleep 60): p50 ${ms3(pct(idle, 50))}  max ${ms3(idle[idle.length - 1] ?? NaN)}`);
  console.log(`  Wraith tab, yes flood      : p50 ${ms3(pct(cc, 50))}  max ${ms3(cc[cc.length - 1] ?? NaN)}`);
  if (OTHER_TAB_KEYS > 0) {
    console.log(`\n4. Keystroke echo beside a flood (${OTHER_TAB_KEYS} keys in the first tab while a second tab of the same window runs yes)`);
    const stopFlood = await floodInAnotherTab(pwPage(isWraith), id);
    console.log(`  flood running in the other tab (load ${load()})`);
    const beside = await onWraithTab(async (tab) => {
      await tab.bringToFront();
      return wraithEcho(tab, id, OTHER_TAB_KEYS);
    });
    await stopFlood(pwPage(isWraith));
    console.log(`  Wraith tab beside a flood (keydown → echo parsed by xterm): p50 ${ms3(pct(beside.parsed, 50))}  p99 ${ms3(pct(beside.parsed, 99))}  max ${ms3(beside.parsed[beside.parsed.length - 1] ?? NaN)}`);
    console.log(`  the same, keydown → next frame after                   : p50 ${ms3(pct(beside.frame, 50))}  p99 ${ms3(pct(beside.frame, 99))}  (no flood: figure 2)`);
  }
  const errors = pageErrors.filter((e) => !/WebSocket connection to .* failed/.test(e));
  if (errors.length) console.log(`page errors: ${errors.join(' | ')}`);
  console.log(`\nload average at end ${load()}`);
} finally {
  // Each step on its own: one failing must not leave a host, an sshd or a browser behind.
  for (const c of ssh2Clients) c.destroy();
  const report = (err: unknown) => console.error(`cleanup: ${err instanceof Error ? err.message : String(err)}`);
  await pw?.close().catch(report);
  await chrome?.close().catch(report);
  await server?.stop().catch(report);
  await sshd?.stop().catch(report);
}
