import { z } from 'zod';
import { Empty, Id, Ok, event, method } from './define.js';

export const SessionKind = z.enum(['ssh', 'pty', 'rdp']);
export const SessionState = z.enum(['connecting', 'open', 'disconnected', 'closed']);
/**
 * Who asked for a session: a window of the app (ui), the `wraith` command (cli), the XO (ai), an
 * agent over MCP (mcp), or a test. Windows show every session as a tab, and mark those opened by
 * the CLI or the XO, so the Commander sees what runs whoever started it.
 */
export const SessionOpener = z.enum(['ui', 'cli', 'ai', 'mcp', 'test']);
export type SessionOpener = z.infer<typeof SessionOpener>;

export const SessionInfo = z.object({
  id: Id,
  kind: SessionKind,
  title: z.string(),
  connectionId: Id.nullable(),
  state: SessionState,
  /** Why the session is disconnected/closed, in words a person can act on. */
  reason: z.string().nullable(),
  createdAt: z.string(),
  /**
   * A local shell's program, the path it was started from (pty sessions only; the title is just
   * its name). A view re-attached after a reload starts the same shell again when it relaunches.
   */
  shell: z.string().optional(),
  /** Who opened it (absent from hosts before it was kept). */
  openedBy: SessionOpener.optional(),
  /**
   * A window's local shell panel runs it (pty.spawn with panel): that window's own, which the
   * other windows show no tab of (closing the tab there would end the shell under it). Cleared,
   * and announced, when no window has kept it in its panel for a while (pty.panel): every
   * window's tab from then on, until a window claims it again.
   */
  panel: z.boolean().optional(),
});
export type SessionInfo = z.infer<typeof SessionInfo>;

export const sessionsMethods = {
  'sessions.list': method(Empty.optional(), z.array(SessionInfo), 'Open sessions of every kind.'),
  'sessions.close': method(z.object({ sessionId: Id }), Ok, 'Closes a session and frees what it holds.'),
};

export const sessionsEvents = {
  'session.changed': event(SessionInfo, 'A session was opened, changed state or closed.'),
};
