import { z } from 'zod';
import { Id, Ok, event, method } from './define.js';

export const sshMethods = {
  'ssh.open': method(
    z.object({
      connectionId: Id,
      cols: z.number().int().min(1).max(1000).default(80),
      rows: z.number().int().min(1).max(1000).default(24),
    }),
    z.object({
      sessionId: Id,
      /** The connection's saved port forwards that did not start (the session opened all the same), each saying why. */
      forwardErrors: z.array(z.string()).optional(),
    }),
    "Connects a saved SSH connection (host key checked before any credential is sent), opens a shell and starts the connection's saved port forwards.",
  ),
  'ssh.reconnect': method(z.object({ sessionId: Id }), Ok, 'Reconnects a disconnected SSH session, keeping its scrollback.'),
  'ssh.exec': method(
    z.object({
      sessionId: Id,
      command: z.string().min(1).max(100_000),
      timeoutMs: z.number().int().min(1).max(3_600_000).default(30_000),
      maxBytes: z.number().int().min(1).max(64 * 1024 * 1024).default(1024 * 1024),
    }),
    z.object({
      rc: z.number().int().nullable(),
      signal: z.string().nullable(),
      stdout: z.string(),
      stderr: z.string(),
      durationMs: z.number(),
      truncated: z.boolean(),
      timedOut: z.boolean(),
    }),
    'Runs a command on a separate exec channel of the session: exit code, output, duration. Killed on timeout.',
  ),
  'ssh.answer': method(
    z.object({ promptId: Id, answers: z.array(z.string().max(10_000)).max(20).nullable() }),
    Ok,
    'Answers a keyboard-interactive prompt (null cancels the login).',
  ),
};

export const sshEvents = {
  'ssh.prompt': event(
    z.object({
      promptId: Id,
      connectionId: Id,
      name: z.string(),
      instructions: z.string(),
      prompts: z.array(z.object({ prompt: z.string(), echo: z.boolean() })),
    }),
    'The server asks the user something (keyboard-interactive: 2FA codes, passwords).',
  ),
};
