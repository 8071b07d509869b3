/**
 * node-pty loses a shell's last output on Unix when the reading side is not quick enough.
 *
 * When the child exits, node-pty waits for its master socket to close and, if that has not
 * happened 200 ms later, destroys the socket. Whatever is still in the socket's read buffer or in
 * the kernel's pty buffer at that moment is thrown away (node-pty issues #72, #652, #726). It
 * happens whenever the socket is paused at exit (our flow control pauses it while a view is behind)
 * and, on a loaded machine, when the event loop or the kernel's tty worker is late by 200 ms: the
 * "echo bye; exit" test lost "bye" once that way in CI.
 *
 * The fix: just before node-pty destroys the socket, hand over what the socket buffered and read
 * the master fd dry. The fd is non-blocking (libuv made it so), so reading stops at EAGAIN when a
 * background job still holds the terminal, or at EIO once every writer is gone; it never blocks.
 */
import { readSync } from 'node:fs';
import type { IPty } from 'node-pty';

/** The parts of node-pty's UnixTerminal this relies on; checked at run time, as they are not public. */
interface UnixTerminalInternals {
  readonly fd?: unknown;
  readonly _socket?: { destroy?: unknown; read?: unknown };
}

const DRAIN_CHUNK = 64 * 1024;

/**
 * Makes `proc` deliver everything the child wrote before node-pty closes it: buffered socket data
 * through its normal `onData`, bytes still in the kernel through `onBytes`. Returns false where
 * node-pty has no such socket (Windows) or its internals changed; the caller still works, only
 * without this guarantee (and the PTY test fails loudly on Linux).
 */
export function drainBeforeClose(proc: IPty, onBytes: (data: Buffer) => void): boolean {
  const internals = proc as unknown as UnixTerminalInternals;
  const socket = internals._socket;
  const fd = internals.fd;
  if (!socket || typeof socket.destroy !== 'function' || typeof socket.read !== 'function' || typeof fd !== 'number') return false;
  const destroy = socket.destroy as (this: unknown, ...args: unknown[]) => unknown;
  const read = socket.read as (this: unknown) => unknown;
  let drained = false;
  socket.destroy = function (this: unknown, ...args: unknown[]) {
    if (!drained) {
      drained = true;
      // A paused Readable keeps up to its high-water mark; read() hands each chunk to 'data' listeners.
      while (read.call(socket) !== null);
      const scratch = Buffer.allocUnsafe(DRAIN_CHUNK);
      for (;;) {
        let n: number;
        try {
          n = readSync(fd, scratch, 0, DRAIN_CHUNK, null);
        } catch {
          break; // EAGAIN (nothing more now) or EIO (the terminal's writers are all gone)
        }
        if (n <= 0) break;
        onBytes(Buffer.from(scratch.subarray(0, n)));
      }
    }
    return destroy.apply(socket, args);
  };
  return true;
}
