import type { Terminal } from '@xterm/xterm';
import { cursorBlinks } from './cursor-blink.js';

const live = new Map<string, Terminal>();
/** Whether a session's view writes its output as a tab not in front (output-feeder.ts `background`). */
const inBackground = new Map<string, () => boolean>();

/** Read-only access to what a terminal shows, by session id: for accessibility tools, E2E tests and benchmarks. */
export interface TerminalInspector {
  sessions(): string[];
  text(sessionId: string): string | null;
  /** The last `lines` lines of the buffer (wrapped lines joined), cheap enough to poll per frame. */
  tail(sessionId: string, lines: number): string | null;
  /** The terminal's grid and the options that change how fast it parses. */
  info(sessionId: string): TerminalShape | null;
  /** The selected text ('' when nothing is selected). */
  selection(sessionId: string): string | null;
  /** Calls `listener` each time xterm has parsed written data (xterm's onWriteParsed); returns the unsubscribe. */
  onWriteParsed(sessionId: string, listener: () => void): (() => void) | null;
}

/** What info() reports of a terminal: its grid and the options that change how fast it parses or how it looks. */
export interface TerminalShape {
  cols: number;
  rows: number;
  scrollback: number;
  convertEol: boolean;
  fontSize: number;
  fontFamily: string;
  lineHeight: number;
  cursorStyle: string;
  cursorBlink: boolean;
  background: string;
  /** The view writes output as a tab not on screen: in small pieces that yield to the tab in front. */
  outputInBackground: boolean;
}

export function registerTerminal(sessionId: string, term: Terminal, outputInBackground: () => boolean = () => false): () => void {
  live.set(sessionId, term);
  inBackground.set(sessionId, outputInBackground);
  return () => {
    if (live.get(sessionId) !== term) return;
    live.delete(sessionId);
    inBackground.delete(sessionId);
  };
}

/**
 * Whether the session's terminal shows its alternate screen: a full-screen program (top, vim,
 * less) runs, so the shell waits and cannot change folder. False when no view has the session.
 */
export function showsAlternateScreen(sessionId: string): boolean {
  return live.get(sessionId)?.buffer.active.type === 'alternate';
}

/** The text of a buffer (the active one unless given), wrapped lines joined, trailing blanks dropped. */
export function bufferText(term: Terminal, from = 0, buf = term.buffer.active): string {
  const lines: string[] = [];
  for (let i = Math.max(0, from); i < buf.length; i++) {
    const line = buf.getLine(i);
    if (!line) continue;
    if (line.isWrapped && lines.length) lines[lines.length - 1] += line.translateToString(true);
    else lines.push(line.translateToString(true));
  }
  return lines.join('\n').replace(/\n+$/, '');
}

export const terminalInspector: TerminalInspector = {
  sessions: () => [...live.keys()],
  text: (sessionId) => {
    const term = live.get(sessionId);
    return term ? bufferText(term) : null;
  },
  tail: (sessionId, lines) => {
    const term = live.get(sessionId);
    return term ? bufferText(term, term.buffer.active.length - Math.max(1, lines)) : null;
  },
  info: (sessionId) => {
    const term = live.get(sessionId);
    if (!term) return null;
    const o = term.options;
    return {
      cols: term.cols,
      rows: term.rows,
      scrollback: o.scrollback ?? 0,
      convertEol: o.convertEol ?? false,
      fontSize: o.fontSize ?? 0,
      fontFamily: o.fontFamily ?? '',
      lineHeight: o.lineHeight ?? 1,
      cursorStyle: o.cursorStyle ?? 'block',
      cursorBlink: cursorBlinks(term),
      background: o.theme?.background ?? '',
      outputInBackground: inBackground.get(sessionId)?.() ?? false,
    };
  },
  selection: (sessionId) => live.get(sessionId)?.getSelection() ?? null,
  onWriteParsed: (sessionId, listener) => {
    const sub = live.get(sessionId)?.onWriteParsed(listener);
    return sub ? () => sub.dispose() : null;
  },
};
