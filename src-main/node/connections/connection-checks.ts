import ssh2 from 'ssh2';
import { controlCharacterProblem } from '../../common/contract/connections.js';
import { WraithError } from '../../common/errors.js';
import { readLocalFileSync } from '../local-files.js';

// ssh2 is CommonJS: Node's ESM loader cannot see `utils` as a named export.
const { utils } = ssh2;

/**
 * What keeps a saved connection from ever connecting, found from its fields, the key file on this
 * machine and ssh2's own reading of a key: connections.create and connections.update refuse it
 * (ConnectionsService.assertSavable), so the form, the CLI and the XO cannot save it. Each problem
 * is on the field a person fixes, in words they can act on; the form shows them under its fields.
 *
 * An RDP connection may leave the user name empty: the server's logon screen asks for it. SSH has
 * no such screen, and Wraith asks at connect time only for a password or key passphrase, so an
 * SSH connection without a user name could never log in.
 */

export interface FieldIssue {
  /** The field, as in the create input: ["username"], ["keyPath"], ["secrets", "privateKey"]. */
  path: string[];
  message: string;
}

const NO_USERNAME = 'Enter the user name to log in as: SSH needs one, and Wraith does not guess it.';
const NO_KEY = 'Private key authentication needs a key: give the path of a key file on the machine Wraith runs on, or paste the private key.';

/** The fields the rules look at, with what the vault will hold once the save is done. */
export interface ConnectabilityFields {
  kind: 'ssh' | 'rdp';
  username: string;
  authMethod: 'password' | 'key' | 'agent' | 'keyboard-interactive';
  keyPath: string | null;
  /** A private key is in the vault after this save: kept from before, or pasted now. */
  hasPrivateKey: boolean;
}

/** The problems that would keep these fields from connecting; empty when there are none. */
export function connectabilityIssues(c: ConnectabilityFields): FieldIssue[] {
  if (c.kind !== 'ssh') return [];
  const issues: FieldIssue[] = [];
  if (!c.username.trim()) issues.push({ path: ['username'], message: NO_USERNAME });
  if (c.authMethod === 'key') {
    if (!c.keyPath?.trim() && !c.hasPrivateKey) issues.push({ path: ['keyPath'], message: NO_KEY });
  }
  return issues;
}

/**
 * A user name or RDP domain with a control character in it (a NUL, a line break pasted with it):
 * sent as typed, it fails at connect in words that do not point at it. On the fields given (those
 * a save changes), for both kinds. Not in the schema: a connection saved before this check still
 * lists, to be mended.
 */
export function controlCharacterIssues(c: { username?: string; domain?: string }): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const username = c.username === undefined ? null : controlCharacterProblem('user name', c.username);
  if (username) issues.push({ path: ['username'], message: username });
  const domain = c.domain === undefined ? null : controlCharacterProblem('domain', c.domain);
  if (domain) issues.push({ path: ['rdpOptions', 'domain'], message: domain });
  return issues;
}

const PUBLIC_KEY_LINE = /^(ssh-(rsa|dss|ed25519|ed448)|ecdsa-sha2-[\w-]+|sk-[\w@.-]+)\s+AAAA/;
const PUBLIC_KEY_ARMOR = /^(-----BEGIN (SSH2 |RSA )?PUBLIC KEY-----|---- BEGIN SSH2 PUBLIC KEY ----)/;
const PRIVATE_BEGIN = /^-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY-----/;
const PUTTY = /^PuTTY-User-Key-File-\d+:/;

/**
 * Why a pasted text is not a private key, or null when it looks like one (an OpenSSH, PEM or
 * PuTTY key file, whole). Only the shape: privateKeyProblem asks ssh2 whether it can read it.
 */
function privateKeyTextProblem(text: string): string | null {
  if (!text) return null;
  const t = text.trim();
  if (PUBLIC_KEY_LINE.test(t) || PUBLIC_KEY_ARMOR.test(t)) {
    return 'This is a public key. Paste the private key: the file of the same name without .pub (e.g. ~/.ssh/id_ed25519).';
  }
  if (/^-----BEGIN CERTIFICATE-----/.test(t)) return 'This is a certificate, not a private key. Paste the private key file.';
  if (PUTTY.test(t)) return null;
  const begin = PRIVATE_BEGIN.exec(t);
  if (!begin) {
    return 'This is not a private key. Paste the whole key file, from its -----BEGIN … PRIVATE KEY----- line to its -----END … PRIVATE KEY----- line.';
  }
  if (!t.endsWith(`-----END ${begin[1] ?? ''}PRIVATE KEY-----`)) {
    return 'The key is cut short: paste it whole, down to its -----END … PRIVATE KEY----- line.';
  }
  return null;
}

/** A key file is a few KB; anything much bigger is not one (and is not read whole to find out). */
export const MAX_KEY_FILE_BYTES = 1024 * 1024;


/**
 * Why ssh could not use this pasted private key, or null when it can. An encrypted key counts as
 * usable without its passphrase: that may be saved later, or typed at connect; and a wrong one is
 * the connect's to report (it asks again there), so it is not tried here.
 */
export function privateKeyProblem(key: string): string | null {
  const shape = privateKeyTextProblem(key);
  if (shape) return shape;
  const parsed = utils.parseKey(key);
  if (parsed instanceof Error) {
    if (/no passphrase/i.test(parsed.message)) return null;
    return `ssh cannot read this key (${parsed.message.replace(/\.$/, '')}). Paste the key file as it is, without changes.`;
  }
  const first = Array.isArray(parsed) ? parsed[0] : parsed;
  if (first && !first.isPrivateKey()) return 'This is a public key. Paste the private key: the file of the same name without .pub.';
  return null;
}

/** Why the key file at `path` (on this machine) cannot serve as a private key, or null. */
export function keyFileProblem(path: string): string | null {
  const trimmed = path.trim();
  let text: Buffer;
  try {
    text = readLocalFileSync(trimmed, { maxBytes: MAX_KEY_FILE_BYTES, what: 'a private key file' });
  } catch (err) {
    if (err instanceof WraithError && err.code === 'ENOTFOUND') return `There is no file at ${path} on the machine Wraith runs on.`;
    if (err instanceof WraithError && err.details?.reason === 'folder') {
      return `${path} is a folder: give the private key file in it (e.g. ${path.replace(/\/$/, '')}/id_ed25519).`;
    }
    return err instanceof Error ? err.message : String(err);
  }
  const problem = privateKeyProblem(text.toString('utf8'));
  if (!problem) return null;
  if (/public key/.test(problem)) return `${path} is a public key: give the private key, the file of the same name without .pub.`;
  return `${path} is not a private key file ssh can read.`;
}
