/**
 * `wraith call` on transfers answers what happened: a source that is not there fails the call
 * (exit 1) instead of starting a transfer that fails out of sight, and a cancel that came too
 * late says so. A real `wraith serve`, the real CLI and a real sshd.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { until } from '../fixtures/poll.js';
import { type ServedSession, startServedSession } from '../fixtures/served-session.js';
import { REPO_ROOT } from '../fixtures/wraith-server.js';

const run = promisify(execFile);
let served: ServedSession;
let local: string;

beforeAll(async () => {
  served = await startServedSession('cli-transfers');
  local = mkdtempSync(join(tmpdir(), 'wraith-cli-transfers-'));
});
afterAll(async () => {
  await served?.stop();
  if (local) rmSync(local, { recursive: true, force: true });
});

/** `wraith call METHOD JSON` against the served host, run in `local`; its exit code and what it printed. */
async function call(method: string, params: object): Promise<{ code: number; stdout: string; stderr: string }> {
  const args = [join(REPO_ROOT, 'bin', 'wraith.js'), 'call', method, JSON.stringify(params), '--url', served.host.url, '--token', served.host.token];
  return run(process.execPath, args, { cwd: local }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
}

const transferCount = async () => (await served.client.call('sftp.transfers', { sessionId: served.sessionId })).length;

test('wraith call sftp.upload of a local file that does not exist fails, naming it, and starts no transfer', async () => {
  const before = await transferCount();
  const r = await call('sftp.upload', { sessionId: served.sessionId, localPath: 'missing.txt', remotePath: `${served.dir}/missing.txt` });
  expect(r.code).toBe(1);
  expect(r.stdout).toBe('');
  // The CLI made the relative path absolute, as the shell user meant it.
  const missing = join(local, 'missing.txt');
  expect(JSON.parse(r.stderr)).toEqual({ code: 'ENOTFOUND', message: `Cannot upload local ${missing}: no such file or directory.`, details: { path: missing } });
  expect(await transferCount()).toBe(before);
});

test('wraith call sftp.download of a remote file that does not exist fails, naming it, and starts no transfer', async () => {
  const before = await transferCount();
  const gone = `${served.dir}/gone.txt`;
  const r = await call('sftp.download', { sessionId: served.sessionId, remotePath: gone, localPath: 'gone.txt' });
  expect(r.code).toBe(1);
  expect(JSON.parse(r.stderr)).toMatchObject({ code: 'ENOTFOUND', message: `gone.txt does not exist in ${served.dir}.`, details: { path: gone } });
  expect(await transferCount()).toBe(before);
});

test('wraith call sftp.cancel of a transfer that had already finished fails, saying so, and the file stays', async () => {
  writeFileSync(join(local, 'report.txt'), 'report');
  const dest = `${served.dir}/report.txt`;
  const started = await call('sftp.upload', { sessionId: served.sessionId, localPath: 'report.txt', remotePath: dest });
  expect(started.code).toBe(0);
  const { transferId } = JSON.parse(started.stdout) as { transferId: string };
  await until('the upload done', async () => (await served.client.call('sftp.transfers', { sessionId: served.sessionId })).find((t) => t.transferId === transferId)?.state === 'done');

  const late = await call('sftp.cancel', { transferId });
  expect(late.code).toBe(1);
  expect(JSON.parse(late.stderr)).toEqual({
    code: 'EBADARGS',
    message: `The upload to ${dest} had already finished, so there was nothing to cancel.`,
    details: { reason: 'finished', state: 'done', transferId },
  });
  expect(readFileSync(dest, 'utf8')).toBe('report');
});
