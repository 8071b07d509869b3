/**
 * rdp.screenshot cost (issue 4): a real 1920x1080 desktop from the FreeRDP shadow server,
 * encoded to a 1280x720 JPEG q85; encode alone, and end to end through the contract.
 * Run: node --import tsx bench/screenshot.ts
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { WraithError } from '../src-main/common/errors.js';
import { App } from '../src-main/node/app.js';
import { connectInProcess } from '../src-main/node/in-process.js';
import { encodeScreenshot } from '../src-main/node/rdp/screenshot.js';
import { startRdpServer } from '../tests/fixtures/rdp-server.js';

const p = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.floor(q * (xs.length - 1))] ?? NaN;

const server = await startRdpServer({ width: 1920, height: 1080 });
// Something with detail to encode, not a flat colour.
await server.x('xsetroot', ['-bitmap', '/usr/include/X11/bitmaps/escherknot', '-fg', '#d08040', '-bg', '#203040']).catch(() => server.x('xsetroot', ['-solid', '#336699']));
const app = new App({ dataDir: mkdtempSync(join(tmpdir(), 'wraith-bench-rdp-')), host: 'in-process' });
const client = connectInProcess(app);
const conn = await client.call('connections.create', { name: 'bench', kind: 'rdp', host: server.host, port: server.port, rdpOptions: { security: 'tls' } });
const first = await client.call('rdp.open', { connectionId: conn.id, width: 1920, height: 1080 }).catch((e: unknown) => e);
if (first instanceof WraithError && first.code === 'ECERT_UNKNOWN') {
  await client.call('hostkeys.trust', { kind: 'rdp', host: server.host, port: server.port, keyType: 'x509', fingerprint: String(first.details?.fingerprint) });
}
const { sessionId, width, height } = await client.call('rdp.open', { connectionId: conn.id, width: 1920, height: 1080 });
await new Promise((r) => setTimeout(r, 1000));
const fb = await client.call('rdp.framebuffer', { sessionId });

const encode: number[] = [];
for (let i = 0; i < 60; i++) {
  const t = performance.now();
  await encodeScreenshot(fb, { maxWidth: 1280, maxHeight: 720, format: 'jpeg' });
  encode.push(performance.now() - t);
}
const e2e: number[] = [];
let bytes = 0;
for (let i = 0; i < 60; i++) {
  const t = performance.now();
  const shot = await client.call('rdp.screenshot', { sessionId });
  e2e.push(performance.now() - t);
  bytes = shot.data.length;
}
console.log(`desktop ${width}x${height} → 1280x720 JPEG q85 (${(bytes / 1024).toFixed(0)} KiB base64)`);
console.log(`encode only (sharp): p50 ${p(encode, 0.5).toFixed(1)} ms, p99 ${p(encode, 0.99).toFixed(1)} ms [target p50 ≤ 15 ms]`);
console.log(`rdp.screenshot through the contract (framebuffer copy + encode + base64): p50 ${p(e2e, 0.5).toFixed(1)} ms, p99 ${p(e2e, 0.99).toFixed(1)} ms`);
await client.call('rdp.close', { sessionId });
await app.dispose();
await server.dispose();
