import { z } from 'zod';
import { Empty, Id, Ok, event, method } from './define.js';

export const SessionKind = z.enum(['ssh', 'pty', 'rdp']);
export const SessionState = z.enum(['connecting', 'open', 'disconnected', 'closed']);

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
});
export type SessionInfo = z.infer<typeof SessionInfo>;

export const sessionsMethods = {
  'sessions.list': method(Empty.optional(), z.array(SessionInfo), 'Open sessions of every kind.'),
  'sessions.close': method(z.object({ sessionId: Id }), Ok, 'Closes a session and frees what it holds.'),
};

export const sessionsEvents = {
  'session.changed': event(SessionInfo, 'A session was opened, changed state or closed.'),
};
