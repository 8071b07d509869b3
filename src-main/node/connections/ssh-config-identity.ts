import { statSync } from 'node:fs';
import { homedir, hostname } from 'node:os';
import { expandHome } from '../paths.js';
import { displayPath } from './ssh-config-include.js';

/** What ssh knows of a host when it reads its IdentityFile lines: what the %-tokens stand for. */
export interface IdentityContext {
  /** %h: the host connected to, HostName applied. */
  host: string;
  /** %n: the host as given (the Host alias, or a ProxyJump hop's host). */
  given: string;
  /** HostKeyAlias, if the entry sets one (%k; the host as given otherwise). */
  hostKeyAlias?: string;
  /** %p */
  port: number;
  /** %r: the user name logged in as. */
  user: string;
  /** %u: the local login name, null when this account has none. */
  localUser: string | null;
}

/**
 * The one key file a connection keeps of an ssh_config host's IdentityFile lines, with the
 * %-tokens and ~ expanded as ssh expands them (ssh_config(5) TOKENS), for this host. ssh tries
 * every file that exists, in order; a connection has one: the first that exists here, or the
 * first written when none does. Each file left out is a note, and so is what cannot be known at
 * import (%C, a hash ssh makes as it connects; another account's ~user; ${VAR} from the
 * environment ssh runs in): that path is kept as written rather than guessed.
 */
export function identityFromSshConfig(written: string[], ctx: IdentityContext): { keyPath: string | null; notes: string[] } {
  const notes: string[] = [];
  const byPath = new Map<string, { line: string; path: string; unknown: string[] }>();
  for (const line of written) {
    const f = { line, ...expandIdentity(line, ctx) };
    // The same file from two lines (Host * and the entry, say) is one file.
    if (!byPath.has(f.path)) byPath.set(f.path, f);
  }
  const files = [...byPath.values()];
  const kept = files.find((f) => f.unknown.length === 0 && isFile(f.path)) ?? files[0];
  if (!kept) return { keyPath: null, notes };
  let why = 'the first that exists here';
  if (kept.unknown.length > 0) {
    notes.push(`IdentityFile ${kept.line}: kept as written, Wraith cannot know ${kept.unknown.join(' or ')} when importing. Edit the connection's key file if ssh would read another.`);
    why = 'the first written, as no other exists here';
  } else if (!isFile(kept.path)) {
    why = 'the first written, as none of them exists here';
  }
  for (const other of files) {
    if (other !== kept) notes.push(`IdentityFile ${other.line}: not imported, a connection keeps one key file (this one uses ${displayPath(kept.path)}, ${why}).`);
  }
  return { keyPath: kept.path, notes };
}

/** A path with ~ and its %-tokens expanded; as written, with the tokens it could not expand, when some cannot be known here. */
function expandIdentity(line: string, ctx: IdentityContext): { path: string; unknown: string[] } {
  const unknown: string[] = [];
  // ~user/ names another account's home, which Node cannot look up.
  if (/^~[^/]/.test(line)) unknown.push(line.slice(0, line.indexOf('/') < 0 ? line.length : line.indexOf('/')));
  // ${VAR}: ssh reads the environment it runs in, which need not be Wraith's.
  for (const m of line.matchAll(/\$\{[^}]*\}/g)) unknown.push(m[0]);
  const local = hostname();
  const tokens: Record<string, string | undefined> = {
    '%': '%',
    d: homedir(),
    // ssh matches host names and key aliases in lower case, so it expands them so.
    h: ctx.host.toLowerCase(),
    i: process.getuid?.().toString(),
    k: ctx.hostKeyAlias?.toLowerCase() ?? ctx.given,
    L: local.split('.')[0],
    l: local,
    n: ctx.given,
    p: String(ctx.port),
    r: ctx.user,
    u: ctx.localUser ?? undefined,
  };
  const path = expandHome(line).replace(/%(.?)/g, (token, key: string) => {
    const value = Object.hasOwn(tokens, key) ? tokens[key] : undefined;
    if (value === undefined) unknown.push(token);
    return value ?? token;
  });
  return unknown.length > 0 ? { path: line, unknown: [...new Set(unknown)] } : { path, unknown };
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
