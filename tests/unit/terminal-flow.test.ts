import { expect, test } from 'vitest';
import type { SessionInfo } from '../../src-main/common/contract/sessions.js';
import { type EventPayload, events as contractEvents } from '../../src-main/common/contract/index.js';
import { EventBus } from '../../src-main/node/router.js';
import { type FlowControlOptions, type TerminalCwd, TerminalSession } from '../../src-main/node/terminal/terminal-session.js';

/** A terminal whose source is this test: it records pause/resume and feeds output by hand. */
class ScriptedTerminal extends TerminalSession {
  readonly calls: string[] = [];
  constructor(bus: EventBus, flow: Partial<FlowControlOptions>) {
    super('t1', bus, { cols: 80, rows: 24, ringBufferBytes: 64 * 1024, flow });
    this.attachSource({
      write: (d) => this.calls.push(`write:${d.toString()}`),
      resize: (c, r) => this.calls.push(`resize:${c}x${r}`),
      pause: () => this.calls.push('pause'),
      resume: () => this.calls.push('resume'),
    });
  }
  feed(bytes: number): void {
    this.output(Buffer.alloc(bytes, 0x79));
  }
  info(): SessionInfo {
    return { id: this.id, kind: 'pty', title: 't', connectionId: null, state: 'open', reason: null, createdAt: '' };
  }
  async close(): Promise<void> {
    this.disposeTerminal();
  }
  async cwd(): Promise<TerminalCwd> {
    return { cwd: null, source: 'unknown' };
  }
}

function setup(flow: Partial<FlowControlOptions> = {}) {
  const bus = new EventBus();
  const events: EventPayload<'terminal.data'>[] = [];
  bus.subscribe((name, payload) => {
    if (name === 'terminal.data') events.push(contractEvents['terminal.data'].payload.parse(payload));
  });
  const t = new ScriptedTerminal(bus, { highWatermark: 1000, lowWatermark: 200, batchBytes: 400, stallMs: 60_000, ...flow });
  return { t, events };
}

const tick = () => new Promise((r) => setImmediate(r));

test('small reads are coalesced into one event per tick; a full batch goes at once', async () => {
  const { t, events } = setup();
  for (let i = 0; i < 10; i++) t.feed(10);
  expect(events).toHaveLength(0);
  await tick();
  expect(events).toHaveLength(1);
  expect(events[0]).toMatchObject({ seq: 0 });
  expect(events[0]?.data.length).toBe(100);
  t.feed(500); // over batchBytes: emitted immediately
  expect(events).toHaveLength(2);
  expect(events[1]?.seq).toBe(100);
  await t.close();
});

test('without acks (CLI, XO) the source is never paused', async () => {
  const { t } = setup();
  for (let i = 0; i < 50; i++) t.feed(400);
  await tick();
  expect(t.calls).not.toContain('pause');
  expect(t.flow).toMatchObject({ armed: false, paused: false });
  await t.close();
});

test('armed by the first ack: pauses above the high watermark, resumes below the low one', async () => {
  const { t } = setup();
  t.feed(400);
  t.ack(0); // a view attached; the 400 bytes before are not owed
  expect(t.flow).toMatchObject({ armed: true, unacked: 0 });
  t.feed(400);
  t.feed(400);
  expect(t.calls).not.toContain('pause');
  t.feed(400); // 1200 unacked > 1000
  expect(t.calls).toEqual(['pause']);
  t.ack(600); // 600 left: still above the low watermark
  expect(t.flow.paused).toBe(true);
  t.ack(500); // 100 left
  expect(t.calls).toEqual(['pause', 'resume']);
  expect(t.flow).toMatchObject({ paused: false, unacked: 100 });
  await t.close();
});

test('a view that vanishes does not stall the session: after stallMs without acks it resumes and disarms', async () => {
  const { t } = setup({ stallMs: 50 });
  t.ack(0);
  for (let i = 0; i < 3; i++) t.feed(400);
  expect(t.flow.paused).toBe(true);
  await new Promise((r) => setTimeout(r, 120));
  expect(t.calls).toEqual(['pause', 'resume']);
  expect(t.flow).toMatchObject({ armed: false, paused: false });
  await t.close();
});

test('write and resize reach the source; strings are sent as UTF-8', async () => {
  const { t } = setup();
  t.write('é\n');
  t.write(new Uint8Array([0x6c, 0x73]));
  t.resize(100, 30);
  expect(t.calls).toEqual(['write:é\n', 'write:ls', 'resize:100x30']);
  expect([t.cols, t.rows]).toEqual([100, 30]);
  await t.close();
});
