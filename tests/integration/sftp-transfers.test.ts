/**
 * Streamed SFTP transfers against the real OpenSSH sshd: integrity, folders, cancel and failure
 * cleanup, and uploads streamed from the page in chunks.
 */
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, type SFTPWrapper } from 'ssh2';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { SFTP_CHUNK_MAX_BYTES, type TransferProgress } from '../../src-main/common/contract/sftp.js';
import { WraithError } from '../../src-main/common/errors.js';
import type { ContractClient } from '../../src-main/common/client.js';
import { App } from '../../src-main/node/app.js';
import { connectInProcess } from '../../src-main/node/in-process.js';
import { Router } from '../../src-main/node/router.js';
import { registerSftpHandlers } from '../../src-main/node/sftp/sftp-handlers.js';
import { SftpService } from '../../src-main/node/sftp/sftp-service.js';
import { until } from '../fixtures/poll.js';
import { SHARED_GROUP, type SshdHandle, accountIds, groupId, startSshd, connectSftp, savePasswordConnection } from '../fixtures/sshd.js';
import { failure } from '../fixtures/errors.js';
import { sha256File } from '../fixtures/files.js';

const SESSION = 'session-1';
const MB = 1024 * 1024;
let sshd: SshdHandle;
let client: Client;
let sftp: SFTPWrapper;
let service: SftpService;
let router: Router;
const events: TransferProgress[] = [];
let remoteDir: string;
let localDir: string;
let bigLocal: string;
let bigSha: string;

function provider(id: string): Promise<SFTPWrapper> {
  if (id !== SESSION) return Promise.reject(new WraithError('ENOTFOUND', `No session with id ${id}.`));
  return Promise.resolve(sftp);
}

function call(method: string, params: unknown): Promise<unknown> {
  return router.call(method, params, { clientId: 'test', origin: 'test' });
}

/** Names of leftovers in a folder: temps and anything else we did not expect. */
function temps(dir: string): string[] {
  return readdirSync(dir).filter((n) => n.includes('wraith-part'));
}

function chownToUser(path: string): void {
  execFileSync('chown', ['-R', `${sshd.users.password.username}:`, path]);
}

/** Puts a file in the remote folder straight on disk (the sshd is local) with this owner:group and mode; its path. */
function placeFile(name: string, ownerGroup: string, mode: string): string {
  const path = `${remoteDir}/${name}`;
  writeFileSync(path, 'old');
  execFileSync('chown', [ownerGroup, path]);
  execFileSync('chmod', [mode, path]);
  return path;
}

/** Uploads `text` over `dest` as the page does (uploadBegin, one chunk, uploadEnd); the transfer's id. */
async function streamUpload(dest: string, text: string): Promise<string> {
  const data = new Uint8Array(Buffer.from(text));
  const { transferId } = await service.uploadBegin({ sessionId: SESSION, remotePath: dest, size: data.length, overwrite: true });
  await service.uploadChunk({ transferId, offset: 0, data });
  await service.uploadEnd(transferId);
  return transferId;
}

/**
 * Counts a channel's READ/WRITE requests, and the most outstanding at once, from now on, as they
 * leave for the server (uploads send their WRITEs past sftp.write(): write-packet.ts): the SFTP
 * packets in the channel's outgoing CHANNEL_DATA are parsed for their type and id, and a request
 * is done when ssh2 takes its id out of the request table for the answer.
 */
function countRequests(channel: SFTPWrapper): { requests: number; peak: number; peakOf: Record<'read' | 'write', number> } {
  const counts = { requests: 0, peak: 0, peakOf: { read: 0, write: 0 } };
  const of = { read: 0, write: 0 };
  const open = new Map<number, 'read' | 'write'>();
  const internals = channel as unknown as {
    outgoing: { id: number };
    _protocol: { channelData(id: number, data: Buffer): void };
    _requests: Record<number, unknown>;
  };
  const send = internals._protocol.channelData.bind(internals._protocol);
  let left = 0; // bytes of the current SFTP packet still to come
  let head = Buffer.alloc(0); // the start of a packet whose first 9 bytes are split across messages
  internals._protocol.channelData = (id: number, data: Buffer) => {
    for (let p = 0; id === internals.outgoing.id && p < data.length; ) {
      if (left > 0) {
        const n = Math.min(left, data.length - p);
        left -= n;
        p += n;
        continue;
      }
      const take = Math.min(9 - head.length, data.length - p);
      head = Buffer.concat([head, data.subarray(p, p + take)]);
      p += take;
      if (head.length < 9) break;
      const kind = head[4] === 5 ? 'read' : head[4] === 6 ? 'write' : null; // SSH_FXP_READ, SSH_FXP_WRITE
      if (kind) {
        open.set(head.readUInt32BE(5), kind);
        of[kind] += 1;
        counts.requests += 1;
        counts.peak = Math.max(counts.peak, of.read + of.write);
        counts.peakOf[kind] = Math.max(counts.peakOf[kind], of[kind]);
      }
      left = head.readUInt32BE(0) + 4 - 9;
      head = Buffer.alloc(0);
    }
    send(id, data);
  };
  internals._requests = new Proxy(internals._requests, {
    deleteProperty(target, key) {
      const kind = open.get(Number(key));
      if (kind) {
        open.delete(Number(key));
        of[kind] -= 1;
      }
      return Reflect.deleteProperty(target, key);
    },
  });
  return counts;
}

/** Resolves with the first progress event of a transfer that has moved bytes. */
function firstBytes(s: SftpService, transferId: string): Promise<void> {
  return new Promise((resolve) => {
    const poll = setInterval(() => {
      const t = s.listTransfers().find((x) => x.transferId === transferId);
      if (!t || t.bytes > 0 || t.state !== 'running') {
        clearInterval(poll);
        resolve();
      }
    }, 5);
  });
}

/**
 * Runs `run` against an App of its own (in-process, as the UI and the XO reach it) holding a saved
 * connection to the test sshd, then disposes of it.
 */
async function withApp(name: string, run: (app: App, c: ContractClient, connectionId: string) => Promise<void>): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'wraith-sftp-app-'));
  const app = new App({ dataDir, host: 'in-process' });
  const c = connectInProcess(app);
  try {
    await run(app, c, (await savePasswordConnection(c, sshd, name)).id);
  } finally {
    c.close();
    await app.dispose();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

beforeAll(async () => {
  sshd = await startSshd({ rootLogin: true });
  ({ client, sftp } = await connectSftp(sshd));
  service = new SftpService(provider, { emitProgress: (p) => events.push(p) });
  router = new Router();
  registerSftpHandlers(router, service);
  const home = (await service.realpath(SESSION, '.')).path;
  remoteDir = `${home}/xfer-${randomBytes(4).toString('hex')}`;
  await service.mkdir({ sessionId: SESSION, path: remoteDir, parents: false });
  localDir = mkdtempSync(join(tmpdir(), 'wraith-sftp-local-'));
  bigLocal = join(localDir, 'big.bin');
  // 50 MB of random bytes, written in 1 MB pieces.
  const parts: Buffer[] = [];
  for (let i = 0; i < 50; i++) parts.push(randomBytes(MB));
  writeFileSync(bigLocal, Buffer.concat(parts));
  bigSha = await sha256File(bigLocal);
});

afterAll(async () => {
  await service?.dispose();
  if (remoteDir) rmSync(remoteDir, { recursive: true, force: true });
  if (localDir) rmSync(localDir, { recursive: true, force: true });
  client?.end();
  await sshd?.stop();
});

describe('files', () => {
  test('a 50 MB random file uploads and downloads with equal sha256, with progress to the end', async () => {
    const up = (await call('sftp.upload', { sessionId: SESSION, localPath: bigLocal, remotePath: `${remoteDir}/big.bin` })) as { transferId: string };
    const upInfo = await service.wait(up.transferId);
    expect(upInfo).toMatchObject({ state: 'done', bytes: 50 * MB, totalBytes: 50 * MB, filesDone: 1, filesTotal: 1, error: null });
    expect(await sha256File(`${remoteDir}/big.bin`)).toBe(bigSha);

    const localCopy = join(localDir, 'big.copy');
    const down = (await call('sftp.download', { sessionId: SESSION, remotePath: `${remoteDir}/big.bin`, localPath: localCopy })) as { transferId: string };
    expect((await service.wait(down.transferId)).state).toBe('done');
    expect(await sha256File(localCopy)).toBe(bigSha);

    const mine = events.filter((e) => e.transferId === down.transferId);
    expect(mine.at(-1)).toMatchObject({ state: 'done', bytes: 50 * MB, totalBytes: 50 * MB, direction: 'download', etaSeconds: 0 });
    // Progress is monotonic.
    for (let i = 1; i < mine.length; i++) expect(mine[i]?.bytes).toBeGreaterThanOrEqual(mine[i - 1]?.bytes ?? 0);
    expect(temps(localDir)).toEqual([]);
    expect(temps(remoteDir)).toEqual([]);
    rmSync(localCopy);
  });

  test("a file of /proc, which says it is empty and is not, downloads whole, as OpenSSH's sftp gets it", async () => {
    // The sshd runs on this machine: its /proc/version is ours.
    const want = readFileSync('/proc/version');
    const localCopy = join(localDir, 'version.txt');
    const down = (await call('sftp.download', { sessionId: SESSION, remotePath: '/proc/version', localPath: localCopy })) as { transferId: string };
    // Its total is unknown until it has been read (the list shows a bar without an end), then known.
    expect(await service.wait(down.transferId)).toMatchObject({ state: 'done', bytes: want.length, totalBytes: want.length, filesDone: 1 });
    expect(readFileSync(localCopy)).toEqual(want);
    rmSync(localCopy);
  });

  test('several transfers run at once on one channel', async () => {
    const ids = await Promise.all(
      [1, 2, 3].map(async (n) => (await service.upload({ sessionId: SESSION, localPath: bigLocal, remotePath: `${remoteDir}/par${n}.bin`, overwrite: false })).transferId),
    );
    const running = service.listTransfers(SESSION).filter((t) => ids.includes(t.transferId) && t.state === 'running');
    expect(running.length).toBe(3);
    const infos = await Promise.all(ids.map((id) => service.wait(id)));
    expect(infos.map((i) => i.state)).toEqual(['done', 'done', 'done']);
    for (const n of [1, 2, 3]) expect(await sha256File(`${remoteDir}/par${n}.bin`)).toBe(bigSha);
    for (const n of [1, 2, 3]) rmSync(`${remoteDir}/par${n}.bin`);
  });

  test('transfers sharing a channel keep its requests in flight to the budget of their direction, and still pipeline', async () => {
    // A channel of its own whose READ/WRITE calls are counted while they are outstanding.
    const own = await connectSftp(sshd);
    const counted = countRequests(own.sftp);
    // 4 WRITEs (of 32 KiB and a header of up to 64 bytes) and 3 READs of 32 KiB; each file alone
    // would start 4 workers, so 3 transfers want 12.
    const tuning = { chunkSize: 32 * 1024, writeInFlightBytes: 4 * (32 * 1024 + 64), readInFlightBytes: 96 * 1024 };
    const budget = new SftpService(() => Promise.resolve(own.sftp), { tuning });
    try {
      const dest = join(localDir, 'budget-down.bin');
      const ids = [
        (await budget.upload({ sessionId: SESSION, localPath: bigLocal, remotePath: `${remoteDir}/budget1.bin`, overwrite: false })).transferId,
        (await budget.upload({ sessionId: SESSION, localPath: bigLocal, remotePath: `${remoteDir}/budget2.bin`, overwrite: false })).transferId,
        (await budget.download({ sessionId: SESSION, remotePath: `${remoteDir}/big.bin`, localPath: dest, overwrite: false })).transferId,
      ];
      const infos = await Promise.all(ids.map((id) => budget.wait(id)));
      expect(infos.map((i) => i.state)).toEqual(['done', 'done', 'done']);
      expect(await sha256File(`${remoteDir}/budget1.bin`)).toBe(bigSha);
      expect(await sha256File(`${remoteDir}/budget2.bin`)).toBe(bigSha);
      expect(await sha256File(dest)).toBe(bigSha);
      expect(counted.requests).toBeGreaterThanOrEqual((3 * 50 * MB) / (32 * 1024));
      expect(counted.peakOf).toEqual({ write: 4, read: 3 });
      rmSync(dest);
      rmSync(`${remoteDir}/budget1.bin`);
      rmSync(`${remoteDir}/budget2.bin`);
    } finally {
      await budget.dispose();
      own.client.end();
    }
  });

  test('however large the budget, a channel has at most 64 requests of a direction in flight, as OpenSSH sftp sends', async () => {
    const own = await connectSftp(sshd);
    const counted = countRequests(own.sftp);
    // 1 KiB requests in a 1 MiB budget would be 1024 at once.
    const tuning = { chunkSize: 1024, writeInFlightBytes: MB, readInFlightBytes: MB };
    const wide = new SftpService(() => Promise.resolve(own.sftp), { tuning });
    try {
      const data = randomBytes(MB);
      writeFileSync(join(localDir, 'wide.bin'), data);
      const up = await wide.upload({ sessionId: SESSION, localPath: join(localDir, 'wide.bin'), remotePath: `${remoteDir}/wide.bin`, overwrite: false });
      expect((await wide.wait(up.transferId)).state).toBe('done');
      const down = await wide.download({ sessionId: SESSION, remotePath: `${remoteDir}/wide.bin`, localPath: join(localDir, 'wide-back.bin'), overwrite: false });
      expect((await wide.wait(down.transferId)).state).toBe('done');
      expect(readFileSync(join(localDir, 'wide-back.bin')).equals(data)).toBe(true);
      expect(counted.peakOf).toEqual({ write: 64, read: 64 });
    } finally {
      await wide.dispose();
      own.client.end();
      for (const p of [join(localDir, 'wide.bin'), join(localDir, 'wide-back.bin'), `${remoteDir}/wide.bin`]) rmSync(p, { force: true });
    }
  });

  test('an existing destination is refused unless overwrite is asked, then replaced whole', async () => {
    writeFileSync(join(localDir, 'small.txt'), 'new content');
    writeFileSync(`${remoteDir}/small.txt`, 'old');
    chownToUser(`${remoteDir}/small.txt`);
    // By the call itself, before there is a transfer: a script or the XO hears it at once.
    const before = service.listTransfers().length;
    await expect(service.upload({ sessionId: SESSION, localPath: join(localDir, 'small.txt'), remotePath: `${remoteDir}/small.txt`, overwrite: false })).rejects.toMatchObject({
      code: 'EBADARGS',
      message: `Cannot upload to ${remoteDir}/small.txt: it already exists on the server (pass overwrite to replace it).`,
      details: { reason: 'exists' },
    });
    expect(service.listTransfers()).toHaveLength(before);
    expect(readFileSync(`${remoteDir}/small.txt`, 'utf8')).toBe('old');
    const replaced = await service.wait((await service.upload({ sessionId: SESSION, localPath: join(localDir, 'small.txt'), remotePath: `${remoteDir}/small.txt`, overwrite: true })).transferId);
    expect(replaced.state).toBe('done');
    expect(readFileSync(`${remoteDir}/small.txt`, 'utf8')).toBe('new content');
  });

  test('a download the call can already tell would fail is refused by the call, before there is a transfer', async () => {
    writeFileSync(`${remoteDir}/down-src.txt`, 'remote');
    chownToUser(`${remoteDir}/down-src.txt`);
    writeFileSync(join(localDir, 'down-taken.txt'), 'mine');
    const before = service.listTransfers().length;
    const download = (remotePath: string, localPath: string) => service.download({ sessionId: SESSION, remotePath, localPath, overwrite: false });
    // A local name already taken: kept as it was.
    await expect(download(`${remoteDir}/down-src.txt`, join(localDir, 'down-taken.txt'))).rejects.toMatchObject({
      code: 'EBADARGS',
      message: `Cannot download to ${join(localDir, 'down-taken.txt')}: it already exists (pass overwrite to replace it).`,
      details: { reason: 'exists' },
    });
    expect(readFileSync(join(localDir, 'down-taken.txt'), 'utf8')).toBe('mine');
    // A local folder that is not there.
    await expect(download(`${remoteDir}/down-src.txt`, join(localDir, 'no-such-folder', 'x.txt'))).rejects.toMatchObject({ code: 'ENOTFOUND' });
    // A remote file this login may not read (root's, 0600).
    const secret = placeFile('down-secret.txt', '0:0', '0600');
    const denied = await failure(download(secret, join(localDir, 'down-secret.txt')));
    expect(denied.code).toBe('EDENIED');
    expect(denied.message).toContain(secret);
    expect(existsSync(join(localDir, 'down-secret.txt'))).toBe(false);
    // An upload into a remote folder that is not there.
    await expect(
      service.upload({ sessionId: SESSION, localPath: join(localDir, 'down-taken.txt'), remotePath: `${remoteDir}/no-such-folder/x.txt`, overwrite: false }),
    ).rejects.toMatchObject({ code: 'ENOTFOUND', message: `Cannot upload to ${remoteDir}/no-such-folder/x.txt: the folder ${remoteDir}/no-such-folder does not exist on the server.` });
    expect(service.listTransfers()).toHaveLength(before);
  });

  test('uploading over a symlink to a file replaces the file it points to and keeps the link, streamed or not', async () => {
    mkdirSync(`${remoteDir}/sites-available`);
    mkdirSync(`${remoteDir}/sites-enabled`);
    writeFileSync(`${remoteDir}/sites-available/default`, 'old site');
    symlinkSync('../sites-available/default', `${remoteDir}/sites-enabled/default`);
    chownToUser(`${remoteDir}/sites-available`);
    chownToUser(`${remoteDir}/sites-enabled`);
    execFileSync('chown', ['-h', `${sshd.users.password.username}:`, `${remoteDir}/sites-enabled/default`]);
    writeFileSync(join(localDir, 'site.conf'), 'new site');
    const up = await service.wait((await service.upload({ sessionId: SESSION, localPath: join(localDir, 'site.conf'), remotePath: `${remoteDir}/sites-enabled/default`, overwrite: true })).transferId);
    expect(up.state).toBe('done');
    expect(lstatSync(`${remoteDir}/sites-enabled/default`).isSymbolicLink()).toBe(true);
    expect(readFileSync(`${remoteDir}/sites-available/default`, 'utf8')).toBe('new site');

    await streamUpload(`${remoteDir}/sites-enabled/default`, 'streamed');
    expect(lstatSync(`${remoteDir}/sites-enabled/default`).isSymbolicLink()).toBe(true);
    expect(readFileSync(`${remoteDir}/sites-available/default`, 'utf8')).toBe('streamed');
    expect([...temps(`${remoteDir}/sites-available`), ...temps(`${remoteDir}/sites-enabled`)]).toEqual([]);
  });

  test("replacing a file keeps its group where the user may set it, and says so when its owner cannot be kept", async () => {
    const me = accountIds(sshd.users.password.username);
    const them = accountIds(sshd.users.key.username);
    writeFileSync(join(localDir, 'owned.txt'), 'uploaded');
    writeFileSync(`${remoteDir}/team.txt`, 'old');
    execFileSync('chown', [`${me.uid}:${groupId(SHARED_GROUP)}`, `${remoteDir}/team.txt`]);
    const team = await service.wait((await service.upload({ sessionId: SESSION, localPath: join(localDir, 'owned.txt'), remotePath: `${remoteDir}/team.txt`, overwrite: true })).transferId);
    expect(team).toMatchObject({ state: 'done', notice: null });
    expect(statSync(`${remoteDir}/team.txt`)).toMatchObject({ uid: me.uid, gid: groupId(SHARED_GROUP) });

    // Another user's file: only root may give the new one to them, so the transfer says what changed.
    writeFileSync(`${remoteDir}/theirs.txt`, 'old');
    execFileSync('chown', [`${them.uid}:${them.gid}`, `${remoteDir}/theirs.txt`]);
    execFileSync('chmod', ['0666', `${remoteDir}/theirs.txt`]);
    const theirs = await service.wait((await service.upload({ sessionId: SESSION, localPath: join(localDir, 'owned.txt'), remotePath: `${remoteDir}/theirs.txt`, overwrite: true })).transferId);
    expect(theirs.state).toBe('done');
    expect(readFileSync(`${remoteDir}/theirs.txt`, 'utf8')).toBe('uploaded');
    expect(theirs.notice).toBe(`${remoteDir}/theirs.txt had owner:group ${them.uid}:${them.gid} and now has ${me.uid}:${me.gid}: only root may give a file to another user, so it now has yours.`);
    expect(events.filter((e) => e.transferId === theirs.transferId).at(-1)?.notice).toBe(theirs.notice);
    expect(temps(remoteDir)).toEqual([]);
  });

  test("an upload over another user's file this login may not write is refused before a byte is sent, streamed or not", async () => {
    // root's 0644 file in the user's own folder: a rename over it would work, and hand it to the
    // user; OpenSSH's sftp put and scp, which write into it, are refused.
    const dest = placeFile('roots.conf', '0:0', '0644');
    const said = `Cannot replace ${dest}: it belongs to root and you may not write it.`;
    writeFileSync(join(localDir, 'mine.conf'), 'mine');
    const info = await service.wait((await service.upload({ sessionId: SESSION, localPath: join(localDir, 'mine.conf'), remotePath: dest, overwrite: true })).transferId);
    expect(info).toMatchObject({ state: 'failed', bytes: 0, notice: null, error: { code: 'EDENIED', message: said } });
    await expect(service.uploadBegin({ sessionId: SESSION, remotePath: dest, size: 4, overwrite: true })).rejects.toMatchObject({ code: 'EDENIED', message: said });
    expect(readFileSync(dest, 'utf8')).toBe('old');
    expect(statSync(dest)).toMatchObject({ uid: 0, gid: 0 });
    expect(statSync(dest).mode & 0o7777).toBe(0o644);
    expect(temps(remoteDir)).toEqual([]);
  });

  test('root replaces any file as before, keeping its owner, group and mode, streamed or not', async () => {
    const own = await connectSftp(sshd, 'root');
    const asRoot = new SftpService(() => Promise.resolve(own.sftp));
    try {
      const them = accountIds(sshd.users.key.username);
      const dest = placeFile('theirs-read-only.conf', `${them.uid}:${them.gid}`, '0444');
      writeFileSync(join(localDir, 'by-root.conf'), 'by root');
      const info = await asRoot.wait((await asRoot.upload({ sessionId: SESSION, localPath: join(localDir, 'by-root.conf'), remotePath: dest, overwrite: true })).transferId);
      expect(info).toMatchObject({ state: 'done', notice: null, error: null });
      expect(readFileSync(dest, 'utf8')).toBe('by root');
      expect(statSync(dest)).toMatchObject({ uid: them.uid, gid: them.gid });
      expect(statSync(dest).mode & 0o7777).toBe(0o444);

      const data = new Uint8Array(Buffer.from('streamed by root'));
      const { transferId } = await asRoot.uploadBegin({ sessionId: SESSION, remotePath: dest, size: data.length, overwrite: true });
      await asRoot.uploadChunk({ transferId, offset: 0, data });
      await asRoot.uploadEnd(transferId);
      expect(readFileSync(dest, 'utf8')).toBe('streamed by root');
      expect(statSync(dest)).toMatchObject({ uid: them.uid, gid: them.gid });
      expect(statSync(dest).mode & 0o7777).toBe(0o444);
      expect(temps(remoteDir)).toEqual([]);
    } finally {
      await asRoot.dispose();
      own.client.end();
    }
  });
});

describe('cancel and failure leave nothing behind', () => {
  // Small serial requests make a transfer slow enough to be caught in the middle.
  let slow: SftpService;
  beforeAll(() => {
    slow = new SftpService(provider, { tuning: { chunkSize: 8 * 1024, readInFlightBytes: 8 * 1024, writeInFlightBytes: 8 * 1024 } });
  });
  afterAll(() => slow.dispose());

  test('cancelling a download mid-way leaves no local file and no temp', async () => {
    const dest = join(localDir, 'cancelled-down.bin');
    writeFileSync(`${remoteDir}/src.bin`, readFileSync(bigLocal));
    const { transferId } = await slow.download({ sessionId: SESSION, remotePath: `${remoteDir}/src.bin`, localPath: dest, overwrite: false });
    await firstBytes(slow, transferId);
    await slow.cancel(transferId);
    const info = await slow.wait(transferId);
    expect(info).toMatchObject({ state: 'cancelled', error: { code: 'ECANCELLED' } });
    expect(info.bytes).toBeLessThan(50 * MB);
    expect(existsSync(dest)).toBe(false);
    expect(temps(localDir)).toEqual([]);
  });

  test('cancelling an upload mid-way leaves no remote file and no temp', async () => {
    const dest = `${remoteDir}/cancelled-up.bin`;
    const { transferId } = await slow.upload({ sessionId: SESSION, localPath: bigLocal, remotePath: dest, overwrite: false });
    await firstBytes(slow, transferId);
    expect(temps(remoteDir).length).toBe(1); // the temp exists while it runs …
    await slow.cancel(transferId);
    expect((await slow.wait(transferId)).state).toBe('cancelled');
    expect(existsSync(dest)).toBe(false);
    expect(temps(remoteDir)).toEqual([]); // … and is gone after the cancel
  });

  test('cancelling a folder upload removes the half-built folder', async () => {
    const src = join(localDir, 'tree-cancel');
    mkdirSync(join(src, 'sub'), { recursive: true });
    writeFileSync(join(src, 'sub', 'a.bin'), readFileSync(bigLocal));
    writeFileSync(join(src, 'b.txt'), 'b');
    const { transferId } = await slow.upload({ sessionId: SESSION, localPath: src, remotePath: `${remoteDir}/tree-cancel`, overwrite: false });
    await firstBytes(slow, transferId);
    await slow.cancel(transferId);
    expect((await slow.wait(transferId)).state).toBe('cancelled');
    expect(readdirSync(remoteDir).filter((n) => n.includes('tree-cancel'))).toEqual([]);
  });

  test('an upload whose source is missing is refused by the call with a message naming it, and creates nothing', async () => {
    const transfers = slow.listTransfers().length;
    const missing = join(localDir, 'missing.bin');
    const refused = await failure(call('sftp.upload', { sessionId: SESSION, localPath: missing, remotePath: `${remoteDir}/x.bin` }));
    expect(refused).toMatchObject({ code: 'ENOTFOUND', message: `Cannot upload local ${missing}: no such file or directory.`, details: { path: missing } });
    expect(slow.listTransfers().length).toBe(transfers); // no transfer to follow
    expect(existsSync(`${remoteDir}/x.bin`)).toBe(false);
    expect(temps(remoteDir)).toEqual([]);
  });

  test('cancelling a transfer that had already finished says so, and changes nothing', async () => {
    const src = join(localDir, 'finished.txt');
    writeFileSync(src, 'finished');
    const done = (await call('sftp.upload', { sessionId: SESSION, localPath: src, remotePath: `${remoteDir}/finished.txt` })) as { transferId: string };
    expect((await service.wait(done.transferId)).state).toBe('done');
    const late = await failure(call('sftp.cancel', { transferId: done.transferId }));
    expect(late).toMatchObject({
      code: 'EBADARGS',
      message: `The upload to ${remoteDir}/finished.txt had already finished, so there was nothing to cancel.`,
      details: { reason: 'finished', state: 'done', transferId: done.transferId },
    });
    expect((await service.wait(done.transferId)).state).toBe('done');
    expect(readFileSync(`${remoteDir}/finished.txt`, 'utf8')).toBe('finished');

    // One that failed on its own (into a folder this login may not write): it stays failed, with its own reason.
    const locked = `${remoteDir}-cancel-locked`;
    mkdirSync(locked, { mode: 0o755 }); // root's, as the tests run
    try {
      const again = (await call('sftp.upload', { sessionId: SESSION, localPath: src, remotePath: `${locked}/finished.txt` })) as { transferId: string };
      const failed = await service.wait(again.transferId);
      expect(failed).toMatchObject({ state: 'failed', error: { code: 'EDENIED' } });
      const onFailed = await failure(call('sftp.cancel', { transferId: again.transferId }));
      expect(onFailed).toMatchObject({ code: 'EBADARGS', details: { reason: 'finished', state: 'failed' } });
      expect(onFailed.message).toBe(`The upload to ${locked}/finished.txt had already failed, so there was nothing to cancel: ${failed.error?.message}`);
      expect((await service.wait(again.transferId)).error).toEqual(failed.error);
    } finally {
      rmSync(locked, { recursive: true, force: true });
    }

    // One cancelled already stays cancelled, and saying so again is no error.
    const { transferId } = await slow.upload({ sessionId: SESSION, localPath: bigLocal, remotePath: `${remoteDir}/cancelled-twice.bin`, overwrite: false });
    await firstBytes(slow, transferId);
    expect(await slow.cancel(transferId)).toEqual({ ok: true });
    expect(await slow.cancel(transferId)).toEqual({ ok: true });
    expect((await slow.wait(transferId)).state).toBe('cancelled');
  });

  test('an upload into a folder the user may not write in names the folder, not the temp file', async () => {
    const locked = `${remoteDir}-locked`;
    mkdirSync(locked, { mode: 0o755 }); // root's, as the tests run
    try {
      writeFileSync(join(localDir, 'to-locked.txt'), 'x');
      const { transferId } = await service.upload({ sessionId: SESSION, localPath: join(localDir, 'to-locked.txt'), remotePath: `${locked}/small.txt`, overwrite: false });
      const info = await service.wait(transferId);
      expect(info).toMatchObject({ state: 'failed', error: { code: 'EDENIED' } });
      expect(info.error?.message).toBe(`Cannot write ${locked}/small.txt: the folder ${locked} is not writable, and a file arrives under a temp name beside it first.`);
    } finally {
      rmSync(locked, { recursive: true, force: true });
    }
  });

  test("replacing another user's file in a sticky folder fails naming that file, not the temp it was written to", async () => {
    // /tmp's case: anyone may create a file there, but only its owner may replace one.
    const sticky = `${remoteDir}-sticky`;
    mkdirSync(sticky);
    execFileSync('chmod', ['1777', sticky]);
    try {
      // root's, as the tests run, and writable by everyone: only the rename over it is refused.
      writeFileSync(join(sticky, 'theirs.txt'), 'theirs', { mode: 0o666 });
      execFileSync('chmod', ['0666', join(sticky, 'theirs.txt')]);
      writeFileSync(join(localDir, 'mine.txt'), 'mine');
      const { transferId } = await service.upload({ sessionId: SESSION, localPath: join(localDir, 'mine.txt'), remotePath: `${sticky}/theirs.txt`, overwrite: true });
      const info = await service.wait(transferId);
      expect(info).toMatchObject({ state: 'failed', error: { code: 'EDENIED' } });
      expect(info.error?.message).toBe(`Cannot replace ${sticky}/theirs.txt: permission denied on the server.`);

      const streamed = await streamUpload(`${sticky}/theirs.txt`, 'mine').catch((err: unknown) => err);
      expect(streamed).toBeInstanceOf(WraithError);
      expect((streamed as WraithError).message).toBe(`Cannot replace ${sticky}/theirs.txt: permission denied on the server.`);

      expect(readFileSync(join(sticky, 'theirs.txt'), 'utf8')).toBe('theirs');
      expect(temps(sticky)).toEqual([]);
    } finally {
      rmSync(sticky, { recursive: true, force: true });
    }
  });
});

describe('folders', () => {
  test('a folder of big files, whose copies wait for the channel by the dozen, raises no listener-leak warning', async () => {
    // Four files at once, each with more chunks than the channel has request slots: dozens of
    // copy workers wait on the transfer's one abort signal. Node warned of a leak past ten,
    // in every log of a busy host.
    const src = join(localDir, 'big-files');
    mkdirSync(src);
    for (const n of [1, 2, 3, 4]) writeFileSync(join(src, `part${n}.bin`), randomBytes(6 * MB));
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
    process.on('warning', onWarning);
    try {
      const up = await service.wait((await service.upload({ sessionId: SESSION, localPath: src, remotePath: `${remoteDir}/big-files`, overwrite: false })).transferId);
      expect(up).toMatchObject({ state: 'done', filesDone: 4 });
      // Warnings are emitted on the next tick.
      await new Promise((r) => setImmediate(r));
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.filter((w) => w.startsWith('MaxListenersExceededWarning'))).toEqual([]);
  });

  test('a nested folder uploads and downloads intact, with file counts in progress', async () => {
    const src = join(localDir, 'project');
    const files: Record<string, Buffer> = {
      'README.md': Buffer.from('# project\n'),
      'src/main.c': randomBytes(70_000),
      'src/lib/util.c': randomBytes(300_000),
      'src/lib/deep/er/data.bin': randomBytes(2 * MB + 17),
      'empty.txt': Buffer.alloc(0),
    };
    for (const [rel, data] of Object.entries(files)) {
      mkdirSync(join(src, rel, '..'), { recursive: true });
      writeFileSync(join(src, rel), data);
    }
    mkdirSync(join(src, 'empty-dir'));

    const up = await service.wait((await service.upload({ sessionId: SESSION, localPath: src, remotePath: `${remoteDir}/project`, overwrite: false })).transferId);
    const total = Object.values(files).reduce((a, b) => a + b.length, 0);
    expect(up).toMatchObject({ state: 'done', kind: 'folder', filesDone: 5, filesTotal: 5, bytes: total, totalBytes: total });
    for (const [rel, data] of Object.entries(files)) expect(readFileSync(`${remoteDir}/project/${rel}`).equals(data), rel).toBe(true);
    expect(existsSync(`${remoteDir}/project/empty-dir`)).toBe(true);
    expect(temps(remoteDir)).toEqual([]);

    const back = join(localDir, 'project-back');
    const down = await service.wait((await service.download({ sessionId: SESSION, remotePath: `${remoteDir}/project`, localPath: back, overwrite: false })).transferId);
    expect(down).toMatchObject({ state: 'done', filesDone: 5, filesTotal: 5, bytes: total });
    for (const [rel, data] of Object.entries(files)) expect(readFileSync(join(back, rel)).equals(data), rel).toBe(true);
    expect(existsSync(join(back, 'empty-dir'))).toBe(true);
    expect(temps(localDir)).toEqual([]);

    // Into an existing folder with overwrite: files are merged in, each replaced whole.
    writeFileSync(join(src, 'README.md'), '# v2\n');
    const merged = await service.wait((await service.upload({ sessionId: SESSION, localPath: src, remotePath: `${remoteDir}/project`, overwrite: true })).transferId);
    expect(merged.state).toBe('done');
    expect(readFileSync(`${remoteDir}/project/README.md`, 'utf8')).toBe('# v2\n');
    expect(temps(`${remoteDir}/project`)).toEqual([]);
  });

  test("a folder uploaded over one that holds a file this login may not write leaves that file out and names it; the rest arrive", async () => {
    const src = join(localDir, 'conf-tree');
    mkdirSync(join(src, 'sub'), { recursive: true });
    writeFileSync(join(src, 'a.txt'), 'a new');
    writeFileSync(join(src, 'sub', 'roots.conf'), 'mine');
    const there = `${remoteDir}/conf-tree`;
    mkdirSync(`${there}/sub`, { recursive: true });
    writeFileSync(`${there}/a.txt`, 'a old');
    chownToUser(there);
    writeFileSync(`${there}/sub/roots.conf`, 'old', { mode: 0o644 }); // root's, as the tests run
    const info = await service.wait((await service.upload({ sessionId: SESSION, localPath: src, remotePath: there, overwrite: true })).transferId);
    expect(info).toMatchObject({
      state: 'failed',
      filesDone: 1,
      error: { code: 'EDENIED', message: `1 of 2 files did not upload. sub/roots.conf: Cannot replace ${there}/sub/roots.conf: it belongs to root and you may not write it.` },
    });
    expect(readFileSync(`${there}/a.txt`, 'utf8')).toBe('a new');
    expect(readFileSync(`${there}/sub/roots.conf`, 'utf8')).toBe('old');
    expect(statSync(`${there}/sub/roots.conf`).uid).toBe(0);
    expect([...temps(there), ...temps(`${there}/sub`)]).toEqual([]);
  });
});

describe('uploads streamed from the page', () => {
  test('chunks of the size uploadBegin suggests land as one file, renamed into place only at the end', async () => {
    const data = randomBytes(9 * MB + 4321);
    const dest = `${remoteDir}/dropped.bin`;
    const begin = (await call('sftp.uploadBegin', { sessionId: SESSION, remotePath: dest, size: data.length })) as { transferId: string; chunkBytes: number };
    // The largest a chunk may be: fewer round trips for the page.
    expect(begin.chunkBytes).toBe(SFTP_CHUNK_MAX_BYTES);
    for (let offset = 0; offset < data.length; offset += begin.chunkBytes) {
      const chunk = new Uint8Array(data.subarray(offset, offset + begin.chunkBytes));
      await call('sftp.uploadChunk', { transferId: begin.transferId, offset, data: chunk });
      if (offset === 0) {
        expect(existsSync(dest)).toBe(false);
        expect(temps(remoteDir).length).toBe(1);
      }
    }
    const entry = await call('sftp.uploadEnd', { transferId: begin.transferId });
    expect(entry).toMatchObject({ path: dest, size: data.length, type: 'file' });
    expect(readFileSync(dest).equals(data)).toBe(true);
    expect(temps(remoteDir)).toEqual([]);
    expect(service.listTransfers().find((t) => t.transferId === begin.transferId)).toMatchObject({ state: 'done', localPath: null, bytes: data.length });
  });

  test('a second uploadEnd while the first renames joins it; one after the end is refused', async () => {
    // A page whose link dropped with its uploadEnd out asks again: it must not end the file twice.
    const data = randomBytes(3 * MB);
    const dest = `${remoteDir}/ended-twice.bin`;
    const { transferId } = (await call('sftp.uploadBegin', { sessionId: SESSION, remotePath: dest, size: data.length })) as { transferId: string };
    await call('sftp.uploadChunk', { transferId, offset: 0, data: new Uint8Array(data) });
    const [first, second] = await Promise.all([call('sftp.uploadEnd', { transferId }), call('sftp.uploadEnd', { transferId })]);
    expect(first).toMatchObject({ path: dest, size: data.length });
    expect(second).toEqual(first);
    expect(readFileSync(dest).equals(data)).toBe(true);
    expect(temps(remoteDir)).toEqual([]);
    await expect(call('sftp.uploadEnd', { transferId })).rejects.toMatchObject({ code: 'EBADARGS', message: expect.stringContaining('already finished') });
  });

  test("a streamed upload over another user's file tells the page the owner changed", async () => {
    const me = accountIds(sshd.users.password.username);
    const them = accountIds(sshd.users.key.username);
    const dest = placeFile('dropped-theirs.txt', `${them.uid}:${groupId(SHARED_GROUP)}`, '0666');
    const transferId = await streamUpload(dest, 'new');
    expect(readFileSync(dest, 'utf8')).toBe('new');
    // The group is one the user belongs to, so it stays; the owner cannot.
    expect(statSync(dest)).toMatchObject({ uid: me.uid, gid: groupId(SHARED_GROUP) });
    expect(service.listTransfers().find((t) => t.transferId === transferId)?.notice).toContain(`had owner:group ${them.uid}:${groupId(SHARED_GROUP)} and now has ${me.uid}:${groupId(SHARED_GROUP)}`);
  });

  test('a streamed upload over a setgid team file keeps the group and the setgid bit', async () => {
    const me = accountIds(sshd.users.password.username);
    const dest = placeFile('dropped-team.sh', `${me.uid}:${groupId(SHARED_GROUP)}`, '2775');
    await streamUpload(dest, 'new');
    // The group is set first: a chown clears setgid, so the mode goes on after it.
    expect(statSync(dest)).toMatchObject({ uid: me.uid, gid: groupId(SHARED_GROUP) });
    expect(statSync(dest).mode & 0o7777).toBe(0o2775);
  });

  test("chunks sent several at once are written within the channel's request slots", async () => {
    const own = await connectSftp(sshd);
    const counted = countRequests(own.sftp);
    // 4 requests of 32 KiB (and their headers); three 1 MiB chunks at once would be 96 requests unbounded.
    const budget = new SftpService(() => Promise.resolve(own.sftp), { tuning: { chunkSize: 32 * 1024, writeInFlightBytes: 4 * (32 * 1024 + 64) } });
    try {
      const data = randomBytes(3 * MB);
      const dest = `${remoteDir}/dropped-budget.bin`;
      const { transferId } = await budget.uploadBegin({ sessionId: SESSION, remotePath: dest, size: data.length, overwrite: false });
      const chunks = [0, 1, 2].map((k) => budget.uploadChunk({ transferId, offset: k * MB, data: new Uint8Array(data.subarray(k * MB, (k + 1) * MB)) }));
      await Promise.all(chunks);
      await budget.uploadEnd(transferId);
      expect(readFileSync(dest).equals(data)).toBe(true);
      expect(counted.requests).toBe((3 * MB) / (32 * 1024));
      expect(counted.peak).toBe(4);
    } finally {
      await budget.dispose();
      own.client.end();
    }
  });

  test('an out-of-order chunk is refused; cancel removes the temp; later chunks get ECANCELLED', async () => {
    const dest = `${remoteDir}/dropped-cancel.bin`;
    const { transferId } = (await call('sftp.uploadBegin', { sessionId: SESSION, remotePath: dest })) as { transferId: string };
    await call('sftp.uploadChunk', { transferId, offset: 0, data: new Uint8Array(1000) });
    await expect(call('sftp.uploadChunk', { transferId, offset: 5000, data: new Uint8Array(10) })).rejects.toMatchObject({
      code: 'EBADARGS',
      details: { reason: 'bad_offset', expected: 1000 },
    });
    expect(temps(remoteDir).length).toBe(1);
    await call('sftp.cancel', { transferId });
    expect(temps(remoteDir)).toEqual([]);
    expect(existsSync(dest)).toBe(false);
    await expect(call('sftp.uploadChunk', { transferId, offset: 1000, data: new Uint8Array(10) })).rejects.toMatchObject({ code: 'ECANCELLED' });
    await expect(call('sftp.uploadChunk', { transferId: 'nope', offset: 0, data: new Uint8Array(1) })).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });

  test('an abandoned streamed upload fails after the idle timeout, saying so rather than "cancelled", temp included', async () => {
    const quick = new SftpService(provider, { streamIdleMs: 100 });
    const { transferId } = await quick.uploadBegin({ sessionId: SESSION, remotePath: `${remoteDir}/abandoned.bin`, size: 3000, overwrite: false });
    await quick.uploadChunk({ transferId, offset: 0, data: new Uint8Array(1024) });
    const ended = await quick.wait(transferId);
    expect(ended.state).toBe('failed');
    expect(ended.error).toEqual({
      code: 'ETIMEOUT',
      message: 'Nothing more of abandoned.bin came for 100 ms, at 1.0 KB of 2.9 KB, so the upload was given up; nothing was left behind.',
    });
    expect(temps(remoteDir)).toEqual([]);
    // A page that comes back to it learns why it is over.
    await expect(quick.uploadChunk({ transferId, offset: 1024, data: new Uint8Array(10) })).rejects.toMatchObject({
      code: 'EBADARGS',
      message: expect.stringContaining('has already failed: Nothing more of abandoned.bin came'),
    });
    // One whose PUT body was cut off, and never resumed, says that.
    const cut = await quick.uploadBegin({ sessionId: SESSION, remotePath: `${remoteDir}/cut-off.bin`, size: 3000, overwrite: false });
    quick.uploadLink(cut.transferId);
    await quick.uploadChunk({ transferId: cut.transferId, offset: 0, data: new Uint8Array(1024) });
    quick.uploadCut(cut.transferId);
    expect((await quick.wait(cut.transferId)).error).toEqual({
      code: 'ETIMEOUT',
      message: 'The sending of cut-off.bin was cut off at 1.0 KB of 2.9 KB and did not resume within 100 ms, so the upload was given up; nothing was left behind.',
    });
    expect(temps(remoteDir)).toEqual([]);
    await quick.dispose();
  });

  test('an upload whose sender leaves for good (its page closed or reloaded) fails at once, naming its batch; one that came back over another connection goes on', async () => {
    const dest = `${remoteDir}/left-behind.bin`;
    const first = new AbortController();
    const batch = { name: 'site', index: 3, total: 7 };
    const { transferId } = await service.uploadBegin({ sessionId: SESSION, remotePath: dest, size: 4 * MB, overwrite: false, batch }, first.signal);
    service.uploadLink(transferId, first.signal);
    // A body's first MiB, as the HTTP side hands it over.
    await service.uploadChunk({ transferId, offset: 0, data: new Uint8Array(MB) });
    // The page's link dropped and it came back over another connection: that one sends now.
    const second = new AbortController();
    service.uploadLink(transferId, second.signal);
    first.abort();
    expect(service.listTransfers().find((t) => t.transferId === transferId)).toMatchObject({ state: 'running', batch });
    second.abort();
    const ended = await service.wait(transferId);
    expect(ended.state).toBe('failed');
    expect(ended.error).toEqual({
      code: 'EIO',
      reason: 'page_left',
      message: 'The page sending left-behind.bin (file 3 of 7 of site) was closed or reloaded at 1.0 MB of 4.0 MB; nothing was left behind.',
    });
    expect(ended.batch).toEqual(batch);
    expect(temps(remoteDir)).toEqual([]);
    expect(existsSync(dest)).toBe(false);
  });
});

describe('bad transfer input', () => {
  test('missing sources, missing destination folders and type clashes fail with stable codes', async () => {
    // A source that is not there, or is neither a file nor a folder, is refused by the call itself.
    const transfers = service.listTransfers().length;
    await expect(call('sftp.download', { sessionId: SESSION, remotePath: `${remoteDir}/nope`, localPath: join(localDir, 'n') })).rejects.toMatchObject({
      code: 'ENOTFOUND',
      message: `nope does not exist in ${remoteDir}.`,
    });
    await expect(call('sftp.download', { sessionId: SESSION, remotePath: '/dev/null', localPath: join(localDir, 'n') })).rejects.toMatchObject({
      code: 'EBADARGS',
      details: { reason: 'not_a_file', path: '/dev/null' },
    });
    await expect(call('sftp.upload', { sessionId: SESSION, localPath: '/dev/null', remotePath: `${remoteDir}/null` })).rejects.toMatchObject({
      code: 'EBADARGS',
      message: 'Cannot upload /dev/null: it is neither a file nor a folder.',
      details: { reason: 'not_a_file', path: '/dev/null' },
    });
    // So is a destination folder that is not there, and a file over a folder.
    await expect(service.download({ sessionId: SESSION, remotePath: `${remoteDir}/small.txt`, localPath: join(localDir, 'no', 'dir', 'x'), overwrite: false })).rejects.toMatchObject({ code: 'ENOTFOUND' });
    await expect(service.upload({ sessionId: SESSION, localPath: join(localDir, 'small.txt'), remotePath: `${remoteDir}/no/dir/x`, overwrite: false })).rejects.toMatchObject({ code: 'ENOTFOUND' });
    mkdirSync(join(localDir, 'a-dir'), { recursive: true });
    await expect(service.download({ sessionId: SESSION, remotePath: `${remoteDir}/small.txt`, localPath: join(localDir, 'a-dir'), overwrite: true })).rejects.toMatchObject({
      code: 'EBADARGS',
      message: `Cannot download the file ${remoteDir}/small.txt over the local folder ${join(localDir, 'a-dir')}.`,
    });
    expect(service.listTransfers().length).toBe(transfers);
    await expect(call('sftp.upload', { sessionId: 'gone', localPath: bigLocal, remotePath: 'x' })).rejects.toMatchObject({ code: 'ENOTFOUND' });
    await expect(call('sftp.cancel', { transferId: 'nope' })).rejects.toMatchObject({ code: 'ENOTFOUND' });
    expect(temps(localDir)).toEqual([]);
    expect(temps(remoteDir)).toEqual([]);
  });

  test('downloading a symlink to nothing, or a loop of links, says so in the words the permissions dialog uses', async () => {
    symlinkSync('nowhere', `${remoteDir}/broken-link`);
    symlinkSync('loop2', `${remoteDir}/loop1`);
    symlinkSync('loop1', `${remoteDir}/loop2`);
    const said = {
      'broken-link': (path: string) => `Cannot download ${path}: broken-link points to nowhere, which does not exist.`,
      loop1: (path: string) => `Cannot download ${path}: loop1 points to loop2, a loop of links that never reaches a file.`,
    };
    for (const [name, message] of Object.entries(said)) {
      const remotePath = `${remoteDir}/${name}`;
      // Refused before there is a transfer, as a browser's download (sftp.downloadLink) is before any link is made.
      await expect(service.download({ sessionId: SESSION, remotePath, localPath: join(localDir, name), overwrite: false })).rejects.toMatchObject({
        code: 'ENOTFOUND',
        message: message(remotePath),
        details: { reason: 'broken_link' },
      });
      await expect(service.downloadLink({ sessionId: SESSION, remotePath })).rejects.toMatchObject({ code: 'ENOTFOUND', message: message(remotePath), details: { reason: 'broken_link', target: name === 'loop1' ? 'loop2' : 'nowhere' } });
      expect(existsSync(join(localDir, name))).toBe(false);
    }
    expect(temps(localDir)).toEqual([]);
  });

  test('a connection lost mid-download fails the transfer and removes the local temp', async () => {
    const own = await connectSftp(sshd);
    const lossy = new SftpService(() => Promise.resolve(own.sftp), { tuning: { chunkSize: 8 * 1024, readInFlightBytes: 8 * 1024, writeInFlightBytes: 8 * 1024 } });
    const dest = join(localDir, 'lost.bin');
    writeFileSync(`${remoteDir}/lost-src.bin`, readFileSync(bigLocal));
    const { transferId } = await lossy.download({ sessionId: SESSION, remotePath: `${remoteDir}/lost-src.bin`, localPath: dest, overwrite: false });
    await firstBytes(lossy, transferId);
    own.client.destroy();
    const info = await lossy.wait(transferId);
    expect(info.state).toBe('failed');
    expect(info.error?.code).toBe('ESESSIONCLOSED');
    expect(existsSync(dest)).toBe(false);
    expect(temps(localDir)).toEqual([]);
    await lossy.dispose();
  });
});

describe('lost connections', () => {
  test('closing a session mid-upload removes the temps of its uploads, streamed or not, before the close answers', () =>
    withApp('closing', async (app, c, connectionId) => {
      const { sessionId } = await c.call('ssh.open', { connectionId });
      const { transferId } = await c.call('sftp.upload', { sessionId, localPath: bigLocal, remotePath: `${remoteDir}/closed-mid-way.bin` });
      // A page's upload: begun, one chunk in, the rest never comes.
      const streamed = await c.call('sftp.uploadBegin', { sessionId, remotePath: `${remoteDir}/closed-streamed.bin`, size: 2 * MB });
      await c.call('sftp.uploadChunk', { transferId: streamed.transferId, offset: 0, data: new Uint8Array(MB) });
      await firstBytes(app.sftp, transferId);
      expect(temps(remoteDir).filter((n) => n.startsWith('.closed-'))).toHaveLength(2);

      await c.call('sessions.close', { sessionId });
      expect(temps(remoteDir)).toEqual([]);
      expect(existsSync(`${remoteDir}/closed-mid-way.bin`)).toBe(false);
      expect(existsSync(`${remoteDir}/closed-streamed.bin`)).toBe(false);
      expect(await app.sftp.wait(transferId)).toMatchObject({ state: 'cancelled' });
      expect(await app.sftp.wait(streamed.transferId)).toMatchObject({ state: 'cancelled' });
    }));

  test('closing a session whose SFTP channel went mid-upload removes the temp over a fresh channel first', () =>
    withApp('channel gone', async (app, c, connectionId) => {
      const { sessionId } = await c.call('ssh.open', { connectionId });
      const { transferId } = await c.call('sftp.upload', { sessionId, localPath: bigLocal, remotePath: `${remoteDir}/channel-gone.bin` });
      await firstBytes(app.sftp, transferId);
      (await app.ssh.sftp(sessionId)).end(); // the SFTP channel closes; the connection stays
      expect(await app.sftp.wait(transferId)).toMatchObject({ state: 'failed' });
      expect(temps(remoteDir).filter((n) => n.startsWith('.channel-gone.bin.wraith-part-'))).toHaveLength(1);

      await c.call('sessions.close', { sessionId });
      expect(temps(remoteDir)).toEqual([]);
      expect(existsSync(`${remoteDir}/channel-gone.bin`)).toBe(false);
    }));

  test('a temp a lost connection kept goes when the next session to that server opens, with no SFTP call', () =>
    withApp('reopen', async (app, c, connectionId) => {
      const first = await c.call('ssh.open', { connectionId });
      const { transferId } = await c.call('sftp.upload', { sessionId: first.sessionId, localPath: bigLocal, remotePath: `${remoteDir}/lost-mid-way.bin` });
      await firstBytes(app.sftp, transferId);
      app.ssh.getClient(first.sessionId).destroy();
      expect(await app.sftp.wait(transferId)).toMatchObject({ state: 'failed', error: { code: 'ESESSIONCLOSED' } });
      expect(temps(remoteDir).filter((n) => n.startsWith('.lost-mid-way.bin.wraith-part-'))).toHaveLength(1);

      // A terminal to the same server, and nothing else.
      await c.call('ssh.open', { connectionId });
      await until('the temp removed', () => temps(remoteDir).length === 0);
      expect(existsSync(`${remoteDir}/lost-mid-way.bin`)).toBe(false);
    }));

  test('an upload cut off by a lost connection leaves its temp only until that connection works again', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'wraith-sftp-orphan-'));
    const app = new App({ dataDir, host: 'in-process' });
    const c = connectInProcess(app);
    c.subscribe(['session.']);
    // Looks like one of our temps, but no transfer of ours left it: not ours to delete.
    const foreign = '.other.bin.wraith-part-0badf00d';
    writeFileSync(join(remoteDir, foreign), 'someone else is uploading this');
    try {
      const conn = await savePasswordConnection(c, sshd, 'orphans');
      const { sessionId } = await c.call('ssh.open', { connectionId: conn.id });
      const dest = `${remoteDir}/cut-off.bin`;
      const { transferId } = await c.call('sftp.upload', { sessionId, localPath: bigLocal, remotePath: dest });
      await firstBytes(app.sftp, transferId);
      app.ssh.getClient(sessionId).destroy(); // the connection dies mid-upload

      const info = await app.sftp.wait(transferId);
      expect(info).toMatchObject({ state: 'failed', error: { code: 'ESESSIONCLOSED' } });
      expect(existsSync(dest)).toBe(false);
      // The dead connection could not delete the temp …
      const left = temps(remoteDir).filter((n) => n.startsWith('.cut-off.bin.wraith-part-'));
      expect(left).toHaveLength(1);
      await until('disconnected', async () => (await c.call('sessions.list')).find((s) => s.id === sessionId && s.state === 'disconnected'));

      // … the first SFTP call once the session is back removes it, before it answers.
      await c.call('ssh.reconnect', { sessionId });
      const listed = await c.call('sftp.list', { sessionId, path: remoteDir, showHidden: true });
      expect(listed.entries.map((e) => e.name)).not.toContain(left[0]);
      expect(listed.entries.map((e) => e.name)).toContain(foreign);
      expect(temps(remoteDir)).toEqual([foreign]);
      expect(existsSync(dest)).toBe(false);
    } finally {
      c.close();
      await app.dispose();
      rmSync(join(remoteDir, foreign), { force: true });
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
