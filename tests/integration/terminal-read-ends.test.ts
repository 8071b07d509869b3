/**
 * terminal.read's `ends` against a real sshd: where a session's connection dropped is kept beside
 * its output (never in it), so a view reading the output back can say so where it happened.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { ContractClient } from '../../src-main/common/client.js';
import { App } from '../../src-main/node/app.js';
import { connectInProcess } from '../../src-main/node/in-process.js';
import { type SshdHandle, savePasswordConnection, startSshd } from '../fixtures/sshd.js';
import { until } from '../fixtures/poll.js';

let sshd: SshdHandle;
let app: App;
let client: ContractClient;
let dataDir: string;
let connectionId: string;

beforeAll(async () => {
  sshd = await startSshd();
  dataDir = mkdtempSync(join(tmpdir(), 'wraith-read-ends-'));
  app = new App({ dataDir, host: 'in-process' });
  client = connectInProcess(app);
  connectionId = (await savePasswordConnection(client, sshd, 'web01')).id;
});

afterAll(async () => {
  client?.close();
  await app?.dispose();
  await sshd?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const state = async (sessionId: string) => (await client.call('sessions.list')).find((s) => s.id === sessionId)?.state;
const read = (sessionId: string, more: { sinceSeq?: number; maxBytes?: number; stripAnsi?: boolean } = {}) =>
  client.call('terminal.read', { sessionId, maxBytes: 1024 * 1024, ...more });

test('a dropped connection is an end where its output stopped, with when and why; a reconnect goes on after it', async () => {
  const { sessionId } = await client.call('ssh.open', { connectionId, cols: 100, rows: 30 });
  await client.call('terminal.write', { sessionId, data: 'echo "before-$((6*7))"\n' });
  await until('before-42', async () => (await read(sessionId, { stripAnsi: true })).text.includes('\nbefore-42'));
  expect((await read(sessionId)).ends).toEqual([]);

  const droppedAfter = Date.now();
  sshd.dropConnections();
  await until('the session disconnected', async () => (await state(sessionId)) === 'disconnected');
  const over = await read(sessionId);
  expect(over.closed).toBe(true);
  const [end] = over.ends;
  if (!end) throw new Error('no end kept');
  expect(end).toMatchObject({ seq: over.nextSeq, index: over.text.length });
  expect(end.reason).toMatch(/^Connection to web01 lost/);
  expect(Date.parse(end.at)).toBeGreaterThanOrEqual(droppedAfter - 1000);
  expect(Date.parse(end.at)).toBeLessThanOrEqual(Date.now());
  // Kept beside the output, not in it.
  expect(over.text).not.toContain('lost');

  await client.call('ssh.reconnect', { sessionId });
  await client.call('terminal.write', { sessionId, data: 'echo "after-$((6*7))"\n' });
  await until('after-42', async () => (await read(sessionId, { stripAnsi: true })).text.includes('\nafter-42'));

  // The end falls between the two outputs, in the raw text and the stripped one alike.
  for (const stripAnsi of [false, true]) {
    const r = await read(sessionId, { stripAnsi });
    expect(r.closed).toBe(false);
    expect(r.ends).toEqual([{ ...end, index: r.ends[0]?.index }]);
    const at = r.ends[0]?.index ?? -1;
    expect(r.text.slice(0, at)).toContain('before-42');
    expect(r.text.slice(0, at)).not.toContain('after-42');
    expect(r.text.slice(at)).toContain('after-42');
  }
  // Exact where the text is raw: the bytes before it are the output up to its seq.
  const raw = await read(sessionId);
  const upTo = await read(sessionId, { sinceSeq: 0, maxBytes: end.seq });
  expect(raw.text.slice(0, raw.ends[0]?.index)).toBe(upTo.text);

  // A read from its seq on has it no more (the read that ended there had it); one from before does.
  expect((await read(sessionId, { sinceSeq: end.seq })).ends).toEqual([]);
  expect((await read(sessionId, { sinceSeq: end.seq - 1 })).ends).toEqual([{ ...end, index: 1 }]);
  // A read that stops at it has it, at its end.
  const stopping = await read(sessionId, { sinceSeq: end.seq - 5, maxBytes: 5 });
  expect(stopping.ends).toEqual([{ ...end, index: 5 }]);
  expect(stopping.truncated).toBe(true);
  await client.call('sessions.close', { sessionId });
});
