/// <reference types="vite/client" />

declare module '*.vue' {
  import type { DefineComponent } from 'vue';
  const component: DefineComponent<object, object, unknown>;
  export default component;
}

interface Window {
  /** Read-only view of the open terminals (see features/terminal/terminal-inspect.ts). */
  wraithInspect?: {
    terminals: import('./features/terminal/terminal-inspect').TerminalInspector;
    /** Frames received over the browser-mode WebSocket so far, by path (see transport/websocket-wire.ts). */
    transport: { frameCounts(): { mailbox: number; posted: number } };
  };
}
