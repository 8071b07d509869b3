import type { Terminal } from '@xterm/xterm';

const live = new Map<string, Terminal>();

/** Read-only access to what a terminal shows, by session id: for accessibility tools and E2E tests. */
export interface TerminalInspector {
  sessions(): string[];
  text(sessionId: string): string | null;
}

export function registerTerminal(sessionId: string, term: Terminal): () => void {
  live.set(sessionId, term);
  return () => {
    if (live.get(sessionId) === term) live.delete(sessionId);
  };
}

function bufferText(term: Terminal): string {
  const buf = term.buffer.active;
  const lines: string[] = [];
  for (let i = 0; i < buf.length; i++) {
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
};
