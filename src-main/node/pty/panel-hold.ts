/**
 * How long a local shell panel's shell stays its window's after the last connection holding it
 * closed. A reload reconnects in a second or two and claims it again (`pty.panel`); a slow reload
 * on a busy machine, or a page whose link dropped and came back by itself (with backoff), takes
 * longer. A window closed for good never claims it: after this, its shell is a tab in every window,
 * rather than running on where no window shows it.
 */
export const PANEL_CLAIM_GRACE_MS = 20_000;

/**
 * Which connections keep a shell in their window's local shell panel. While one does (or, for the
 * grace after the last closed, none has), the shell is a panel's (`held`, SessionInfo.panel), and
 * other windows show no tab of it. Then it is no panel's, until a window claims it again. Each
 * change of `held` is told to `changed`.
 */
export class PanelHold {
  /** Whether the shell is a panel's. */
  private isHeld = true;
  /** The holding connections' signals (aborted as each closes), each with what stops listening to it. */
  private readonly holders = new Map<AbortSignal, () => void>();
  private grace: NodeJS.Timeout | null = null;

  constructor(
    private readonly graceMs: number,
    private readonly changed: () => void,
  ) {}

  get held(): boolean {
    return this.isHeld;
  }

  /**
   * The window of this connection shows the shell in its panel: a panel's from now on, for as long
   * as the connection lasts. No connection (a caller that has none, like the XO), or one closed
   * already, holds nothing: the grace runs as if it had closed.
   */
  claim(connection: AbortSignal | undefined): void {
    if (connection && !connection.aborted && !this.holders.has(connection)) {
      const letGo = () => {
        this.holders.delete(connection);
        this.waitForClaim();
      };
      connection.addEventListener('abort', letGo, { once: true });
      this.holders.set(connection, () => connection.removeEventListener('abort', letGo));
    }
    if (this.holders.size > 0 && this.grace) {
      clearTimeout(this.grace);
      this.grace = null;
    }
    if (!this.isHeld) {
      this.isHeld = true;
      this.changed();
    }
    this.waitForClaim();
  }

  /** The shell was closed: nothing to hold any more. */
  dispose(): void {
    if (this.grace) clearTimeout(this.grace);
    this.grace = null;
    for (const stopListening of this.holders.values()) stopListening();
    this.holders.clear();
  }

  /** With nobody holding it, the grace starts (once): unclaimed by its end, the shell is no panel's. */
  private waitForClaim(): void {
    if (this.holders.size > 0 || this.grace || !this.isHeld) return;
    this.grace = setTimeout(() => {
      this.grace = null;
      this.isHeld = false;
      this.changed();
    }, this.graceMs);
    // A host that is stopping does not wait for it.
    this.grace.unref();
  }
}
