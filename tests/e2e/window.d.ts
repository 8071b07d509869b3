// What the renderer exposes to page scripts (src-renderer/main.ts), for page.evaluate in tests.
import type { TerminalInspector } from '../../src-renderer/features/terminal/terminal-inspect.js';

declare global {
  interface Window {
    wraithInspect?: { terminals: TerminalInspector; transport: { frameCounts(): { mailbox: number; posted: number } } };
    /** Set by the SFTP e2e test: every folder the Files panel listed, in order. */
    sftpPathsSeen?: string[];
  }
}

export {};
