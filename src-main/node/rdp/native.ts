// Typed loader and wrapper for the FreeRDP addon (native/rdp). No Electron imports:
// this runs in the Electron main process, in `wraith serve`, and in tests.
//
//   const s = new RdpSession({ host, port, username, password, trustedFingerprint });
//   s.on('frame', (rects) => ...);            // dirty rectangles, RGBA copies
//   s.on('resize', ({ width, height }) => ...);
//   s.on('closed', ({ code, message }) => ...);
//   const { width, height } = await s.connect();  // rejects with RdpError
//   s.mouseMove(10, 20); s.keypress('ctrl+alt+delete'); s.type('hello');
//   const fb = s.getFramebuffer('rgb');       // full copy (RGBA, or packed RGB for screenshots)
//   await s.close();

import { EventEmitter } from 'node:events';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { comboToStrokes, scancodeForCode, usLayoutStrokes, type Scancode } from './keymap.js';

export type RdpSecurity = 'auto' | 'nla' | 'tls' | 'rdp';

export interface RdpConnectOptions {
  host: string;
  port?: number; // default 3389
  username?: string;
  password?: string;
  domain?: string;
  width?: number; // default 1280 (clamped 200..8192, made even)
  height?: number; // default 800
  security?: RdpSecurity; // default 'auto'
  /** Accept any certificate. Default false. */
  ignoreCertificate?: boolean;
  /** SHA-256 fingerprint, colon-separated hex, as reported in ECERT_UNKNOWN/ECERT_CHANGED. */
  trustedFingerprint?: string;
  /** TCP connect timeout. Default 15000. */
  timeoutMs?: number;
  /** Use the RDP graphics pipeline (rdpgfx) when the server offers it. Default true. */
  gfx?: boolean;
  /**
   * Offer H.264 (AVC444 and AVC420) in the graphics pipeline when FreeRDP can decode it.
   * Default true. Lossy: pixels come back close to, not exactly, what the server drew.
   */
  h264?: boolean;
}

/** What getStats() reports: which path frames took and how many there were. */
export interface RdpSessionStats {
  /** EndPaint calls that drew something (the count xfreerdp's paints are compared with). */
  paints: number;
  /** 'frame' events emitted (paints merge while JS is busy). */
  deliveries: number;
  /** The rdpgfx channel is connected and GDI draws through it. */
  graphicsPipeline: boolean;
  /** AVC444/AVC420 were offered to the server. */
  h264Offered: boolean;
  /** RDPGFX frames (EndFrame PDUs) received. */
  gfxFrames: number;
  /** RDPGFX surface commands received, by codec (e.g. { avc444v2: 12 }). */
  gfxCommands: Record<string, number>;
}

/** Stable error codes of connect() failures (RdpError.code). */
export type RdpErrorCode =
  | 'EUNAVAILABLE' // addon not built / FreeRDP missing
  | 'ECERT_UNKNOWN' // certificate not trusted yet (fingerprint attached)
  | 'ECERT_CHANGED' // certificate differs from trustedFingerprint (fingerprint attached)
  | 'EAUTH' // wrong user/password, account refused, or credentials required
  | 'EIO' // refused, unreachable, DNS, or other transport failure
  | 'ETLS' // TLS handshake failed
  | 'ESECURITY' // server does not accept the requested security protocol
  | 'ECANCELED' // close() while connecting
  | 'EINVAL'; // bad options / connect() twice

/** Codes of the 'closed' event. */
export type RdpCloseCode =
  | 'CLOSED' // close() was called
  | 'ELOGOFF' // the user logged off on the server
  | 'EDISCONNECTED' // the server ended the session (admin, other connection, timeout, ...)
  | 'ECONNRESET'; // connection lost (server died, network)

export interface RdpClosedInfo {
  code: RdpCloseCode;
  message: string;
  freerdpError?: string;
}

export interface RdpFrameRect {
  x: number;
  y: number;
  width: number;
  height: number;
  /** RGBA, width*height*4 bytes, tightly packed (stride = width*4). A copy owned by JS. */
  data: Uint8Array;
}

export interface RdpFramebuffer {
  width: number;
  height: number;
  /** 4: RGBA (stride = width*4); 3: packed RGB (stride = width*3), asked for by screenshots. */
  channels: 3 | 4;
  data: Uint8Array;
}

export type RdpMouseButton = 'left' | 'right' | 'middle' | 'back' | 'forward';

export class RdpError extends Error {
  code: RdpErrorCode;
  host?: string;
  port?: number;
  fingerprint?: string;
  subject?: string;
  issuer?: string;
  commonName?: string;
  freerdpError?: string;
  constructor(code: RdpErrorCode, message: string, extra: Partial<RdpError> = {}) {
    super(message);
    this.name = 'RdpError';
    this.code = code;
    Object.assign(this, extra);
  }
}

// ---------------------------------------------------------------------------
// Addon loading

interface NativeSession {
  connect(): Promise<{ width: number; height: number; unicodeInput: boolean }>;
  close(): void;
  sendKey(scancode: number, down: boolean): void;
  sendUnicode(text: string): void;
  sendMouse(flags: number, x: number, y: number): void;
  sendExtendedMouse(flags: number, x: number, y: number): void;
  sendCtrlAltDel(): void;
  getFramebuffer(format?: 'rgba' | 'rgb'): RdpFramebuffer | null;
  getStats(): RdpSessionStats;
}

interface NativeHandlers {
  onFrame(rects: RdpFrameRect[]): void;
  onResize(size: { width: number; height: number }): void;
  onClosed(info: RdpClosedInfo): void;
  onHandlerError(err: unknown): void;
}

interface NativeAddon {
  RdpSession: new (options: Record<string, unknown>, handlers: NativeHandlers) => NativeSession;
  setLogHandler(fn: ((level: number, tag: string, message: string) => void) | null, level?: number): void;
  freerdpVersion: { major: number; minor: number; revision: number; full: string };
}

export const RDP_INSTALL_HINT =
  'On Debian/Ubuntu: sudo apt-get install freerdp2-dev libssl-dev pkg-config build-essential ' +
  '(or freerdp3-dev for FreeRDP 3), then run `npm rebuild` (or `node native/rdp/build.mjs`) in the Wraith folder.';

const ADDON_REL = path.join('native', 'rdp', 'build', 'Release', 'wraith_rdp.node');

function candidatePaths(): string[] {
  const out: string[] = [];
  if (process.env.WRAITH_RDP_ADDON) out.push(process.env.WRAITH_RDP_ADDON);
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    out.push(path.join(dir, ADDON_REL));
    const up = path.dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  const resources = (process as unknown as { resourcesPath?: string }).resourcesPath;
  if (resources) {
    out.push(path.join(resources, 'app.asar.unpacked', ADDON_REL));
    out.push(path.join(resources, ADDON_REL));
  }
  return out;
}

let cached: { addon?: NativeAddon; error?: RdpError } | undefined;

/** Load the addon or throw RdpError('EUNAVAILABLE') saying exactly what to install. */
export function loadRdpAddon(): NativeAddon {
  if (!cached) cached = tryLoad();
  if (cached.error) throw cached.error;
  return cached.addon as NativeAddon;
}

function tryLoad(): { addon?: NativeAddon; error?: RdpError } {
  const req = createRequire(import.meta.url);
  const file = candidatePaths().find((p) => existsSync(p));
  if (!file) {
    return {
      error: new RdpError(
        'EUNAVAILABLE',
        `RDP is unavailable: the FreeRDP addon was not built (FreeRDP development files were missing at install time). ${RDP_INSTALL_HINT}`,
      ),
    };
  }
  try {
    return { addon: req(file) as NativeAddon };
  } catch (e) {
    const detail = e instanceof Error ? e.message : String(e);
    return {
      error: new RdpError(
        'EUNAVAILABLE',
        `RDP is unavailable: the FreeRDP addon could not be loaded (${detail}). ` +
          `Install the FreeRDP libraries it was built against (Debian/Ubuntu: sudo apt-get install libfreerdp2-2 libfreerdp-client2-2 libwinpr2-2) ` +
          `or rebuild it. ${RDP_INSTALL_HINT}`,
      ),
    };
  }
}

export type RdpAvailability =
  | { available: true; freerdpVersion: string }
  | { available: false; message: string };

export function rdpAvailability(): RdpAvailability {
  try {
    return { available: true, freerdpVersion: loadRdpAddon().freerdpVersion.full };
  } catch (e) {
    return { available: false, message: (e as Error).message };
  }
}

// ---------------------------------------------------------------------------
// Logging

export type RdpLogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';
const LEVELS: RdpLogLevel[] = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'];

/**
 * Route FreeRDP's log (WLog) to `fn`, at `minLevel` and above (default 'warn').
 * With no handler (the default) FreeRDP logs nothing: never to stdout.
 */
export function setRdpLogHandler(
  fn: ((level: RdpLogLevel, tag: string, message: string) => void) | null,
  minLevel: RdpLogLevel = 'warn',
): void {
  const addon = loadRdpAddon();
  if (!fn) {
    addon.setLogHandler(null);
    return;
  }
  addon.setLogHandler((level, tag, message) => fn(LEVELS[level] ?? 'error', tag, message), LEVELS.indexOf(minLevel));
}

// ---------------------------------------------------------------------------
// Session wrapper

// Pointer flags (MS-RDPBCGR 2.2.8.1.1.3.1.1.3)
const PTR_FLAGS_HWHEEL = 0x0400;
const PTR_FLAGS_WHEEL = 0x0200;
const PTR_FLAGS_WHEEL_NEGATIVE = 0x0100;
const PTR_FLAGS_MOVE = 0x0800;
const PTR_FLAGS_DOWN = 0x8000;
const PTR_FLAGS_BUTTON1 = 0x1000; // left
const PTR_FLAGS_BUTTON2 = 0x2000; // right
const PTR_FLAGS_BUTTON3 = 0x4000; // middle
const PTR_XFLAGS_DOWN = 0x8000;
const PTR_XFLAGS_BUTTON1 = 0x0001; // back
const PTR_XFLAGS_BUTTON2 = 0x0002; // forward

let configDir: string | undefined;
/** Private, empty FreeRDP config dir so FreeRDP's own known_hosts never decides trust. */
function freerdpConfigDir(): string {
  if (!configDir) {
    configDir = mkdtempSync(path.join(os.tmpdir(), 'wraith-freerdp-'));
    const dir = configDir;
    process.once('exit', () => {
      try {
        rmSync(dir, { recursive: true, force: true });
      } catch {
        /* best effort */
      }
    });
  }
  return configDir;
}

export type RdpSessionState = 'new' | 'connecting' | 'connected' | 'closed';

export interface RdpSessionEvents {
  frame: [rects: RdpFrameRect[]];
  resize: [size: { width: number; height: number }];
  closed: [info: RdpClosedInfo];
  error: [err: unknown];
}

export class RdpSession extends EventEmitter<RdpSessionEvents> {
  private native: NativeSession;
  private _state: RdpSessionState = 'new';
  private closedInfo: RdpClosedInfo | undefined;
  private closeWaiters: Array<(info: RdpClosedInfo) => void> = [];
  private lastX = 0;
  private lastY = 0;
  width = 0;
  height = 0;
  /** Whether the server accepts Unicode keyboard input (known after connect). */
  unicodeInput = false;

  /** Throws RdpError('EUNAVAILABLE') when the addon is missing, TypeError on bad options. */
  constructor(readonly options: RdpConnectOptions) {
    super();
    const addon = loadRdpAddon();
    this.native = new addon.RdpSession(
      {
        host: options.host,
        port: options.port ?? 3389,
        username: options.username,
        password: options.password,
        domain: options.domain,
        width: options.width ?? 1280,
        height: options.height ?? 800,
        security: options.security ?? 'auto',
        ignoreCertificate: options.ignoreCertificate ?? false,
        trustedFingerprint: options.trustedFingerprint,
        timeoutMs: options.timeoutMs ?? 15000,
        gfx: options.gfx ?? true,
        h264: options.h264 ?? true,
        configDir: freerdpConfigDir(),
      },
      {
        onFrame: (rects) => this.emit('frame', rects),
        onResize: (size) => {
          this.width = size.width;
          this.height = size.height;
          // the first size comes with connect(); later ones are server-side resizes
          if (this._state === 'connected') this.emit('resize', size);
        },
        onClosed: (info) => this.finish(info),
        onHandlerError: (err) => {
          if (this.listenerCount('error') > 0) this.emit('error', err);
        },
      },
    );
  }

  get state(): RdpSessionState {
    return this._state;
  }

  /** Connect. Frames may be emitted right before this resolves. Rejects with RdpError. */
  async connect(): Promise<{ width: number; height: number; unicodeInput: boolean }> {
    if (this._state !== 'new') throw new RdpError('EINVAL', 'connect() may be called once per session');
    this._state = 'connecting';
    try {
      const size = await this.native.connect();
      this.width = size.width;
      this.height = size.height;
      this.unicodeInput = size.unicodeInput;
      if (this._state === 'connecting') this._state = 'connected';
      return size;
    } catch (e) {
      this._state = 'closed';
      const n = e as Partial<RdpError> & Error;
      const err = new RdpError((n.code as RdpErrorCode) ?? 'EIO', n.message, {
        host: n.host,
        port: n.port,
        fingerprint: n.fingerprint,
        subject: n.subject,
        issuer: n.issuer,
        commonName: n.commonName,
        freerdpError: n.freerdpError,
      });
      for (const k of Object.keys(err) as Array<keyof RdpError>) if (err[k] === undefined) delete err[k];
      this.resolveClose({ code: 'CLOSED', message: err.message });
      throw err;
    }
  }

  private finish(info: RdpClosedInfo): void {
    this._state = 'closed';
    this.resolveClose(info);
    this.emit('closed', info);
  }

  private resolveClose(info: RdpClosedInfo): void {
    this.closedInfo = info;
    const w = this.closeWaiters;
    this.closeWaiters = [];
    for (const r of w) r(info);
  }

  /** Close the session. Resolves once the native thread has finished. */
  close(): Promise<RdpClosedInfo> {
    if (this.closedInfo) return Promise.resolve(this.closedInfo);
    if (this._state === 'new') {
      this._state = 'closed';
      const info: RdpClosedInfo = { code: 'CLOSED', message: 'Session closed.' };
      this.resolveClose(info);
      return Promise.resolve(info);
    }
    const p = new Promise<RdpClosedInfo>((resolve) => this.closeWaiters.push(resolve));
    this.native.close();
    return p;
  }

  // --- keyboard -----------------------------------------------------------

  /** Send a raw scancode (0xE0xx = extended). */
  sendScancode(scancode: Scancode, down: boolean): void {
    this.native.sendKey(scancode, down);
  }

  /** Send a key by KeyboardEvent.code ("KeyA", "ArrowUp", "MetaLeft"). Returns false for unmapped codes. */
  sendKeyCode(code: string, down: boolean): boolean {
    const sc = scancodeForCode(code);
    if (sc === undefined) return false;
    this.native.sendKey(sc, down);
    return true;
  }

  /** Press a combo like "ctrl+alt+delete", "win+r", "enter": press left→right, release in reverse. */
  keypress(combo: string): void {
    for (const s of comboToStrokes(combo)) this.native.sendKey(s.scancode, s.down);
  }

  /**
   * Type text. 'unicode' sends Unicode key events (layout independent); 'scancode' types
   * US-layout keys (Unicode for characters not on it); 'auto' (default) uses Unicode when
   * the server accepts it (Windows does; FreeRDP's shadow server does not).
   */
  type(text: string, mode: 'auto' | 'unicode' | 'scancode' = 'auto'): void {
    if (!text) return;
    const unicode = mode === 'unicode' || (mode === 'auto' && this.unicodeInput);
    let run = '';
    const flush = () => {
      if (run) this.native.sendUnicode(run);
      run = '';
    };
    for (const ch of text.replace(/\r\n/g, '\n')) {
      // Enter and Tab are keys, not characters, on every server.
      const strokes = unicode && ch !== '\n' && ch !== '\r' && ch !== '\t' ? undefined : usLayoutStrokes(ch);
      if (strokes) {
        flush();
        for (const s of strokes) this.native.sendKey(s.scancode, s.down);
      } else {
        run += ch;
      }
    }
    flush();
  }

  ctrlAltDel(): void {
    this.native.sendCtrlAltDel();
  }

  // --- mouse --------------------------------------------------------------

  mouseMove(x: number, y: number): void {
    this.lastX = clampCoord(x);
    this.lastY = clampCoord(y);
    this.native.sendMouse(PTR_FLAGS_MOVE, this.lastX, this.lastY);
  }

  mouseButton(button: RdpMouseButton, down: boolean, x = this.lastX, y = this.lastY): void {
    this.lastX = clampCoord(x);
    this.lastY = clampCoord(y);
    if (button === 'back' || button === 'forward') {
      const f = (button === 'back' ? PTR_XFLAGS_BUTTON1 : PTR_XFLAGS_BUTTON2) | (down ? PTR_XFLAGS_DOWN : 0);
      this.native.sendExtendedMouse(f, this.lastX, this.lastY);
      return;
    }
    const b = button === 'left' ? PTR_FLAGS_BUTTON1 : button === 'right' ? PTR_FLAGS_BUTTON2 : PTR_FLAGS_BUTTON3;
    this.native.sendMouse(b | (down ? PTR_FLAGS_DOWN : 0), this.lastX, this.lastY);
  }

  /** Move, press and release. */
  click(x: number, y: number, button: RdpMouseButton = 'left', count = 1): void {
    this.mouseMove(x, y);
    for (let i = 0; i < count; i++) {
      this.mouseButton(button, true, x, y);
      this.mouseButton(button, false, x, y);
    }
  }

  /**
   * Scroll by `notches` (DOM convention: positive = down / right). One notch = 120 units.
   */
  wheel(notches: number, horizontal = false, x = this.lastX, y = this.lastY): void {
    // RDP: vertical positive = away from the user (up); horizontal positive = right.
    let units = Math.round(notches * 120) * (horizontal ? 1 : -1);
    while (units !== 0) {
      const step = Math.max(-255, Math.min(255, units));
      units -= step;
      let flags = horizontal ? PTR_FLAGS_HWHEEL : PTR_FLAGS_WHEEL;
      flags |= step < 0 ? PTR_FLAGS_WHEEL_NEGATIVE | ((0x200 + step) & 0xff) : step & 0xff;
      this.native.sendMouse(flags, clampCoord(x), clampCoord(y));
    }
  }

  // --- framebuffer --------------------------------------------------------

  /** Full current desktop (a copy: RGBA, or packed RGB for screenshots), or null before connect / after close. */
  getFramebuffer(format: 'rgba' | 'rgb' = 'rgba'): RdpFramebuffer | null {
    return this.native.getFramebuffer(format);
  }

  /** Frame-path counters (tests, benchmarks, diagnostics). */
  getStats(): RdpSessionStats {
    return this.native.getStats();
  }
}

function clampCoord(v: number): number {
  if (!Number.isFinite(v) || v < 0) return 0;
  return Math.min(65535, Math.round(v));
}
