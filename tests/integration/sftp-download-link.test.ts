/**
 * Downloads to a browser through `wraith serve`: sftp.downloadLink gives a one-time URL whose
 * response streams the remote file as it is read (a real wraith serve process and a real sshd,
 * fetched over HTTP as a browser would, with the token cookie). Same bytes; once only; the token
 * is required; a reader that stops holds the host back (back pressure, not buffering); a cancel
 * from either side ends the other. A folder comes as a zip, read back with yauzl and tested with
 * `unzip -t` and Python's zipfile; one of 1,200 files comes with every byte its Content-Length says.
 */
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ContractClient } from '../../src-main/common/client.js';
import { attachment } from '../../src-main/server/ws-server.js';
import type { WraithServer } from '../fixtures/wraith-server.js';
import { type ServedSession, startServedSession } from '../fixtures/served-session.js';
import { failure } from '../fixtures/errors.js';
import { readZip } from '../fixtures/zip.js';

let served: ServedSession;
let host: WraithServer;
let client: ContractClient;
let sessionId: string;
let dir: string;
const MB = 1024 * 1024;

beforeAll(async () => {
  served = await startServedSession('dl-link');
  ({ host, client, sessionId, dir } = served);
  const u = served.sshd.users.password;
  execFileSync('sh', ['-c', `head -c ${50 * MB} /dev/urandom > ${dir}/big.bin && head -c ${400 * MB} /dev/zero > ${dir}/huge.bin && chown -R ${u.username} ${dir}`]);
}, 60_000);

afterAll(async () => {
  await served?.stop();
});

const cookie = () => ({ cookie: host.tokenCookie });

/**
 * GETs a link with Node's own HTTP client, as curl would: the body as it arrived, the length its
 * headers announced, and whether the response ended whole (`complete`: false when it was cut off).
 */
function httpGet(url: string): Promise<{ status: number; announced: number; body: Buffer; complete: boolean }> {
  return new Promise((resolve, reject) => {
    get(url, { headers: cookie() }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', () => undefined); // "aborted": told by `complete`
      res.on('close', () => resolve({ status: res.statusCode ?? 0, announced: Number(res.headers['content-length']), body: Buffer.concat(chunks), complete: res.complete }));
    }).on('error', reject);
  });
}

/** Tests a zip with Info-ZIP's `unzip -t` and Python's `zipfile -t`, the readers people have: each throws on a damaged zip. */
function testZipWithTools(zip: Buffer): void {
  const tmp = mkdtempSync(join(tmpdir(), 'wraith-zip-'));
  try {
    const file = join(tmp, 'test.zip');
    writeFileSync(file, zip);
    expect(execFileSync('unzip', ['-t', file], { encoding: 'utf8' })).toMatch(/No errors detected/);
    execFileSync('python3', ['-m', 'zipfile', '-t', file]);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

const transfer = async (id: string) => (await client.call('sftp.transfers', { sessionId })).find((t) => t.transferId === id);

/**
 * Fetches a link, reads 4 MiB and stops: the host may fill socket buffers and its few requests in
 * flight, then must wait (under 64 MiB sent of hundreds). Then cancels, and the response must end
 * without its last bytes, which a browser marks as a failed download.
 */
async function stopThenCancel(link: { transferId: string; url: string; size: number }): Promise<void> {
  const res = await fetch(host.url + link.url, { headers: cookie() });
  const reader = res.body?.getReader();
  if (!reader) throw new Error('no body');
  let got = 0;
  while (got < 4 * MB) got += (await reader.read()).value?.byteLength ?? 0;
  let sent = 0;
  for (let i = 0; i < 10; i++) {
    await new Promise((r) => setTimeout(r, 200));
    const now = (await transfer(link.transferId))?.bytes ?? 0;
    if (now === sent && i > 2) break;
    sent = now;
  }
  expect((await transfer(link.transferId))?.state).toBe('running');
  expect(sent).toBeLessThan(64 * MB);

  await client.call('sftp.cancel', { transferId: link.transferId });
  expect((await transfer(link.transferId))?.state).toBe('cancelled');
  let cut = false;
  try {
    for (let r = await reader.read(); !r.done; r = await reader.read()) got += r.value.byteLength;
  } catch {
    cut = true;
  }
  expect(cut || got < link.size).toBe(true);
  expect(got).toBeLessThan(link.size);
}


describe('sftp.downloadLink', () => {
  test('streams 50 MB with the same bytes, as an attachment, once', async () => {
    const link = await client.call('sftp.downloadLink', { sessionId, remotePath: `${dir}/big.bin` });
    expect(link.size).toBe(50 * MB);
    expect(link.url).toMatch(/^\/download\/[\w-]+\/big\.bin$/);

    const res = await fetch(host.url + link.url, { headers: cookie() });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBe(String(50 * MB));
    expect(res.headers.get('content-disposition')).toContain('filename="big.bin"');
    const hash = createHash('sha256');
    const reader = res.body?.getReader();
    for (let r = await reader?.read(); r && !r.done; r = await reader?.read()) hash.update(r.value);
    const remote = execFileSync('sha256sum', [`${dir}/big.bin`], { encoding: 'utf8' }).split(' ')[0];
    expect(hash.digest('hex')).toBe(remote);
    await expect.poll(async () => (await transfer(link.transferId))?.state).toBe('done');
    expect(await transfer(link.transferId)).toMatchObject({ bytes: 50 * MB, totalBytes: 50 * MB, filesDone: 1, localPath: null });

    // Used up: the same link again is refused with a reason.
    const again = await fetch(host.url + link.url, { headers: cookie() });
    expect(again.status).toBe(404);
    expect(await again.text()).toMatch(/used already or has expired/);
  });

  test("a file of /proc, which says it is empty and is not, comes whole with its length; an empty file comes empty", async () => {
    // The sshd runs on this machine: its /proc/version is ours.
    const want = readFileSync('/proc/version');
    const link = await client.call('sftp.downloadLink', { sessionId, remotePath: '/proc/version' });
    expect(link.size).toBe(want.length);
    const res = await fetch(host.url + link.url, { headers: cookie() });
    expect(res.headers.get('content-length')).toBe(String(want.length));
    expect(Buffer.from(await res.arrayBuffer())).toEqual(want);
    await expect.poll(async () => (await transfer(link.transferId))?.state).toBe('done');
    expect(await transfer(link.transferId)).toMatchObject({ bytes: want.length, totalBytes: want.length, filesDone: 1 });

    const endless = await failure(client.call('sftp.downloadLink', { sessionId, remotePath: '/proc/kmsg' }));
    expect([endless.code, endless.message.includes('never ends')]).toEqual(['EBADARGS', true]);

    execFileSync('sh', ['-c', `: > ${dir}/empty.txt`]);
    const empty = await client.call('sftp.downloadLink', { sessionId, remotePath: `${dir}/empty.txt` });
    expect(empty.size).toBe(0);
    const none = await fetch(host.url + empty.url, { headers: cookie() });
    expect([none.status, (await none.arrayBuffer()).byteLength]).toEqual([200, 0]);
    await expect.poll(async () => (await transfer(empty.transferId))?.state).toBe('done');
  });

  test('needs the token, and refuses special files and missing files with plain errors', async () => {
    const link = await client.call('sftp.downloadLink', { sessionId, remotePath: `${dir}/big.bin` });
    const anonymous = await fetch(host.url + link.url);
    expect(anonymous.status).toBe(401);
    await client.call('sftp.cancel', { transferId: link.transferId });
    // A cancelled link is gone too.
    expect((await fetch(host.url + link.url, { headers: cookie() })).status).toBe(404);

    execFileSync('mkfifo', [`${dir}/pipe`]);
    const fifo = await failure(client.call('sftp.downloadLink', { sessionId, remotePath: `${dir}/pipe` }));
    expect(fifo.code).toBe('EBADARGS');
    expect(fifo.message).toContain('neither a file nor a folder');
    expect((await failure(client.call('sftp.downloadLink', { sessionId, remotePath: `${dir}/nope.bin` }))).code).toBe('ENOTFOUND');
  });

  test('a reader that stops holds the download back; cancelling it cuts the response', async () => {
    const link = await client.call('sftp.downloadLink', { sessionId, remotePath: `${dir}/huge.bin` });
    await stopThenCancel(link); // 400 MB: read as the browser takes it, not ahead
  });

  test('the browser giving up (its Cancel) cancels the transfer', async () => {
    const link = await client.call('sftp.downloadLink', { sessionId, remotePath: `${dir}/huge.bin` });
    const abort = new AbortController();
    const res = await fetch(host.url + link.url, { headers: cookie(), signal: abort.signal });
    const reader = res.body?.getReader();
    await reader?.read();
    abort.abort();
    await expect.poll(async () => (await transfer(link.transferId))?.state, { timeout: 10_000 }).toBe('cancelled');
  });

  test('a folder comes as a zip of it: exact length up front, every file and folder, modes and names kept', async () => {
    const tree = `${dir}/tree`;
    const u = served.sshd.users.password.username;
    execFileSync('sh', ['-c', [
      `mkdir -p '${tree}/sub/deeper' '${tree}/empty'`,
      `printf alpha > '${tree}/a.txt'`,
      `head -c 3000000 /dev/urandom > '${tree}/sub/deeper/data.bin'`,
      `printf 'ssid=cafe' > '${tree}/réseau.conf'`,
      `printf '#!/bin/sh\\necho hi\\n' > '${tree}/run.sh' && chmod 750 '${tree}/run.sh'`,
      `chown -R ${u} '${tree}'`,
    ].join(' && ')]);
    const link = await client.call('sftp.downloadLink', { sessionId, remotePath: `${tree}/` });
    expect(link.name).toBe('tree.zip');
    expect(link.url).toMatch(/\/tree\.zip$/);
    const res = await fetch(host.url + link.url, { headers: cookie() });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBe(String(link.size));
    expect(res.headers.get('content-disposition')).toContain('filename="tree.zip"');
    const zip = Buffer.from(await res.arrayBuffer());
    expect(zip.length).toBe(link.size);

    const entries = await readZip(zip);
    expect(Object.keys(entries).sort()).toEqual(['a.txt', 'empty/', 'run.sh', 'réseau.conf', 'sub/', 'sub/deeper/', 'sub/deeper/data.bin']);
    expect(entries['a.txt']?.data.toString()).toBe('alpha');
    expect(entries['réseau.conf']?.data.toString()).toBe('ssid=cafe');
    expect(createHash('sha256').update(entries['sub/deeper/data.bin']?.data ?? Buffer.alloc(0)).digest('hex')).toBe(
      execFileSync('sha256sum', [`${tree}/sub/deeper/data.bin`], { encoding: 'utf8' }).split(' ')[0],
    );
    expect((entries['run.sh']?.mode ?? 0) & 0o777).toBe(0o750);
    testZipWithTools(zip);
    await expect.poll(async () => (await transfer(link.transferId))?.state).toBe('done');
    expect(await transfer(link.transferId)).toMatchObject({ kind: 'folder', bytes: 3_000_000 + 5 + 9 + 18, totalBytes: 3_000_000 + 5 + 9 + 18, filesDone: 4 });
  });

  test('a folder of 1,200 files comes whole: every byte its Content-Length announces, a zip unzip and Python open', async () => {
    // 1,200 names make a central directory over 64 KiB, where yazl's size and its output once parted.
    const many = `${dir}/many`;
    execFileSync('sh', ['-c', `mkdir -p '${many}' && cd '${many}' && for i in $(seq 1 1200); do : > "empty-$i.txt"; done && printf last > z.txt && chown -R ${served.sshd.users.password.username} '${many}'`]);
    const link = await client.call('sftp.downloadLink', { sessionId, remotePath: many });
    const res = await httpGet(host.url + link.url);
    expect(res.status).toBe(200);
    expect(res.announced).toBe(link.size);
    expect({ bytes: res.body.length, complete: res.complete }).toEqual({ bytes: link.size, complete: true });
    testZipWithTools(res.body);
    const entries = await readZip(res.body);
    expect(Object.keys(entries)).toHaveLength(1201);
    expect(entries['z.txt']?.data.toString()).toBe('last');
    await expect.poll(async () => (await transfer(link.transferId))?.state).toBe('done');
    expect(await transfer(link.transferId)).toMatchObject({ kind: 'folder', bytes: 4, filesDone: 1201, filesTotal: 1201 });
  });

  test('a folder zip waits for a reader that stops, and a cancel cuts it', async () => {
    execFileSync('sh', ['-c', `mkdir -p ${dir}/bigtree && ln -f ${dir}/huge.bin ${dir}/bigtree/huge.bin && chown -R ${served.sshd.users.password.username} ${dir}/bigtree`]);
    const link = await client.call('sftp.downloadLink', { sessionId, remotePath: `${dir}/bigtree` });
    await stopThenCancel(link);
  });

  test('file names of any characters reach the browser', () => {
    expect(attachment('report "final".txt')).toBe(`attachment; filename="report _final_.txt"; filename*=UTF-8''report%20%22final%22.txt`);
    expect(attachment('Übersicht 2026.pdf')).toBe(`attachment; filename="_bersicht 2026.pdf"; filename*=UTF-8''%C3%9Cbersicht%202026.pdf`);
  });
});
