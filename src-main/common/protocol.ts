import { z } from 'zod';
import { ERROR_CODES } from './errors.js';

/**
 * The wire messages every transport carries. Payloads are structured values that may hold
 * Uint8Array: WebSocket frames encode them with MessagePack (bin type), Electron with the
 * structured clone, in-process not at all.
 */
export const ClientMessage = z.discriminatedUnion('t', [
  z.object({
    t: z.literal('call'),
    id: z.number().int().nonnegative(),
    method: z.string().max(200),
    params: z.unknown().optional(),
    /**
     * No result is sent when the call succeeds; an error still is, with this id. For the calls a
     * view makes per keystroke or per chunk of output (terminal.write, terminal.ack): their
     * results said nothing, and each one was a message more for every hop between host and page.
     */
    quiet: z.boolean().optional(),
  }),
  /** Receive events whose name starts with one of these prefixes ('' = all). Replaces earlier filters. */
  z.object({ t: z.literal('subscribe'), prefixes: z.array(z.string().max(200)).max(100) }),
  /**
   * Give up the call with this id: the host aborts the signal that call runs with, and the call
   * still answers, as its method does when stopped (ECANCELLED for ssh.open, ssh.exec…), or with
   * its result when it had finished already. An id with no call running (finished, never sent) is
   * ignored: the cancel crossed the answer on the wire.
   */
  z.object({ t: z.literal('cancel'), id: z.number().int().nonnegative() }),
]);
export type ClientMessage = z.infer<typeof ClientMessage>;

export const SerializedErrorSchema = z.object({
  code: z.enum(ERROR_CODES),
  message: z.string(),
  details: z.record(z.string(), z.unknown()).optional(),
});

export type ServerMessage =
  | { t: 'result'; id: number; result: unknown }
  | { t: 'error'; id: number | null; error: z.infer<typeof SerializedErrorSchema> }
  | { t: 'event'; name: string; payload: unknown };

/** Largest inbound frame a host accepts (a 5 MB file write plus overhead). */
export const MAX_FRAME_BYTES = 8 * 1024 * 1024;
