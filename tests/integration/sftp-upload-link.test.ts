/**
 * Uploads from a browser through `wraith serve`: sftp.uploadLink gives a one-time URL, and the
 * whole file goes as one PUT body (a real wraith serve process and a real sshd, sent over HTTP
 * as a browser sends a File, with the token cookie). Same bytes; once only; cookie, method and
 * origin checked; a body of the wrong length or a cancel leaves nothing on the server; a body cut
 * off resumes over a new link from what the host has, and a new link ends a body still coming
 * (what that body delivered after the link was given is not written twice).
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ContractClient } from '../../src-main/common/client.js';
import type { WraithServer } from '../fixtures/wraith-server.js';
import { type ServedSession, startServedSession } from '../fixtures/served-session.js';
import { failure } from '../fixtures/errors.js';
import { connectAsPage } from '../fixtures/page-client.js';

let served: ServedSession;
let host: WraithServer;
let client: ContractClient;
let sessionId: string;
let dir: string;
const MB = 1024 * 1024;

beforeAll(async () => {
  served = await startServedSession('ul-link');
  ({ host, client, sessionId, dir } = served);
}, 60_000);

afterAll(async () => {
  await served?.stop();
});

const headers = () => ({ cookie: host.tokenCookie, 'content-type': 'application/octet-stream' });
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const leftovers = () => readdirSync(dir).filter((n) => n.includes('wraith-part'));
const transfer = async (id: string) => (await client.call('sftp.transfers', { sessionId })).find((t) => t.transferId === id);

describe('sftp.uploadLink', () => {
  test('a file PUT to its link lands whole under its name, and the answer says how much was written', async () => {
    const data = randomBytes(50 * MB + 12345);
    const remotePath = `${dir}/put.bin`;
    const { transferId } = await client.call('sftp.uploadBegin', { sessionId, remotePath, size: data.length });
    const { url } = await client.call('sftp.uploadLink', { transferId });
    expect(url).toMatch(/^\/upload\/[\w-]{20,}$/);
    const res = await fetch(host.url + url, { method: 'PUT', body: data, headers: headers() });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ bytes: data.length });
    const entry = await client.call('sftp.uploadEnd', { transferId });
    expect(entry).toMatchObject({ path: remotePath, size: data.length });
    expect(sha(readFileSync(remotePath))).toBe(sha(data));
    expect(await transfer(transferId)).toMatchObject({ state: 'done', bytes: data.length, direction: 'upload' });
    expect(leftovers()).toEqual([]);
  });

  test('a link works once, needs the cookie and PUT; the bytes of an upload come one way only', async () => {
    const { transferId } = await client.call('sftp.uploadBegin', { sessionId, remotePath: `${dir}/once.txt`, size: 5 });
    const { url } = await client.call('sftp.uploadLink', { transferId });
    expect((await fetch(host.url + url, { method: 'PUT', body: 'hello' })).status).toBe(401);
    expect((await fetch(host.url + url, { headers: { cookie: host.tokenCookie } })).status).toBe(405);
    expect((await fetch(host.url + url, { method: 'PUT', body: 'hello', headers: { ...headers(), origin: 'http://evil.example' } })).status).toBe(403);
    expect((await fetch(host.url + url, { method: 'PUT', body: 'hello', headers: headers() })).status).toBe(200);
    const again = await fetch(host.url + url, { method: 'PUT', body: 'hello', headers: headers() });
    expect(again.status).toBe(404);
    expect(await again.text()).toContain('used already');
    await client.call('sftp.uploadEnd', { transferId });
    expect(readFileSync(`${dir}/once.txt`, 'utf8')).toBe('hello');

    const chunked = await client.call('sftp.uploadBegin', { sessionId, remotePath: `${dir}/chunked.txt` });
    await client.call('sftp.uploadChunk', { transferId: chunked.transferId, offset: 0, data: new Uint8Array(3) });
    const mixed = await failure(client.call('sftp.uploadLink', { transferId: chunked.transferId }));
    expect(mixed.code).toBe('EBADARGS');
    expect(mixed.message).toContain('one way only');
    await client.call('sftp.cancel', { transferId: chunked.transferId });
    expect((await fetch(`${host.url}/upload/no-such-ticket`, { method: 'PUT', body: 'x', headers: headers() })).status).toBe(404);
    expect(leftovers()).toEqual([]);
  });

  test('a body shorter than announced fails at uploadEnd, and nothing is left on the server', async () => {
    const { transferId } = await client.call('sftp.uploadBegin', { sessionId, remotePath: `${dir}/short.bin`, size: 3 * MB });
    const { url } = await client.call('sftp.uploadLink', { transferId });
    expect((await fetch(host.url + url, { method: 'PUT', body: randomBytes(2 * MB), headers: headers() })).status).toBe(200);
    const err = await failure(client.call('sftp.uploadEnd', { transferId }));
    expect(err.code).toBe('EBADARGS');
    expect(err.message).toContain('announced 3145728 bytes but received 2097152');
    expect(readdirSync(dir)).not.toContain('short.bin');
    expect(leftovers()).toEqual([]);
  });

  test('a cancel while the body is coming answers ECANCELLED and leaves no temp file', async () => {
    const { transferId } = await client.call('sftp.uploadBegin', { sessionId, remotePath: `${dir}/cancelled.bin`, size: 200 * MB });
    const { url } = await client.call('sftp.uploadLink', { transferId });
    // A body that comes slowly, 1 MiB at a time, as from a distant browser; it never ends by itself.
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(c) {
        await new Promise((r) => setTimeout(r, 20));
        sent += MB;
        c.enqueue(new Uint8Array(MB));
      },
    });
    const answer = fetch(host.url + url, { method: 'PUT', body, headers: headers(), duplex: 'half' } as RequestInit);
    await expect.poll(async () => (await transfer(transferId))?.bytes ?? 0, { timeout: 20_000 }).toBeGreaterThan(2 * MB);
    await client.call('sftp.cancel', { transferId });
    const res = await answer;
    expect(res.status).toBe(409);
    expect(await res.json()).toMatchObject({ code: 'ECANCELLED' });
    expect(sent).toBeLessThan(200 * MB);
    expect((await transfer(transferId))?.state).toBe('cancelled');
    expect(readdirSync(dir)).not.toContain('cancelled.bin');
    expect(leftovers()).toEqual([]);
  });

  /**
   * A PUT whose body is `data` from `from`, 1 MiB every 10 ms while `flowing(bytes sent so far)`;
   * its fetch and how much it sent. A body held below its length stays open: on a loaded machine
   * a client can send all of a fast body before the host has written a few MiB of it.
   */
  function slowPut(url: string, data: Buffer, from: number, opts: { flowing: (sent: number) => boolean; signal?: AbortSignal }) {
    let at = from;
    let gone = false;
    const body = new ReadableStream<Uint8Array>({
      async pull(c) {
        while (!opts.flowing(at - from) && !gone) await new Promise((r) => setTimeout(r, 10));
        await new Promise((r) => setTimeout(r, 10));
        if (gone) return;
        if (at >= data.length) return c.close();
        c.enqueue(new Uint8Array(data.subarray(at, Math.min(data.length, at + MB))));
        at += MB;
      },
      cancel() {
        gone = true;
      },
    });
    const answer = fetch(host.url + url, { method: 'PUT', body, headers: headers(), duplex: 'half', signal: opts.signal } as RequestInit);
    answer.catch(() => undefined);
    return { answer, sent: () => at - from };
  }

  test('a body cut off goes on over a new link, from the bytes the host has', async () => {
    const data = randomBytes(24 * MB + 777);
    const remotePath = `${dir}/resumed.bin`;
    const { transferId } = await client.call('sftp.uploadBegin', { sessionId, remotePath, size: data.length });
    const first = await client.call('sftp.uploadLink', { transferId });
    expect(first.offset).toBe(0);
    const cut = new AbortController();
    const put = slowPut(first.url, data, 0, { flowing: () => true, signal: cut.signal });
    await expect.poll(async () => (await transfer(transferId))?.bytes ?? 0, { timeout: 20_000 }).toBeGreaterThan(4 * MB);
    cut.abort(); // the network dropped mid-body
    await expect(put.answer).rejects.toThrow();
    // What the host took whole is kept; the rest comes again, from there.
    const again = await client.call('sftp.uploadLink', { transferId });
    expect(again.offset).toBeGreaterThan(0);
    expect(again.offset).toBeLessThanOrEqual(put.sent());
    const res = await fetch(host.url + again.url, { method: 'PUT', body: data.subarray(again.offset), headers: headers() });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ bytes: data.length });
    await client.call('sftp.uploadEnd', { transferId });
    expect(sha(readFileSync(remotePath))).toBe(sha(data));
    expect(leftovers()).toEqual([]);
  });

  test('a new link ends the body the host still reads (a page that saw it cut off, a host that did not)', async () => {
    const data = randomBytes(16 * MB + 5);
    const remotePath = `${dir}/taken-over.bin`;
    const { transferId } = await client.call('sftp.uploadBegin', { sessionId, remotePath, size: data.length });
    const first = await client.call('sftp.uploadLink', { transferId });
    let flowing = true;
    const stale = slowPut(first.url, data, 0, { flowing: (sent) => flowing && sent < 8 * MB });
    await expect.poll(async () => (await transfer(transferId))?.bytes ?? 0, { timeout: 20_000 }).toBeGreaterThan(3 * MB);
    // The old body stops coming but stays open, as over a connection that died on the page's side only.
    flowing = false;
    await new Promise((r) => setTimeout(r, 300));
    const next = await client.call('sftp.uploadLink', { transferId });
    const res = await fetch(host.url + next.url, { method: 'PUT', body: data.subarray(next.offset), headers: headers() });
    expect(res.status).toBe(200);
    // The host hung up on the old body when the new link was claimed.
    await expect(stale.answer).rejects.toThrow();
    await client.call('sftp.uploadEnd', { transferId });
    expect(sha(readFileSync(remotePath))).toBe(sha(data));
    expect(leftovers()).toEqual([]);
  });

  test('a page closed or reloaded while its body comes ends the upload at once, failed, saying so, and leaves nothing', async () => {
    const page = await connectAsPage(host.url, host.token);
    const data = randomBytes(24 * MB);
    const remotePath = `${dir}/page-left.bin`;
    const { transferId } = await page.client.call('sftp.uploadBegin', { sessionId, remotePath, size: data.length });
    const link = await page.client.call('sftp.uploadLink', { transferId });
    const cut = new AbortController();
    const put = slowPut(link.url, data, 0, { flowing: (sent) => sent < 8 * MB, signal: cut.signal });
    await expect.poll(async () => (await transfer(transferId))?.bytes ?? 0, { timeout: 20_000 }).toBeGreaterThan(4 * MB);
    // The page goes: its WebSocket says "going away", and its PUT is cut off with it, as Chromium does on a reload.
    page.leave();
    cut.abort();
    await expect(put.answer).rejects.toThrow();
    // Failed long before the 5 minutes of its idle end, and not "cancelled": nobody cancelled it.
    await expect.poll(async () => (await transfer(transferId))?.state, { timeout: 20_000 }).toBe('failed');
    expect((await transfer(transferId))?.error).toEqual({
      code: 'EIO',
      reason: 'page_left',
      message: expect.stringMatching(/^The page sending page-left\.bin was closed or reloaded at [\d.]+ MB of 24 MB; nothing was left behind\.$/),
    });
    expect(readdirSync(dir)).not.toContain('page-left.bin');
    expect(leftovers()).toEqual([]);
  });

  test('a page whose connection dropped (not closed) goes on with its upload over a new one, from what the host has', async () => {
    const page = await connectAsPage(host.url, host.token);
    const data = randomBytes(20 * MB + 3);
    const remotePath = `${dir}/dropped-page.bin`;
    const { transferId } = await page.client.call('sftp.uploadBegin', { sessionId, remotePath, size: data.length });
    const link = await page.client.call('sftp.uploadLink', { transferId });
    const cut = new AbortController();
    const put = slowPut(link.url, data, 0, { flowing: (sent) => sent < 8 * MB, signal: cut.signal });
    await expect.poll(async () => (await transfer(transferId))?.bytes ?? 0, { timeout: 20_000 }).toBeGreaterThan(4 * MB);
    page.drop();
    cut.abort();
    await expect(put.answer).rejects.toThrow();
    const back = await connectAsPage(host.url, host.token);
    const again = await back.client.call('sftp.uploadLink', { transferId });
    const res = await fetch(host.url + again.url, { method: 'PUT', body: data.subarray(again.offset), headers: headers() });
    expect(res.status).toBe(200);
    await back.client.call('sftp.uploadEnd', { transferId });
    expect(sha(readFileSync(remotePath))).toBe(sha(data));
    expect(leftovers()).toEqual([]);
    back.client.close();
  });

  test('bytes an old body still delivered after the new link was given are not sent twice', async () => {
    const data = randomBytes(16 * MB + 9);
    const remotePath = `${dir}/overtaken.bin`;
    const { transferId } = await client.call('sftp.uploadBegin', { sessionId, remotePath, size: data.length });
    const first = await client.call('sftp.uploadLink', { transferId });
    // The old body sends up to `cap` and then holds, open: it never ends on its own.
    let cap = 4 * MB;
    const stale = slowPut(first.url, data, 0, { flowing: (sent) => sent < cap });
    await expect.poll(async () => (await transfer(transferId))?.bytes ?? 0, { timeout: 20_000 }).toBeGreaterThanOrEqual(3 * MB);
    // The page asks for a new link; the old body, alive on the host's side, goes on delivering.
    const next = await client.call('sftp.uploadLink', { transferId });
    cap = next.offset + 3 * MB;
    await expect.poll(async () => (await transfer(transferId))?.bytes ?? 0, { timeout: 20_000 }).toBeGreaterThan(next.offset + MB);
    // The page sends from the offset its link gave: the host already has the head of this body.
    const res = await fetch(host.url + next.url, { method: 'PUT', body: data.subarray(next.offset), headers: headers() });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ bytes: data.length });
    await expect(stale.answer).rejects.toThrow();
    await client.call('sftp.uploadEnd', { transferId });
    expect(sha(readFileSync(remotePath))).toBe(sha(data));
    expect(leftovers()).toEqual([]);
  });
});
