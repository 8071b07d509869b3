/** How long a terminal's output must pause before it counts as a command having ended. */
export const PROMPT_QUIET_MS = 300;

/**
 * Tells from a terminal's output when a command has ended and its prompt is shown: a line end
 * (the Enter's echo, the command's output), then a pause, with the output ending in something
 * other than a line end (a prompt waits on its own line: "user@host:~$ "). Typing alone (echoes
 * without a line end) is not a command; a flood is not over until it pauses; `tail -f` or a
 * chatty server log pausing after a line is not a prompt, so a panel that follows the shell does
 * not ask the server where it is after every burst.
 */
export class CommandEndDetector {
  private lineSeen = false;
  private endsWithLine = false;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly onEnd: () => void,
    private readonly quietMs = PROMPT_QUIET_MS,
  ) {}

  feed(data: Uint8Array): void {
    if (data.byteLength === 0) return;
    if (!this.lineSeen) this.lineSeen = data.includes(10);
    if (!this.lineSeen) return;
    this.endsWithLine = data[data.byteLength - 1] === 10;
    this.stopTimer();
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.endsWithLine) return; // more output may come; a prompt has not
      this.lineSeen = false;
      this.onEnd();
    }, this.quietMs);
  }

  /** Forgets what was seen (following turned on or off, another session). */
  reset(): void {
    this.stopTimer();
    this.lineSeen = false;
    this.endsWithLine = false;
  }

  private stopTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
