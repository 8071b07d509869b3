import { z } from 'zod';
import { ConnectionHost } from './connections.js';
import { Empty, method } from './define.js';

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

/**
 * An SSH host key an imported known_hosts file marked @revoked: refused at connect whatever server
 * offers it (EHOSTKEY_REVOKED), and hostkeys.trust refuses it, until hostkeys.liftRevocation.
 */
export const RevokedHostKey = z.object({
  keyType: z.string(),
  /** "SHA256:<base64>" as OpenSSH prints it. */
  fingerprint: z.string(),
  /** The known_hosts file whose @revoked line it was (the first import that said so). */
  source: z.string(),
  /** When that import was (ISO 8601). */
  revokedAt: z.string(),
});
export type RevokedHostKey = z.infer<typeof RevokedHostKey>;

/**
 * The fingerprints Wraith itself produces, and so the only ones a trusted key can match: SSH as
 * OpenSSH prints it ("SHA256:" + unpadded base64 of the 32-byte SHA-256), RDP the certificate's
 * SHA-256 as FreeRDP gives it (32 lowercase hex pairs joined by colons; upper case is taken and
 * lowered). Anything else would be saved, never match, and later read as a changed key.
 */
const SSH_FINGERPRINT = /^SHA256:[A-Za-z0-9+/]{43}$/;
const RDP_FINGERPRINT = /^[0-9a-f]{2}(?::[0-9a-f]{2}){31}$/;

/** A hashed known_hosts name ("|1|salt|hash"), as hostkeys.list shows one. */
const HashedHostName = z
  .string()
  .regex(/^\|1\|[A-Za-z0-9+/]+=*\|[A-Za-z0-9+/]+=*$/)
  .describe('a hashed known_hosts name (|1|salt|hash), as hostkeys.list shows it');

const Target = z.object({
  kind: HostKeyKind.default('ssh'),
  /** As the connection names it: no port (that is `port`); an IPv6 address with or without brackets. */
  host: ConnectionHost,
  port: z.number().int().min(1).max(65535).default(22),
});

const TrustInput = Target.extend({
  keyType: z.string().min(1).max(100).regex(/^[\x21-\x7e]+$/, 'A key type is one word, e.g. ssh-ed25519'),
  fingerprint: z.string().trim().min(1).max(300),
  // What else the details of EHOSTKEY_UNKNOWN (the connection) and ECERT_UNKNOWN (the certificate's
  // names) carry: taken and not used, so those details pass back as they are (an unknown field is refused).
  connectionId: z.string().max(128).optional(),
  connectionName: z.string().max(200).optional(),
  jumpHostFor: z.string().max(200).optional(),
  subject: z.string().max(2000).optional(),
  issuer: z.string().max(2000).optional(),
}).transform((t, ctx) => {
  const fingerprint = t.kind === 'rdp' ? t.fingerprint.toLowerCase() : t.fingerprint;
  if (!(t.kind === 'rdp' ? RDP_FINGERPRINT : SSH_FINGERPRINT).test(fingerprint)) {
    ctx.addIssue({
      code: 'custom',
      path: ['fingerprint'],
      message:
        t.kind === 'rdp'
          ? 'An RDP certificate fingerprint is its SHA-256 as 32 hex pairs joined by colons (ab:cd:…), as the certificate prompt shows it.'
          : 'An SSH host key fingerprint is "SHA256:" and 43 base64 characters, as ssh-keygen -lf prints it.',
    });
    return z.NEVER;
  }
  return { ...t, fingerprint };
});

/**
 * A server's key as an import speaks of it: host and port, or, where the file and Wraith both know
 * the server only by a hashed known_hosts name, that name ("|1|…") and port 0.
 */
const KnownHostsKey = z.object({ host: z.string(), port: z.number().int(), keyType: z.string(), fingerprint: z.string() });

export const KnownHostsImport = z.object({
  imported: z.number().int(),
  skipped: z.number().int(),
  /** How many entries `conflicting` lists (kept for callers that only count). */
  conflicts: z.number().int(),
  /** Where the file has another key than the one Wraith trusts (Wraith's is kept): `fingerprint` is Wraith's, `fileFingerprint` the file's. */
  conflicting: z.array(KnownHostsKey.extend({ fileFingerprint: z.string() })),
  /** Entries of the file left out: their key is marked @revoked in the same file, or was by an earlier import. */
  revoked: z.number().int(),
  /** Keys Wraith trusted that the file marks @revoked: no longer trusted (the next connection is refused, EHOSTKEY_REVOKED). */
  revokedForgotten: z.array(KnownHostsKey),
});
export type KnownHostsImport = z.infer<typeof KnownHostsImport>;

export const hostkeysMethods = {
  'hostkeys.list': method(Empty.optional(), z.array(HostKeyEntry), 'Trusted SSH host keys and RDP certificates.'),
  'hostkeys.trust': method(
    TrustInput,
    HostKeyEntry,
    'Trusts a key for host:port (replacing any key trusted before, deliberately). The details of an EHOSTKEY_UNKNOWN ' +
      '(or of an ECERT_UNKNOWN, with kind "rdp") can be passed as they are. A key a known_hosts import marked @revoked fails EHOSTKEY_REVOKED ' +
      '(see hostkeys.revoked; lift it first with hostkeys.liftRevocation).',
  ),
  'hostkeys.revoked': method(
    Empty.optional(),
    z.array(RevokedHostKey),
    'SSH host keys a known_hosts import marked @revoked: refused at connect (EHOSTKEY_REVOKED) whatever server offers them, and never trusted. ' +
      'source is the file that revoked the key, revokedAt when it was imported.',
  ),
  'hostkeys.liftRevocation': method(
    z.object({ fingerprint: z.string().trim().regex(SSH_FINGERPRINT, 'An SSH host key fingerprint is "SHA256:" and 43 base64 characters, as hostkeys.revoked shows it.') }),
    /** `lifted`: 1, or 0 when the key was not revoked. */
    z.object({ ok: z.literal(true), lifted: z.number().int().nonnegative() }),
    'Lifts the revocation of an SSH host key (by its fingerprint, as hostkeys.revoked shows it), deliberately: the key is then unknown like any other, ' +
      'trusted for no server until it is trusted again. `lifted` is 0 when the key was not revoked.',
  ),
  'hostkeys.forget': method(
    Target.extend({ host: z.union([HashedHostName, ConnectionHost]) }),
    /** `forgotten`: how many keys were; 0 when nothing was trusted for it. */
    z.object({ ok: z.literal(true), forgotten: z.number().int().nonnegative() }),
    'Forgets the trusted key(s) of host:port. A hashed known_hosts name (|1|…, as hostkeys.list shows it) as host forgets that entry. ' +
      '`forgotten` says how many keys were forgotten (0: none was trusted for it).',
  ),
  'hostkeys.matchHashed': method(
    z.object({ names: z.array(z.string().min(1).max(300)).max(64) }),
    z.array(z.string()),
    'The hashed known_hosts names (|1|…, as hostkeys.list shows them) that stand for any of names, each a host as known_hosts writes it: ' +
      '"host" for port 22, "[host]:port" otherwise. Lets a filter find hashed entries: only the host can tell what they stand for.',
  ),
  'hostkeys.importKnownHosts': method(
    z.object({ path: z.string().min(1).max(4096).optional() }).optional(),
    KnownHostsImport,
    'Imports an OpenSSH known_hosts file of the host machine (default ~/.ssh/known_hosts; "~/" is expanded), hashed entries included. ' +
      'imported counts new host/key pairs (keys already trusted are not counted); skipped counts @cert-authority/@revoked lines, wildcard patterns and unreadable lines; ' +
      'conflicting lists the servers (host, port, key type) for which the file has another key than the one Wraith trusts, conflicts counts them ' +
      '(Wraith keeps its own; forget it to take the file\'s). A key the file marks @revoked is imported for no host (revoked counts the entries left out), ' +
      'no longer trusted where Wraith trusted it (revokedForgotten lists those), and remembered as revoked (hostkeys.revoked): ' +
      'connections that offer it are refused with EHOSTKEY_REVOKED. A key an earlier import revoked is left out too.',
  ),
};
