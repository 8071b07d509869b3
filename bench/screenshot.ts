/**
 * rdp.screenshot cost (issue 4): a real 1920x1080 desktop from the FreeRDP shadow server,
 * encoded to a 1280x720 JPEG q85: end to end through the contract (the figure), and the encode
 * alone from an RGBA copy (the input screenshots used before the addon packed RGB).
 * Run: node --import tsx bench/screenshot.ts
 */
import { execFileSync } from 'node:child_process';
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
// A desktop-like picture to encode (gradient + a window of `ls -l`-like text), not a flat colour.
const picture = join(mkdtempSync(join(tmpdir(), 'wraith-bench-desk-')), 'desktop.png');
const lines = Array.from({ length: 48 }, (_, i) => `drwxr-xr-x  2 root root  4096 Nov 25 22:${i}  directory-${i}  -rw-r--r-- 1 admin staff 123${i} file-${i}.log`).join('\n');
execFileSync('convert', ['-size', '1920x1080', 'gradient:#1d2a3a-#3a5f86', '(', '-size', '1100x700', 'xc:#f4f4f4', '-font', 'DejaVu-Sans-Mono', '-pointsize', '13', '-fill', '#202020', '-annotate', '+12+20', lines, ')', '-geometry', '+300+150', '-composite', picture]);
// A window filling the screen (no window manager on the test display); killed by dispose().
server.spawnX('display', ['-geometry', '+0+0', picture]);
const app = new App({ dataDir: mkdtempSync(join(tmpdir(), 'wraith-bench-rdp-')), host: 'in-process' });
const client = connectInProcess(app);
const conn = await client.call('connections.create', { name: 'bench', kind: 'rdp', host: server.host, port: server.port, rdpOptions: { security: 'tls' } });
const first = await client.call('rdp.open', { connectionId: conn.id, width: 1920, height: 1080 }).catch((e: unknown) => e);
if (first instanceof WraithError && first.code === 'ECERT_UNKNOWN') {
  await client.call('hostkeys.trust', { kind: 'rdp', host: server.host, port: server.port, keyType: 'x509', fingerprint: String(first.details?.fingerprint) });
}
const { sessionId, width, height } = await client.call('rdp.open', { connectionId: conn.id, width: 1920, height: 1080 });
await new Promise((r) => setTimeout(r, 1000));
// The old input for comparison: the RGBA framebuffer (what the canvas gets), alpha dropped by sharp.
const rgba = { ...(await client.call('rdp.framebuffer', { sessionId })), channels: 4 as const };
const encode: number[] = [];
for (let i = 0; i < 60; i++) {
  const fb = { ...rgba, data: Uint8Array.from(rgba.data) }; // a fresh buffer each time, as a real screenshot has
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
console.log(`encode only from an RGBA copy (sharp drops alpha; the path before packed RGB): p50 ${p(encode, 0.5).toFixed(1)} ms, p99 ${p(encode, 0.99).toFixed(1)} ms`);
console.log(`rdp.screenshot through the contract (packed RGB copy + encode + base64): p50 ${p(e2e, 0.5).toFixed(1)} ms, p99 ${p(e2e, 0.99).toFixed(1)} ms [target p50 ≤ 15 ms]`);
await client.call('rdp.close', { sessionId });
await app.dispose();
await server.dispose();
