/**
 * The XO on a real RDP desktop (FreeRDP shadow server on Xvfb): a screenshot goes to the model
 * as an image block of the right size, and a click at screenshot pixels lands where xdotool says.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ContractClient } from '../../src-main/common/client.js';
import { WraithError } from '../../src-main/common/errors.js';
import { App } from '../../src-main/node/app.js';
import { connectInProcess } from '../../src-main/node/in-process.js';
import { type FakeAnthropic, startFakeAnthropic } from '../fixtures/fake-anthropic.js';
import { type RdpTestServer, startRdpServer } from '../fixtures/rdp-server.js';
import { EventLog, lastToolResult, toolResults } from './ai-helpers.js';

describe('XO on an RDP desktop', () => {
  let fake: FakeAnthropic;
  let server: RdpTestServer;
  let app: App;
  let client: ContractClient;
  let log: EventLog;
  let sessionId: string;

  beforeAll(async () => {
    fake = await startFakeAnthropic();
    process.env.ANTHROPIC_BASE_URL = fake.url;
    process.env.ANTHROPIC_API_KEY = 'sk-ant-test-rdp';
    server = await startRdpServer({ width: 1600, height: 900 });
    app = new App({ dataDir: mkdtempSync(join(tmpdir(), 'wraith-ai-rdp-')), host: 'in-process' });
    client = connectInProcess(app);
    client.subscribe(['ai.']);
    log = new EventLog(client);
    const c = await client.call('connections.create', { name: 'dc01', kind: 'rdp', host: server.host, port: server.port, rdpOptions: { security: 'tls' } });
    const first = await client.call('rdp.open', { connectionId: c.id }).catch((e: unknown) => e);
    if (first instanceof WraithError) {
      await client.call('hostkeys.trust', { kind: 'rdp', host: server.host, port: server.port, keyType: 'x509', fingerprint: String(first.details?.fingerprint) });
      sessionId = (await client.call('rdp.open', { connectionId: c.id })).sessionId;
    } else if (first && typeof first === 'object' && 'sessionId' in first && typeof first.sessionId === 'string') {
      sessionId = first.sessionId;
    }
  });
  afterAll(async () => {
    client?.close();
    await app?.dispose();
    await server?.dispose();
    await fake?.stop();
  });

  it('sends a screenshot as an image block of the right size, then clicks where the model points', async () => {
    await client.call('ai.mode.set', { mode: 'auto' });
    fake.enqueue(
      { content: [{ type: 'tool_use', id: 'toolu_shot', name: 'rdp_screenshot', input: { sessionId } }] },
      // The model clicks (400, 300) of the 1280x720 screenshot: (500, 375) on the 1600x900 desktop.
      { content: [{ type: 'tool_use', id: 'toolu_click', name: 'rdp_click', input: { sessionId, x: 400, y: 300 } }] },
      { content: [{ type: 'tool_use', id: 'toolu_out', name: 'rdp_click', input: { sessionId, x: 1300, y: 10 } }] },
      { content: [{ type: 'text', text: 'Clicked, Commander.' }] },
    );
    const { runId } = await client.call('ai.send', { message: 'Click the middle-left of dc01', sessionId });
    const done = await log.wait('ai.done', (d) => d.runId === runId, 30_000);
    expect(done.stopReason).toBe('end_turn');

    const shot = lastToolResult(fake.requests[1]);
    expect(shot?.isError).toBe(false);
    expect(shot?.images).toHaveLength(1);
    expect(shot?.images[0]?.media_type).toBe('image/jpeg');
    const meta = await sharp(Buffer.from(shot?.images[0]?.data ?? '', 'base64')).metadata();
    expect([meta.width, meta.height]).toEqual([1280, 720]);
    expect(shot?.text).toContain('<untrusted-output session="dc01 (RDP)" source="screenshot">');
    expect(shot?.text).toContain('1280x720');

    expect(lastToolResult(fake.requests[2])?.text).toContain('desktop (500, 375)');
    await expect.poll(() => server.mouseLocation(), { timeout: 5000 }).toEqual({ x: 500, y: 375 });

    // Outside the screenshot: refused with a message the model can use, nothing clicked.
    const out = lastToolResult(fake.requests[3]);
    expect(out?.isError).toBe(true);
    expect(out?.text).toContain('outside the screenshot (1280x720)');
    const tr = log.of('ai.tool_result').find((t) => t.toolUseId === 'toolu_shot');
    expect(tr?.image?.width).toBe(1280);
  });

  it('keeps only the last screenshots in the context', async () => {
    await client.call('ai.settings.set', { keepScreenshots: 1 });
    fake.reset();
    fake.enqueue(
      { content: [{ type: 'tool_use', id: 'toolu_s1', name: 'rdp_screenshot', input: { sessionId } }] },
      { content: [{ type: 'tool_use', id: 'toolu_s2', name: 'rdp_screenshot', input: { sessionId } }] },
      { content: [{ type: 'text', text: 'ok' }] },
    );
    const { runId } = await client.call('ai.send', { message: 'two screenshots' });
    await log.wait('ai.done', (d) => d.runId === runId, 30_000);
    const results = toolResults(fake.requests[2]?.body ?? {});
    const s1 = results.find((r) => r.id === 'toolu_s1');
    const s2 = results.find((r) => r.id === 'toolu_s2');
    expect(s1?.images).toHaveLength(0);
    expect(s1?.text).toContain('Older screenshot omitted');
    expect(s2?.images).toHaveLength(1);
  });
});
