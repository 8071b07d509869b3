import { z } from 'zod';
import { Empty, Ok, method } from './define.js';

export const HostKeyKind = z.enum(['ssh', 'rdp']);

export const HostKeyEntry = z.object({
  kind: HostKeyKind,
  host: z.string(),
  port: z.number().int(),
  keyType: z.string(),
  /** SSH: "SHA256:<base64>" as OpenSSH prints it. RDP: the certificate's colon-separated SHA-256. */
  fingerprint: z.string(),
  source: z.enum(['user', 'known_hosts']),
  addedAt: z.string(),
});
export type HostKeyEntry = z.infer<typeof HostKeyEntry>;

const Target = z.object({
  kind: HostKeyKind.default('ssh'),
  host: z.string().min(1).max(255),
  port: z.number().int().min(1).max(65535).default(22),
});

export const hostkeysMethods = {
  'hostkeys.list': method(Empty.optional(), z.array(HostKeyEntry), 'Trusted SSH host keys and RDP certificates.'),
  'hostkeys.trust': method(
    Target.extend({ keyType: z.string().min(1).max(100), fingerprint: z.string().min(1).max(300) }),
    HostKeyEntry,
    'Trusts a key for host:port (replacing any key trusted before, deliberately).',
  ),
  'hostkeys.forget': method(
    Target,
    Ok,
    'Forgets the trusted key(s) of host:port. A hashed known_hosts name (|1|…, as hostkeys.list shows it) as host forgets that entry.',
  ),
  'hostkeys.matchHashed': method(
    z.object({ names: z.array(z.string().min(1).max(300)).max(64) }),
    z.array(z.string()),
    'The hashed known_hosts names (|1|…, as hostkeys.list shows them) that stand for any of names, each a host as known_hosts writes it: ' +
      '"host" for port 22, "[host]:port" otherwise. Lets a filter find hashed entries: only the host can tell what they stand for.',
  ),
  'hostkeys.importKnownHosts': method(
    z.object({ path: z.string().min(1).max(4096).optional() }).optional(),
    z.object({ imported: z.number().int(), skipped: z.number().int(), conflicts: z.number().int() }),
    'Imports an OpenSSH known_hosts file of the host machine (default ~/.ssh/known_hosts; "~/" is expanded), hashed entries included. ' +
      'imported counts new host/key pairs (keys already trusted are not counted); skipped counts @cert-authority/@revoked lines, wildcard patterns and unreadable lines; ' +
      'conflicts counts keys the file has for a host and key type where Wraith trusts a different key (Wraith keeps its own; forget it to take the file\'s).',
  ),
};
