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
      /**
       * For the local shell panel of the window that asks (Ctrl+Shift+G), not a tab: its
       * SessionInfo says so, and other windows leave it to that window (no tab of it). The shell
       * is the panel's while the asking connection lasts, or another claims it (pty.panel); a
       * while after the last goes, it becomes every window's tab.
       */
      panel: z.boolean().optional(),
    }),
    z.object({ sessionId: Id }),
    'Starts a local shell (environment inherited, so claude/gemini/codex run); I/O through terminal.*. ' +
      'panel: true starts it for the asking window\'s local shell panel, which other windows show no tab of; ' +
      'if no connection holds it (pty.panel) for a while after the asking one closed, it becomes a tab in every window.',
  ),
  'pty.panel': method(
    z.object({ sessionId: Id }),
    Ok,
    'The asking window\'s local shell panel shows this shell (one started with pty.spawn panel: true; its id is ' +
      'kept across a reload): it stays that panel\'s while this connection lasts, and one that had become a tab ' +
      'goes back into the panel.',
  ),
  'pty.relaunch': method(
    z.object({ sessionId: Id }),
    Ok,
    'Starts the same shell again in a session whose shell exited ("Session ended — Relaunch?"); scrollback is kept.',
  ),
};
