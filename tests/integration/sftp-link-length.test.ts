/**
 * A download link's response is exactly as long as its Content-Length, or it is cut off and its
 * transfer fails: never a short response ended as if whole, which the browser throws away while
 * the Files panel said "Downloaded". The service runs here with a real sshd and a real Node HTTP
 * server that answers a link as `wraith serve` does; the zip's size is misreported on purpose
 * (yazl 3.3.1 once predicted 76 bytes more than it wrote, for folders of over ~1,100 files).
 */
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { type Server, createServer, get } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from 'ssh2';
import { type EndOptions, ZipFile } from 'yazl';
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest';
import { SftpService } from '../../src-main/node/sftp/sftp-service.js';
import { sftpServiceOn } from '../fixtures/sftp-service.js';
import { type SshdHandle, startSshd } from '../fixtures/sshd.js';

const SESSION = 'session-length';
let sshd: SshdHandle;
let client: Client;
let service: SftpService;
let http: Server;
let dir: string;

beforeAll(async () => {
  sshd = await startSshd();
  ({ client, service } = await sftpServiceOn(sshd, SESSION));
  // GET /download/<ticket>/<name>, as serveDownload in server/ws-server.ts answers it.
  http = createServer((req, res) => {
    const link = service.claimDownload(req.url?.split('/')[2] ?? '');
    if (!link) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(link.size) });
    link.start(res);
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const home = (await service.realpath(SESSION, '.')).path;
  dir = `${home}/length-${randomBytes(4).toString('hex')}`;
  execFileSync('sh', ['-c', `mkdir -p '${dir}/tree' && printf alpha > '${dir}/tree/a.txt' && printf beta > '${dir}/tree/b.txt' && chown -R ${sshd.users.password.username} '${dir}'`]);
});

afterEach(() => {
  vi.restoreAllMocks();
});

afterAll(async () => {
  await service?.dispose();
  client?.end();
  await new Promise<void>((resolve) => (http ? http.close(() => resolve()) : resolve()));
  if (dir) execFileSync('rm', ['-rf', dir]);
  await sshd?.stop();
});

/** Makes yazl announce `by` bytes more (or fewer) than the zip it then writes. */
function misreportZipSize(by: number): void {
  const end = ZipFile.prototype.end;
  vi.spyOn(ZipFile.prototype, 'end').mockImplementation(function (this: ZipFile, options?: EndOptions, sized?: (total: number) => void) {
    Reflect.apply(end, this, [options, (total: number) => sized?.(total + by)]);
  });
}

/** GETs a link with Node's HTTP client: the bytes that came, the length announced, and whether the response ended whole. */
function fetchLink(url: string): Promise<{ announced: number; bytes: number; complete: boolean }> {
  const { port } = http.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    get(`http://127.0.0.1:${port}${url}`, (res) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.on('error', () => undefined); // "aborted": told by `complete`
      res.on('close', () => resolve({ announced: Number(res.headers['content-length']), bytes, complete: res.complete }));
    }).on('error', reject);
  });
}

describe('a download link of another length than it announced', () => {
  test('a zip shorter than its Content-Length is cut off, and its transfer fails saying why instead of "done"', async () => {
    misreportZipSize(76);
    const link = await service.downloadLink({ sessionId: SESSION, remotePath: `${dir}/tree` });
    const res = await fetchLink(link.url);
    expect(res.announced).toBe(link.size);
    expect(res.complete).toBe(false);
    expect(res.bytes).toBeLessThan(link.size);
    const t = await service.wait(link.transferId);
    expect(t.state).toBe('failed');
    expect(t.error?.code).toBe('EIO');
    expect(t.error?.message).toMatch(/^Wraith had sent \d+ bytes of the .* \(\d+ bytes\) it announced for tree\.zip, so it cut the download off/);
  });

  test('a zip longer than its Content-Length is cut off at it, and its transfer fails', async () => {
    misreportZipSize(-10);
    const link = await service.downloadLink({ sessionId: SESSION, remotePath: `${dir}/tree` });
    const res = await fetchLink(link.url);
    expect(res.complete).toBe(false);
    expect(res.bytes).toBeLessThanOrEqual(link.size);
    const t = await service.wait(link.transferId);
    expect(t.state).toBe('failed');
    expect(t.error?.message).toMatch(/^Wraith had more to send than the .* it announced for tree\.zip/);
  });

  test('a zip of the length it announced comes whole, and its transfer is done', async () => {
    const link = await service.downloadLink({ sessionId: SESSION, remotePath: `${dir}/tree` });
    const res = await fetchLink(link.url);
    expect(res).toEqual({ announced: link.size, bytes: link.size, complete: true });
    expect((await service.wait(link.transferId)).state).toBe('done');
  });
});
