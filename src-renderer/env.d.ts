/// <reference types="vite/client" />

declare module '*.vue' {
  import type { DefineComponent } from 'vue';
  const component: DefineComponent<object, object, unknown>;
  export default component;
}

/** What the Electron preload exposes through contextBridge; absent in browser mode. */
interface WraithPreload {
  readonly electron: true;
  /** Asks the main process for a MessagePort; it arrives as a 'wraith:port' window message. */
  connect(): void;
}

interface Window {
  readonly wraith?: WraithPreload;
}

interface Window {
  /** Read-only view of the open terminals (see features/terminal/terminal-inspect.ts). */
  wraithInspect?: {
    terminals: import('./features/terminal/terminal-inspect').TerminalInspector;
    /** Frames received over the browser-mode WebSocket so far, by path (see transport/websocket-wire.ts). */
    transport: { frameCounts(): { mailbox: number; posted: number } };
  };
}
