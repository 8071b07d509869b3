/**
 * SftpService against the real OpenSSH sshd (internal-sftp): browsing, edits, bad input.
 * The SFTP channel comes from a plain ssh2 Client, as SshService will hand it out.
 */
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'ssh2';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { linkToNowhere } from '../../src-main/common/contract/sftp.js';
import { WraithError } from '../../src-main/common/errors.js';
import { App } from '../../src-main/node/app.js';
import { connectInProcess } from '../../src-main/node/in-process.js';
import { Router } from '../../src-main/node/router.js';
import { registerSftpHandlers } from '../../src-main/node/sftp/sftp-handlers.js';
import { RemoteFs } from '../../src-main/node/sftp/remote-fs.js';
import { SftpService } from '../../src-main/node/sftp/sftp-service.js';
import { SHARED_GROUP, type SshdHandle, accountIds, groupId, startSshd, savePasswordConnection, connectSftp } from '../fixtures/sshd.js';
import { sftpServiceOn } from '../fixtures/sftp-service.js';

const SESSION = 'session-1';
let sshd: SshdHandle;
let client: Client;
let service: SftpService;
let router: Router;
/** The test's remote folder, also readable directly on this machine (the sshd is local). */
let dir: string;

/** Puts a file straight on the server's disk (we are root on the same machine), owned by the SFTP user. */
function put(path: string, data: string | Buffer, mode = 0o644): void {
  writeFileSync(path, data, { mode });
  const uid = Number(execFileSync('id', ['-u', sshd.users.password.username], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', sshd.users.password.username], { encoding: 'utf8' }).trim());
  chownSync(path, uid, gid);
}

/** Calls through the contract (zod in, zod out), as the UI and the XO do. */
function call(method: string, params: unknown): Promise<unknown> {
  return router.call(method, params, { clientId: 'test', origin: 'test' });
}

async function codeOf(p: Promise<unknown>): Promise<{ code: string; message: string; reason: unknown }> {
  try {
    await p;
  } catch (err) {
    if (err instanceof WraithError) return { code: err.code, message: err.message, reason: err.details?.reason };
    throw err;
  }
  throw new Error('expected a failure');
}

beforeAll(async () => {
  sshd = await startSshd();
  ({ client, service } = await sftpServiceOn(sshd, SESSION));
  router = new Router();
  registerSftpHandlers(router, service);
  const home = (await service.realpath(SESSION, '.')).path;
  dir = `${home}/ops-${randomBytes(4).toString('hex')}`;
  await service.mkdir({ sessionId: SESSION, path: dir, parents: false });
});

afterAll(async () => {
  if (service && dir) await service.remove({ sessionId: SESSION, path: dir, recursive: true }).catch(() => undefined);
  await service?.dispose();
  client?.end();
  await sshd?.stop();
});

describe('browsing and changes', () => {
  test('realpath resolves "." to the login directory', async () => {
    expect(await call('sftp.realpath', { sessionId: SESSION })).toEqual({ path: '/home/wraith-pw' });
  });

  test('mkdir, list, stat, rename, chmod and remove work on real files', async () => {
    await service.mkdir({ sessionId: SESSION, path: `${dir}/a/b/c`, parents: true });
    put(`${dir}/a/hello.txt`, 'hello\n');
    put(`${dir}/a/.hidden`, 'x');
    await service.write({ sessionId: SESSION, path: `${dir}/a/zeta.txt`, text: 'z' });

    const listed = (await call('sftp.list', { sessionId: SESSION, path: `${dir}/a` })) as {
      path: string;
      entries: { name: string; type: string; size: number; modeOctal: string; owner: string | null; mtime: string }[];
    };
    expect(listed.path).toBe(`${dir}/a`);
    // Folders first, then by name; hidden files only on request.
    expect(listed.entries.map((e) => e.name)).toEqual(['b', 'hello.txt', 'zeta.txt']);
    const hello = listed.entries.find((e) => e.name === 'hello.txt');
    expect(hello).toMatchObject({ type: 'file', size: 6, owner: 'wraith-pw' });
    expect(Date.parse(hello?.mtime ?? '')).toBeGreaterThan(Date.now() - 3600_000);
    const withHidden = (await call('sftp.list', { sessionId: SESSION, path: `${dir}/a`, showHidden: true })) as { entries: { name: string }[]; hidden: number };
    expect(withHidden.entries.map((e) => e.name)).toContain('.hidden');
    // How many dot-entries a listing left out, so an "empty" folder can say what it holds.
    expect((listed as unknown as { hidden: number }).hidden).toBe(1);
    expect(withHidden.hidden).toBe(0);
    // A name filter, any case, applied before the limit: a name beyond the first `limit` entries is found.
    const limited = (await call('sftp.list', { sessionId: SESSION, path: `${dir}/a`, limit: 1 })) as { entries: { name: string }[]; truncated: boolean };
    expect(limited).toMatchObject({ truncated: true, entries: [{ name: 'b' }] });
    const found = (await call('sftp.list', { sessionId: SESSION, path: `${dir}/a`, limit: 1, match: 'ZETA' })) as { entries: { name: string }[]; truncated: boolean };
    expect(found).toMatchObject({ truncated: false, entries: [{ name: 'zeta.txt' }] });
    const hiddenMatch = (await call('sftp.list', { sessionId: SESSION, path: `${dir}/a`, match: 'hid' })) as { entries: unknown[]; hidden: number };
    expect(hiddenMatch).toMatchObject({ entries: [], hidden: 1 });

    await service.rename({ sessionId: SESSION, from: `${dir}/a/hello.txt`, to: `${dir}/a/b/hi.txt`, overwrite: false });
    expect(readFileSync(`${dir}/a/b/hi.txt`, 'utf8')).toBe('hello\n');

    const chmodded = await call('sftp.chmod', { sessionId: SESSION, path: `${dir}/a/zeta.txt`, mode: '600' });
    expect(chmodded).toMatchObject({ modeOctal: '0600', mode: 0o600, type: 'file' });
    expect(statSync(`${dir}/a/zeta.txt`).mode & 0o777).toBe(0o600);

    const notEmpty = await codeOf(service.remove({ sessionId: SESSION, path: `${dir}/a`, recursive: false }));
    expect(notEmpty).toMatchObject({ code: 'EBADARGS', reason: 'not_empty' });
    const removed = await service.remove({ sessionId: SESSION, path: `${dir}/a`, recursive: true });
    expect(removed.removed).toBe(6); // a, b, c, hi.txt, .hidden, zeta.txt
    expect(readdirSync(dir)).toEqual([]);
  });

  test('a folder delete deletes all it can past entries it may not, then names what stayed and why', async () => {
    const root = `${dir}/partial`;
    mkdirSync(`${root}/sub`, { recursive: true });
    for (let k = 0; k < 60; k++) put(`${root}/f${String(k).padStart(2, '0')}`, 'x');
    for (let k = 0; k < 5; k++) put(`${root}/sub/s${k}`, 'x');
    // Root's, as we are: folders whose files the user cannot delete, one it may not even list.
    // Nine of the 70 entries: they cannot all be in the last batch of 16 the delete lists.
    const rootOwned = Array.from({ length: 8 }, (_, k) => `m-root-${k}`);
    execFileSync('mkdir', ['-m', '0755', ...rootOwned.map((d) => `${root}/${d}`), `${root}/m-root-0/deeper`]);
    for (const d of rootOwned) writeFileSync(`${root}/${d}/x`, 'r');
    execFileSync('mkdir', ['-m', '0700', `${root}/m-locked`]);
    const me = accountIds(sshd.users.password.username);
    for (const d of [root, `${root}/sub`]) chownSync(d, me.uid, me.gid);
    try {
      let failure: unknown = null;
      await call('sftp.remove', { sessionId: SESSION, path: root, recursive: true }).catch((err: unknown) => (failure = err));
      expect(failure).toBeInstanceOf(WraithError);
      const err = failure as WraithError;
      // Every entry that could go went, whichever batch it was in.
      expect(readdirSync(root).sort()).toEqual(['m-locked', ...rootOwned]);
      expect(readdirSync(`${root}/m-root-0`).sort()).toEqual(['deeper', 'x']);
      expect(err.code).toBe('EDENIED');
      expect(err.message).toBe(
        `Deleted 66 entries in ${root}, but 10 could not be deleted (permission denied on the server): m-locked, m-root-0/deeper, m-root-0/x and 7 more. The folders holding them are still there.`,
      );
      expect(err.details).toMatchObject({ reason: 'partly_deleted', path: root, removed: 66, notRemoved: 10 });
      expect((err.details?.failures as { path: string; code: string }[]).map((f) => [f.path.slice(root.length + 1), f.code])).toEqual([
        ['m-locked', 'EDENIED'],
        ['m-root-0/deeper', 'EDENIED'],
        ...rootOwned.map((d) => [`${d}/x`, 'EDENIED']),
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  test('a path that starts with ~ or ~/ is in the login folder, for every method that takes one', async () => {
    const home = '/home/wraith-pw';
    const sub = dir.slice(home.length + 1); // "ops-…"
    const t = `~/${sub}/tilde`;
    expect(await call('sftp.realpath', { sessionId: SESSION, path: '~' })).toEqual({ path: home });
    expect(await call('sftp.realpath', { sessionId: SESSION, path: '~/' })).toEqual({ path: home });
    expect(await call('sftp.mkdir', { sessionId: SESSION, path: t })).toMatchObject({ type: 'dir' });
    expect(statSync(`${dir}/tilde`).isDirectory()).toBe(true);
    expect(await call('sftp.mkdir', { sessionId: SESSION, path: `${t}/a/b`, parents: true })).toMatchObject({ type: 'dir' });
    expect(await call('sftp.write', { sessionId: SESSION, path: `${t}/note.txt`, text: 'hi' })).toMatchObject({ type: 'file', size: 2 });
    expect(readFileSync(`${dir}/tilde/note.txt`, 'utf8')).toBe('hi');
    const listed = (await call('sftp.list', { sessionId: SESSION, path: t })) as { path: string; entries: { name: string }[] };
    expect(listed.path).toBe(`${dir}/tilde`);
    expect(listed.entries.map((e) => e.name)).toEqual(['a', 'note.txt']);
    expect(((await call('sftp.list', { sessionId: SESSION, path: '~' })) as { path: string }).path).toBe(home);
    expect(await call('sftp.stat', { sessionId: SESSION, path: `${t}/note.txt` })).toMatchObject({ type: 'file', size: 2 });
    expect(await call('sftp.read', { sessionId: SESSION, path: `${t}/note.txt` })).toMatchObject({ text: 'hi' });
    expect(await call('sftp.readChunk', { sessionId: SESSION, path: `${t}/note.txt`, offset: 0, length: 10 })).toMatchObject({ eof: true, size: 2 });
    expect(await call('sftp.chmod', { sessionId: SESSION, path: `${t}/note.txt`, mode: '600' })).toMatchObject({ modeOctal: '0600' });
    expect(await call('sftp.rename', { sessionId: SESSION, from: `${t}/note.txt`, to: `${t}/renamed.txt` })).toMatchObject({ type: 'file' });
    expect(readFileSync(`${dir}/tilde/renamed.txt`, 'utf8')).toBe('hi');

    const local = mkdtempSync(join(tmpdir(), 'wraith-tilde-'));
    try {
      writeFileSync(join(local, 'up.txt'), 'up');
      const up = (await call('sftp.upload', { sessionId: SESSION, localPath: join(local, 'up.txt'), remotePath: `${t}/up.txt` })) as { transferId: string };
      expect(await service.wait(up.transferId)).toMatchObject({ state: 'done' });
      expect(readFileSync(`${dir}/tilde/up.txt`, 'utf8')).toBe('up');
      const down = (await call('sftp.download', { sessionId: SESSION, remotePath: `${t}/renamed.txt`, localPath: join(local, 'down.txt') })) as { transferId: string };
      expect(await service.wait(down.transferId)).toMatchObject({ state: 'done' });
      expect(readFileSync(join(local, 'down.txt'), 'utf8')).toBe('hi');
      const streamed = (await call('sftp.uploadBegin', { sessionId: SESSION, remotePath: `${t}/streamed.txt`, size: 2 })) as { transferId: string };
      await call('sftp.uploadChunk', { transferId: streamed.transferId, offset: 0, data: new Uint8Array(Buffer.from('st')) });
      await call('sftp.uploadEnd', { transferId: streamed.transferId });
      expect(readFileSync(`${dir}/tilde/streamed.txt`, 'utf8')).toBe('st');
    } finally {
      rmSync(local, { recursive: true, force: true });
    }
    // What is missing is said where it was looked for: in the login folder, not in a folder called "~".
    expect(await codeOf(call('sftp.stat', { sessionId: SESSION, path: `${t}/nope` }))).toMatchObject({ code: 'ENOTFOUND', message: `nope does not exist in ${dir}/tilde.` });
    // Only the login's own ~: "~name" and a "~" further on are names like any other.
    expect(await codeOf(call('sftp.stat', { sessionId: SESSION, path: '~root' }))).toMatchObject({ code: 'ENOTFOUND', message: `~root does not exist in ${home}.` });
    expect(await call('sftp.remove', { sessionId: SESSION, path: t, recursive: true })).toMatchObject({ ok: true });
    expect(existsSync(`${dir}/tilde`)).toBe(false);
  });

  test('a symlink is listed with its target and the type of what it points to', async () => {
    await service.mkdir({ sessionId: SESSION, path: `${dir}/links`, parents: false });
    put(`${dir}/links/real.txt`, 'data');
    await new Promise<void>((resolve, reject) =>
      client.sftp((err, s) => {
        if (err) return reject(err);
        s.symlink('real.txt', `${dir}/links/link.txt`, (e) => (s.end(), e ? reject(e) : resolve()));
      }),
    );
    const entry = await call('sftp.stat', { sessionId: SESSION, path: `${dir}/links/link.txt` });
    expect(entry).toMatchObject({ type: 'symlink', linkTarget: 'real.txt', targetType: 'file' });
  });
});

describe('text files', () => {
  test('read returns text with its mtime; write replaces atomically and keeps the mode', async () => {
    const path = `${dir}/edit.conf`;
    put(path, 'port = 1\n', 0o640);
    const read = (await call('sftp.read', { sessionId: SESSION, path })) as { text: string; mtime: string; size: number };
    expect(read.text).toBe('port = 1\n');

    const written = await call('sftp.write', { sessionId: SESSION, path, text: 'port = 2\n', expectedMtime: read.mtime, expectedSize: read.size });
    expect(written).toMatchObject({ size: 9, modeOctal: '0640' });
    expect(readFileSync(path, 'utf8')).toBe('port = 2\n');
    expect(statSync(path).mode & 0o777).toBe(0o640);
    expect(readdirSync(dir).filter((n) => n.includes('wraith-part'))).toEqual([]);
  });

  test("saving keeps the file's group when the user may set it (temp file, then rename)", async () => {
    const path = `${dir}/team.conf`;
    put(path, 'team = 1\n', 0o664);
    const me = accountIds(sshd.users.password.username);
    chownSync(path, me.uid, groupId(SHARED_GROUP));
    execFileSync('chmod', ['0664', path]); // put's mode goes through the umask
    const before = statSync(path);
    await service.write({ sessionId: SESSION, path, text: 'team = 2\n' });
    const after = statSync(path);
    expect(readFileSync(path, 'utf8')).toBe('team = 2\n');
    expect({ uid: after.uid, gid: after.gid, mode: after.mode & 0o777 }).toEqual({ uid: me.uid, gid: groupId(SHARED_GROUP), mode: 0o664 });
    expect(after.ino).not.toBe(before.ino); // replaced by the temp file: the owner could be kept
    expect(readdirSync(dir).filter((n) => n.includes('wraith-part'))).toEqual([]);
  });

  test("saving another user's file keeps its owner and group: it is written in place", async () => {
    // Writable by everyone, owned by the other test user: a temp file could not be given to them.
    const path = `${dir}/theirs.conf`;
    writeFileSync(path, 'a longer first version\n', { mode: 0o666 });
    const them = accountIds(sshd.users.key.username);
    chownSync(path, them.uid, them.gid);
    execFileSync('chmod', ['0666', path]);
    const before = statSync(path);
    const read = await service.read({ sessionId: SESSION, path, maxBytes: 1024 });
    await service.write({ sessionId: SESSION, path, text: 'short\n', expectedMtime: read.mtime, expectedSize: read.size });
    const after = statSync(path);
    expect(readFileSync(path, 'utf8')).toBe('short\n'); // cut to the new length
    expect({ uid: after.uid, gid: after.gid, mode: after.mode & 0o777, ino: after.ino }).toEqual({ uid: them.uid, gid: them.gid, mode: 0o666, ino: before.ino });
    expect(readdirSync(dir).filter((n) => n.includes('wraith-part'))).toEqual([]);
  });

  test("saving another user's file this login may not write is refused in the words an upload over it gets, and it stays theirs", async () => {
    // The user's own folder: a temp file renamed over it would work, and make it the user's.
    const path = `${dir}/roots.conf`;
    writeFileSync(path, 'root = 1\n', { mode: 0o644 }); // root's, as we are
    const refused = await codeOf(service.write({ sessionId: SESSION, path, text: 'root = 2\n' }));
    expect(refused).toMatchObject({ code: 'EDENIED', message: `Cannot save ${path}: it belongs to root and you may not write it.` });
    expect(readFileSync(path, 'utf8')).toBe('root = 1\n');
    expect(statSync(path)).toMatchObject({ uid: 0, gid: 0 });
    expect(readdirSync(dir).filter((n) => n.includes('wraith-part'))).toEqual([]);
    rmSync(path);
  });

  test('a writable file in a folder the user cannot write to is saved in place; a new file there is refused', async () => {
    const locked = `${dir}/locked`;
    execFileSync('mkdir', ['-m', '0755', locked]); // root's, as we are
    try {
      writeFileSync(`${locked}/shared.txt`, 'v1\n');
      execFileSync('chmod', ['0666', `${locked}/shared.txt`]);
      await service.write({ sessionId: SESSION, path: `${locked}/shared.txt`, text: 'v2\n' });
      expect(readFileSync(`${locked}/shared.txt`, 'utf8')).toBe('v2\n');
      expect(statSync(`${locked}/shared.txt`).uid).toBe(0);
      const refused = await codeOf(service.write({ sessionId: SESSION, path: `${locked}/new.txt`, text: 'x' }));
      expect(refused.code).toBe('EDENIED');
      expect(refused.message).toBe(`Cannot write ${locked}/new.txt: the folder ${locked} is not writable, and a file arrives under a temp name beside it first.`);
      // An upload there says the same, of the file asked for and not of its temp.
      const upload = await codeOf(service.uploadBegin({ sessionId: SESSION, remotePath: `${locked}/up.bin`, size: 1, overwrite: false }));
      expect(upload).toMatchObject({ code: 'EDENIED', message: `Cannot write ${locked}/up.bin: the folder ${locked} is not writable, and a file arrives under a temp name beside it first.` });
      expect(readdirSync(locked)).toEqual(['shared.txt']);
    } finally {
      rmSync(locked, { recursive: true, force: true });
    }
  });

  test('a write into a folder that is not there names the folder, not the temp file', async () => {
    const err = await codeOf(service.write({ sessionId: SESSION, path: `${dir}/no-such-folder/new.txt`, data: new Uint8Array([1, 2, 3]), exclusive: true }));
    expect(err).toMatchObject({ code: 'ENOTFOUND', reason: 'not_a_directory' });
    expect(err.message).toBe(`Cannot write ${dir}/no-such-folder/new.txt: the folder ${dir}/no-such-folder does not exist on the server.`);
    expect(existsSync(`${dir}/no-such-folder`)).toBe(false);
  });

  test('write refuses when the file changed since it was read, and leaves it alone', async () => {
    const path = `${dir}/race.txt`;
    put(path, 'v1');
    const read = await service.read({ sessionId: SESSION, path, maxBytes: 5 * 1024 * 1024 });
    put(path, 'v2 from someone else');
    const err = await codeOf(service.write({ sessionId: SESSION, path, text: 'mine', expectedMtime: read.mtime, expectedSize: read.size }));
    expect(err).toMatchObject({ code: 'EBADARGS', reason: 'changed' });
    expect(err.message).toContain('changed on the server');
    expect(readFileSync(path, 'utf8')).toBe('v2 from someone else');
    expect(readdirSync(dir).filter((n) => n.includes('wraith-part'))).toEqual([]);
  });

  test('write creates a new file from bytes; writing through a symlink edits its target', async () => {
    const bytes = new Uint8Array([0xde, 0xad, 0xbe, 0xef]);
    await call('sftp.write', { sessionId: SESSION, path: `${dir}/new.bin`, data: bytes, mode: '0600' });
    expect([...readFileSync(`${dir}/new.bin`)]).toEqual([...bytes]);
    expect(statSync(`${dir}/new.bin`).mode & 0o777).toBe(0o600);

    await service.write({ sessionId: SESSION, path: `${dir}/links/link.txt`, text: 'through the link' });
    expect(readFileSync(`${dir}/links/real.txt`, 'utf8')).toBe('through the link');
    expect((await service.stat(SESSION, `${dir}/links/link.txt`)).type).toBe('symlink');
  });

  test("saving through a link (sites-enabled/*) answers with the file's size and time, so the next save is no false conflict", async () => {
    put(`${dir}/links/with space.txt`, 'server {}\n');
    symlinkSync('with space.txt', `${dir}/links/link-to-file`);
    const path = `${dir}/links/link-to-file`;
    const read = await service.read({ sessionId: SESSION, path, maxBytes: 1024 });
    const one = 'server {}\nlisten 80;\n';
    const first = await service.write({ sessionId: SESSION, path, text: one, expectedMtime: read.mtime, expectedSize: read.size });
    const target = statSync(`${dir}/links/with space.txt`);
    expect({ size: first.size, mtime: first.mtime }).toEqual({ size: one.length, mtime: new Date(Math.floor(target.mtimeMs / 1000) * 1000).toISOString() });
    expect(first.size).not.toBe(lstatSync(path).size); // the link's own 14 bytes
    // The editor's second save checks against what the first one answered.
    const two = `${one}listen 443;\n`;
    const second = await service.write({ sessionId: SESSION, path, text: two, expectedMtime: first.mtime, expectedSize: first.size });
    expect(second.size).toBe(two.length);
    expect(readFileSync(`${dir}/links/with space.txt`, 'utf8')).toBe(two);
    expect(lstatSync(path).isSymbolicLink()).toBe(true);
    expect(readlinkSync(path)).toBe('with space.txt');
  });

  test("a new file gets the server's mode for new files, written whole or streamed as an upload", async () => {
    // A server whose SFTP logins have umask 002 (pam_umask with USERGROUPS_ENAB, as on Fedora):
    // `touch` there makes 0664, and so must every way Wraith makes a file, or one folder upload
    // leaves its small files (one sftp.write each) 0644 beside its large ones (streamed) 0664.
    const other = await startSshd({ sftpUmask: '002' });
    const conn = await connectSftp(other);
    const svc = new SftpService(async () => conn.sftp);
    // Its own folder in the shared home: nothing a run before left behind can be in the way.
    const there = `${dir}-umask`;
    try {
      await svc.mkdir({ sessionId: SESSION, path: there, parents: false, mode: '755' });
      const whole = await svc.write({ sessionId: SESSION, path: `${there}/whole.txt`, data: new Uint8Array([1, 2, 3]), exclusive: true });
      const begun = await svc.uploadBegin({ sessionId: SESSION, remotePath: `${there}/streamed.bin`, size: 3, overwrite: false });
      await svc.uploadChunk({ transferId: begun.transferId, offset: 0, data: new Uint8Array([4, 5, 6]) });
      const streamed = await svc.uploadEnd(begun.transferId);
      expect([whole.modeOctal, streamed.modeOctal]).toEqual(['0664', '0664']);
      expect(statSync(`${there}/whole.txt`).mode & 0o777).toBe(0o664);
      // A mode asked for is kept exactly.
      const asked = await svc.write({ sessionId: SESSION, path: `${there}/asked.txt`, text: 'x', mode: '600' });
      expect(asked.modeOctal).toBe('0600');
    } finally {
      await svc.remove({ sessionId: SESSION, path: there, recursive: true }).catch(() => undefined);
      await svc.dispose();
      conn.client.end();
      await other.stop();
    }
  });

  test('exclusive write only creates: an empty new file, and a refusal that leaves an existing one alone', async () => {
    const made = (await call('sftp.write', { sessionId: SESSION, path: `${dir}/fresh.conf`, text: '', exclusive: true })) as { type: string; size: number };
    expect(made).toMatchObject({ type: 'file', size: 0 });
    expect(readFileSync(`${dir}/fresh.conf`, 'utf8')).toBe('');
    put(`${dir}/taken.conf`, 'keep me\n');
    const refused = await codeOf(call('sftp.write', { sessionId: SESSION, path: `${dir}/taken.conf`, text: 'clobber', exclusive: true }));
    expect(refused).toMatchObject({ code: 'EBADARGS', reason: 'exists' });
    expect(readFileSync(`${dir}/taken.conf`, 'utf8')).toBe('keep me\n');
    // It looks while it makes its temp file: a folder and a dangling link are refused too, left
    // as they were, and the temp file is taken away.
    mkdirSync(`${dir}/taken.d`);
    symlinkSync(`${dir}/nowhere`, `${dir}/taken.link`);
    for (const name of ['taken.d', 'taken.link']) {
      expect(await codeOf(call('sftp.write', { sessionId: SESSION, path: `${dir}/${name}`, text: 'clobber', exclusive: true }))).toMatchObject({ code: 'EBADARGS', reason: 'exists' });
    }
    expect([lstatSync(`${dir}/taken.d`).isDirectory(), readlinkSync(`${dir}/taken.link`)]).toEqual([true, `${dir}/nowhere`]);
    expect(readdirSync(dir).filter((n) => n.includes('wraith-part'))).toEqual([]);
    // The entry it answers with is the file as the server then describes it.
    const whole = (await call('sftp.write', { sessionId: SESSION, path: `${dir}/whole.bin`, data: new Uint8Array(70_000).fill(7), exclusive: true })) as Record<string, unknown>;
    expect(whole).toEqual(await call('sftp.stat', { sessionId: SESSION, path: `${dir}/whole.bin` }));
    expect(whole).toMatchObject({ type: 'file', size: 70_000, name: 'whole.bin' });
  });

  test("a handle closed twice leaves alone the file the server has since opened under the same handle", async () => {
    const conn = await connectSftp(sshd);
    try {
      const rfs = new RemoteFs(conn.sftp);
      const first = await rfs.open(`${dir}/closed-first.txt`, 'w');
      await rfs.close(first, 'first');
      const next = await rfs.open(`${dir}/closed-next.txt`, 'w');
      expect(next.equals(first)).toBe(true); // the premise: OpenSSH hands out the freed handle again
      await rfs.close(first, 'first'); // a clean-up path that closes again
      const text = Buffer.from('still open\n');
      await rfs.write(next, text, 0, text.length, 0, 'next');
      await rfs.close(next, 'next');
      expect(readFileSync(`${dir}/closed-next.txt`, 'utf8')).toBe('still open\n');
    } finally {
      conn.client.end();
    }
  });

  test('a Windows-1252 (Latin-1) file reads and saves in its own encoding: unchanged text, the same bytes; a character it cannot hold is refused', async () => {
    // "Caf\xe9 \x80 5\n" with a CRLF line and a curly quote: Windows-1252's own bytes, invalid as UTF-8.
    const original = Buffer.from([0x43, 0x61, 0x66, 0xe9, 0x20, 0x80, 0x20, 0x35, 0x0d, 0x0a, 0x93, 0x71, 0x94, 0x0a]);
    put(`${dir}/legacy.conf`, original);
    const notUtf8 = await codeOf(call('sftp.read', { sessionId: SESSION, path: `${dir}/legacy.conf` }));
    expect(notUtf8).toMatchObject({ code: 'EBADARGS', reason: 'not_utf8' });
    expect(notUtf8.message).toContain('Windows-1252');
    const r = (await call('sftp.read', { sessionId: SESSION, path: `${dir}/legacy.conf`, encoding: 'windows-1252' })) as { text: string; encoding: string; size: number; mtime: string };
    expect(r).toMatchObject({ text: 'Café € 5\r\n“q”\n', encoding: 'windows-1252', size: original.length });

    // Saved unchanged: the same bytes. Edited: only the edit changes them.
    const saved = (await call('sftp.write', { sessionId: SESSION, path: `${dir}/legacy.conf`, text: r.text, encoding: 'windows-1252', expectedMtime: r.mtime, expectedSize: r.size })) as { mtime: string; size: number };
    expect(readFileSync(`${dir}/legacy.conf`)).toEqual(original);
    await call('sftp.write', { sessionId: SESSION, path: `${dir}/legacy.conf`, text: r.text.replace('5', 'ÿ5'), encoding: 'windows-1252' });
    expect(readFileSync(`${dir}/legacy.conf`)).toEqual(Buffer.concat([original.subarray(0, 7), Buffer.from([0xff]), original.subarray(7)]));
    expect(saved.size).toBe(original.length);

    // A character Windows-1252 has no byte for: refused, naming it and its line, and the file is as it was.
    const before = readFileSync(`${dir}/legacy.conf`);
    const refused = await codeOf(call('sftp.write', { sessionId: SESSION, path: `${dir}/legacy.conf`, text: `${r.text}done ✓\n`, encoding: 'windows-1252' }));
    expect(refused).toMatchObject({ code: 'EBADARGS', reason: 'unencodable' });
    expect(refused.message).toContain('“✓” (U+2713, line 3)');
    expect(readFileSync(`${dir}/legacy.conf`)).toEqual(before);
    // Bytes that are no text in any encoding stay "binary", whichever is asked for.
    put(`${dir}/nul-1252.bin`, Buffer.from('a\0b'));
    expect(await codeOf(call('sftp.read', { sessionId: SESSION, path: `${dir}/nul-1252.bin`, encoding: 'windows-1252' }))).toMatchObject({ reason: 'binary' });
  });

  test('read refuses binary files and files over the limit with stable reasons', async () => {
    put(`${dir}/nul.bin`, Buffer.from('text\0more'));
    put(`${dir}/latin1.txt`, Buffer.from([0x63, 0x61, 0x66, 0xe9])); // "café" in Latin-1: invalid UTF-8
    put(`${dir}/big.txt`, Buffer.alloc(5 * 1024 * 1024 + 1, 0x61));
    put(`${dir}/exact.txt`, Buffer.alloc(5 * 1024 * 1024, 0x61));

    expect(await codeOf(call('sftp.read', { sessionId: SESSION, path: `${dir}/nul.bin` }))).toMatchObject({ code: 'EBADARGS', reason: 'binary' });
    // Text all the same, only not UTF-8: said so (it can be read as Windows-1252, below).
    expect(await codeOf(call('sftp.read', { sessionId: SESSION, path: `${dir}/latin1.txt` }))).toMatchObject({ code: 'EBADARGS', reason: 'not_utf8' });
    const big = await codeOf(call('sftp.read', { sessionId: SESSION, path: `${dir}/big.txt` }));
    expect(big).toMatchObject({ code: 'EBADARGS', reason: 'too_large' });
    // One byte over: both round to 5.0 MB, so the bytes say which is more.
    expect(big.message).toBe(`${dir}/big.txt is 5,242,881 bytes, more than the 5,242,880 bytes (5.0 MB) the editor opens; download it instead.`);
    put(`${dir}/bigger.txt`, Buffer.alloc(6 * 1024 * 1024, 0x61));
    expect((await codeOf(call('sftp.read', { sessionId: SESSION, path: `${dir}/bigger.txt` }))).message).toBe(
      `${dir}/bigger.txt is 6.0 MB, more than the 5.0 MB the editor opens; download it instead.`,
    );
    expect(await codeOf(call('sftp.read', { sessionId: SESSION, path: `${dir}/exact.txt`, maxBytes: 1000 }))).toMatchObject({ reason: 'too_large' });
    // The contract itself caps maxBytes at 5 MB.
    expect(await codeOf(call('sftp.read', { sessionId: SESSION, path: `${dir}/exact.txt`, maxBytes: 6 * 1024 * 1024 }))).toMatchObject({ code: 'EBADARGS' });
    const exact = (await call('sftp.read', { sessionId: SESSION, path: `${dir}/exact.txt` })) as { text: string };
    expect(exact.text.length).toBe(5 * 1024 * 1024);
  });

  test('opening a symlink to nothing, or a loop of links, says so in the words the permissions dialog uses', async () => {
    symlinkSync('nowhere', `${dir}/broken-link`);
    symlinkSync('loop2', `${dir}/loop1`);
    symlinkSync('loop1', `${dir}/loop2`);
    for (const [method, params, what] of [
      ['sftp.read', { sessionId: SESSION, path: `${dir}/broken-link` }, `open ${dir}/broken-link as text`],
      ['sftp.readChunk', { sessionId: SESSION, path: `${dir}/broken-link`, offset: 0, length: 1024 }, `read ${dir}/broken-link`],
    ] as const) {
      const refused = await codeOf(call(method, params));
      expect(refused).toMatchObject({ code: 'ENOTFOUND', reason: 'broken_link' });
      expect(refused.message).toBe(`Cannot ${what}: ${linkToNowhere('broken-link', 'nowhere')}.`);
      expect(refused.message).toContain('broken-link points to nowhere, which does not exist');
    }
    const loop = await codeOf(call('sftp.read', { sessionId: SESSION, path: `${dir}/loop1` }));
    expect(loop).toMatchObject({ code: 'ENOTFOUND', reason: 'broken_link' });
    expect(loop.message).toBe(`Cannot open ${dir}/loop1 as text: loop1 points to loop2, a loop of links that never reaches a file.`);
    // A path that is simply not there is still said to be so.
    expect(await codeOf(call('sftp.read', { sessionId: SESSION, path: `${dir}/no-such.txt` }))).toEqual({
      code: 'ENOTFOUND',
      reason: undefined,
      message: `no-such.txt does not exist in ${dir}.`,
    });
  });

  test('readChunk reads byte ranges that reassemble into the file', async () => {
    const data = randomBytes(3 * 1024 * 1024 + 123);
    put(`${dir}/chunks.bin`, data);
    const parts: Buffer[] = [];
    for (let offset = 0; ; ) {
      const r = (await call('sftp.readChunk', { sessionId: SESSION, path: `${dir}/chunks.bin`, offset, length: 1024 * 1024 })) as {
        data: Uint8Array;
        eof: boolean;
        size: number;
      };
      expect(r.size).toBe(data.length);
      parts.push(Buffer.from(r.data));
      offset += r.data.byteLength;
      if (r.eof) break;
    }
    expect(Buffer.concat(parts).equals(data)).toBe(true);
  });

  test("a file of /proc, which says it is empty and is not, reads whole (as OpenSSH's sftp gets it); an empty file reads empty", async () => {
    // The sshd runs on this machine: its /proc/version is ours. Its size says 0.
    const want = readFileSync('/proc/version', 'utf8');
    expect(want.length).toBeGreaterThan(0);
    expect(((await call('sftp.stat', { sessionId: SESSION, path: '/proc/version' })) as { size: number }).size).toBe(0);
    expect(await call('sftp.read', { sessionId: SESSION, path: '/proc/version' })).toMatchObject({ text: want, size: Buffer.byteLength(want) });
    type Chunk = { data: Uint8Array; eof: boolean; size: number };
    const whole = (await call('sftp.readChunk', { sessionId: SESSION, path: '/proc/version', offset: 0, length: 1024 * 1024 })) as Chunk;
    expect(Buffer.from(whole.data).toString('utf8')).toBe(want);
    expect(whole.eof).toBe(true);
    // A range of it, and the rest from there on.
    const head = (await call('sftp.readChunk', { sessionId: SESSION, path: '/proc/version', offset: 0, length: 5 })) as Chunk;
    expect([Buffer.from(head.data).toString('utf8'), head.eof]).toEqual([want.slice(0, 5), false]);
    const rest = (await call('sftp.readChunk', { sessionId: SESSION, path: '/proc/version', offset: 5, length: 1024 * 1024 })) as Chunk;
    expect([Buffer.from(rest.data).toString('utf8'), rest.eof]).toEqual([want.slice(5), true]);
    // The kernel's log never ends (and reading it takes messages from the system logger): refused
    // before it is opened, whoever may read it.
    for (const [method, params] of [
      ['sftp.read', { sessionId: SESSION, path: '/proc/kmsg' }],
      ['sftp.readChunk', { sessionId: SESSION, path: '/proc/kmsg', offset: 0, length: 1024 }],
    ] as const) {
      const refused = await codeOf(call(method, params));
      expect(refused).toMatchObject({ code: 'EBADARGS', reason: 'not_a_file' });
      expect(refused.message).toContain('/proc/kmsg never ends');
      expect(refused.message).toContain('dmesg');
    }
    put(`${dir}/empty.txt`, '');
    expect(await call('sftp.read', { sessionId: SESSION, path: `${dir}/empty.txt` })).toMatchObject({ text: '', size: 0 });
    const none = (await call('sftp.readChunk', { sessionId: SESSION, path: `${dir}/empty.txt`, offset: 0, length: 1024 })) as Chunk;
    expect([none.data.byteLength, none.eof, none.size]).toEqual([0, true, 0]);
  });

  test('a named pipe is refused before it is opened: opening it would hold the server until a writer came', async () => {
    const fifo = `${dir}/a-pipe`;
    execFileSync('mkfifo', [fifo]);
    put(`${dir}/after-the-pipe.txt`, 'still answering');
    const asked = (method: string, params: unknown) =>
      Promise.race([codeOf(call(method, params)), new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${method} of a named pipe did not answer`)), 10_000))]);
    for (const [method, params] of [
      ['sftp.readChunk', { sessionId: SESSION, path: fifo, offset: 0, length: 1024 }],
      ['sftp.read', { sessionId: SESSION, path: fifo }],
    ] as const) {
      const refused = await asked(method, params);
      expect(refused).toMatchObject({ code: 'EBADARGS', reason: 'not_a_file' });
      expect(refused.message).toContain('not a regular file');
    }
    // The session's SFTP still answers.
    expect(await call('sftp.read', { sessionId: SESSION, path: `${dir}/after-the-pipe.txt` })).toMatchObject({ text: 'still answering' });
  });
});

describe('bad input gets a stable code, never a crash', () => {
  test('paths that do not exist → ENOTFOUND naming the path', async () => {
    for (const [method, params] of [
      ['sftp.list', { path: `${dir}/nope` }],
      ['sftp.stat', { path: `${dir}/nope` }],
      ['sftp.read', { path: `${dir}/nope.txt` }],
      ['sftp.remove', { path: `${dir}/nope` }],
      ['sftp.chmod', { path: `${dir}/nope`, mode: '644' }],
      ['sftp.rename', { from: `${dir}/nope`, to: `${dir}/other` }],
      ['sftp.readChunk', { path: `${dir}/nope`, offset: 0, length: 10 }],
    ] as const) {
      const err = await codeOf(call(method, { sessionId: SESSION, ...params }));
      expect(err.code, method).toBe('ENOTFOUND');
      expect(err.message, method).toContain('nope');
    }
    const parentless = await codeOf(call('sftp.write', { sessionId: SESSION, path: `${dir}/no/such/dir/f.txt`, text: 'x' }));
    expect(parentless.code).toBe('ENOTFOUND');
  });

  test("a missing path is said to be missing, by name and folder, whichever step of the operation found it", async () => {
    const home = '/home/wraith-pw';
    for (const [method, params, said] of [
      ['sftp.rename', { from: 'nope', to: 'other' }, `nope does not exist in ${home}.`],
      ['sftp.rename', { from: `${dir}/nope`, to: `${dir}/other` }, `nope does not exist in ${dir}.`],
      ['sftp.remove', { path: `${dir}/nope` }, `nope does not exist in ${dir}.`],
      ['sftp.chmod', { path: 'nope', mode: '644' }, `nope does not exist in ${home}.`],
      ['sftp.stat', { path: `${dir}/nope/` }, `nope does not exist in ${dir}.`],
      ['sftp.read', { path: `${dir}/nope.txt` }, `nope.txt does not exist in ${dir}.`],
      ['sftp.readChunk', { path: `${dir}/nope`, offset: 0, length: 10 }, `nope does not exist in ${dir}.`],
      ['sftp.mkdir', { path: `${dir}/nope/sub` }, `Cannot create directory ${dir}/nope/sub: the folder ${dir}/nope does not exist.`],
    ] as const) {
      expect(await codeOf(call(method, { sessionId: SESSION, ...params })), `${method} ${JSON.stringify(params)}`).toMatchObject({ code: 'ENOTFOUND', message: said });
    }
  });

  test("what SFTP only calls a failure is said with its likely cause, never in the server's bare word", async () => {
    put(`${dir}/one.txt`, '1');
    put(`${dir}/two.txt`, '2');
    mkdirSync(`${dir}/full/inner`, { recursive: true });
    execFileSync('chown', ['-R', `${sshd.users.password.username}:`, `${dir}/full`]);
    const own = await connectSftp(sshd);
    const rfs = new RemoteFs(own.sftp);
    try {
      for (const [what, run, code, said] of [
        ['mkdir over a folder', () => rfs.mkdir(`${dir}/full`), 'EIO', `Cannot create directory ${dir}/full: the server refused it without saying why. Most likely something with that name is already there`],
        ['rmdir of a folder with something in it', () => rfs.rmdir(`${dir}/full`), 'EIO', `Cannot remove directory ${dir}/full: the server refused it without saying why. Most likely the folder is not empty.`],
        ['rename onto a file', () => rfs.rename(`${dir}/one.txt`, `${dir}/two.txt`), 'EIO', `Cannot rename ${dir}/one.txt to ${dir}/two.txt: the server refused it without saying why. Most likely something with the new name is already there`],
        ['unlink of a folder', () => rfs.unlink(`${dir}/full`), 'EIO', `Cannot delete ${dir}/full: the server refused it without saying why. Most likely it is a folder.`],
        ['rename of a folder into itself', () => rfs.rename(`${dir}/full`, `${dir}/full/inner/x`), 'EIO', `Cannot rename ${dir}/full to ${dir}/full/inner/x: the server refused the request as invalid. Most likely a folder cannot move into itself`],
        ['readlink of a file', () => rfs.readlink(`${dir}/one.txt`), 'EIO', `Cannot read link ${dir}/one.txt: the server refused the request as invalid. Most likely it is not a symbolic link.`],
        ['rename into a folder that is not there', () => rfs.rename(`${dir}/one.txt`, `${dir}/nowhere/one.txt`), 'ENOTFOUND', `Cannot rename ${dir}/one.txt to ${dir}/nowhere/one.txt: one.txt is not in ${dir}, or the folder ${dir}/nowhere does not exist.`],
      ] as const) {
        const err = await codeOf(run());
        expect(err.code, what).toBe(code);
        expect(err.message, what).toContain(said);
        expect(err.message, what).not.toMatch(/\b(Failure|Bad message|No such file)\b/);
      }
    } finally {
      own.client.end();
      rmSync(`${dir}/full`, { recursive: true, force: true });
      rmSync(`${dir}/one.txt`, { force: true });
      rmSync(`${dir}/two.txt`, { force: true });
    }
  });

  test('a folder that is not empty says how many entries it holds, in the right number', async () => {
    mkdirSync(`${dir}/holds-one`);
    put(`${dir}/holds-one/only.txt`, 'x');
    mkdirSync(`${dir}/holds-two`);
    put(`${dir}/holds-two/a.txt`, 'a');
    put(`${dir}/holds-two/b.txt`, 'b');
    execFileSync('chown', [`${sshd.users.password.username}:`, `${dir}/holds-one`, `${dir}/holds-two`]);
    try {
      expect(await codeOf(call('sftp.remove', { sessionId: SESSION, path: `${dir}/holds-one` }))).toMatchObject({
        reason: 'not_empty',
        message: `Cannot delete ${dir}/holds-one: the folder is not empty (1 entry); delete recursively to remove it all.`,
      });
      expect((await codeOf(call('sftp.remove', { sessionId: SESSION, path: `${dir}/holds-two` }))).message).toContain('(2 entries)');
    } finally {
      rmSync(`${dir}/holds-one`, { recursive: true, force: true });
      rmSync(`${dir}/holds-two`, { recursive: true, force: true });
    }
  });

  test('a name that is not UTF-8 lists with U+FFFD, and acting on it says why it cannot be reached', async () => {
    // "café.txt" saved in Latin-1: é is the single byte 0xE9, which is not UTF-8.
    const latin1 = Buffer.concat([Buffer.from(`${dir}/caf`), Buffer.from([0xe9]), Buffer.from('.txt')]);
    writeFileSync(latin1, 'x');
    const { uid, gid } = accountIds(sshd.users.password.username);
    chownSync(latin1, uid, gid);
    // Removed here whatever happens: the folder's own clean-up cannot reach it by name.
    try {
      const listing = (await call('sftp.list', { sessionId: SESSION, path: dir })) as { entries: { name: string; path: string }[] };
      const listed = listing.entries.find((e) => e.name.startsWith('caf'));
      expect(listed?.name).toBe('caf\uFFFD.txt');
      for (const [method, params] of [
        ['sftp.remove', { path: listed?.path }],
        ['sftp.rename', { from: listed?.path, to: `${dir}/cafe.txt` }],
        ['sftp.read', { path: listed?.path }],
      ] as const) {
        const err = await codeOf(call(method, { sessionId: SESSION, ...params }));
        expect(err, method).toMatchObject({ code: 'ENOTFOUND', reason: 'name_not_utf8' });
        expect(err.message, method).toContain('not UTF-8');
      }
      expect(readdirSync(dir, { encoding: 'buffer' }).some((n) => n.equals(Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x2e, 0x74, 0x78, 0x74])))).toBe(true);
      // A name that merely has U+FFFD in it (valid UTF-8) is reached as any other, and one that is missing is just missing.
      put(`${dir}/odd\uFFFD.txt`, 'y');
      expect(await call('sftp.read', { sessionId: SESSION, path: `${dir}/odd\uFFFD.txt` })).toMatchObject({ text: 'y' });
      expect(await codeOf(call('sftp.stat', { sessionId: SESSION, path: `${dir}/nope.txt` }))).toMatchObject({ code: 'ENOTFOUND', reason: undefined });
    } finally {
      rmSync(latin1);
    }
  });

  test('directories where files are expected, and files where directories are', async () => {
    await service.mkdir({ sessionId: SESSION, path: `${dir}/adir`, parents: false });
    put(`${dir}/afile`, 'x');
    expect(await codeOf(call('sftp.read', { sessionId: SESSION, path: `${dir}/adir` }))).toMatchObject({ code: 'EBADARGS', reason: 'not_a_file' });
    expect(await codeOf(call('sftp.write', { sessionId: SESSION, path: `${dir}/adir`, text: 'x' }))).toMatchObject({ code: 'EBADARGS', reason: 'not_a_file' });
    expect(await codeOf(call('sftp.readChunk', { sessionId: SESSION, path: `${dir}/adir`, offset: 0, length: 5 }))).toMatchObject({
      code: 'EBADARGS',
      reason: 'not_a_file',
    });
    expect(await codeOf(call('sftp.list', { sessionId: SESSION, path: `${dir}/afile` }))).toMatchObject({ code: 'EBADARGS', reason: 'not_a_directory' });
    expect(await codeOf(call('sftp.mkdir', { sessionId: SESSION, path: `${dir}/afile/sub`, parents: true }))).toMatchObject({ reason: 'not_a_directory' });
    expect(await codeOf(call('sftp.mkdir', { sessionId: SESSION, path: `${dir}/adir` }))).toMatchObject({ code: 'EBADARGS', reason: 'exists' });
    expect(await codeOf(call('sftp.rename', { sessionId: SESSION, from: `${dir}/afile`, to: `${dir}/adir` }))).toMatchObject({ reason: 'exists' });
  });

  test('a mode sent as a number is refused, never read as decimal; octal text is the mode', async () => {
    put(`${dir}/mode.txt`, 'x', 0o640);
    // 755 as a JSON number was taken as decimal 755 = 0o1363 (--wxrw--wt).
    const numeric = await codeOf(call('sftp.chmod', { sessionId: SESSION, path: `${dir}/mode.txt`, mode: 755 }));
    expect(numeric).toMatchObject({ code: 'EBADARGS', message: 'mode must be octal text such as "755" or "0644", never a number; got a number.' });
    expect(statSync(`${dir}/mode.txt`).mode & 0o7777).toBe(0o640);
    expect(await codeOf(call('sftp.mkdir', { sessionId: SESSION, path: `${dir}/numeric-mode`, mode: 700 }))).toMatchObject({ code: 'EBADARGS' });
    expect(existsSync(`${dir}/numeric-mode`)).toBe(false);
    expect(await codeOf(call('sftp.chmod', { sessionId: SESSION, path: `${dir}/mode.txt`, mode: '0o755' }))).toMatchObject({
      code: 'EBADARGS',
      message: 'mode must be octal text such as "755" or "0644", never a number.',
    });
    expect(await call('sftp.chmod', { sessionId: SESSION, path: `${dir}/mode.txt`, mode: '0755' })).toMatchObject({ modeOctal: '0755' });
  });

  test('a field the method does not have is refused, not dropped: a misspelt recursive deletes nothing', async () => {
    put(`${dir}/kept.txt`, 'kept');
    const misspelt = await codeOf(call('sftp.remove', { sessionId: SESSION, path: `${dir}/kept.txt`, recursiv: true }));
    expect(misspelt).toMatchObject({ code: 'EBADARGS', message: 'recursiv is not a field of sftp.remove; did you mean recursive?' });
    expect(readFileSync(`${dir}/kept.txt`, 'utf8')).toBe('kept');
  });

  test('permission denied → EDENIED; unknown session → ENOTFOUND; malformed input → EBADARGS', async () => {
    expect(await codeOf(call('sftp.list', { sessionId: SESSION, path: '/root' }))).toMatchObject({ code: 'EDENIED' });
    expect(await codeOf(call('sftp.write', { sessionId: SESSION, path: '/etc/wraith-denied.txt', text: 'x' }))).toMatchObject({ code: 'EDENIED' });
    expect(await codeOf(call('sftp.list', { sessionId: 'gone', path: '.' }))).toMatchObject({ code: 'ENOTFOUND' });
    expect(await codeOf(call('sftp.list', { sessionId: SESSION, path: '' }))).toMatchObject({ code: 'EBADARGS' });
    expect(await codeOf(call('sftp.chmod', { sessionId: SESSION, path: `${dir}/afile`, mode: '999' }))).toMatchObject({ code: 'EBADARGS' });
    expect(await codeOf(call('sftp.write', { sessionId: SESSION, path: `${dir}/afile` }))).toMatchObject({ code: 'EBADARGS' });
    expect(await codeOf(call('sftp.stat', { sessionId: SESSION, path: 'a\0b' }))).toMatchObject({ code: 'EBADARGS' });
    expect(await codeOf(call('sftp.remove', { sessionId: SESSION, path: '/', recursive: true }))).toMatchObject({ code: 'EBADARGS' });
    // The service is still fine afterwards.
    expect((await service.stat(SESSION, `${dir}/afile`)).size).toBe(1);
  });
});

test('through the App: sftp.* rides on an ssh.open session, events included; closing the session ends it', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'wraith-sftp-app-'));
  const app = new App({ dataDir, host: 'in-process' });
  const c = connectInProcess(app);
  c.subscribe(['transfer.']);
  const progress: string[] = [];
  c.on('transfer.progress', (p) => progress.push(p.state));
  try {
    const conn = await savePasswordConnection(c, sshd, 'sftp-e2e');
    const { sessionId } = await c.call('ssh.open', { connectionId: conn.id });
    expect(await c.call('sftp.realpath', { sessionId })).toEqual({ path: '/home/wraith-pw' });

    const local = join(dataDir, 'e2e.bin');
    const bytes = randomBytes(300_000);
    writeFileSync(local, bytes);
    const { transferId } = await c.call('sftp.upload', { sessionId, localPath: local, remotePath: `${dir}/e2e.bin` });
    await app.sftp.wait(transferId);
    expect(readFileSync(`${dir}/e2e.bin`).equals(bytes)).toBe(true);
    const listed = await c.call('sftp.list', { sessionId, path: dir });
    expect(listed.entries.map((e) => e.name)).toContain('e2e.bin');
    await new Promise((r) => setTimeout(r, 20)); // events are delivered asynchronously
    expect(progress.at(-1)).toBe('done');

    await c.call('sessions.close', { sessionId });
    await expect(c.call('sftp.list', { sessionId, path: dir })).rejects.toMatchObject({ code: 'ENOTFOUND' });
  } finally {
    c.close();
    await app.dispose();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
