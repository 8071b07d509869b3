import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { methods } from '../../src-main/common/contract/index.js';
import { type WraithServer, REPO_ROOT, startWraithServer } from '../fixtures/wraith-server.js';

const run = promisify(execFile);
const wraith = join(REPO_ROOT, 'bin', 'wraith.js');
let host: WraithServer;

beforeAll(async () => {
  host = await startWraithServer();
});
afterAll(async () => {
  await host?.stop();
});

/** Runs the CLI; finds the host through its runtime file in the data dir. */
async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [wraith, ...args, '--data-dir', host.dataDir], { env: { ...process.env, WRAITH_URL: '', WRAITH_TOKEN: '' } });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

test('wraith methods prints every method with its JSON Schemas', async () => {
  const { code, stdout } = await cli('methods');
  expect(code).toBe(0);
  const list = JSON.parse(stdout) as { name: string; input: object; output: object }[];
  expect(list.map((m) => m.name).sort()).toEqual(Object.keys(methods).sort());
  for (const m of list) expect(m.input).toHaveProperty('$schema');
});

test('wraith call prints the result; errors go to stderr as {code,message} with exit 1', async () => {
  const created = await cli('call', 'connections.create', '{"name":"cli","kind":"ssh","host":"cli.example"}');
  expect(created.code).toBe(0);
  expect(JSON.parse(created.stdout)).toMatchObject({ name: 'cli', port: 22 });

  const bad = await cli('call', 'connections.create', '{"name":"cli","kind":"ftp","host":"x"}');
  expect(bad.code).toBe(1);
  expect(JSON.parse(bad.stderr)).toMatchObject({ code: 'EBADARGS', message: expect.stringContaining('kind') });

  const notJson = await cli('call', 'connections.get', '{oops');
  expect(notJson.code).toBe(1);
  expect(JSON.parse(notJson.stderr)).toMatchObject({ code: 'EBADARGS' });

  const unknown = await cli('call', 'nope.nope');
  expect(unknown.code).toBe(1);
  expect(JSON.parse(unknown.stderr)).toMatchObject({ code: 'ENOTFOUND' });
});

test('without a running host, call says how to start one', async () => {
  const { code, stderr } = await run(process.execPath, [wraith, 'call', 'health.ping', '--data-dir', '/nonexistent-wraith'], { env: { ...process.env, WRAITH_URL: '', WRAITH_TOKEN: '' } }).then(
    () => ({ code: 0, stderr: '' }),
    (e: { code: number; stderr: string }) => e,
  );
  expect(code).toBe(1);
  expect(JSON.parse(stderr)).toMatchObject({ code: 'EUNAVAILABLE', message: expect.stringContaining('wraith serve') });
});
