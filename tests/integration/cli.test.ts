import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { methods } from '../../src-main/common/contract/index.js';
import { HOST_HEAP_FLAGS } from '../../src-main/server/host-heap.js';
import { readRuntimeFile, runtimeFilePath } from '../../src-main/server/runtime-file.js';
import { until } from '../fixtures/poll.js';
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
  const created = await cli('call', 'connections.create', '{"name":"cli","kind":"ssh","host":"cli.example","username":"ops"}');
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

test('wraith serve started without the host heap flags runs the host under them, and stops with it', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'wraith-heap-'));
  // No Node flags at all, the way `npm run serve` or a user's shell starts it.
  const wrapper = spawn(process.execPath, [wraith, 'serve', '--data-dir', dataDir], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => wrapper.once('exit', (code, signal) => resolve({ code, signal })));
  let hostPid: number | undefined;
  try {
    let out = '';
    wrapper.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    await until('the host to listen', () => out.includes('Wraith listening on'));
    const runtime = readRuntimeFile(dataDir);
    expect(runtime).not.toBeNull();
    hostPid = runtime!.pid;
    // The host is the child, started with the flags; the process we started only waits for it.
    expect(runtime!.pid).not.toBe(wrapper.pid);
    const argv = readFileSync(`/proc/${runtime!.pid}/cmdline`, 'utf8').split('\0');
    for (const flag of HOST_HEAP_FLAGS) expect(argv).toContain(flag);

    wrapper.kill('SIGTERM');
    expect(await exited).toEqual({ code: 0, signal: null });
    // The host stopped too: it removed its runtime file on the way out.
    expect(existsSync(runtimeFilePath(dataDir))).toBe(false);
    expect(() => process.kill(runtime!.pid, 0)).toThrow();
  } finally {
    // A failed check must not leave the host running without the process that waited for it.
    if (hostPid !== undefined) {
      try {
        process.kill(hostPid, 'SIGKILL');
      } catch {
        // already gone, as it should be
      }
    }
    wrapper.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
});

/** Runs the CLI with these arguments only; a command that does not end within 20 s is killed (code null). */
async function cliAlone(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return run(process.execPath, [wraith, ...args], { env: { ...process.env, WRAITH_URL: '', WRAITH_TOKEN: '' }, timeout: 20_000 }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (e: { code: number | null; stdout: string; stderr: string }) => e,
  );
}

test('a second wraith serve on a data folder in use refuses, and the first stays the one `wraith call` finds', async () => {
  const second = await cliAlone('serve', '--port', '0', '--data-dir', host.dataDir);
  expect(second.code).toBe(1);
  expect(JSON.parse(second.stderr)).toMatchObject({
    code: 'EUNAVAILABLE',
    message: `A Wraith host is already running on the data folder ${host.dataDir} (pid ${host.process.pid}, ${host.url}). Stop it first, or start this one with another --data-dir.`,
  });
  expect(readRuntimeFile(host.dataDir)?.pid).toBe(host.process.pid);
  const ping = await cli('call', 'health.ping');
  expect(ping.code).toBe(0);
});

test('wraith serve on a port in use, or with an option it does not know, says so with a code; an unknown command is one line', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'wraith-cli-port-'));
  try {
    const port = new URL(host.url).port;
    const taken = await cliAlone('serve', '--port', port, '--data-dir', dataDir);
    expect(taken.code).toBe(1);
    expect(JSON.parse(taken.stderr)).toEqual({
      code: 'EUNAVAILABLE',
      message: `Cannot listen on 127.0.0.1:${port}: another program is using that port. Choose another with --port, or --port 0 for any free one.`,
    });
    expect(existsSync(runtimeFilePath(dataDir))).toBe(false);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }

  const option = await cliAlone('methods', '--frob');
  expect(option.code).toBe(1);
  expect(JSON.parse(option.stderr)).toMatchObject({ code: 'EBADARGS', message: expect.stringContaining("Unknown option '--frob'") });

  const command = await cliAlone('frob');
  expect(command.code).toBe(1);
  expect(command.stderr.trim().split('\n')).toHaveLength(1);
  expect(JSON.parse(command.stderr)).toEqual({
    code: 'EBADARGS',
    message: 'Unknown command "frob". The commands are serve, methods, call, events and mcp: wraith --help says more.',
  });
});
