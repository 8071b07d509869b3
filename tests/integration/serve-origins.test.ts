/**
 * `wraith serve` reached by other names than the one it printed: a browser page may use the host
 * when it is on the origin its requests go to (the Host header), or one named with --origin; a
 * page on any other origin is refused. Listening on every address prints where to open it and
 * warns that the link is plain HTTP. Real `wraith serve` processes, raw WebSocket upgrades and PUTs.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { reachNotes } from '../../src-main/server/reach.js';
import { tokenCookieName } from '../../src-main/server/ws-server.js';
import { until } from '../fixtures/poll.js';
import { REPO_ROOT, type WraithServer, startWraithServer } from '../fixtures/wraith-server.js';

const running: WraithServer[] = [];
afterEach(async () => {
  for (const h of running.splice(0)) await h.stop();
});

async function serve(args: string[] = []): Promise<WraithServer> {
  const h = await startWraithServer({ args });
  running.push(h);
  return h;
}

/** The token cookie as a browser sends it with a request to `hostHeader` (by default `h`'s own). */
const cookieFor = (h: WraithServer, hostHeader = new URL(h.url).host) => `${tokenCookieName(hostHeader)}=${h.token}`;

/** The status of a WebSocket upgrade to `h` with the token cookie, as a browser on `origin` sends it to `hostHeader`. */
function upgrade(h: WraithServer, headers: { origin?: string; host?: string }): Promise<number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`${h.url.replace('http', 'ws')}/ws`, { headers: { cookie: cookieFor(h, headers.host), ...headers } });
    ws.once('open', () => (ws.close(), resolve(101)));
    ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    ws.once('error', () => resolve(-1));
  });
}

/** The status of a PUT to an upload link that does not exist: 404 once past the Origin check, 403 if refused at it. */
async function putStatus(h: WraithServer, headers: { origin: string; host?: string }): Promise<{ status: number; text: string }> {
  const { request } = await import('node:http');
  const url = new URL(`${h.url}/upload/no-such-ticket`);
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'PUT', headers: { cookie: cookieFor(h, headers.host), 'content-length': '0', ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('which pages may use the host', () => {
  it('takes a page on the origin its request went to, by any name, and refuses pages on other origins', async () => {
    const h = await serve();
    const port = new URL(h.url).port;
    // Opened by a name the host never printed (a jump host's name, a tunnel's local port).
    expect(await upgrade(h, { origin: `http://jumphost.example:${port}`, host: `jumphost.example:${port}` })).toBe(101);
    expect(await upgrade(h, { origin: 'http://localhost:9000', host: 'localhost:9000' })).toBe(101);
    // A TLS proxy that passes Host: the scheme differs, the host and port are the same.
    expect(await upgrade(h, { origin: 'https://wraith.example.com', host: 'wraith.example.com' })).toBe(101);
    // Another port of this machine is another origin (and would carry the cookie): refused.
    expect(await upgrade(h, { origin: 'http://127.0.0.1:3000', host: `127.0.0.1:${port}` })).toBe(403);
    expect(await upgrade(h, { origin: 'https://evil.example', host: `127.0.0.1:${port}` })).toBe(403);
    expect(await upgrade(h, { origin: 'null', host: `127.0.0.1:${port}` })).toBe(403);
    // Upload links check the same way.
    expect((await putStatus(h, { origin: `http://jumphost.example:${port}`, host: `jumphost.example:${port}` })).status).toBe(404);
    const refused = await putStatus(h, { origin: 'http://127.0.0.1:3000', host: `127.0.0.1:${port}` });
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('--origin');
  });

  it('takes pages on an origin named with --origin, for a proxy that sends its own Host', async () => {
    const h = await serve(['--origin', 'https://wraith.example.com/', '--origin', 'http://jump:8080']);
    const port = new URL(h.url).port;
    const backend = `127.0.0.1:${port}`;
    expect(await upgrade(h, { origin: 'https://wraith.example.com', host: backend })).toBe(101);
    expect(await upgrade(h, { origin: 'http://jump:8080', host: backend })).toBe(101);
    expect(await upgrade(h, { origin: 'https://other.example.com', host: backend })).toBe(403);
    expect((await putStatus(h, { origin: 'https://wraith.example.com', host: backend })).status).toBe(404);
  });

  it('refuses to start with an --origin that is no origin, and says what it wants', async () => {
    const run = promisify(execFile);
    for (const bad of ['wraith.example.com', 'https://wraith.example.com/app', 'ftp://x', 'https://user@wraith.example.com']) {
      const failed = await run(process.execPath, [join(REPO_ROOT, 'bin', 'wraith.js'), 'serve', '--port', '0', '--origin', bad]).then(
        () => null,
        (e: { code: number; stderr: string }) => e,
      );
      expect(failed?.code).toBe(1);
      expect(JSON.parse(failed?.stderr ?? '{}')).toMatchObject({ code: 'EBADARGS', message: expect.stringContaining('is not an origin') });
    }
  });
});

describe('listening beyond loopback', () => {
  it('on every address, prints where to open it and warns that the link is plain HTTP', async () => {
    const h = await serve(['--host', '0.0.0.0']);
    const port = new URL(h.url).port;
    // The notes follow the URL line, which is what the fixture waits for.
    const out = await until('the plain-HTTP warning', () => /Warning: .*\n/.test(h.output()) && h.output());
    expect(out).toContain(`Wraith listening on http://0.0.0.0:${port}/?token=${h.token}`);
    // Hex: a token that began with "-" (1 in 64 of base64url ones) read as an option after `wraith call --token`.
    expect(h.token).toMatch(/^[0-9a-f]{48}$/);
    expect(out).toMatch(/Warning: serving beyond this machine over plain HTTP/);
    expect(out).toContain(`ssh -L ${port}:127.0.0.1:${port}`);
    // The host works through the address it printed (Linux reaches 0.0.0.0 as loopback).
    expect(await upgrade(h, { origin: `http://0.0.0.0:${port}`, host: `0.0.0.0:${port}` })).toBe(101);
  });

  it('lists the machine’s own addresses, IPv4 first, without loopback or link-local ones', () => {
    const iface = (address: string, family: 'IPv4' | 'IPv6', internal = false) => ({ address, family, internal, netmask: '', mac: '', cidr: null }) as const;
    const notes = reachNotes('0.0.0.0', 8080, 'T', {
      lo: [iface('127.0.0.1', 'IPv4', true), iface('::1', 'IPv6', true)],
      eth0: [iface('fe80::1', 'IPv6'), iface('2001:db8::5', 'IPv6'), iface('192.0.2.7', 'IPv4')],
    } as unknown as ReturnType<typeof import('node:os').networkInterfaces>);
    expect(notes.out).toEqual(['  also at http://192.0.2.7:8080/?token=T', '  also at http://[2001:db8::5]:8080/?token=T']);
    expect(notes.warnings).toHaveLength(1);
    expect(reachNotes('127.0.0.1', 8080, 'T')).toEqual({ out: [], warnings: [] });
    expect(reachNotes('192.0.2.7', 8080, 'T').out).toEqual([]);
    expect(reachNotes('192.0.2.7', 8080, 'T').warnings).toHaveLength(1);
  });
});
