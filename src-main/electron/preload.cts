// The only thing the page gets from Electron: a way to ask for one contract channel.
// Sandboxed preloads are CommonJS, hence .cts.
import { contextBridge, ipcRenderer } from 'electron';

contextBridge.exposeInMainWorld('wraith', {
  electron: true,
  connect(): void {
    const { port1, port2 } = new MessageChannel();
    ipcRenderer.postMessage('wraith:connect', null, [port2]);
    // Hand the other end to the page's own world; the page listens for 'wraith:port'.
    window.postMessage('wraith:port', '*', [port1]);
  },
});
