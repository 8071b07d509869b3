import { BrowserWindow, type IpcMainEvent, app, dialog, ipcMain, safeStorage, session, shell } from 'electron';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { App } from '../node/app.js';
import { packageRoot } from '../node/paths.js';
import { servePort } from './port-transport.js';
import {
  CONTENT_SECURITY_POLICY,
  DISABLED_CHROMIUM_FEATURES,
  isAllowedExternalUrl,
  isAllowedPermission,
  isAppUrl,
  windowOptions,
} from './window-policy.js';

/**
 * The Electron host: the same App as `wraith serve`, served to one hardened window over a
 * MessagePort. Everything that decides policy lives in window-policy.ts (unit-tested).
 *
 * Not yet here: the host heap flags `wraith serve` runs under (src-main/server/host-heap.ts).
 * V8 reads them when this process starts, and `appendSwitch('js-flags')` only reaches
 * renderers, so they need `--js-flags` on the packaged app's launcher.
 */

const root = packageRoot();
const indexHtml = join(root, 'dist', 'renderer', 'index.html');
const appUrl = pathToFileURL(indexHtml).href;

app.enableSandbox();
app.commandLine.appendSwitch('disable-features', DISABLED_CHROMIUM_FEATURES.join(','));
if (!app.requestSingleInstanceLock()) app.quit();

let services: App | null = null;

function createWindow(): BrowserWindow {
  const win = new BrowserWindow(windowOptions(join(root, 'dist', 'main', 'electron', 'preload.cjs')));
  const contents = win.webContents;
  contents.on('will-navigate', (event, url) => {
    if (!isAppUrl(url, appUrl)) event.preventDefault();
  });
  contents.on('will-attach-webview', (event) => event.preventDefault());
  contents.setWindowOpenHandler(({ url }) => {
    if (isAllowedExternalUrl(url)) void shell.openExternal(url);
    return { action: 'deny' };
  });
  win.once('ready-to-show', () => win.show());
  void win.loadFile(indexHtml);
  return win;
}

/**
 * sftp.saveAs's dialog: a save dialog (in Downloads, the remote name suggested) for one item, a
 * folder picker for several. Modal to the window, so it cannot be lost behind it.
 */
async function chooseSavePath(request: { suggestedName: string; several: boolean }): Promise<string | null> {
  const win = BrowserWindow.getFocusedWindow() ?? BrowserWindow.getAllWindows()[0];
  const downloads = app.getPath('downloads');
  if (request.several) {
    const options: Electron.OpenDialogOptions = {
      title: `Download ${request.suggestedName} to…`,
      buttonLabel: 'Download here',
      defaultPath: downloads,
      properties: ['openDirectory', 'createDirectory'],
    };
    const r = win ? await dialog.showOpenDialog(win, options) : await dialog.showOpenDialog(options);
    return r.canceled ? null : (r.filePaths[0] ?? null);
  }
  const options: Electron.SaveDialogOptions = {
    title: `Save ${request.suggestedName}`,
    defaultPath: join(downloads, request.suggestedName),
    properties: ['createDirectory', 'showOverwriteConfirmation'],
  };
  const r = win ? await dialog.showSaveDialog(win, options) : await dialog.showSaveDialog(options);
  return r.canceled || !r.filePath ? null : r.filePath;
}

/** A renderer asks for a contract channel; only our own window's main frame gets one. */
function onConnect(event: IpcMainEvent): void {
  const frame = event.senderFrame;
  const port = event.ports[0];
  if (!services || !port || !frame || frame.parent !== null || !isAppUrl(frame.url, appUrl)) {
    port?.close();
    return;
  }
  servePort(services, {
    postMessage: (m) => port.postMessage(m),
    onMessage: (l) => port.on('message', (e) => l(e.data)),
    onClose: (l) => port.on('close', l),
    start: () => port.start(),
  });
}

void app.whenReady().then(() => {
  services = new App({
    dataDir: app.getPath('userData'),
    host: 'electron',
    osKeyWrapper: {
      isAvailable: () => safeStorage.isEncryptionAvailable(),
      encrypt: (plain) => safeStorage.encryptString(plain.toString('base64')),
      decrypt: (wrapped) => Buffer.from(safeStorage.decryptString(wrapped), 'base64'),
    },
    chooseSavePath,
  });
  session.defaultSession.webRequest.onHeadersReceived((details, callback) => {
    callback({
      responseHeaders: { ...details.responseHeaders, 'Content-Security-Policy': [CONTENT_SECURITY_POLICY] },
    });
  });
  session.defaultSession.setPermissionRequestHandler((_wc, permission, callback) => callback(isAllowedPermission(permission)));
  session.defaultSession.setPermissionCheckHandler((_wc, permission) => isAllowedPermission(permission));
  ipcMain.on('wraith:connect', onConnect);
  createWindow();
  app.on('activate', () => {
    if (BrowserWindow.getAllWindows().length === 0) createWindow();
  });
});

app.on('second-instance', () => {
  const [win] = BrowserWindow.getAllWindows();
  if (win) {
    if (win.isMinimized()) win.restore();
    win.focus();
  }
});

app.on('window-all-closed', () => {
  if (process.platform !== 'darwin') app.quit();
});

app.on('will-quit', (event) => {
  if (!services) return;
  event.preventDefault();
  const s = services;
  services = null;
  void s.dispose().finally(() => app.quit());
});
