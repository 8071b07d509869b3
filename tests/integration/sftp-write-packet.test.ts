/**
 * WRITE requests sent around the caller's buffer (src-main/node/sftp/write-packet.ts) against the
 * real OpenSSH sshd: the bytes land where they should whether a request goes out as it stands or
 * through sftp.write(), mixed with ssh2's own requests on the same channel, and SftpService's
 * uploads take the direct path.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client, SFTPWrapper } from 'ssh2';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { SftpService } from '../../src-main/node/sftp/sftp-service.js';
import { type WritePath, writeHeaderLength, writeWithHeadroom } from '../../src-main/node/sftp/write-packet.js';
import { type SshdHandle, connectSftp, startSshd } from '../fixtures/sshd.js';

const KiB = 1024;
let sshd: SshdHandle;
let client: Client;
let sftp: SFTPWrapper;
let remoteDir: string;
let localDir: string;

function promised<T>(fn: (cb: (err: Error | null | undefined, value: T) => void) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => fn((err, value) => (err ? reject(err) : resolve(value))));
}

/** Sends `data` at `position` of `handle` on `channel`, with room in front for the header: the path it took, and the answer. */
function send(handle: Buffer, data: Buffer, position: number, channel = sftp): { path: WritePath; done: Promise<void> } {
  const header = writeHeaderLength(handle);
  const packet = Buffer.alloc(header + data.length, 0xee);
  data.copy(packet, header);
  let answer: (err?: Error | null) => void = () => undefined;
  const done = new Promise<void>((resolve, reject) => {
    answer = (err) => (err ? reject(err) : resolve());
  });
  const path = writeWithHeadroom(channel, handle, packet, data.length, position, (err) => answer(err));
  // Sent as it stands, the buffer is the caller's again once the call returns: spoil it to prove
  // nothing reads it later. (sftp.write() reads the rest of a request over the server's limit later.)
  if (path === 'direct') packet.fill(0xaa);
  return { path, done };
}

beforeAll(async () => {
  sshd = await startSshd();
  ({ client, sftp } = await connectSftp(sshd));
  const home = await promised<string>((cb) => sftp.realpath('.', cb));
  remoteDir = `${home}/write-packet-${randomBytes(4).toString('hex')}`;
  await promised<void>((cb) => sftp.mkdir(remoteDir, (err) => cb(err, undefined)));
  localDir = mkdtempSync(join(tmpdir(), 'wraith-write-packet-'));
});

afterAll(async () => {
  if (remoteDir) rmSync(remoteDir, { recursive: true, force: true });
  if (localDir) rmSync(localDir, { recursive: true, force: true });
  client?.end();
  await sshd?.stop();
});

describe('WRITE requests around the caller buffer', () => {
  test('requests that fit the window go out as they stand, interleaved with ssh2 requests, and land intact', async () => {
    const path = `${remoteDir}/direct.bin`;
    const handle = await promised<Buffer>((cb) => sftp.open(path, 'w', cb));
    const expected = randomBytes(40 * 32 * KiB + 123);
    const maxWriteLen = (sftp as unknown as { _maxWriteLen: number })._maxWriteLen;
    const pieces: { path: WritePath; expected: WritePath; done: Promise<void> }[] = [];
    const ssh2Writes: Promise<void>[] = [];
    // Out of order, odd sizes (several SSH packets, a single byte, one over the server's 255 KiB
    // limit, which ssh2 must split), every fourth through ssh2's own write.
    const cuts = [0, 1, 5000, 70_000, 300_000, 500_000, 700_000, 1_000_001, expected.length];
    for (let i = cuts.length - 2; i >= 0; i--) {
      const [from, to] = [cuts[i] ?? 0, cuts[i + 1] ?? 0];
      const data = expected.subarray(from, to);
      if (i % 4 === 3) ssh2Writes.push(promised<void>((cb) => sftp.write(handle, data, 0, data.length, from, (err) => cb(err, undefined))));
      else pieces.push({ ...send(handle, Buffer.from(data), from), expected: data.length > maxWriteLen ? 'copied' : 'direct' });
    }
    const stat = promised((cb) => sftp.fstat(handle, cb)); // another kind of request between them
    await Promise.all([...pieces.map((p) => p.done), ...ssh2Writes, stat]);
    await promised<void>((cb) => sftp.close(handle, (err) => cb(err, undefined)));
    expect(pieces.map((p) => p.path)).toEqual(pieces.map((p) => p.expected));
    expect(pieces.filter((p) => p.path === 'direct')).toHaveLength(5);
    expect(readFileSync(path).equals(expected)).toBe(true);
  });

  test('a request the window cannot hold goes through sftp.write(), queued in order behind the rest', async () => {
    // A channel of its own, whose window nothing has used yet (OpenSSH gives 2 MiB).
    const own = await connectSftp(sshd);
    try {
      const path = `${remoteDir}/window.bin`;
      const handle = await promised<Buffer>((cb) => own.sftp.open(path, 'w', cb));
      const size = 250 * KiB;
      const window = (own.sftp as unknown as { outgoing: { window: number } }).outgoing.window;
      const fit = Math.floor(window / (writeHeaderLength(handle) + size));
      // Two requests more than the window holds, sent at once.
      const expected = randomBytes((fit + 2) * size);
      const pieces = Array.from({ length: fit + 2 }, (_, i) => send(handle, expected.subarray(i * size, (i + 1) * size), i * size, own.sftp));
      await Promise.all(pieces.map((p) => p.done));
      await promised<void>((cb) => own.sftp.close(handle, (err) => cb(err, undefined)));
      expect(fit).toBeGreaterThan(0);
      expect(pieces.map((p) => p.path)).toEqual([...Array<WritePath>(fit).fill('direct'), 'copied', 'copied']);
      expect(readFileSync(path).equals(expected)).toBe(true);
    } finally {
      own.client.end();
    }
  });

  test('a failed request reports the server error to its own callback', async () => {
    // A handle opened for reading: the server refuses the write (sftp-server reports the EBADF
    // of writing to a read-only descriptor as NO_SUCH_FILE).
    const path = `${remoteDir}/read-only.bin`;
    await promised<void>((cb) => sftp.writeFile(path, 'x', (err) => cb(err, undefined)));
    const handle = await promised<Buffer>((cb) => sftp.open(path, 'r', cb));
    const { path: how, done } = send(handle, Buffer.from('nope'), 0);
    expect(how).toBe('direct');
    await expect(done).rejects.toMatchObject({ code: 2, message: 'No such file' });
    await promised<void>((cb) => sftp.close(handle, (err) => cb(err, undefined)));
    expect(readFileSync(path, 'utf8')).toBe('x');
  });

  test("SftpService's uploads send their WRITEs without sftp.write()", async () => {
    const own = await connectSftp(sshd);
    let viaSsh2 = 0;
    const original = own.sftp.write.bind(own.sftp);
    own.sftp.write = ((...args: Parameters<SFTPWrapper['write']>) => {
      viaSsh2 += 1;
      return original(...args);
    }) as SFTPWrapper['write'];
    // Four requests of 64 KiB in flight stay far inside the 2 MiB window, so none has to wait in ssh2's queue.
    const service = new SftpService(() => Promise.resolve(own.sftp), { tuning: { chunkSize: 64 * KiB, writeInFlightBytes: 4 * (64 * KiB + 64) } });
    try {
      const local = join(localDir, 'upload.bin');
      const data = randomBytes(5 * 1024 * KiB + 7);
      writeFileSync(local, data);
      const { transferId } = await service.upload({ sessionId: 's', localPath: local, remotePath: `${remoteDir}/upload.bin`, overwrite: false });
      expect((await service.wait(transferId)).state).toBe('done');
      expect(readFileSync(`${remoteDir}/upload.bin`).equals(data)).toBe(true);
      expect(viaSsh2).toBe(0);
    } finally {
      await service.dispose();
      own.client.end();
    }
  });
});
