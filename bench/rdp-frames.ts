/**
 * RDP addon figures (issue 4), against freerdp-shadow-cli on Xvfb 1600x900:
 *  - frame callbacks per second and server-change → frame latency (p50/p99) while the root
 *    window is recoloured every 20 ms; a change's time is when `xsetroot` exited (the X server
 *    has applied it by then), its arrival is the first frame callback whose pixels show it.
 *  - the server's own delivery cap, shown beside it: with a JS side that does nothing, the
 *    rate is bounded by how often the shadow server sends (its default is ~16-20 fps).
 *  - the anchor, same server, same redraw loop: xfreerdp (freerdp2-x11) on a second Xvfb, its
 *    paints counted from its own TRACE log (xf_sw_end_paint), default settings and with -gfx
 *    (the legacy surface-bits path the addon uses).
 *  - host CPU and memory per connected idle session.
 * Run: node --import tsx bench/rdp-frames.ts
 */
import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { RdpError, RdpSession, type RdpFrameRect } from '../src-main/node/rdp/native.js';
import { startRdpServer } from '../tests/fixtures/rdp-server.js';

const W = 1600;
const H = 900;
const pct = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.floor(q * (xs.length - 1))] ?? NaN;
const rssMiB = () => Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]) / 1024;

const server = await startRdpServer({ width: W, height: H });
const xsetroot = (color: string) =>
  new Promise<void>((resolve, reject) =>
    execFile('xsetroot', ['-solid', color], { env: { ...process.env, DISPLAY: server.display } }, (e) =>
      e ? reject(e) : resolve(),
    ),
  );

/** Recolour the root every 20 ms for `seconds`; records colour → time xsetroot exited. */
async function redraw(seconds: number, changes?: Map<number, number>): Promise<number> {
  const t0 = performance.now();
  let n = 0;
  while (performance.now() - t0 < seconds * 1000) {
    const rgb = ((n * 2654435761) >>> 8) & 0xffffff || 1; // distinct colours
    n++;
    const started = performance.now();
    await xsetroot(`#${rgb.toString(16).padStart(6, '0')}`);
    changes?.set(rgb, performance.now());
    const wait = 20 - (performance.now() - started);
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
  return n;
}

async function fingerprint(): Promise<string> {
  const e = (await new RdpSession({ host: server.host, port: server.port, security: 'tls' })
    .connect()
    .catch((x: unknown) => x)) as RdpError;
  return e.fingerprint ?? '';
}
const trustedFingerprint = await fingerprint();
const open = async (gfx = true) =>
  new RdpSession({ host: server.host, port: server.port, security: 'tls', width: W, height: H, trustedFingerprint, gfx });

// ---- frames/s and latency ---------------------------------------------------
for (const gfx of [true, false]) {
  console.log(gfx ? 'addon, graphics pipeline (default):' : 'addon, legacy surface bits (gfx: false):');
  const s = await open(gfx);
  const changes = new Map<number, number>(); // colour → time xsetroot exited
  const latencies: number[] = [];
  let callbacks = 0;
  let rects = 0;
  let pixels = 0;
  let seen = new Set<number>();
  s.on('frame', (list: RdpFrameRect[]) => {
    const now = performance.now();
    callbacks++;
    rects += list.length;
    for (const r of list) {
      pixels += r.width * r.height;
      // sample the centre of the screen if this rectangle covers it
      const cx = W / 2;
      const cy = H / 2;
      if (cx < r.x || cy < r.y || cx >= r.x + r.width || cy >= r.y + r.height) continue;
      const i = ((cy - r.y) * r.width + (cx - r.x)) * 4;
      const rgb = (r.data[i]! << 16) | (r.data[i + 1]! << 8) | r.data[i + 2]!;
      const t = changes.get(rgb);
      if (t !== undefined && !seen.has(rgb)) {
        seen.add(rgb);
        latencies.push(now - t);
      }
    }
  });
  await s.connect();
  await new Promise((r) => setTimeout(r, 500));
  callbacks = rects = pixels = 0;
  seen = new Set();
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const n = await redraw(10, changes);
  const elapsed = (performance.now() - t0) / 1000;
  await new Promise((r) => setTimeout(r, 300));
  const cpu = process.cpuUsage(cpu0);
  console.log(`continuous redraw ${W}x${H}: ${n} root recolours in ${elapsed.toFixed(1)} s (${(n / elapsed).toFixed(1)}/s offered)`);
  console.log(
    `  frame callbacks: ${(callbacks / elapsed).toFixed(1)}/s, ${(rects / Math.max(1, callbacks)).toFixed(2)} rects each, ` +
      `${((pixels * 4) / elapsed / 1048576).toFixed(0)} MiB/s of RGBA copied to JS`,
  );
  console.log(
    `  distinct changes seen: ${seen.size} of ${n}; change → frame latency p50 ${pct(latencies, 0.5).toFixed(1)} ms, ` +
      `p99 ${pct(latencies, 0.99).toFixed(1)} ms`,
  );
  console.log(`  this process CPU while receiving: ${(((cpu.user + cpu.system) / 1e6 / elapsed) * 100).toFixed(0)}% of one core`);
  await s.close();
}

// ---- anchor: xfreerdp against the same server ----------------------------------
for (const variant of [[], ['-gfx']]) {
  const viewer = await startRdpServer({ width: W, height: H }); // only its Xvfb is used, as xfreerdp's screen
  const args = [`/v:${server.host}:${server.port}`, '/cert:ignore', '/sec:tls', `/size:${W}x${H}`, '/log-level:WARN',
    '/log-filters:com.freerdp.client.x11:TRACE', ...variant];
  const xf = spawn('xfreerdp', args, { env: { ...process.env, DISPLAY: viewer.display }, stdio: ['ignore', 'pipe', 'pipe'] });
  const paints: number[] = [];
  let buf = '';
  xf.stdout.setEncoding('utf8');
  xf.stdout.on('data', (d: string) => {
    buf += d;
    const lines = buf.split('\n');
    buf = lines.pop() ?? '';
    const now = performance.now();
    for (const l of lines) if (/xf_lock_x11_:.*from xf_sw_end_paint/.test(l)) paints.push(now);
  });
  await new Promise((r) => setTimeout(r, 3000)); // connect
  const before = paints.length;
  const t0 = performance.now();
  await redraw(10);
  const secs = (performance.now() - t0) / 1000;
  console.log(`anchor xfreerdp ${variant.join(' ') || '(default: gfx)'}: ${((paints.length - before) / secs).toFixed(1)} paints/s`);
  xf.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 300));
  xf.kill('SIGKILL');
  await viewer.dispose();
}

// ---- idle sessions ----------------------------------------------------------
{
  await xsetroot('#204060');
  const N = 5;
  global.gc?.();
  const rss0 = rssMiB();
  const sessions: RdpSession[] = [];
  for (let i = 0; i < N; i++) {
    const s = await open();
    await s.connect();
    sessions.push(s);
  }
  await new Promise((r) => setTimeout(r, 1500));
  const rss1 = rssMiB();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, 10_000));
  const cpu = process.cpuUsage(cpu0);
  const secs = (performance.now() - t0) / 1000;
  console.log(
    `idle sessions (${N} x ${W}x${H}): RSS +${((rss1 - rss0) / N).toFixed(1)} MiB per session; ` +
      `CPU ${((((cpu.user + cpu.system) / 1e6 / secs) * 100) / N).toFixed(2)}% of one core per session`,
  );
  await Promise.all(sessions.map((s) => s.close()));
}

await server.dispose();
