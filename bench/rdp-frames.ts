/**
 * RDP addon figures (issue 4), against freerdp-shadow-cli on Xvfb 1600x900:
 *  - paints per second (EndPaint calls that drew something: the count xfreerdp's paints are
 *    compared with), frame events per second, distinct screen states seen, and server-change →
 *    frame latency (p50/p99) while the root window is recoloured every 20 ms; a change's time is
 *    when `xsetroot` exited (the X server has applied it by then), its arrival is the first frame
 *    event whose pixels show it (within H.264's colour error).
 *  - the anchor, same server, same redraw loop: xfreerdp (freerdp2-x11) on a second Xvfb, its
 *    paints counted from its TRACE log (xf_sw_end_paint: its software GDI shows legacy updates
 *    and pipeline frames alike through EndPaint, as the addon does), pipeline frames from GDI's
 *    per-command trace.
 *  - the main comparison is like for like and interleaved over --rounds=N (default 3): the
 *    addon's default (graphics pipeline offering H.264 AVC444/AVC420) against xfreerdp
 *    /gfx:AVC444, which is also xfreerdp 2.11's default. FreeRDP 2's shadow server uses the
 *    pipeline only for H.264; with it, acknowledged frames let it raise its capture rate from
 *    16 up to 32 fps. Then, one round each, the lossless paths: addon h264: false and
 *    gfx: false, xfreerdp /gfx (all legacy planar bitmaps at the server's 16 fps).
 *  - host CPU and memory per connected idle session.
 * Each figure carries the 1-minute load average: other work on the machine shifts them.
 * Run (one benchmark at a time on a shared machine):
 *   flock /tmp/wraith-bench.lock node --import tsx bench/rdp-frames.ts
 */
import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { RdpError, RdpSession, type RdpFrameRect } from '../src-main/node/rdp/native.js';
import { startRdpServer } from '../tests/fixtures/rdp-server.js';

const W = 1600;
const H = 900;
const pct = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.floor(q * (xs.length - 1))] ?? NaN;
const load = () => `load ${os.loadavg()[0]!.toFixed(2)}`;
const rssMiB = () => Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]) / 1024;

const server = await startRdpServer({ width: W, height: H });
const xsetroot = (color: string) =>
  new Promise<void>((resolve, reject) =>
    execFile('xsetroot', ['-solid', color], { env: { ...process.env, DISPLAY: server.display } }, (e) =>
      e ? reject(e) : resolve(),
    ),
  );

// The redraw loop runs in a child process: spawning ~45 xsetroot a second from this process
// would fork it each time, and every fork makes the addon's decode buffers copy-on-write
// (page-fault storms on FreeRDP's threads that halved the measured rate). xfreerdp, the
// anchor, runs in its own process, so the addon gets the same conditions this way.
const REDRAW_HELPER = `
const { execFile } = require('node:child_process');
const seconds = Number(process.argv[1]);
const now = () => performance.timeOrigin + performance.now();
(async () => {
  const t0 = now();
  for (let n = 0; now() - t0 < seconds * 1000; n++) {
    const rgb = ((n * 2654435761) >>> 8) & 0xffffff || 1; // distinct colours
    const started = now();
    await new Promise((res, rej) =>
      execFile('xsetroot', ['-solid', '#' + rgb.toString(16).padStart(6, '0')], (e) => (e ? rej(e) : res())));
    process.stdout.write(rgb + ' ' + now() + '\\n');
    const wait = 20 - (now() - started);
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
})();`;
const epochNow = () => performance.timeOrigin + performance.now();

/** Recolour the root every 20 ms for `seconds`; records colour → time (epoch ms) xsetroot exited. */
function redraw(seconds: number, changes?: Map<number, number>): Promise<number> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['-e', REDRAW_HELPER, String(seconds)], {
      env: { ...process.env, DISPLAY: server.display },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let n = 0;
    let buf = '';
    p.stdout.setEncoding('utf8').on('data', (d: string) => {
      buf += d;
      const lines = buf.split('\n');
      buf = lines.pop() ?? '';
      for (const l of lines) {
        const [rgb, t] = l.split(' ').map(Number);
        n++;
        if (rgb !== undefined && t !== undefined) changes?.set(rgb, t);
      }
    });
    p.once('error', reject);
    p.once('exit', (code) => (code === 0 ? resolve(n) : reject(new Error(`redraw helper exited with ${code}`))));
  });
}

/** The change a sampled colour shows: exact, or within H.264's error (±12 a channel; the colours are random, so no two are that close in practice). */
function changeFor(changes: Map<number, number>, rgb: number): number | undefined {
  if (changes.has(rgb)) return rgb;
  const ch = (v: number, s: number) => (v >> s) & 255;
  let best: number | undefined;
  for (const c of changes.keys()) {
    if (Math.max(...[16, 8, 0].map((sh) => Math.abs(ch(c, sh) - ch(rgb, sh)))) <= 12) best = c; // latest wins
  }
  return best;
}

async function fingerprint(): Promise<string> {
  const e = (await new RdpSession({ host: server.host, port: server.port, security: 'tls' })
    .connect()
    .catch((x: unknown) => x)) as RdpError;
  return e.fingerprint ?? '';
}
const trustedFingerprint = await fingerprint();
const open = async (gfx = true, h264 = true) =>
  new RdpSession({ host: server.host, port: server.port, security: 'tls', width: W, height: H, trustedFingerprint, gfx, h264 });

// ---- frames/s and latency ---------------------------------------------------
const SECONDS = 8;

/** One addon session under the redraw loop; prints its figures, returns paints/s. */
async function addonRun(label: string, gfx: boolean, h264: boolean): Promise<number> {
  const s = await open(gfx, h264);
  const changes = new Map<number, number>(); // colour → time xsetroot exited
  const latencies: number[] = [];
  let callbacks = 0;
  let rects = 0;
  let pixels = 0;
  let seen = new Set<number>();
  s.on('frame', (list: RdpFrameRect[]) => {
    const now = epochNow();
    callbacks++;
    rects += list.length;
    for (const r of list) {
      pixels += r.width * r.height;
      // sample the centre of the screen if this rectangle covers it
      const cx = W / 2;
      const cy = H / 2;
      if (cx < r.x || cy < r.y || cx >= r.x + r.width || cy >= r.y + r.height) continue;
      const i = ((cy - r.y) * r.width + (cx - r.x)) * 4;
      const c = changeFor(changes, (r.data[i]! << 16) | (r.data[i + 1]! << 8) | r.data[i + 2]!);
      const t = c === undefined ? undefined : changes.get(c);
      if (c !== undefined && t !== undefined && !seen.has(c)) {
        seen.add(c);
        latencies.push(now - t);
      }
    }
  });
  await s.connect();
  await new Promise((r) => setTimeout(r, 500));
  callbacks = rects = pixels = 0;
  seen = new Set();
  const stats0 = s.getStats();
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const n = await redraw(SECONDS, changes);
  const elapsed = (performance.now() - t0) / 1000;
  const stats = s.getStats();
  const cpu = process.cpuUsage(cpu0);
  const paints = (stats.paints - stats0.paints) / elapsed;
  const path =
    stats.graphicsPipeline && stats.gfxFrames > stats0.gfxFrames
      ? `pipeline frames, codecs ${JSON.stringify(stats.gfxCommands)}`
      : `legacy updates${stats.graphicsPipeline ? ' (pipeline open, unused by the server)' : ''}`;
  console.log(`${label}: ${paints.toFixed(1)} paints/s (${load()}); ${path}`);
  console.log(
    `  ${n} root recolours offered (${(n / elapsed).toFixed(1)}/s); frame events ${(callbacks / elapsed).toFixed(1)}/s, ` +
      `${(rects / Math.max(1, callbacks)).toFixed(2)} rects each, ${((pixels * 4) / elapsed / 1048576).toFixed(0)} MiB/s of RGBA copied to JS`,
  );
  console.log(
    `  distinct changes seen ${(seen.size / elapsed).toFixed(1)}/s; change → frame latency ` +
      `p50 ${pct(latencies, 0.5).toFixed(1)} ms, p99 ${pct(latencies, 0.99).toFixed(1)} ms; ` +
      `this process ${(((cpu.user + cpu.system) / 1e6 / elapsed) * 100).toFixed(0)}% of one core`,
  );
  await s.close();
  return paints;
}

/** xfreerdp (the anchor) against the same server under the same loop; returns paints/s. */
async function xfreerdpRun(variant: string[]): Promise<number> {
  const viewer = await startRdpServer({ width: W, height: H }); // only its Xvfb is used, as xfreerdp's screen
  const args = [`/v:${server.host}:${server.port}`, '/cert:ignore', '/sec:tls', `/size:${W}x${H}`, '/log-level:WARN',
    '/log-filters:com.freerdp.client.x11:TRACE,com.freerdp.gdi:TRACE', ...variant];
  // stdbuf -oL: WLog writes to a pipe through stdio, block-buffered otherwise, so lines from
  // the connect phase would land inside the measured window and inflate the count.
  const xf = spawn('stdbuf', ['-oL', 'xfreerdp', ...args], {
    env: { ...process.env, DISPLAY: viewer.display },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let legacyPaints = 0;
  let gfxPaints = 0;
  let buf = '';
  xf.stdout.setEncoding('utf8');
  xf.stdout.on('data', (d: string) => {
    buf += d;
    const lines = buf.split('\n');
    buf = lines.pop() ?? '';
    for (const l of lines) {
      // paints: xf_sw_end_paint; pipeline frames: GDI traces each surface command
      if (/xf_lock_x11_:.*from xf_sw_end_paint/.test(l)) legacyPaints++;
      else if (/\[com\.freerdp\.gdi\].*surfaceId=\d+, codec=/.test(l)) gfxPaints++;
    }
  });
  await new Promise((r) => setTimeout(r, 3000)); // connect
  const legacyBefore = legacyPaints;
  const gfxBefore = gfxPaints;
  const t0 = performance.now();
  await redraw(SECONDS);
  const secs = (performance.now() - t0) / 1000;
  const gfx = (gfxPaints - gfxBefore) / secs;
  const legacy = (legacyPaints - legacyBefore) / secs;
  // xfreerdp's software GDI shows pipeline frames through EndPaint as well (GDI's
  // surface-to-screen copy, as in the addon), so xf_sw_end_paint counts paints in both modes:
  // the same measure as the addon's. (Adding the surface commands would count frames twice.)
  const rate = legacy;
  const how = gfx > 0 ? `pipeline frames (${gfx.toFixed(1)} surface commands/s)` : 'legacy updates';
  console.log(`anchor xfreerdp ${variant.join(' ') || '(default)'}: ${rate.toFixed(1)} paints/s (${load()}); ${how}`);
  xf.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 300));
  xf.kill('SIGKILL');
  await viewer.dispose();
  return rate;
}

const median = (xs: number[]) => pct(xs, 0.5);
const ROUNDS = Number(/^--rounds=(\d+)$/.exec(process.argv.slice(2).find((a) => a.startsWith('--rounds=')) ?? '')?.[1] ?? 3);

// Same codec, interleaved rounds (order alternating), so load from elsewhere on the machine
// falls on both sides: the addon's default against xfreerdp /gfx:AVC444, which is also what
// xfreerdp 2.11 picks by default (its network autodetect turns on AVC444).
console.log(`graphics pipeline with H.264 AVC444, ${ROUNDS} interleaved rounds of ${SECONDS} s (${W}x${H}, root recoloured every 20 ms):`);
const ours: number[] = [];
const theirs: number[] = [];
for (let r = 0; r < ROUNDS; r++) {
  if (r % 2 === 0) {
    ours.push(await addonRun(`round ${r + 1}: addon default (gfx, h264)`, true, true));
    theirs.push(await xfreerdpRun(['/gfx:AVC444']));
  } else {
    theirs.push(await xfreerdpRun(['/gfx:AVC444']));
    ours.push(await addonRun(`round ${r + 1}: addon default (gfx, h264)`, true, true));
  }
}
console.log(
  `=> median paints/s: addon ${median(ours).toFixed(1)} vs xfreerdp /gfx:AVC444 ${median(theirs).toFixed(1)} ` +
    `(addon ${ours.map((x) => x.toFixed(1)).join(', ')}; xfreerdp ${theirs.map((x) => x.toFixed(1)).join(', ')})`,
);

await xfreerdpRun([]); // xfreerdp's default: the same AVC444 pipeline, one round

// Without H.264 this server sends legacy planar bitmaps at its 16 fps capture rate.
console.log('lossless paths (one round each):');
await addonRun('addon h264: false (pipeline open, the default before H.264 was offered)', true, false);
await addonRun('addon gfx: false (legacy updates)', false, false);
await xfreerdpRun(['/gfx']);

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
      `CPU ${((((cpu.user + cpu.system) / 1e6 / secs) * 100) / N).toFixed(2)}% of one core per session (${load()})`,
  );
  await Promise.all(sessions.map((s) => s.close()));
}

await server.dispose();
