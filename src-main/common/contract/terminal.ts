import { z } from 'zod';
import { Bytes, Id, Ok, event, method } from './define.js';

/**
 * Terminal I/O for every interactive session (SSH shells and local PTYs).
 *
 * Sequence numbers are byte offsets in the session's output stream: a chunk with seq S and
 * N bytes covers [S, S+N). `terminal.read {sinceSeq}` returns what the ring buffer still holds
 * from there on; if older bytes were already dropped, `dropped` says how many were lost.
 */
export const terminalMethods = {
  'terminal.write': method(
    z.object({ sessionId: Id, data: z.union([z.string().max(1_000_000), Bytes]) }),
    Ok,
    'Types into a session (a string is sent as UTF-8).',
  ),
  'terminal.read': method(
    z.object({
      sessionId: Id,
      sinceSeq: z.number().int().nonnegative().optional(),
      maxBytes: z.number().int().min(1).max(4 * 1024 * 1024).default(64 * 1024),
      stripAnsi: z.boolean().default(false),
    }),
    z.object({
      text: z.string(),
      /** Offset of the first byte returned. */
      seq: z.number().int(),
      /** Pass as sinceSeq next time to read only what is new. */
      nextSeq: z.number().int(),
      /** Bytes between sinceSeq and `seq` that the ring buffer no longer holds. */
      dropped: z.number().int(),
      /** More output than maxBytes was available after `nextSeq`. */
      truncated: z.boolean(),
      /**
       * Escape sequences that put a fresh terminal in the modes in effect at `seq` (the alternate
       * screen, mouse reporting, bracketed paste, the scroll region…), which the sequences that set
       * them, older than `seq`, no longer do: a view writes them before `text`. '' when none.
       */
      restore: z.string(),
      closed: z.boolean(),
      /**
       * Where the session's program ended within the bytes read (its connection dropped, its shell
       * exited), oldest first: a view reading the output back says so there, as it did live.
       * `index` is where in `text` (UTF-16 code units), `seq` where in the output, `at` when (ISO
       * time), `reason` why, in words a person can act on. A read from `sinceSeq` has those after
       * it; a read without, those from its first byte on. The output itself never holds them.
       */
      ends: z.array(z.object({ seq: z.number().int(), index: z.number().int(), at: z.string(), reason: z.string().nullable() })),
    }),
    'Reads session output from the ring buffer (without sinceSeq: the last maxBytes).',
  ),
  'terminal.resize': method(
    z.object({ sessionId: Id, cols: z.number().int().min(1).max(1000), rows: z.number().int().min(1).max(1000) }),
    Ok,
    'Resizes the terminal (the shell reflows).',
  ),
  'terminal.cwd': method(
    z.object({ sessionId: Id }),
    z.object({ cwd: z.string().nullable(), source: z.enum(['osc7', 'exec', 'proc', 'unknown']) }),
    "The shell's working directory: from OSC 7 when the shell reports it, else asked directly.",
  ),
  'broadcast.get': method(
    z.object({}).optional(),
    z.object({ sessionIds: z.array(Id) }),
    'The terminal sessions whose views share what the user types (broadcast input), or none.',
  ),
  'broadcast.set': method(
    z.object({ sessionIds: z.array(Id).max(500) }),
    z.object({ sessionIds: z.array(Id) }),
    "Sets which terminal sessions share typed input; fewer than two ends the broadcast. The views fan out the user's typing and pastes; terminal.write itself is never broadcast.",
  ),
  'terminal.ack': method(
    z.object({ sessionId: Id, bytes: z.number().int().nonnegative() }),
    Ok,
    'Flow control: the view has processed this many more bytes of terminal.data.',
  ),
};

export const terminalEvents = {
  'broadcast.changed': event(z.object({ sessionIds: z.array(Id) }), 'The sessions sharing typed input changed (set, or a member closed).'),
  'terminal.data': event(z.object({ sessionId: Id, seq: z.number().int(), data: Bytes }), 'Output of a session, as bytes.'),
  'terminal.exit': event(
    z.object({ sessionId: Id, code: z.number().int().nullable(), signal: z.string().nullable(), reason: z.string().nullable() }),
    'The shell or connection ended.',
  ),
};
