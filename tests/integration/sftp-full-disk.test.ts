/**
 * A server whose disk fills up, against the real OpenSSH sshd and a small file system of its own
 * (a 50 MB tmpfs in the user's home): a write the server refuses for lack of room says so (reason
 * no_space, with the room the disk had for the file) instead of "refused it without saying why",
 * and a replace says that the new copy needs room beside the old one until it is complete, which
 * is why the disk shows room for the file once the failed copy is gone. Nothing is left behind.
 */
import { createHash, randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from 'ssh2';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import type { SftpService } from '../../src-main/node/sftp/sftp-service.js';
import { failure } from '../fixtures/errors.js';
import { sftpServiceOn } from '../fixtures/sftp-service.js';
import { type SmallDisk, mountSmallDisk } from '../fixtures/small-disk.js';
import { type SshdHandle, startSshd } from '../fixtures/sshd.js';

const SESSION = 'full-disk';
const MB = 1024 * 1024;
let sshd: SshdHandle;
let client: Client;
let service: SftpService;
let disk: SmallDisk;
let localDir: string;

beforeAll(async () => {
  sshd = await startSshd();
  ({ client, service } = await sftpServiceOn(sshd, SESSION));
  const home = (await service.realpath(SESSION, '.')).path;
  disk = mountSmallDisk(`${home}/small-disk-${process.pid}`, 50, sshd.users.password.username);
  localDir = mkdtempSync(join(tmpdir(), 'wraith-full-disk-'));
}, 60_000);

afterAll(async () => {
  await service?.dispose();
  client?.end();
  disk?.unmount();
  if (localDir) rmSync(localDir, { recursive: true, force: true });
  await sshd?.stop();
});

beforeEach(() => {
  for (const name of readdirSync(disk.dir)) rmSync(join(disk.dir, name), { recursive: true, force: true });
});

const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const temps = () => readdirSync(disk.dir).filter((n) => n.includes('wraith-part'));

/** A file of `bytes` random bytes put straight on the small disk, the test user's; its bytes. */
function placeFile(name: string, bytes: number): Buffer {
  const data = randomBytes(bytes);
  writeFileSync(join(disk.dir, name), data);
  execFileSync('chown', [sshd.users.password.username, join(disk.dir, name)]);
  return data;
}

/** Sends `data` to a streamed upload in 4 MiB chunks, in order, as the page does; the first refusal rejects. */
async function sendAll(transferId: string, data: Buffer): Promise<void> {
  for (let offset = 0; offset < data.length; offset += 4 * MB) {
    await service.uploadChunk({ transferId, offset, data: new Uint8Array(data.subarray(offset, offset + 4 * MB)) });
  }
}

describe('a full disk', () => {
  test('replacing a 30 MB file on a 50 MB disk with a new 30 MB one says the new copy needs room beside the old one', async () => {
    const dest = join(disk.dir, 'big.bin');
    const old = placeFile('big.bin', 30 * MB);
    const { transferId } = await service.uploadBegin({ sessionId: SESSION, remotePath: dest, size: 30 * MB, overwrite: true });
    const err = await failure(sendAll(transferId, randomBytes(30 * MB)));
    expect(err).toMatchObject({ code: 'EIO', details: { reason: 'no_space', path: dest, needed: 30 * MB } });
    expect(err.message).toMatch(
      new RegExp(
        `^Cannot replace ${dest}: the server's disk has no room for the new copy beside the old one \\(30 MB\\)\\. The old file stays whole ` +
          `until the new copy is complete, so both need room at once: the disk had (19|20) MB free for the new copy's 30 MB\\. ` +
          `Make room on the server \\(or delete the old file first\\), then try again\\.$`,
      ),
    );
    const ended = await service.wait(transferId);
    expect(ended).toMatchObject({ state: 'failed', error: { code: 'EIO', reason: 'no_space', message: err.message } });
    expect(sha(readFileSync(dest))).toBe(sha(old));
    expect(temps()).toEqual([]);
    // What `df` shows afterwards: room for the file alone, which is why the reason has to be said.
    expect(disk.free()).toBeGreaterThan(19 * MB);
  });

  test('an upload the host reads itself (sftp.upload) over a file the disk cannot hold twice says the same', async () => {
    const dest = join(disk.dir, 'twice.bin');
    const old = placeFile('twice.bin', 30 * MB);
    const local = join(localDir, 'twice.bin');
    writeFileSync(local, randomBytes(30 * MB));
    const { transferId } = await service.upload({ sessionId: SESSION, localPath: local, remotePath: dest, overwrite: true });
    const ended = await service.wait(transferId);
    expect(ended).toMatchObject({ state: 'failed', error: { code: 'EIO', reason: 'no_space' } });
    expect(ended.error?.message).toMatch(new RegExp(`^Cannot replace ${dest}: the server's disk has no room for the new copy beside the old one \\(30 MB\\)\\. `));
    expect(ended.error?.message).toContain("both need room at once: the disk had 20 MB free for the new copy's 30 MB.");
    expect(sha(readFileSync(dest))).toBe(sha(old));
    expect(temps()).toEqual([]);
  });

  test('a new file larger than the room left says the disk is full and how much room it had', async () => {
    // Leaves 512 KB free for a file of 1 MB, sent in one sftp.write as the Files panel sends a folder's small files.
    placeFile('filler.bin', 50 * MB - 512 * 1024);
    const dest = join(disk.dir, 'small.bin');
    const err = await failure(service.write({ sessionId: SESSION, path: dest, data: new Uint8Array(MB), exclusive: true }));
    expect(err).toMatchObject({ code: 'EIO', details: { reason: 'no_space', path: dest, needed: MB } });
    expect(err.message).toBe(`Cannot write ${dest}: the server's disk is full: it had 512 KB free, and the file is 1.0 MB.`);
    expect(readdirSync(disk.dir)).toEqual(['filler.bin']);
  });
});
