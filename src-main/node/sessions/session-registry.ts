import type { SessionInfo } from '../../common/contract/sessions.js';
import { WraithError } from '../../common/errors.js';
import type { EventBus } from '../router.js';

/** What every session service (ssh, pty, rdp) gives the registry so a session can be listed and closed. */
export interface SessionHandle {
  info(): SessionInfo;
  close(): Promise<void> | void;
}

/**
 * Every open session, of every kind, by id. Services add their sessions and report state
 * changes; the registry announces them as `session.changed` and closes them all on shutdown.
 */
export class SessionRegistry {
  private readonly sessions = new Map<string, SessionHandle>();

  constructor(private readonly bus: EventBus) {}

  add(handle: SessionHandle): void {
    const info = handle.info();
    this.sessions.set(info.id, handle);
    this.bus.emit('session.changed', info);
  }

  /** Call when a session's state or title changed; a closed session leaves the registry. */
  changed(id: string): void {
    const handle = this.sessions.get(id);
    if (!handle) return;
    const info = handle.info();
    if (info.state === 'closed') this.sessions.delete(id);
    this.bus.emit('session.changed', info);
  }

  get(id: string): SessionHandle {
    const h = this.sessions.get(id);
    if (!h) throw new WraithError('ENOTFOUND', `No session with id ${id}; it may have been closed.`);
    return h;
  }

  list(): SessionInfo[] {
    return [...this.sessions.values()].map((s) => s.info());
  }

  async close(id: string): Promise<void> {
    await this.get(id).close();
  }

  async closeAll(): Promise<void> {
    await Promise.allSettled([...this.sessions.values()].map((s) => s.close()));
  }
}
