/**
 * XO figures (issue 5), against the fake Messages API on 127.0.0.1:
 *  1. tool dispatch overhead: terminal_read through the XO (ai.tool_use → ai.tool_result: policy,
 *     router call, fencing, redaction, audit row) vs the bare terminal.read router call, p50/p99;
 *  2. time to first token: the app (ai.send → first ai.text) vs the SDK streaming directly from
 *     the same fake server, p50/p99, and the difference.
 * Uses a local shell (pty.spawn) when the PTY service is on this host, else list_sessions.
 * Run: node --import tsx bench/ai-overhead.ts
 */
import Anthropic from '@anthropic-ai/sdk';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { z } from 'zod';
import { App } from '../src-main/node/app.js';
import { connectInProcess } from '../src-main/node/in-process.js';
import { WraithError } from '../src-main/common/errors.js';
import { startFakeAnthropic } from '../tests/fixtures/fake-anthropic.js';
import { haveRdpServerTools, startRdpServer } from '../tests/fixtures/rdp-server.js';

function stats(samples: number[]): { p50: number; p99: number } {
  const s = [...samples].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
  return { p50: at(50), p99: at(99) };
}
const ms = (v: number) => `${v.toFixed(3)} ms`;

const fake = await startFakeAnthropic();
process.env.ANTHROPIC_BASE_URL = fake.url;
process.env.ANTHROPIC_API_KEY = 'sk-ant-bench';
const app = new App({ dataDir: mkdtempSync(join(tmpdir(), 'wraith-bench-ai-')), host: 'in-process' });
const client = connectInProcess(app);
client.subscribe(['ai.']);
await client.call('ai.mode.set', { mode: 'auto' });

// ── 1. dispatch overhead ────────────────────────────────────────────────────────────────
let sessionId: string | null = null;
if (app.router.isImplemented('pty.spawn')) {
  const spawned = z.object({ sessionId: z.string() }).parse(await app.router.call('pty.spawn', { shell: '/bin/sh' }, { clientId: 'bench', origin: 'test' }));
  sessionId = spawned.sessionId;
  if (sessionId) {
    await client.call('terminal.write', { sessionId, data: 'for i in $(seq 1 200); do echo line $i; done\r' });
    await new Promise((r) => setTimeout(r, 500));
  }
}
const tool = sessionId ? 'terminal_read' : 'list_sessions';
const input = sessionId ? { sessionId, lines: 50 } : {};
const N = 300;
const direct: number[] = [];
for (let i = 0; i < N + 50; i++) {
  const t = performance.now();
  if (sessionId) await client.call('terminal.read', { sessionId, stripAnsi: true, maxBytes: 512 * 1024 });
  else await client.call('sessions.list');
  if (i >= 50) direct.push(performance.now() - t);
}

const useAt = new Map<string, number>();
const viaXo: number[] = [];
client.on('ai.tool_use', (e) => useAt.set(e.toolUseId, performance.now()));
client.on('ai.tool_result', (e) => {
  const t0 = useAt.get(e.toolUseId);
  if (t0 !== undefined) viaXo.push(performance.now() - t0);
});
let k = 0;
fake.setFallback((req) => {
  const turns = (req.body.messages ?? []).length;
  // Each run: 20 tool calls, then end.
  return turns < 40 ? { content: [{ type: 'tool_use', id: `toolu_b${k++}`, name: tool, input }] } : { content: [{ type: 'text', text: 'done' }] };
});
await client.call('ai.settings.set', { maxIterations: 200 });
for (let r = 0; r < Math.ceil((N + 50) / 20); r++) {
  const { runId } = await client.call('ai.send', { message: 'read' });
  await new Promise<void>((resolve) => {
    const off = client.on('ai.done', (d) => {
      if (d.runId === runId) {
        off();
        resolve();
      }
    });
  });
}
const xo = stats(viaXo.slice(50));
const dir = stats(direct);
console.log(`tool dispatch (${tool}${sessionId ? ', 50 lines of a local shell' : ', no PTY service on this host'}), n=${viaXo.length - 50}`);
console.log(`  bare router call        p50 ${ms(dir.p50)}  p99 ${ms(dir.p99)}`);
console.log(`  through the XO          p50 ${ms(xo.p50)}  p99 ${ms(xo.p99)}`);
console.log(`  XO dispatch overhead    p50 ${ms(xo.p50 - dir.p50)}`);

// ── 2. time to first token ──────────────────────────────────────────────────────────────
fake.reset();
const script = { content: [{ type: 'text' as const, text: 'Aye, Commander. All stations report ready.' }], chunkSize: 6 };
fake.setFallback(() => script);
const sdk = new Anthropic({ apiKey: 'sk-ant-bench', baseURL: fake.url });
const T = 200;
const sdkTtft: number[] = [];
for (let i = 0; i < T + 20; i++) {
  const t0 = performance.now();
  const stream = sdk.messages.stream({ model: 'claude-sonnet-5-5', max_tokens: 1024, messages: [{ role: 'user', content: 'status' }] });
  await new Promise<void>((resolve) => stream.once('text', () => resolve()));
  if (i >= 20) sdkTtft.push(performance.now() - t0);
  await stream.finalMessage();
}
const appTtft: number[] = [];
for (let i = 0; i < T + 20; i++) {
  const t0 = performance.now();
  let first = 0;
  const off1 = client.on('ai.text', () => {
    if (!first) first = performance.now();
  });
  const { runId } = await client.call('ai.send', { message: 'status' });
  await new Promise<void>((resolve) => {
    const off = client.on('ai.done', (d) => {
      if (d.runId === runId) {
        off();
        resolve();
      }
    });
  });
  off1();
  if (i >= 20) appTtft.push(first - t0);
}
const a = stats(appTtft);
const s = stats(sdkTtft);
console.log(`time to first token (fake API on 127.0.0.1, new conversation each time), n=${T}`);
console.log(`  SDK directly            p50 ${ms(s.p50)}  p99 ${ms(s.p99)}`);
console.log(`  ai.send → first ai.text p50 ${ms(a.p50)}  p99 ${ms(a.p99)}`);
console.log(`  app overhead            p50 ${ms(a.p50 - s.p50)}`);

// ── 3. screenshot tool end to end (real RDP shadow server, if this host has one) ─────────
if (haveRdpServerTools() && app.router.isImplemented('rdp.open')) {
  const rdp = await startRdpServer({ width: 1600, height: 900 });
  try {
    const c = await client.call('connections.create', { name: 'bench-rdp', kind: 'rdp', host: rdp.host, port: rdp.port, rdpOptions: { security: 'tls' } });
    const first = await client.call('rdp.open', { connectionId: c.id }).catch((e: unknown) => e);
    let rdpSession: string;
    if (first instanceof WraithError) {
      await client.call('hostkeys.trust', { kind: 'rdp', host: rdp.host, port: rdp.port, keyType: 'x509', fingerprint: String(first.details?.fingerprint) });
      rdpSession = (await client.call('rdp.open', { connectionId: c.id })).sessionId;
    } else rdpSession = z.object({ sessionId: z.string() }).parse(first).sessionId;
    const bare: number[] = [];
    for (let i = 0; i < 25; i++) {
      const t = performance.now();
      await client.call('rdp.screenshot', { sessionId: rdpSession });
      if (i >= 5) bare.push(performance.now() - t);
    }
    viaXo.length = 0;
    useAt.clear();
    fake.reset();
    let n = 0;
    fake.setFallback((req) =>
      (req.body.messages ?? []).length < 40 ? { content: [{ type: 'tool_use', id: `toolu_shot${n++}`, name: 'rdp_screenshot', input: { sessionId: rdpSession } }] } : { content: [{ type: 'text', text: 'done' }] },
    );
    const { runId } = await client.call('ai.send', { message: 'screenshots' });
    await new Promise<void>((resolve) => {
      const off = client.on('ai.done', (d) => {
        if (d.runId === runId) {
          off();
          resolve();
        }
      });
    });
    const b = stats(bare);
    const x = stats(viaXo.slice(2));
    console.log(`rdp_screenshot end to end (1600x900 desktop → 1280x720 JPEG), n=${viaXo.length - 2}`);
    console.log(`  bare rdp.screenshot     p50 ${ms(b.p50)}  p99 ${ms(b.p99)}`);
    console.log(`  through the XO          p50 ${ms(x.p50)}  p99 ${ms(x.p99)}`);
  } finally {
    await rdp.dispose();
  }
} else console.log('rdp_screenshot: skipped (no RDP test server tools or RDP addon on this host)');

client.close();
await app.dispose();
await fake.stop();
