// Apart from env.d.ts because Node-side tests that drive renderer modules (their tsconfig has no
// vite types) need it too: transport/ reads window.wraith.

/** What the Electron preload exposes through contextBridge; absent in browser mode. */
interface WraithPreload {
  readonly electron: true;
  /** Asks the main process for a MessagePort; it arrives as a 'wraith:port' window message. */
  connect(): void;
  /** Where a File is on disk (Electron's webUtils.getPathForFile); '' when it is not a file there. */
  pathForFile?(file: File): string;
}

interface Window {
  readonly wraith?: WraithPreload;
}
