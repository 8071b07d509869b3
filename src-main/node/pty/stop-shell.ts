/**
 * Ending a local shell that may not want to end.
 *
 * A terminal that closes sends its shell SIGHUP, and bash passes it on to its jobs. A shell (or
 * the program in front of it) that ignores hang-ups — `trap '' HUP`, nohup, a daemon-like tool —
 * would run on, and Kill would seem to do nothing. So each stage waits a short grace for the exit
 * and then sends a harder signal: SIGHUP, SIGTERM, SIGKILL.
 *
 * Each signal goes to the shell and to the terminal's foreground process group (the job the
 * person is looking at; bash gives each job its own group). SIGKILL to the shell alone left such a
 * job running with nobody to see it: `trap '' HUP TERM; sleep 100` kept its `sleep` (which
 * inherits the ignored signals) after the session was gone.
 */
import { readFileSync } from 'node:fs';

export const STOP_SIGNALS = ['SIGHUP', 'SIGTERM', 'SIGKILL'] as const;
export type StopSignal = (typeof STOP_SIGNALS)[number];

/** How long each stage waits for the shell to exit before the next signal. */
export const STOP_GRACE_MS = 1000;

/**
 * The process group in front of the shell's terminal (tpgid), on Linux, or null where it cannot
 * be read (another OS; the shell just exited).
 */
export function foregroundGroup(shellPid: number): number | null {
  if (process.platform !== 'linux') return null;
  let stat: string;
  try {
    stat = readFileSync(`/proc/${shellPid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // "pid (comm) state ppid pgrp session tty_nr tpgid …": comm may hold spaces and parentheses.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const tpgid = Number(fields[5]);
  return Number.isInteger(tpgid) && tpgid > 0 ? tpgid : null;
}

/** Sends `signal` to the shell and its terminal's foreground job; a process already gone is fine. */
export function signalShell(shellPid: number, signal: StopSignal): void {
  const group = foregroundGroup(shellPid);
  try {
    process.kill(shellPid, signal);
  } catch {
    // already gone
  }
  if (group !== null && group !== shellPid) {
    try {
      process.kill(-group, signal);
    } catch {
      // the job ended meanwhile
    }
  }
}

/**
 * Signals the shell stage by stage until `exited` settles. After SIGKILL it waits one grace more
 * and then returns anyway: a process stuck in the kernel (uninterruptible sleep on a dead mount)
 * does not die even of SIGKILL, and closing must not hang on it.
 */
export async function stopShell(shellPid: number, exited: Promise<void>, graceMs = STOP_GRACE_MS): Promise<void> {
  let gone = false;
  const done = exited.then(() => {
    gone = true;
  });
  for (const signal of STOP_SIGNALS) {
    if (gone) return;
    signalShell(shellPid, signal);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([done, new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)))]);
    clearTimeout(timer);
  }
}
