import { z } from 'zod';
import { Empty, Id, Ok, method } from './define.js';

export const ShellInfo = z.object({ name: z.string(), path: z.string(), isDefault: z.boolean() });

export const ptyMethods = {
  'pty.shells': method(Empty.optional(), z.array(ShellInfo), 'Local shells found on this machine.'),
  'pty.spawn': method(
    z.object({
      shell: z.string().min(1).max(4096),
      cols: z.number().int().min(1).max(1000).default(80),
      rows: z.number().int().min(1).max(1000).default(24),
      cwd: z.string().max(4096).optional(),
    }),
    z.object({ sessionId: Id }),
    'Starts a local shell (environment inherited, so claude/gemini/codex run); I/O through terminal.*.',
  ),
  'pty.relaunch': method(
    z.object({ sessionId: Id }),
    Ok,
    'Starts the same shell again in a session whose shell exited ("Session ended — Relaunch?"); scrollback is kept.',
  ),
};
