/**
 * Foundation figures (issue 2): host start → first served page, and the WebSocket round trip
 * of a no-op call (p50/p99 over 10k sequential calls), with the in-process transport beside it.
 * Run: npm run build && node --import tsx bench/foundation.ts
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { App } from '../src-main/node/app.js';
import { connectInProcess } from '../src-main/node/in-process.js';
import { connectWebSocket } from '../src-main/server/ws-client.js';
import { startWraithServer } from '../tests/fixtures/wraith-server.js';

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

async function timeCalls(call: () => Promise<unknown>, n: number): Promise<{ p50: number; p99: number }> {
  for (let i = 0; i < 500; i++) await call(); // warm up
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await call();
    samples.push(performance.now() - t);
  }
  samples.sort((a, b) => a - b);
  return { p50: percentile(samples, 50), p99: percentile(samples, 99) };
}

const startRuns: number[] = [];
for (let i = 0; i < 5; i++) {
  const t0 = performance.now();
  const host = await startWraithServer();
  // As a browser does: the token URL sets the cookie, then the page loads with it.
  const first = await fetch(host.openUrl, { redirect: 'manual' });
  const cookie = (first.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  const res = await fetch(host.url + '/', { headers: { cookie } });
  await res.text();
  startRuns.push(performance.now() - t0);
  if (res.status !== 200) throw new Error(`first page answered ${res.status}: is the renderer built?`);
  await host.stop();
}
startRuns.sort((a, b) => a - b);
console.log(`host start → first served page: median ${percentile(startRuns, 50).toFixed(0)} ms (5 runs: ${startRuns.map((x) => x.toFixed(0)).join(', ')} ms) [target < 1000 ms]`);

const host = await startWraithServer();
const ws = await connectWebSocket(host.url, host.token);
const wsStats = await timeCalls(() => ws.call('health.ping'), 10_000);
console.log(`no-op round trip over WebSocket (wraith serve process): p50 ${(wsStats.p50 * 1000).toFixed(0)} µs, p99 ${(wsStats.p99 * 1000).toFixed(0)} µs over 10k calls [target p50 < 300 µs]`);
ws.close();
await host.stop();

const app = new App({ dataDir: mkdtempSync(join(tmpdir(), 'wraith-bench-')), host: 'in-process' });
const local = connectInProcess(app);
const ipStats = await timeCalls(() => local.call('health.ping'), 10_000);
console.log(`no-op round trip in-process (anchor): p50 ${(ipStats.p50 * 1000).toFixed(0)} µs, p99 ${(ipStats.p99 * 1000).toFixed(0)} µs`);
await app.dispose();
