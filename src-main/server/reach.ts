import { networkInterfaces } from 'node:os';
import { hostAndPort } from '../common/host-address.js';

/** What `wraith serve` says besides its URL, by where it listens: stdout lines and stderr warnings. */
export interface ReachNotes {
  out: string[];
  warnings: string[];
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\./.test(host);
}

function isWildcard(host: string): boolean {
  return host === '0.0.0.0' || host === '::' || host === '';
}

/**
 * Listening on every address (`--host 0.0.0.0`), the printed http://0.0.0.0:PORT is no address a
 * browser elsewhere can open: the machine's own addresses are printed too. Beyond loopback the
 * host speaks plain HTTP, so the token and every keystroke cross the network unencrypted: said on
 * stderr, with the safer ways in.
 */
export function reachNotes(host: string, port: number, token: string, interfaces = networkInterfaces()): ReachNotes {
  if (isLoopback(host)) return { out: [], warnings: [] };
  const out: string[] = [];
  if (isWildcard(host)) {
    const addresses = Object.values(interfaces)
      .flatMap((list) => list ?? [])
      // Link-local IPv6 needs a zone a URL cannot carry well; loopback is the printed URL already.
      .filter((a) => !a.internal && !(a.family === 'IPv6' && a.address.toLowerCase().startsWith('fe80')))
      .sort((a, b) => (a.family === b.family ? 0 : a.family === 'IPv4' ? -1 : 1))
      .map((a) => a.address);
    for (const a of addresses) out.push(`  also at http://${hostAndPort(a, port)}/?token=${token}`);
  }
  return {
    out,
    warnings: [
      `Warning: serving beyond this machine over plain HTTP: the token and everything typed cross the network unencrypted, and browsers keep the clipboard from such a page. ` +
        `Safer: listen on 127.0.0.1 and reach it with \`ssh -L ${port}:127.0.0.1:${port} <this machine>\`, or put a TLS reverse proxy in front (see --origin).`,
    ],
  };
}
