import { WraithError } from '../common/errors.js';

/**
 * Which browser pages may use `wraith serve`: the page must be on the origin its request went to
 * (its Origin names the host and port of the request's Host header), or on one the user named
 * with `--origin` (a reverse proxy that passes its own address as Host).
 *
 * Matching the Host header, not a list of our own addresses, is what lets the host be opened by
 * any name it answers to: `--host 0.0.0.0` reached as http://jumphost:8080, an `ssh -L` tunnel
 * from another local port, a TLS proxy that passes Host. What stays refused is a page on another
 * origin: another port of this machine (which would send our SameSite cookie: ports do not make
 * another site) or any other site. A rebinding name that points at us matches its own Host, but has
 * no cookie and no token. Clients that are not browsers send no Origin; the token lets them in.
 */
export function originAllowed(origin: string | undefined, hostHeader: string | undefined, named: ReadonlySet<string>): boolean {
  if (origin === undefined) return true;
  if (named.has(origin)) return true;
  if (!hostHeader) return false;
  let parsed: URL;
  try {
    parsed = new URL(origin);
  } catch {
    return false; // "null" (a sandboxed frame, a file: page) and anything else that is no origin
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return false;
  return parsed.host === hostHeader.toLowerCase();
}

/** An `--origin` value as browsers write it in Origin (scheme://host[:port], no path), or EBADARGS. */
export function parseOrigin(value: string): string {
  const url = URL.canParse(value) ? new URL(value) : null;
  const bare = url && (url.pathname === '/' || url.pathname === '') && !url.search && !url.hash && !url.username && !url.password;
  if (!url || !bare || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new WraithError('EBADARGS', `--origin: "${value}" is not an origin. Give the address the browser shows for Wraith, like https://wraith.example.com or http://jumphost:8080.`);
  }
  return url.origin;
}
