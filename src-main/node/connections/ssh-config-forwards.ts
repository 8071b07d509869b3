import type { SavedForward } from '../../common/contract/connections.js';

/**
 * LocalForward, RemoteForward and DynamicForward lines of an ssh_config host, as the saved port
 * forwards of its connection. What Wraith cannot run comes back as a note instead: a listener
 * on an address other than loopback (Wraith never offers a forward to the network), Unix
 * sockets, and RemoteForward without a target (a SOCKS proxy on the server).
 */
export function forwardsFromSshConfig(params: Record<string, string | string[] | undefined>): { forwards: SavedForward[]; notes: string[] } {
  const forwards: SavedForward[] = [];
  const notes: string[] = [];
  const lines = (key: string): string[] => {
    const v = params[key];
    return v === undefined ? [] : Array.isArray(v) ? v : [v];
  };
  const add = (directive: string, value: string, make: (parts: string[]) => SavedForward | string) => {
    const made = make(value.trim().split(/\s+/));
    if (typeof made === 'string') notes.push(`${directive} ${value}: not imported, ${made}.`);
    else forwards.push(made);
  };

  for (const value of lines('LocalForward')) {
    add('LocalForward', value, ([listen = '', target = '']) => listenAndTarget('local', listen, target));
  }
  for (const value of lines('RemoteForward')) {
    add('RemoteForward', value, ([listen = '', target]) =>
      target === undefined ? 'a SOCKS proxy on the server (RemoteForward without a target) is not one Wraith runs' : listenAndTarget('remote', listen, target),
    );
  }
  for (const value of lines('DynamicForward')) {
    add('DynamicForward', value, ([listen = '']) => {
      const at = listenSpec(listen);
      return typeof at === 'string' ? at : { kind: 'dynamic', ...at };
    });
  }
  if (forwards.length > 16) {
    notes.push(`${forwards.length - 16} forwards after the first 16: not imported, a connection keeps at most 16.`);
    forwards.length = 16;
  }
  return { forwards, notes };
}

/** A local or remote forward's two halves, or why it cannot be one. */
function listenAndTarget(kind: 'local' | 'remote', listen: string, target: string): SavedForward | string {
  const at = listenSpec(listen);
  if (typeof at === 'string') return at;
  const to = targetSpec(target);
  return typeof to === 'string' ? to : { kind, ...at, ...to };
}

/** "[address:]port", "[v6]:port" or "address/port" → a loopback listener, or why not. */
function listenSpec(spec: string): { bindHost: '127.0.0.1' | '::1'; bindPort: number } | string {
  if (spec.includes('/') && !/^[^/]+\/\d+$/.test(spec)) return 'Wraith forwards TCP ports, not Unix sockets';
  const { host, port } = splitHostPort(spec);
  const n = portNumber(port, true);
  if (n === null) return `"${port}" is not a port`;
  if (host === undefined || host === '' || host === 'localhost' || host === '127.0.0.1') return { bindHost: '127.0.0.1', bindPort: n };
  if (host === '::1') return { bindHost: '::1', bindPort: n };
  return `Wraith's forwards listen on loopback only, not on ${host}`;
}

/** "host:port", "[v6]:port" or "host/port" → where a forward goes, or why not. */
function targetSpec(spec: string): { targetHost: string; targetPort: number } | string {
  if (spec === '') return 'it names no target';
  if (spec.startsWith('/')) return 'Wraith forwards TCP ports, not Unix sockets';
  const { host, port } = splitHostPort(spec);
  const n = portNumber(port, false);
  if (!host || n === null) return `"${spec}" is not host:port`;
  if (!/^[A-Za-z0-9._:\-%]+$/.test(host)) return `"${host}" is not a host name`;
  return { targetHost: host, targetPort: n };
}

function splitHostPort(spec: string): { host?: string; port: string } {
  const bracket = /^\[([^\]]*)\][:/](.*)$/.exec(spec);
  if (bracket) return { host: bracket[1], port: bracket[2] ?? '' };
  const cut = Math.max(spec.lastIndexOf(':'), spec.lastIndexOf('/'));
  return cut < 0 ? { port: spec } : { host: spec.slice(0, cut), port: spec.slice(cut + 1) };
}

function portNumber(text: string, allowZero: boolean): number | null {
  if (!/^\d{1,5}$/.test(text)) return null;
  const n = Number(text);
  return n <= 65535 && (n > 0 || allowZero) ? n : null;
}
