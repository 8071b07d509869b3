/**
 * The renderer's HostLink over a real WebSocket to a real `wraith serve`, through a forward that
 * can freeze the connection (its bytes stop both ways, nobody closes it): the link notices the
 * host no longer answers, says so, and reconnects once the way is open again. Short intervals here;
 * the page uses WEBSOCKET_HEARTBEAT.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { WebSocket } from 'ws';
import type { Wire } from '../../src-main/common/client.js';
import type { ClientMessage, ServerMessage } from '../../src-main/common/protocol.js';
import { decodeFrame, encodeFrame } from '../../src-main/server/codec.js';
import { connectWebSocket } from '../../src-main/server/ws-client.js';
import { HostLink, type LinkStatus } from '../../src-renderer/transport/host-link.js';
import { until } from '../fixtures/poll.js';
import { type WraithServer, startWraithServer } from '../fixtures/wraith-server.js';
import { type WsCutter, startWsCutter } from '../fixtures/ws-cutter.js';

let host: WraithServer;
let cutter: WsCutter;

beforeAll(async () => {
  host = await startWraithServer();
  cutter = await startWsCutter(Number(new URL(host.url).port));
});
afterAll(async () => {
  await cutter?.close();
  await host?.stop();
});

/**
 * Quicker than the page's, yet with room for a loaded CI machine: what the link hears must stall
 * for `everyMs + timeoutMs` before it gives up. At 150 + 300 ms a busy runner's stall once ended a
 * live link.
 */
const QUICK = { everyMs: 200, timeoutMs: 1200 };

/** A wire as the page's is: close() ends it at once (a browser WebSocket's close does not wait for the peer). */
function openWire(): Promise<Wire> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${cutter.port}/ws`, { headers: { authorization: `Bearer ${host.token}` } });
    ws.binaryType = 'nodebuffer';
    const closers = new Set<(reason: string) => void>();
    let closed = false;
    const finish = (reason: string) => {
      if (closed) return;
      closed = true;
      for (const l of closers) l(reason);
    };
    ws.once('open', () =>
      resolve({
        send: (m: ClientMessage) => ws.readyState === WebSocket.OPEN && ws.send(encodeFrame(m)),
        onMessage: (l) => ws.on('message', (data) => l(decodeFrame(data as Buffer) as ServerMessage)),
        onClose: (l) => closers.add(l),
        close: () => {
          ws.terminate();
          finish('closed by the client');
        },
      }),
    );
    ws.on('close', () => finish('the WebSocket closed'));
    ws.once('error', reject);
  });
}

test('a host gone silent is noticed, and the link comes back once it answers again', async () => {
  const link = new HostLink('websocket', openWire, QUICK);
  const states: LinkStatus['state'][] = [];
  link.onStatus((s) => states.push(s.state));
  let opens = 0;
  link.onOpen(() => opens++);
  try {
    await until('the link open', () => link.current.state === 'open');
    // Answered pings keep it open.
    await new Promise((r) => setTimeout(r, 2000));
    expect(opens).toBe(1);
    expect(link.current.state).toBe('open');

    cutter.freeze();
    // Nothing closed the connection; the heartbeat's missing answer does.
    await until('the silence noticed', () => link.current.state === 'reconnecting', 10_000);
    cutter.restore();
    await until('the link back', () => link.current.state === 'open', 15_000);
    expect(opens).toBe(2);
    expect(await link.call('health.ping')).toEqual({ ok: true });
    expect(states).toContain('reconnecting');
  } finally {
    link.dispose();
  }
});

test('output still arriving counts as an answer, however late the ping reply', async () => {
  // A slow link under a flood: the ping's reply waits behind output. Here the ping never even
  // reaches the host, while a shell's output keeps coming: the link must stay. The output comes
  // less often than `everyMs`, so the link does ask between lines, and no reply ever comes.
  const cli = await connectWebSocket(host.url, host.token);
  const { sessionId } = await cli.call('pty.spawn', { shell: '/bin/sh' });
  const link = new HostLink('websocket', openWire, QUICK);
  let opens = 0;
  link.onOpen(() => opens++);
  try {
    await until('the link open', () => link.current.state === 'open');
    await cli.call('terminal.write', { sessionId, data: 'while :; do echo tick; sleep 0.4; done\n' });
    let ticks = 0;
    link.on('terminal.data', (p) => p.sessionId === sessionId && ticks++);
    await until('output flowing', () => ticks > 1);
    cutter.freezeUpstream();
    const before = ticks;
    await new Promise((r) => setTimeout(r, 3000));
    expect(ticks).toBeGreaterThan(before + 3);
    expect(link.current.state).toBe('open');
    expect(opens).toBe(1);
    // Once nothing comes either, it goes.
    cutter.freeze();
    await until('the silence noticed', () => link.current.state === 'reconnecting', 10_000);
    cutter.restore();
    await until('the link back', () => link.current.state === 'open', 15_000);
  } finally {
    link.dispose();
    await cli.call('sessions.close', { sessionId }).catch(() => undefined);
    cli.close();
  }
});

test('without a heartbeat (the desktop app’s MessagePort) nothing is sent', async () => {
  const sent: string[] = [];
  const link = new HostLink('electron', async () => {
    const wire = await openWire();
    return { ...wire, send: (m: ClientMessage) => (sent.push(m.t === 'call' ? m.method : m.t), wire.send(m)) };
  });
  try {
    await until('the link open', () => link.current.state === 'open');
    await new Promise((r) => setTimeout(r, 500));
    expect(sent).toEqual(['subscribe']);
  } finally {
    link.dispose();
  }
});
