/**
 * The desktop app's downloads (sftp.saveAs): the host asks where through the native dialog, then
 * streams to that path as sftp.download does. Electron cannot run here, so its dialog is the one
 * stand-in: a function that records what it was asked and answers as a user would. The SSH
 * server, the transfers and the files on disk are real.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPinia, setActivePinia } from 'pinia';
import { watch } from 'vue';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ContractClient } from '../../src-main/common/client.js';
import { App } from '../../src-main/node/app.js';
import { connectInProcess, openInProcessWire } from '../../src-main/node/in-process.js';
import { useSftpStore } from '../../src-renderer/features/sftp/sftp-store.js';
import { useSftpTransfers } from '../../src-renderer/features/sftp/sftp-transfers.js';
import { HostLink, setHostLink } from '../../src-renderer/transport/index.js';
import { type SshdHandle, savePasswordConnection, startSshd } from '../fixtures/sshd.js';
import { failure } from '../fixtures/errors.js';

let sshd: SshdHandle;
let app: App;
let client: ContractClient;
let sessionId: string;
let remote: string;
let local: string;
/** What the dialog was asked, and what the "user" answers next. */
const asked: { suggestedName: string; several: boolean }[] = [];
let answer: string | null = null;

const sha = (path: string) => execFileSync('sha256sum', [path], { encoding: 'utf8' }).split(' ')[0];
const settled = async (transferId: string) => {
  await expect.poll(async () => (await client.call('sftp.transfers', { sessionId })).find((t) => t.transferId === transferId)?.state, { timeout: 20_000 }).not.toBe('running');
  return (await client.call('sftp.transfers', { sessionId })).find((t) => t.transferId === transferId);
};

beforeAll(async () => {
  sshd = await startSshd();
  local = mkdtempSync(join(tmpdir(), 'wraith-save-as-'));
  app = new App({
    dataDir: join(local, 'data'),
    host: 'in-process',
    chooseSavePath: async (request) => {
      asked.push(request);
      return answer;
    },
  });
  client = connectInProcess(app);
  const conn = await savePasswordConnection(client, sshd, 'save');
  ({ sessionId } = await client.call('ssh.open', { connectionId: conn.id }));
  const u = sshd.users.password;
  const home = execFileSync('getent', ['passwd', u.username], { encoding: 'utf8' }).split(':')[5] ?? '';
  remote = `${home}/save-as-${process.pid}`;
  execFileSync('sh', ['-c', `mkdir -p ${remote}/logs/old && head -c 3000000 /dev/urandom > ${remote}/db.dump && echo one > ${remote}/logs/a.log && echo two > ${remote}/logs/old/b.log && chown -R ${u.username} ${remote}`]);
}, 60_000);

afterAll(async () => {
  await app?.dispose();
  await sshd?.stop();
  if (remote) rmSync(remote, { recursive: true, force: true });
  if (local) rmSync(local, { recursive: true, force: true });
});

describe('sftp.saveAs', () => {
  test('one file: a save dialog suggesting its name, then the same bytes at the chosen path, replacing what the dialog confirmed', async () => {
    const target = join(local, 'chosen-name.dump');
    writeFileSync(target, 'an older file the user agreed to replace');
    answer = target;
    const r = await client.call('sftp.saveAs', { sessionId, remotePaths: [`${remote}/db.dump`] });
    expect(asked.at(-1)).toEqual({ suggestedName: 'db.dump', several: false });
    expect(r.localPath).toBe(target);
    expect(r.transfers).toEqual([{ transferId: expect.any(String), remotePath: `${remote}/db.dump`, localPath: target }]);
    expect(await settled(r.transfers[0]?.transferId ?? '')).toMatchObject({ state: 'done', direction: 'download', bytes: 3_000_000, localPath: target });
    expect(sha(target)).toBe(sha(`${remote}/db.dump`));
  });

  test('one folder: the whole tree lands under the name chosen', async () => {
    answer = join(local, 'logs-copy');
    const r = await client.call('sftp.saveAs', { sessionId, remotePaths: [`${remote}/logs/`] });
    expect(asked.at(-1)).toEqual({ suggestedName: 'logs', several: false });
    expect(await settled(r.transfers[0]?.transferId ?? '')).toMatchObject({ state: 'done', kind: 'folder', filesDone: 2 });
    expect(readFileSync(join(local, 'logs-copy', 'a.log'), 'utf8')).toBe('one\n');
    expect(readFileSync(join(local, 'logs-copy', 'old', 'b.log'), 'utf8')).toBe('two\n');
  });

  test('several: a folder picker, each item by its own name inside, nothing already there replaced', async () => {
    const into = join(local, 'picked');
    mkdirSync(into);
    writeFileSync(join(into, 'db.dump'), 'keep me');
    answer = into;
    const r = await client.call('sftp.saveAs', { sessionId, remotePaths: [`${remote}/db.dump`, `${remote}/logs`] });
    expect(asked.at(-1)).toEqual({ suggestedName: '2 items', several: true });
    expect(r.transfers.map((t) => t.localPath)).toEqual([join(into, 'db.dump'), join(into, 'logs')]);
    const [dump, logs] = await Promise.all(r.transfers.map((t) => settled(t.transferId)));
    expect(dump).toMatchObject({ state: 'failed', error: { code: 'EBADARGS', message: expect.stringContaining('already exists') } });
    expect(readFileSync(join(into, 'db.dump'), 'utf8')).toBe('keep me');
    expect(logs).toMatchObject({ state: 'done' });
    expect(readFileSync(join(into, 'logs', 'old', 'b.log'), 'utf8')).toBe('two\n');
    expect(readdirSync(into).sort()).toEqual(['db.dump', 'logs']); // no temp left behind
  });

  test('a cancelled dialog downloads nothing; names that cannot be saved as such are refused before asking', async () => {
    answer = null;
    const before = readdirSync(local).sort();
    const transfersBefore = (await client.call('sftp.transfers', { sessionId })).length;
    expect(await client.call('sftp.saveAs', { sessionId, remotePaths: [`${remote}/db.dump`] })).toEqual({ localPath: null, transfers: [] });
    expect(readdirSync(local).sort()).toEqual(before);
    expect((await client.call('sftp.transfers', { sessionId })).length).toBe(transfersBefore);

    const asks = asked.length;
    expect((await failure(client.call('sftp.saveAs', { sessionId, remotePaths: [`${remote}/logs/..`] }))).code).toBe('EBADARGS');
    const twice = await failure(client.call('sftp.saveAs', { sessionId, remotePaths: [`${remote}/logs/a.log`, `${remote}/a.log`] }));
    expect(twice.message).toContain('Two of the items to save are called a.log');
    expect((await failure(client.call('sftp.saveAs', { sessionId, remotePaths: [] }))).code).toBe('EBADARGS');
    expect(asked.length).toBe(asks);
  });

  test('an item that is not there is refused before asking, naming it, and nothing is downloaded', async () => {
    answer = join(local, 'never');
    const asks = asked.length;
    const transfersBefore = (await client.call('sftp.transfers', { sessionId })).length;
    const gone = await failure(client.call('sftp.saveAs', { sessionId, remotePaths: [`${remote}/db.dump`, `${remote}/gone.txt`] }));
    expect(gone).toMatchObject({ code: 'ENOTFOUND', message: `gone.txt does not exist in ${remote}.` });
    expect(asked.length).toBe(asks);
    expect((await client.call('sftp.transfers', { sessionId })).length).toBe(transfersBefore);
    expect(existsSync(answer)).toBe(false);
  });

  test("the page's Cancel on a transfer that had already finished shows how it ended, not 'cancelled'", async () => {
    answer = join(local, 'finished.log');
    const { transfers } = await client.call('sftp.saveAs', { sessionId, remotePaths: [`${remote}/logs/a.log`] });
    const transferId = transfers[0]?.transferId ?? '';
    expect(await settled(transferId)).toMatchObject({ state: 'done' });
    // A page that was not there for the transfer's last event (its link dropped then) ...
    setActivePinia(createPinia());
    const link = new HostLink('electron', async () => openInProcessWire(app));
    setHostLink(link);
    await new Promise<void>((resolve) => link.onOpen(() => resolve()));
    const store = useSftpStore();
    try {
      // ... has the row as it last heard of it: running.
      store.add({ id: transferId, sessionId, direction: 'download', name: 'a.log', remotePath: `${remote}/logs/a.log`, bytes: 0, totalBytes: 4 });
      expect(store.transfers[0]).toMatchObject({ id: transferId, state: 'running' });
      await store.cancel(transferId);
      expect(store.transfers[0]).toMatchObject({ id: transferId, state: 'done', bytes: 4 });
      expect(readFileSync(answer, 'utf8')).toBe('one\n');
    } finally {
      link.dispose();
    }
  });

  test("the page's transfers list: a file that says size 0 has no total until it has been read, then what was read", async () => {
    // The renderer's own store and download code, on the Electron path, against the real host
    // (the page's end of the wire is in-process here: no Electron runtime can run).
    setActivePinia(createPinia());
    const link = new HostLink('electron', async () => openInProcessWire(app));
    setHostLink(link);
    await new Promise<void>((resolve) => link.onOpen(() => resolve()));
    const store = useSftpStore();
    answer = join(local, 'version');
    // /proc says size 0 for its files; the listing gives the page that 0 (SftpPanel passes it on).
    await useSftpTransfers(() => sessionId).download([{ path: '/proc/version', name: 'version', size: 0 }]);
    const row = store.transfers[0];
    expect(row).toMatchObject({ direction: 'download', name: 'version' });
    const seen: { state: string; totalBytes: number | null }[] = [];
    // Default flush: one snapshot per batch of changes, as the view would render them.
    const stop = watch(() => ({ state: row?.state ?? '', totalBytes: row?.totalBytes ?? null }), (v) => seen.push(v), { immediate: true });
    await expect.poll(() => row?.state, { timeout: 20_000 }).toBe('done');
    stop();
    link.dispose();
    const bytes = readFileSync('/proc/version').length;
    expect(readFileSync(answer).length).toBe(bytes);
    expect(seen.filter((s) => s.state === 'running').map((s) => s.totalBytes)).toEqual(expect.arrayContaining([null]));
    expect(seen.filter((s) => s.state === 'running' && s.totalBytes !== null)).toEqual([]);
    expect(row).toMatchObject({ state: 'done', bytes, totalBytes: bytes });
  });

  test('a host without a native dialog (browser mode) says so', async () => {
    const headless = new App({ dataDir: join(local, 'data-headless'), host: 'in-process' });
    try {
      const err = await failure(connectInProcess(headless).call('sftp.saveAs', { sessionId, remotePaths: ['/etc/hostname'] }));
      expect(err.code).toBe('EUNAVAILABLE');
      expect(err.message).toMatch(/desktop app.*sftp.downloadLink/);
    } finally {
      await headless.dispose();
    }
    expect(existsSync(join(local, 'data-headless'))).toBe(true);
  });
});
