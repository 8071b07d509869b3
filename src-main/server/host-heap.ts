/**
 * The V8 heap flags a long-running host needs, and running the host under them.
 *
 * Why: a host moves hundreds of MB through short-lived ArrayBuffers (socket reads, SSH packets,
 * terminal batches, SFTP requests). V8 counts those bytes against the old generation's
 * allocation limit, and that limit is set from the heap's recent growth. After a quiet spell
 * (12 s was enough: a user who opens a session, then uploads a file) the limit sits a few MB above
 * a ~22 MB heap, so every few MB of packets start a full mark-compact. Measured on a 300 MB SFTP
 * upload after 12 s idle: 10–21 mark-compacts and 2.4–4.3 CPU s/GB, against 0 and 1.7–2.0 s/GB
 * back to back. With the old generation started at 128 MB: 0–1 mark-compacts and 1.7–2.2 s/GB
 * after idle too. A terminal flood gained the same way: 3 mark-compacts instead of 16–26, and
 * 4.2–6.5 instead of 6.8–9.3 ms of host CPU per MiB of output.
 *
 * The flag only raises a starting limit: memory is not taken until used. V8 reads it when the
 * process starts (NODE_OPTIONS refuses it), so `wraith serve` started without it runs itself
 * again as a child with it (`runUnderHostHeapFlags`).
 */
import { spawn } from 'node:child_process';

export const HOST_HEAP_FLAGS: readonly string[] = ['--initial-old-space-size=128'];

/** The flags of HOST_HEAP_FLAGS that `execArgv` (this process's Node flags) lacks. */
export function missingHostHeapFlags(execArgv: readonly string[] = process.execArgv): string[] {
  return HOST_HEAP_FLAGS.filter((flag) => !execArgv.includes(flag));
}

const FORWARDED: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/**
 * Runs this same script (process.argv[1] and its arguments) again in a child Node with the host
 * heap flags, sharing stdio; signals sent to this process go on to the child, and this process
 * ends the way the child did. Resolves never: the process exits with the child.
 */
export function runUnderHostHeapFlags(): Promise<never> {
  const script = process.argv[1];
  if (!script) throw new Error('runUnderHostHeapFlags: no script to run');
  const child = spawn(process.execPath, [...missingHostHeapFlags(), ...process.execArgv, script, ...process.argv.slice(2)], { stdio: 'inherit' });
  const forward = (signal: NodeJS.Signals) => () => {
    // A Ctrl+C in a terminal reaches both processes; the host's own stop is idempotent.
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  };
  for (const signal of FORWARDED) process.on(signal, forward(signal));
  return new Promise<never>(() => {
    child.once('error', (err) => {
      process.stderr.write(`${JSON.stringify({ code: 'EUNAVAILABLE', message: `Could not start the Wraith host: ${err.message}` })}\n`);
      process.exit(1);
    });
    child.once('exit', (code, signal) => {
      if (signal) {
        // End the same way: remove our forwarding handler and raise the signal on ourselves.
        process.removeAllListeners(signal);
        process.kill(process.pid, signal);
        return;
      }
      process.exit(code ?? 1);
    });
  });
}
