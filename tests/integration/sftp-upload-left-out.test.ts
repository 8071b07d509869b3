/**
 * A local folder uploaded (sftp.upload) that holds what an upload cannot copy, to a real OpenSSH
 * sshd: named pipes, sockets and links to them (no contents of their own), links that lead to no
 * file (one to nowhere, a loop of links) and links to folders (not followed: they can loop) are
 * left out, and so are a folder and a file the local user may not read. The rest arrives whole,
 * and the transfer's notice names what was left out in the words a folder download's does. The
 * tests run as root, who reads everything: the unreadable items are met as `nobody` (seteuid for
 * the upload's length), as a Wraith of an ordinary user would meet them.
 */
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from 'ssh2';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { SftpService } from '../../src-main/node/sftp/sftp-service.js';
import { failure } from '../fixtures/errors.js';
import { sftpServiceOn } from '../fixtures/sftp-service.js';
import { type SshdHandle, startSshd } from '../fixtures/sshd.js';

const SESSION = 'session-upload-left-out';
const NOBODY = 65534;
let sshd: SshdHandle;
let client: Client;
let service: SftpService;
let dir: string;
let local: string;

/** Runs a shell command as root on this machine, where the sshd's files are. */
const sh = (script: string) => execFileSync('sh', ['-c', script]).toString();

/** What a folder on the server holds, '/'-separated paths, sorted. */
const onServer = (path: string) => sh(`cd '${path}' && find . -mindepth 1 | cut -c3- | sort`).split('\n').filter(Boolean);

beforeAll(async () => {
  sshd = await startSshd();
  ({ client, service } = await sftpServiceOn(sshd, SESSION));
  const home = (await service.realpath(SESSION, '.')).path;
  dir = `${home}/up-${randomBytes(4).toString('hex')}`;
  sh(`mkdir -p '${dir}' && chown ${sshd.users.password.username} '${dir}'`);
  local = mkdtempSync(join(tmpdir(), 'wraith-up-left-out-'));
  // nobody walks it too (below).
  chmodSync(local, 0o755);
});

afterAll(async () => {
  await service?.dispose();
  client?.end();
  if (dir) sh(`rm -rf '${dir}'`);
  if (local) rmSync(local, { recursive: true, force: true });
  await sshd?.stop();
});

describe('a folder upload with items it cannot copy', () => {
  test('named pipes, sockets, links to them, to nowhere and to folders are left out and named in the notice; the rest arrives', async () => {
    const tree = join(local, 'special');
    mkdirSync(join(tree, 'sub'), { recursive: true });
    writeFileSync(join(tree, 'ok.txt'), 'ok');
    writeFileSync(join(tree, 'sub', 'b.txt'), 'beta');
    sh(`mkfifo '${tree}/sub/pipe'`);
    symlinkSync('sub/pipe', join(tree, 'pipe-link'));
    symlinkSync('no-such-file', join(tree, 'dead'));
    symlinkSync('sub', join(tree, 'folder-link'));
    // A link to a file is the file it points to.
    symlinkSync('ok.txt', join(tree, 'file-link'));
    // A socket a program listens on.
    const listening = createServer();
    await new Promise<void>((resolve) => listening.listen(join(tree, 'app.sock'), resolve));
    try {
      const remote = `${dir}/special`;
      const t = await service.wait((await service.upload({ sessionId: SESSION, localPath: tree, remotePath: remote, overwrite: false })).transferId);
      expect(t).toMatchObject({ state: 'done', kind: 'folder', filesDone: 3, filesTotal: 3, bytes: 2 + 4 + 2, totalBytes: 2 + 4 + 2 });
      // Sorted, folders with their slash, as a folder download's notice; no list file: nothing was added to the server's folder.
      expect(t.notice).toBe('5 items could not be read and were left out: app.sock, dead, folder-link/, pipe-link, sub/pipe.');
      expect(onServer(remote)).toEqual(['file-link', 'ok.txt', 'sub', 'sub/b.txt']);
      expect(sh(`cat '${remote}/file-link' '${remote}/sub/b.txt'`)).toBe('okbeta');
    } finally {
      await new Promise((resolve) => listening.close(resolve));
    }
  });

  test('a folder and a file the local user may not read, and a loop of links, are left out and named; into a folder already there too', async () => {
    const tree = join(local, 'unreadable');
    mkdirSync(join(tree, 'locked'), { recursive: true });
    writeFileSync(join(tree, 'a.txt'), 'alpha');
    writeFileSync(join(tree, 'locked', 'inner.txt'), 'inner');
    chmodSync(join(tree, 'locked'), 0o000);
    writeFileSync(join(tree, 'secret.txt'), 'secret');
    chmodSync(join(tree, 'secret.txt'), 0o000);
    symlinkSync('loop', join(tree, 'loop'));
    const remote = `${dir}/unreadable`;
    sh(`mkdir -p '${remote}' && chown ${sshd.users.password.username} '${remote}'`);

    // Process-wide, and this file's alone: vitest runs each test file in a process of its own (pool 'forks').
    process.setegid?.(NOBODY);
    process.seteuid?.(NOBODY);
    let t;
    try {
      t = await service.wait((await service.upload({ sessionId: SESSION, localPath: tree, remotePath: remote, overwrite: true })).transferId);
    } finally {
      process.seteuid?.(0);
      process.setegid?.(0);
    }
    expect(t).toMatchObject({ state: 'done', kind: 'folder', filesDone: 1, filesTotal: 1, bytes: 5, totalBytes: 5 });
    expect(t.notice).toBe('3 items could not be read and were left out: locked/, loop, secret.txt.');
    // Nothing of what was left out stands in for it on the server: no empty folder, no empty file.
    expect(onServer(remote)).toEqual(['a.txt']);
  });
});

describe('what an upload leaves out, and why', () => {
  test('the transfer lists every item it left out with its reason, beyond the five its notice names', async () => {
    const tree = join(local, 'many');
    mkdirSync(tree);
    writeFileSync(join(tree, 'ok.txt'), 'ok');
    for (const n of [1, 2, 3, 4, 5]) sh(`mkfifo '${tree}/pipe${n}'`);
    symlinkSync('gone.txt', join(tree, 'dead'));
    symlinkSync('loop', join(tree, 'loop'));
    const t = await service.wait((await service.upload({ sessionId: SESSION, localPath: tree, remotePath: `${dir}/many`, overwrite: false })).transferId);
    expect(t.notice).toBe('7 items could not be read and were left out: dead, loop, pipe1, pipe2, pipe3 and 2 more.');
    const pipe = (n: number) => ({ path: `pipe${n}`, folder: false, reason: `pipe${n} is a named pipe (FIFO): one program passes data through it to another while both run, so it has no contents of its own to copy.` });
    expect(t.leftOut).toEqual([
      { path: 'dead', folder: false, reason: `Cannot upload local ${join(tree, 'dead')}: dead points to gone.txt, which does not exist.` },
      { path: 'loop', folder: false, reason: `Cannot upload local ${join(tree, 'loop')}: loop points to loop, a loop of links that never reaches a file.` },
      ...[1, 2, 3, 4, 5].map(pipe),
    ]);
  });

  test('a single upload of a link that leads to no file is refused in the words a folder upload leaves one out with, not "no such file or directory"', async () => {
    const tree = join(local, 'links');
    mkdirSync(tree);
    symlinkSync('gone.txt', join(tree, 'dead'));
    symlinkSync('loop', join(tree, 'loop'));
    const folder = await service.wait((await service.upload({ sessionId: SESSION, localPath: tree, remotePath: `${dir}/links`, overwrite: false })).transferId);
    expect(folder.leftOut?.map((i) => i.path)).toEqual(['dead', 'loop']);
    for (const item of folder.leftOut ?? []) {
      const alone = join(tree, item.path);
      const refused = await failure(service.upload({ sessionId: SESSION, localPath: alone, remotePath: `${dir}/${item.path}`, overwrite: false }));
      expect(refused).toMatchObject({ code: 'ENOTFOUND', message: item.reason, details: { reason: 'broken_link', path: alone } });
    }
    expect(folder.leftOut?.[0]?.reason).toBe(`Cannot upload local ${join(tree, 'dead')}: dead points to gone.txt, which does not exist.`);
  });
});
