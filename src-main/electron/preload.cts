// The only thing the page gets from Electron: a way to ask for one contract channel.
// Sandboxed preloads are CommonJS, hence .cts.
import { contextBridge, ipcRenderer, webUtils } from 'electron';

contextBridge.exposeInMainWorld('wraith', {
  electron: true,
  // Where a File the user picked or dropped is on disk ('' for one made in the page), so the host
  // reads it itself (sftp.upload) rather than the page sending its bytes.
  pathForFile(file: File): string {
    return webUtils.getPathForFile(file);
  },
  connect(): void {
    const { port1, port2 } = new MessageChannel();
    ipcRenderer.postMessage('wraith:connect', null, [port2]);
    // Hand the other end to the page's own world; the page listens for 'wraith:port'.
    window.postMessage('wraith:port', '*', [port1]);
  },
});
