/**
 * Which terminal sessions share typed input (broadcast.get|set): the host keeps the set, so every
 * window and client sees the same broadcast and it survives a page reload. The fan-out itself is
 * the views' (features/terminal/broadcast.ts in the renderer): only they know which bytes the
 * user typed and which the terminal answered by itself, and `terminal.write` is never broadcast,
 * so neither the XO nor a script writes to more sessions than it names.
 */
export class BroadcastGroup {
  private ids: string[] = [];

  /**
   * @param check throws (ENOTFOUND) for an id that is not an open terminal session
   * @param emit announces the new set (broadcast.changed)
   */
  constructor(
    private readonly check: (sessionId: string) => void,
    private readonly emit: (sessionIds: string[]) => void,
  ) {}

  get(): string[] {
    return [...this.ids];
  }

  /** A broadcast needs two sessions: fewer ends it. Duplicates count once. */
  set(sessionIds: string[]): string[] {
    const unique = [...new Set(sessionIds)];
    for (const id of unique) this.check(id);
    this.update(unique.length >= 2 ? unique : []);
    return this.get();
  }

  /** A session closed: it leaves, and a broadcast left with one session ends. */
  drop(sessionId: string): void {
    if (!this.ids.includes(sessionId)) return;
    const left = this.ids.filter((id) => id !== sessionId);
    this.update(left.length >= 2 ? left : []);
  }

  private update(next: string[]): void {
    if (next.length === this.ids.length && next.every((id, i) => id === this.ids[i])) return;
    this.ids = next;
    this.emit(this.get());
  }
}
