import { z } from 'zod';
import { Id, Ok, event, method } from './define.js';

/** Logins a person answers at the server's keyboard-interactive prompt before the host gives up: OpenSSH's NumberOfPasswordPrompts. */
export const MAX_LOGIN_TRIES = 3;

/**
 * A password or key passphrase typed for one connect, for a connection that has none saved (or
 * whose saved one was refused). Why ssh.open carries it rather than a keyboard-interactive
 * `ssh.prompt`: like an unknown host key, a missing secret is not a blocking prompt — ssh.open
 * fails at once with EAUTH and `details` a CredentialNeed, so the CLI, the XO and scripts get a
 * clear answer instead of a login hanging on a question nobody is shown; the tab asks in place and
 * connects again with this. It is checked only after the host key (the need is reported from the
 * auth step, which runs after key exchange), sent to that one hop for this connect only, and
 * written to the vault only when `save` is set and the server accepted it.
 */
export const OneTimeCredential = z.object({
  /** The hop it is for: `details.connectionId` of the CredentialNeed (the target or a jump host). */
  connectionId: Id,
  secret: z.string().min(1).max(10_000),
  save: z.boolean().default(false),
});
export type OneTimeCredential = z.infer<typeof OneTimeCredential>;

/**
 * `details` of an EAUTH that a person can fix by typing a secret: none saved ("required"), or the
 * one tried was refused by the server / does not decrypt the key ("rejected"). UIs recognise it
 * by `reason`, never by the message.
 */
export const CredentialNeed = z.object({
  reason: z.enum(['credential-required', 'credential-rejected']),
  credential: z.enum(['password', 'passphrase']),
  connectionId: Id,
  connectionName: z.string(),
  username: z.string(),
  host: z.string(),
  port: z.number().int(),
});
export type CredentialNeed = z.infer<typeof CredentialNeed>;

/**
 * A mark of the caller's choosing for one connect (ssh.open, ssh.reconnect): every ssh.prompt
 * that connect asks carries it back. Every window hears every prompt; this is how the one whose
 * tab is connecting knows the prompt is that tab's, and asks it there instead of over the whole
 * window. Not a secret (every window sees it): a random one per connect keeps windows apart.
 * A window's tag starts with TAB_PROMPT_TAG_PREFIX: see there.
 */
export const PromptTag = z.string().min(1).max(128);

/**
 * How a window's tags start (then a random id): "a tab of some window asks this, in place". A
 * window asks such a prompt only in its own tab that waits for it, never over the window: the tab
 * of another window asks it there (and if that window goes, its connect is given up and the prompt
 * withdrawn). A prompt with no tag, or a tag of any other shape (the CLI's, the XO's), nobody's
 * tab asks: every window asks it over the whole window.
 */
export const TAB_PROMPT_TAG_PREFIX = 'tab:';

export const sshMethods = {
  'ssh.open': method(
    z.object({
      connectionId: Id,
      cols: z.number().int().min(1).max(1000).default(80),
      rows: z.number().int().min(1).max(1000).default(24),
      credential: OneTimeCredential.optional(),
      /** Several at once, one per hop: a jump host and its target that both have none saved. */
      credentials: z.array(OneTimeCredential).max(16).optional(),
      /** Carried by every ssh.prompt of this connect (see PromptTag). */
      promptTag: PromptTag.optional(),
    }),
    z.object({
      sessionId: Id,
      /** The connection's saved port forwards that did not start (the session opened all the same), each saying why. */
      forwardErrors: z.array(z.string()).optional(),
    }),
    "Connects a saved SSH connection (host key checked before any credential is sent), opens a shell and starts the connection's saved port forwards. " +
      'A password or key passphrase that is not saved (or is refused) fails EAUTH with details.reason credential-required / credential-rejected; ' +
      '`credential` then gives one for this connect (saved in the vault only with save: true, once the server accepted it); ' +
      '`credentials` gives one for each hop that needs one. ' +
      'The server\'s own login questions (keyboard-interactive) come as ssh.prompt events, carrying `promptTag` when one is given.',
  ),
  'ssh.reconnect': method(
    z.object({ sessionId: Id, credential: OneTimeCredential.optional(), credentials: z.array(OneTimeCredential).max(16).optional(), promptTag: PromptTag.optional() }),
    Ok,
    'Reconnects a disconnected SSH session, keeping its scrollback (`credential`/`credentials`/`promptTag` as for ssh.open).',
  ),
  'ssh.exec': method(
    z.object({
      sessionId: Id,
      // SSH carries the command as a C string: sshd drops the whole connection (terminal,
      // tunnels, transfers) on a NUL in it.
      command: z
        .string()
        .min(1)
        .max(100_000)
        .refine((c) => !c.includes('\0'), 'The command contains a NUL character, which SSH cannot send; remove it.'),
      timeoutMs: z.number().int().min(1).max(3_600_000).default(30_000),
      /** What is kept of stdout and of stderr, each; the command runs on past it. */
      maxBytes: z.number().int().min(1).max(64 * 1024 * 1024).default(1024 * 1024),
      /**
       * How stdout and stderr come back: `utf8` text (bytes that are not UTF-8 become U+FFFD), or
       * `base64` of the bytes as they came, for binary output (`tar c`, `cat` of an image).
       */
      encoding: z.enum(['utf8', 'base64']).default('utf8'),
    }),
    z.object({
      /** Exit code; null when the command was stopped (timed out) or killed by a signal. */
      rc: z.number().int().nullable(),
      signal: z.string().nullable(),
      stdout: z.string(),
      stderr: z.string(),
      durationMs: z.number(),
      /** Output went past maxBytes and the rest was dropped; the command still ran to its end. */
      truncated: z.boolean(),
      /** Stopped (signal KILL) at timeoutMs; rc is then null. */
      timedOut: z.boolean(),
    }),
    'Runs a command on a separate exec channel of the session, with no stdin: exit code, output, duration. ' +
      'Output past maxBytes (each of stdout and stderr) is dropped and the result marked truncated; the command runs on to its end. ' +
      'Output is UTF-8 text, or with encoding "base64" the bytes as they came, base64-encoded. ' +
      'Killed on timeout and when the call is cancelled (ECANCELLED); both count from the call, the opening of its channel included. ' +
      'If the connection is lost while it runs, fails ESESSIONCLOSED: its outcome is unknown, and what it printed until then is in the ' +
      'error\'s details (stdout, stderr, truncated, durationMs; capped and encoded as a result\'s).',
  ),
  'ssh.answer': method(
    z.object({ promptId: Id, answers: z.array(z.string().max(10_000)).max(20).nullable() }),
    Ok,
    'Answers a keyboard-interactive prompt (null cancels the login). One that waits no more (see ssh.prompt_closed) fails ENOTFOUND.',
  ),
};

export const sshEvents = {
  'ssh.prompt': event(
    z.object({
      promptId: Id,
      /** The hop that asks (the target, or a jump host on the way to it), named as the card names it. */
      connectionId: Id,
      connectionName: z.string(),
      host: z.string(),
      /** The `promptTag` its connect was given, if any: the window whose tab gave it asks it in that tab. */
      promptTag: PromptTag.optional(),
      name: z.string(),
      instructions: z.string(),
      prompts: z.array(z.object({ prompt: z.string(), echo: z.boolean() })),
      /** Earlier rounds of answers the server refused in this login (it may ask MAX_LOGIN_TRIES times in all). */
      refused: z.number().int().min(0),
    }),
    'The server asks the user something (keyboard-interactive: 2FA codes, passwords). `refused` > 0: the previous answers were refused and it asks again.',
  ),
  'ssh.prompt_closed': event(
    z.object({ promptId: Id }),
    'An ssh.prompt waits no more: answered (here or in another window), cancelled, timed out, or withdrawn because its login was given up ' +
      '(the open was cancelled, its caller went away, the server closed the connection). Take its card down; ssh.answer for it fails ENOTFOUND.',
  ),
};
