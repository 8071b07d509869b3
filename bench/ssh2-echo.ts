/**
 * The keystroke-echo anchor both terminal benches print: ssh2 alone, on a shell channel whose
 * remote tty echoes each key (`stty -icanon; cat >/dev/null`), timed from write to echo.
 */
import type { ClientChannel } from 'ssh2';

/** Sorted latencies (ms) of `keys` keys after `warmup` untimed ones; a key without echo in `timeoutMs` rejects. */
export async function ssh2EchoLatencies(chan: ClientChannel, keys: number, opts: { warmup?: number; timeoutMs?: number } = {}): Promise<number[]> {
  const warmup = opts.warmup ?? 0;
  const timeoutMs = opts.timeoutMs ?? 5_000;
  chan.write('stty -icanon; cat >/dev/null\n');
  await new Promise((r) => setTimeout(r, 800));
  const lat: number[] = [];
  for (let i = 0; i < keys + warmup; i++) {
    const ch = String.fromCharCode(97 + (i % 26));
    const t0 = performance.now();
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        chan.removeListener('data', onData);
        reject(new Error(`ssh2 echo of key ${i}: none within ${timeoutMs} ms`));
      }, timeoutMs);
      const onData = (d: Buffer) => {
        if (!d.toString('latin1').includes(ch)) return;
        clearTimeout(timer);
        chan.removeListener('data', onData);
        resolve();
      };
      chan.on('data', onData);
      chan.write(ch);
    });
    if (i >= warmup) lat.push(performance.now() - t0);
  }
  return lat.sort((a, b) => a - b);
}
