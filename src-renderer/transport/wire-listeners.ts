import type { ServerMessage } from '@common/protocol.js';

/**
 * The listener bookkeeping every Wire shares: message listeners, close listeners that run once
 * (or at once, when added after the close), and nothing delivered after the close.
 */
export class WireListeners {
  private readonly messages = new Set<(m: ServerMessage) => void>();
  private readonly closes = new Set<(reason: string) => void>();
  private isClosed = false;

  get closed(): boolean {
    return this.isClosed;
  }

  deliver(message: ServerMessage): void {
    for (const l of this.messages) l(message);
  }

  /** Marks the wire closed and tells the close listeners; false if it already was. */
  finish(reason: string): boolean {
    if (this.isClosed) return false;
    this.isClosed = true;
    for (const l of this.closes) l(reason);
    this.closes.clear();
    this.messages.clear();
    return true;
  }

  onMessage(listener: (m: ServerMessage) => void): void {
    this.messages.add(listener);
  }

  onClose(listener: (reason: string) => void): void {
    if (this.isClosed) listener('closed');
    else this.closes.add(listener);
  }
}
