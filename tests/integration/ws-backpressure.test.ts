/**
 * A client that stops reading must not make the host buffer without bound: a paused WebSocket
 * subscribed to terminal output while a local shell runs `yes` (nobody acks, so the PTY runs
 * at full speed).
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { WebSocket } from 'ws';
import type { ContractClient } from '../../src-main/common/client.js';
import { encodeFrame } from '../../src-main/server/codec.js';
import { connectWebSocket } from '../../src-main/server/ws-client.js';
import { type WraithServer, startWraithServer } from '../fixtures/wraith-server.js';

let host: WraithServer;
let client: ContractClient;

beforeAll(async () => {
  host = await startWraithServer();
  client = await connectWebSocket(host.url, host.token);
});
afterAll(async () => {
  client?.close();
  await host?.stop();
});

const rssMiB = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

test('a paused subscriber does not grow host memory while a shell floods output', async () => {
  const pid = host.process.pid ?? 0;
  const stalled = new WebSocket(host.url.replace('http', 'ws') + '/ws', { headers: { authorization: `Bearer ${host.token}` } });
  await new Promise((r) => stalled.once('open', r));
  stalled.send(encodeFrame({ t: 'subscribe', prefixes: ['terminal.'] }));
  // Stop reading: the host's send buffer for this socket can only grow.
  (stalled as unknown as { _socket: { pause(): void } })._socket.pause();

  const [shell] = await client.call('pty.shells');
  const { sessionId } = await client.call('pty.spawn', { shell: shell?.path ?? '/bin/sh', cols: 80, rows: 24 });
  const before = rssMiB(pid);
  await client.call('terminal.write', { sessionId, data: 'yes wraith-flood-line\r' });
  let produced = 0;
  // Until the shell has produced 20x the high-water mark (bounded: 60 s).
  for (let i = 0; i < 120 && produced < 160 * 1024 * 1024; i++) {
    await new Promise((r) => setTimeout(r, 500));
    produced = (await client.call('terminal.read', { sessionId, maxBytes: 1 })).nextSeq;
  }
  const after = rssMiB(pid);
  await client.call('terminal.write', { sessionId, data: '\x03' });
  await client.call('sessions.close', { sessionId });
  stalled.terminate();
  // The shell really produced far more than we allow to pile up…
  expect(produced).toBeGreaterThanOrEqual(160 * 1024 * 1024);
  // …and kept at most its high-water mark (8 MiB) plus working memory and garbage
  // (without the limit the same run grew by more than 300 MiB).
  expect(after - before).toBeLessThan(96);
}, 90_000);
