import type { BrowserWindowConstructorOptions } from 'electron';

/**
 * The security policy of the Electron window, kept free of Electron's runtime so unit tests
 * can assert it: an isolated, sandboxed renderer with no Node, our own scripts only, no
 * navigation away, no new windows, and external links only to an allowlist of schemes.
 */

export const CONTENT_SECURITY_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; " +
  "font-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'";

/**
 * Chromium features the window runs without. DeferRendererTasksAfterInput holds every task of
 * the page, port messages included, from a key press until the next frame is drawn; a key's
 * echo that arrives meanwhile waits ~10 ms and shows a frame late. A terminal wants its echo
 * at once. (Browser mode cannot set this; it avoids the deferral with a shared mailbox, see
 * src-renderer/transport/shared-mailbox.ts.)
 */
export const DISABLED_CHROMIUM_FEATURES = ['DeferRendererTasksAfterInput'];

export function windowOptions(preloadPath: string): BrowserWindowConstructorOptions {
  return {
    width: 1400,
    height: 900,
    minWidth: 800,
    minHeight: 500,
    backgroundColor: '#0f1115',
    title: 'Wraith',
    show: false,
    webPreferences: {
      preload: preloadPath,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      experimentalFeatures: false,
      spellcheck: false,
      navigateOnDragDrop: false,
    },
  };
}

/** Links a user clicks (terminal web-links, docs) may open in the OS browser only with these schemes. */
const EXTERNAL_SCHEMES = new Set(['https:', 'http:', 'mailto:']);

export function isAllowedExternalUrl(url: string): boolean {
  try {
    const u = new URL(url);
    return EXTERNAL_SCHEMES.has(u.protocol) && (u.protocol === 'mailto:' || u.hostname !== '');
  } catch {
    return false;
  }
}

/** The window may only ever show the app itself: same file, any hash. */
export function isAppUrl(url: string, appUrl: string): boolean {
  try {
    const a = new URL(url);
    const b = new URL(appUrl);
    return a.protocol === b.protocol && a.host === b.host && a.pathname === b.pathname;
  } catch {
    return false;
  }
}

/** Permissions the renderer may have: none but writing to the clipboard (copy-on-select). */
export function isAllowedPermission(permission: string): boolean {
  return permission === 'clipboard-sanitized-write';
}
