/**
 * Remote temps that uploads cut off by a lost connection left on the server (their cleanup could
 * not reach it) are remembered in the database, so that the next session to that server removes
 * them after Wraith restarted too, and not only within the same run. A real OpenSSH sshd, whose
 * side of the connection is killed mid-upload.
 */
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { App } from '../../src-main/node/app.js';
import { loadMigrations, openDatabase } from '../../src-main/node/db/database.js';
import { connectInProcess } from '../../src-main/node/in-process.js';
import { until } from '../fixtures/poll.js';
import { failure } from '../fixtures/errors.js';
import { type SshdHandle, savePasswordConnection, startSshd } from '../fixtures/sshd.js';

const MB = 1024 * 1024;
let sshd: SshdHandle;
let localDir: string;
let bigLocal: string;
let remoteDir: string;

/** The temp names in the remote folder (the sshd is local: read straight from disk). */
const temps = () => readdirSync(remoteDir).filter((n) => n.includes('wraith-part')).sort();

/** The temps an App's database remembers. */
const remembered = (app: App) => app.db.prepare('SELECT site, path FROM sftp_orphan_temps ORDER BY path').all();

beforeAll(async () => {
  sshd = await startSshd();
  const user = sshd.users.password.username;
  const home = execFileSync('getent', ['passwd', user], { encoding: 'utf8' }).split(':')[5] ?? '';
  remoteDir = `${home}/orphans-${randomBytes(4).toString('hex')}`;
  execFileSync('mkdir', ['-p', remoteDir]);
  execFileSync('chown', [user, remoteDir]);
  localDir = mkdtempSync(join(tmpdir(), 'wraith-orphans-local-'));
  bigLocal = join(localDir, 'big.bin');
  writeFileSync(bigLocal, Buffer.concat(Array.from({ length: 50 }, () => randomBytes(MB))));
});

afterAll(async () => {
  if (remoteDir) rmSync(remoteDir, { recursive: true, force: true });
  if (localDir) rmSync(localDir, { recursive: true, force: true });
  await sshd?.stop();
});

describe('temps a lost connection kept, across a restart', () => {
  test('are remembered in the database and removed through the next session to that server after Wraith restarts; nothing else is touched', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'wraith-orphans-'));
    // Looks like one of our temps, but no transfer of ours left it: not ours to delete.
    const foreign = '.other.bin.wraith-part-0badf00d';
    writeFileSync(join(remoteDir, foreign), 'someone else is uploading this');
    let app = new App({ dataDir, host: 'in-process' });
    let c = connectInProcess(app);
    try {
      const { id: connectionId } = await savePasswordConnection(c, sshd, 'restarted');
      const { sessionId } = await c.call('ssh.open', { connectionId });
      // A page's upload, begun with one chunk in, and a desktop upload under way.
      const page = await c.call('sftp.uploadBegin', { sessionId, remotePath: `${remoteDir}/page.bin`, size: 2 * MB });
      await c.call('sftp.uploadChunk', { transferId: page.transferId, offset: 0, data: new Uint8Array(MB) });
      const file = await c.call('sftp.upload', { sessionId, localPath: bigLocal, remotePath: `${remoteDir}/cut-off.bin` });
      await until('the upload under way', () => app.sftp.listTransfers().find((t) => t.transferId === file.transferId && t.bytes > 0));

      sshd.dropConnections(); // the server's side of the connection dies mid-upload
      expect(await app.sftp.wait(file.transferId)).toMatchObject({ state: 'failed', error: { code: 'ESESSIONCLOSED' } });
      expect(await failure(c.call('sftp.uploadChunk', { transferId: page.transferId, offset: MB, data: new Uint8Array(MB) }))).toMatchObject({ code: 'ESESSIONCLOSED' });
      expect(await app.sftp.wait(page.transferId)).toMatchObject({ state: 'failed' });
      // The dead connection could not delete the two temps, and the database remembers them.
      const kept = temps().filter((n) => n !== foreign);
      expect(kept).toHaveLength(2);
      expect(kept.filter((n) => n.startsWith('.cut-off.bin.wraith-part-') || n.startsWith('.page.bin.wraith-part-'))).toEqual(kept);
      expect(remembered(app)).toEqual(kept.map((n) => ({ site: connectionId, path: `${remoteDir}/${n}` })));
      // Two more a database might hold (an older Wraith's, a hand-edited one): a temp gone from
      // the server meanwhile, and a path that is no temp of ours, which is never removed.
      writeFileSync(join(remoteDir, 'keep.txt'), 'mine');
      const noted = app.db.prepare('INSERT INTO sftp_orphan_temps (site, path, noted_at) VALUES (?, ?, ?)');
      noted.run(connectionId, `${remoteDir}/.gone.bin.wraith-part-0123abcd`, new Date().toISOString());
      noted.run(connectionId, `${remoteDir}/keep.txt`, new Date().toISOString());

      // Wraith quits (nothing can reach the server to remove them) and starts again.
      c.close();
      await app.dispose();
      expect(temps()).toEqual([...kept, foreign].sort());
      app = new App({ dataDir, host: 'in-process' });
      c = connectInProcess(app);

      // A terminal to the same server, and nothing else: the temps go, and then the database
      // forgets them (each row once its file is gone from the server, or was not there).
      await c.call('ssh.open', { connectionId });
      await until('every remembered temp dealt with', () => remembered(app).length === 0);
      expect(temps()).toEqual([foreign]);
      expect(readdirSync(remoteDir)).toContain('keep.txt');
      expect(readdirSync(remoteDir)).not.toContain('cut-off.bin');
      expect(readdirSync(remoteDir)).not.toContain('page.bin');
    } finally {
      c.close();
      await app.dispose();
      rmSync(join(remoteDir, foreign), { force: true });
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('go with their saved connection when it is deleted (no session can reach them through it any more); those of one deleted before go at start', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'wraith-orphans-deleted-'));
    const at = new Date().toISOString();
    const temp = (name: string) => `${remoteDir}/.${name}.wraith-part-0123abcd`;
    // The database as a Wraith before this change left it: a temp noted for a connection deleted since.
    const before = openDatabase(dataDir, { migrations: loadMigrations().filter((m) => m.version < 6) });
    before.prepare('INSERT INTO sftp_orphan_temps (site, path, noted_at) VALUES (?, ?, ?)').run('0c6b3b1e-connection-deleted-before', temp('old.bin'), at);
    before.close();
    const app = new App({ dataDir, host: 'in-process' });
    const c = connectInProcess(app);
    try {
      expect(remembered(app)).toEqual([]);
      const kept = await savePasswordConnection(c, sshd, 'kept');
      const deleted = await savePasswordConnection(c, sshd, 'to delete');
      const noted = app.db.prepare('INSERT INTO sftp_orphan_temps (site, path, noted_at) VALUES (?, ?, ?)');
      noted.run(kept.id, temp('kept.bin'), at);
      noted.run(deleted.id, temp('a.bin'), at);
      noted.run(deleted.id, temp('b.bin'), at);
      await c.call('connections.delete', { id: deleted.id });
      expect(remembered(app)).toEqual([{ site: kept.id, path: temp('kept.bin') }]);
    } finally {
      c.close();
      await app.dispose();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
