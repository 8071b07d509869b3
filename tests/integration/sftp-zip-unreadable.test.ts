/**
 * A folder downloaded as a zip (sftp.downloadLink), or to disk (sftp.download, the desktop app),
 * that holds items this login cannot read, on a real OpenSSH sshd: a file of mode 000 and a folder
 * of mode 000 owned by another user are left out, the rest comes whole, the zip (or the folder)
 * lists what it left out and why, and the transfer's notice names them. A folder that cannot be
 * listed itself still fails, saying so. On disk, a file the server refuses despite its mode (an
 * ACL, set with setfacl from Debian's acl package) is left out too. So are symlinks to nowhere and
 * loops of links, listed in the words a download of one alone fails with, and special files (a
 * named pipe, a socket, a link to one), which have no contents to copy.
 */
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { Client } from 'ssh2';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { linkToNowhere } from '../../src-main/common/contract/sftp.js';
import { SftpService } from '../../src-main/node/sftp/sftp-service.js';
import { sftpServiceOn } from '../fixtures/sftp-service.js';
import { type SshdHandle, startSshd } from '../fixtures/sshd.js';
import { failure } from '../fixtures/errors.js';
import { readZip } from '../fixtures/zip.js';

const SESSION = 'session-zip';
let sshd: SshdHandle;
let client: Client;
let service: SftpService;
let dir: string;

/** Runs a shell command as root on this machine, where the sshd's files are. */
const sh = (script: string) => execFileSync('sh', ['-c', script]);

/** Fetches a download link as the HTTP side does (claimDownload), into memory. */
async function fetchLink(url: string): Promise<Buffer> {
  const ticket = url.split('/')[2] ?? '';
  const claim = service.claimDownload(ticket);
  if (!claim) throw new Error(`no download for ${url}`);
  const chunks: Buffer[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      chunks.push(chunk);
      cb();
    },
  });
  const finished = new Promise<void>((resolve, reject) => {
    sink.once('finish', resolve);
    sink.once('close', () => reject(new Error('the download was cut off')));
  });
  claim.start(sink);
  await finished;
  return Buffer.concat(chunks);
}

beforeAll(async () => {
  sshd = await startSshd();
  ({ client, service } = await sftpServiceOn(sshd, SESSION));
  const home = (await service.realpath(SESSION, '.')).path;
  dir = `${home}/zip-${randomBytes(4).toString('hex')}`;
  sh(`mkdir -p '${dir}' && chown ${sshd.users.password.username} '${dir}'`);
});

afterAll(async () => {
  await service?.dispose();
  client?.end();
  if (dir) sh(`rm -rf '${dir}'`);
  await sshd?.stop();
});

/**
 * A folder of this login's with, inside, what it cannot read: a file of mode 000 and one of mode
 * 600 of another user, and a folder of mode 000 of another user; and a file named as the list of
 * left-out items would be.
 */
function unreadableTree(name: string): string {
  const me = sshd.users.password.username;
  const them = sshd.users.key.username;
  const tree = `${dir}/${name}`;
  sh(
    [
      `mkdir -p '${tree}/sub' '${tree}/locked'`,
      `printf alpha > '${tree}/a.txt'`,
      `printf beta > '${tree}/sub/b.txt'`,
      // Readable by its owner only, and the owner is this login: it comes.
      `printf private > '${tree}/mine.txt' && chmod 600 '${tree}/mine.txt'`,
      // A name the list of left-out items would take: the list takes another.
      `printf own > '${tree}/WRAITH-NOT-INCLUDED.txt'`,
      `chown -R ${me} '${tree}'`,
      `printf secret > '${tree}/secret.txt' && chown ${them} '${tree}/secret.txt' && chmod 000 '${tree}/secret.txt'`,
      `printf theirs > '${tree}/sub/theirs.txt' && chown ${them} '${tree}/sub/theirs.txt' && chmod 600 '${tree}/sub/theirs.txt'`,
      `printf inner > '${tree}/locked/inner.txt' && chown -R ${them} '${tree}/locked' && chmod 000 '${tree}/locked'`,
    ].join(' && '),
  );
  return tree;
}

describe('a folder zip with items the login cannot read', () => {
  test('leaves out a file and a folder of mode 000 owned by another user, lists them in the zip and names them in the notice; a folder it cannot list fails', async () => {
    const me = sshd.users.password.username;
    const them = sshd.users.key.username;
    const tree = unreadableTree('tree');
    const link = await service.downloadLink({ sessionId: SESSION, remotePath: tree });
    expect(link.name).toBe('tree.zip');
    const zip = await fetchLink(link.url);
    expect(zip.length).toBe(link.size);
    const entries = await readZip(zip);
    expect(Object.keys(entries).sort()).toEqual(['WRAITH-NOT-INCLUDED-2.txt', 'WRAITH-NOT-INCLUDED.txt', 'a.txt', 'mine.txt', 'sub/', 'sub/b.txt']);
    expect(entries['a.txt']?.data.toString()).toBe('alpha');
    expect(entries['mine.txt']?.data.toString()).toBe('private');
    expect(entries['sub/b.txt']?.data.toString()).toBe('beta');
    expect(entries['WRAITH-NOT-INCLUDED.txt']?.data.toString()).toBe('own');

    const list = entries['WRAITH-NOT-INCLUDED-2.txt']?.data.toString() ?? '';
    expect(list).toContain(`These items of ${tree} could not be read`);
    expect(list).toContain(`locked/\tCannot list ${tree}/locked: permission denied on the server.`);
    expect(list).toContain(`secret.txt\tCannot open ${tree}/secret.txt: permission denied on the server.`);
    expect(list).toContain(`sub/theirs.txt\tCannot open ${tree}/sub/theirs.txt: permission denied on the server.`);
    expect(list).not.toContain('inner.txt');

    const t = await service.wait(link.transferId);
    expect(t).toMatchObject({ state: 'done', kind: 'folder', filesDone: 4, filesTotal: 4, bytes: 5 + 4 + 7 + 3, totalBytes: 5 + 4 + 7 + 3 });
    expect(t.notice).toBe(
      '3 items could not be read and were left out: locked/, secret.txt, sub/theirs.txt. The zip lists them, with the server\'s reasons, in WRAITH-NOT-INCLUDED-2.txt.',
    );

    // Everything readable (a file only its owner, this login, may read): no list, no notice.
    const plain = `${dir}/plain`;
    sh(`mkdir -p '${plain}' && printf x > '${plain}/x.txt' && chmod 600 '${plain}/x.txt' && chown -R ${me} '${plain}'`);
    const plainLink = await service.downloadLink({ sessionId: SESSION, remotePath: plain });
    expect(Object.keys(await readZip(await fetchLink(plainLink.url)))).toEqual(['x.txt']);
    expect((await service.wait(plainLink.transferId)).notice).toBeNull();

    // The folder itself cannot be listed: nothing to zip, and the reason, with no transfer begun.
    const closed = `${dir}/closed`;
    sh(`mkdir -p '${closed}' && printf x > '${closed}/x.txt' && chown -R ${them} '${closed}' && chmod 000 '${closed}'`);
    const before = service.listTransfers(SESSION).length;
    const err = await failure(service.downloadLink({ sessionId: SESSION, remotePath: closed }));
    expect(err.code).toBe('EDENIED');
    expect(err.message).toBe(`Cannot list ${closed}: permission denied on the server.`);
    expect(service.listTransfers(SESSION).length).toBe(before);
  });
});

describe('a folder downloaded to disk (the desktop app) with items the login cannot read', () => {
  test('leaves out the same items, writes the list into the folder, and names them in the notice', async () => {
    const tree = unreadableTree('disk-tree');
    const local = mkdtempSync(join(tmpdir(), 'wraith-unreadable-'));
    try {
      const dest = join(local, 'disk-tree');
      const { transferId } = await service.download({ sessionId: SESSION, remotePath: tree, localPath: dest, overwrite: false });
      const t = await service.wait(transferId);
      expect(t).toMatchObject({ state: 'done', kind: 'folder', filesDone: 4, filesTotal: 4, bytes: 5 + 4 + 7 + 3, totalBytes: 5 + 4 + 7 + 3 });
      expect(t.notice).toBe(
        "3 items could not be read and were left out: locked/, secret.txt, sub/theirs.txt. The folder lists them, with the server's reasons, in WRAITH-NOT-INCLUDED-2.txt.",
      );
      const files = readdirSync(dest, { recursive: true }).map(String).sort();
      expect(files).toEqual(['WRAITH-NOT-INCLUDED-2.txt', 'WRAITH-NOT-INCLUDED.txt', 'a.txt', 'mine.txt', 'sub', join('sub', 'b.txt')]);
      expect(readFileSync(join(dest, 'sub', 'b.txt'), 'utf8')).toBe('beta');
      const list = readFileSync(join(dest, 'WRAITH-NOT-INCLUDED-2.txt'), 'utf8');
      expect(list).toContain(`These items of ${tree} could not be read when this folder was downloaded, and are not in it:`);
      expect(list).toContain(`secret.txt\tCannot open ${tree}/secret.txt: permission denied on the server.`);
      expect(list).toContain(`locked/\tCannot list ${tree}/locked: permission denied on the server.`);

      // Again into the same folder (overwrite): the list's name is free there too, so nothing of it is replaced.
      writeFileSync(join(dest, 'WRAITH-NOT-INCLUDED-3.txt'), 'mine, not the list');
      rmSync(join(dest, 'WRAITH-NOT-INCLUDED-2.txt'));
      writeFileSync(join(dest, 'WRAITH-NOT-INCLUDED-2.txt'), 'also mine');
      const again = await service.wait((await service.download({ sessionId: SESSION, remotePath: tree, localPath: dest, overwrite: true })).transferId);
      expect(again).toMatchObject({ state: 'done', notice: expect.stringContaining('in WRAITH-NOT-INCLUDED-4.txt.') });
      expect(readFileSync(join(dest, 'WRAITH-NOT-INCLUDED-2.txt'), 'utf8')).toBe('also mine');
      expect(readFileSync(join(dest, 'WRAITH-NOT-INCLUDED-3.txt'), 'utf8')).toBe('mine, not the list');
      expect(readFileSync(join(dest, 'WRAITH-NOT-INCLUDED-4.txt'), 'utf8')).toContain('could not be read when this folder was downloaded');
    } finally {
      rmSync(local, { recursive: true, force: true });
    }
  });

  test('leaves out a file its mode lets everyone read that the server still refuses (an ACL), found when its turn comes', async () => {
    const me = sshd.users.password.username;
    const tree = `${dir}/acl-tree`;
    // 644, so not asked about beforehand; the ACL entry for this login takes every right away.
    sh(
      `mkdir -p '${tree}' && printf open > '${tree}/open.txt' && printf denied > '${tree}/denied.txt' && chmod 644 '${tree}/denied.txt' ` +
        `&& chown -R ${me} '${tree}' && chown root '${tree}/denied.txt' && setfacl -m u:${me}:--- '${tree}/denied.txt'`,
    );
    const local = mkdtempSync(join(tmpdir(), 'wraith-acl-'));
    try {
      const dest = join(local, 'acl-tree');
      const { transferId } = await service.download({ sessionId: SESSION, remotePath: tree, localPath: dest, overwrite: false });
      const t = await service.wait(transferId);
      expect(t).toMatchObject({ state: 'done', kind: 'folder', filesDone: 1, filesTotal: 1, bytes: 4, totalBytes: 4 });
      expect(t.notice).toBe("1 item could not be read and was left out: denied.txt. The folder lists it, with the server's reasons, in WRAITH-NOT-INCLUDED.txt.");
      expect(readdirSync(dest).sort()).toEqual(['WRAITH-NOT-INCLUDED.txt', 'open.txt']);
      expect(readFileSync(join(dest, 'WRAITH-NOT-INCLUDED.txt'), 'utf8')).toContain(`denied.txt\tCannot open ${tree}/denied.txt: permission denied on the server.`);
    } finally {
      rmSync(local, { recursive: true, force: true });
    }
  });
});

describe('links in a folder that lead to no file', () => {
  test('are left out of a zip and of a folder on disk, listed in the words a download of one alone fails with', async () => {
    const me = sshd.users.password.username;
    const tree = `${dir}/links`;
    sh(
      `mkdir -p '${tree}' && printf ok > '${tree}/ok.txt' && ln -s ok.txt '${tree}/alias' && ln -s nowhere '${tree}/dead' ` +
        `&& ln -s loop2 '${tree}/loop1' && ln -s loop1 '${tree}/loop2' && chown -hR ${me} '${tree}'`,
    );
    const why = {
      dead: linkToNowhere('dead', 'nowhere'),
      loop1: linkToNowhere('loop1', 'loop2', true),
      loop2: linkToNowhere('loop2', 'loop1', true),
    };
    // One alone: the download is refused with the sentence.
    const local = mkdtempSync(join(tmpdir(), 'wraith-links-'));
    try {
      const alone = await failure(service.download({ sessionId: SESSION, remotePath: `${tree}/dead`, localPath: join(local, 'dead'), overwrite: false }));
      expect(alone).toMatchObject({ code: 'ENOTFOUND', message: `Cannot download ${tree}/dead: ${why.dead}.` });

      const link = await service.downloadLink({ sessionId: SESSION, remotePath: tree });
      const entries = await readZip(await fetchLink(link.url));
      expect(Object.keys(entries).sort()).toEqual(['WRAITH-NOT-INCLUDED.txt', 'alias', 'ok.txt']);
      const zipList = entries['WRAITH-NOT-INCLUDED.txt']?.data.toString() ?? '';
      for (const [name, sentence] of Object.entries(why)) expect(zipList).toContain(`${name}\tCannot open ${tree}/${name}: ${sentence}.`);
      expect((await service.wait(link.transferId)).notice).toBe(
        "3 items could not be read and were left out: dead, loop1, loop2. The zip lists them, with the server's reasons, in WRAITH-NOT-INCLUDED.txt.",
      );

      const dest = join(local, 'links');
      const disk = await service.wait((await service.download({ sessionId: SESSION, remotePath: tree, localPath: dest, overwrite: false })).transferId);
      expect(disk).toMatchObject({ state: 'done', filesDone: 2, filesTotal: 2 });
      expect(disk.notice).toBe("3 items could not be read and were left out: dead, loop1, loop2. The folder lists them, with the server's reasons, in WRAITH-NOT-INCLUDED.txt.");
      expect(readdirSync(dest).sort()).toEqual(['WRAITH-NOT-INCLUDED.txt', 'alias', 'ok.txt']);
      const diskList = readFileSync(join(dest, 'WRAITH-NOT-INCLUDED.txt'), 'utf8');
      for (const [name, sentence] of Object.entries(why)) expect(diskList).toContain(`${name}\tCannot open ${tree}/${name}: ${sentence}.`);
    } finally {
      rmSync(local, { recursive: true, force: true });
    }
  });
});

describe('links in a folder that lead to folders', () => {
  test('are left out of a zip and of a folder on disk (a link back up would never end), and listed with why', async () => {
    const me = sshd.users.password.username;
    const tree = `${dir}/folder-links`;
    sh(`mkdir -p '${tree}/conf' && printf ok > '${tree}/conf/a.conf' && ln -s conf '${tree}/enabled' && ln -s .. '${tree}/conf/up' && chown -hR ${me} '${tree}'`);
    const why = (name: string, to: string) => `${name} is a link to the folder ${to}, and a folder download does not follow links to folders (they can lead round in a loop); download that folder on its own.`;
    const local = mkdtempSync(join(tmpdir(), 'wraith-folder-links-'));
    try {
      const link = await service.downloadLink({ sessionId: SESSION, remotePath: tree });
      const entries = await readZip(await fetchLink(link.url));
      expect(Object.keys(entries).sort()).toEqual(['WRAITH-NOT-INCLUDED.txt', 'conf/', 'conf/a.conf']);
      const zipList = entries['WRAITH-NOT-INCLUDED.txt']?.data.toString() ?? '';
      expect(zipList).toContain(`conf/up/\t${why('up', '..')}`);
      expect(zipList).toContain(`enabled/\t${why('enabled', 'conf')}`);
      expect((await service.wait(link.transferId)).notice).toBe(
        "2 items could not be read and were left out: conf/up/, enabled/. The zip lists them, with the server's reasons, in WRAITH-NOT-INCLUDED.txt.",
      );

      const dest = join(local, 'folder-links');
      const disk = await service.wait((await service.download({ sessionId: SESSION, remotePath: tree, localPath: dest, overwrite: false })).transferId);
      expect(disk).toMatchObject({ state: 'done', filesDone: 1, filesTotal: 1 });
      expect(readdirSync(dest).sort()).toEqual(['WRAITH-NOT-INCLUDED.txt', 'conf']);
      expect(readFileSync(join(dest, 'WRAITH-NOT-INCLUDED.txt'), 'utf8')).toContain(`enabled/\t${why('enabled', 'conf')}`);
    } finally {
      rmSync(local, { recursive: true, force: true });
    }
  });
});

describe('special files in a folder', () => {
  test('a named pipe, a socket and a link to the pipe are left out of a zip and of a folder on disk, each listed with what it is, and counted in the notice', async () => {
    const me = sshd.users.password.username;
    const tree = `${dir}/special`;
    sh(`mkdir -p '${tree}/sub' && printf ok > '${tree}/ok.txt' && mkfifo '${tree}/sub/pipe' && ln -s pipe '${tree}/sub/pipe-link' && chown -hR ${me} '${tree}'`);
    // A socket a program on the server listens on (bound here: the sshd is local).
    const listening = createServer();
    await new Promise<void>((resolve) => listening.listen(`${tree}/app.sock`, resolve));
    const why = {
      'app.sock': 'app.sock is a socket: programs talk to each other through it while they run, so it has no contents of its own to copy.',
      'sub/pipe': 'pipe is a named pipe (FIFO): one program passes data through it to another while both run, so it has no contents of its own to copy.',
      'sub/pipe-link':
        'pipe-link is a link to pipe, a named pipe (FIFO): one program passes data through it to another while both run, so it has no contents of its own to copy.',
    };
    const notice = (into: string) => `3 items could not be read and were left out: app.sock, sub/pipe, sub/pipe-link. ${into} lists them, with the server's reasons, in WRAITH-NOT-INCLUDED.txt.`;
    const local = mkdtempSync(join(tmpdir(), 'wraith-special-'));
    try {
      const link = await service.downloadLink({ sessionId: SESSION, remotePath: tree });
      const entries = await readZip(await fetchLink(link.url));
      expect(Object.keys(entries).sort()).toEqual(['WRAITH-NOT-INCLUDED.txt', 'ok.txt', 'sub/']);
      const zipList = entries['WRAITH-NOT-INCLUDED.txt']?.data.toString() ?? '';
      for (const [rel, reason] of Object.entries(why)) expect(zipList).toContain(`\n${rel}\t${reason}\n`);
      expect(await service.wait(link.transferId)).toMatchObject({ state: 'done', filesDone: 1, filesTotal: 1, bytes: 2, totalBytes: 2, notice: notice('The zip') });

      const dest = join(local, 'special');
      const disk = await service.wait((await service.download({ sessionId: SESSION, remotePath: tree, localPath: dest, overwrite: false })).transferId);
      expect(disk).toMatchObject({ state: 'done', filesDone: 1, filesTotal: 1, bytes: 2, totalBytes: 2, notice: notice('The folder') });
      expect(readdirSync(dest, { recursive: true }).map(String).sort()).toEqual(['WRAITH-NOT-INCLUDED.txt', 'ok.txt', 'sub']);
      const diskList = readFileSync(join(dest, 'WRAITH-NOT-INCLUDED.txt'), 'utf8');
      for (const [rel, reason] of Object.entries(why)) expect(diskList).toContain(`\n${rel}\t${reason}\n`);
    } finally {
      await new Promise((resolve) => listening.close(resolve));
      rmSync(local, { recursive: true, force: true });
    }
  });
});
