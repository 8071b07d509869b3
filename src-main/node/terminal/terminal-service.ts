import { OK } from '../../common/contract/define.js';
import { WraithError } from '../../common/errors.js';
import type { Router } from '../router.js';
import type { TerminalSession } from './terminal-session.js';

/**
 * Every interactive session (SSH shells, local PTYs) by id, for the `terminal.*` methods.
 * SshService and PtyService add their sessions here and remove them when closed.
 */
export class TerminalService {
  private readonly sessions = new Map<string, TerminalSession>();

  /**
   * `onInput` sees everything typed into any session (the secrets filter watches for passwords);
   * `onRemove` hears of every session that left (the broadcast drops it).
   */
  constructor(
    private readonly onInput: (sessionId: string, data: Uint8Array | string) => void = () => {},
    private readonly onRemove: (sessionId: string) => void = () => {},
  ) {}

  add(session: TerminalSession): void {
    this.sessions.set(session.id, session);
  }

  remove(id: string): void {
    this.sessions.delete(id);
    this.onRemove(id);
  }

  get(id: string): TerminalSession {
    const s = this.sessions.get(id);
    if (!s) throw new WraithError('ENOTFOUND', `No terminal session with id ${id}; it may have been closed.`);
    return s;
  }

  list(): TerminalSession[] {
    return [...this.sessions.values()];
  }

  register(router: Router): void {
    router.handle('terminal.write', (i) => {
      const session = this.get(i.sessionId);
      this.onInput(i.sessionId, i.data);
      session.write(i.data);
      return OK;
    });
    router.handle('terminal.read', (i) => this.get(i.sessionId).read(i.sinceSeq, i.maxBytes, i.stripAnsi));
    router.handle('terminal.resize', (i) => (this.get(i.sessionId).resize(i.cols, i.rows), OK));
    router.handle('terminal.cwd', (i) => this.get(i.sessionId).cwd());
    router.handle('terminal.ack', (i) => (this.get(i.sessionId).ack(i.bytes), OK));
  }
}
