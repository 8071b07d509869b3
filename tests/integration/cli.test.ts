import { execFile, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { methods } from '../../src-main/common/contract/index.js';
import { HOST_HEAP_FLAGS } from '../../src-main/server/host-heap.js';
import { readRuntimeFile, runtimeFilePath } from '../../src-main/server/runtime-file.js';
import { until } from '../fixtures/poll.js';
import { startServedSession } from '../fixtures/served-session.js';
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

/** Runs the CLI (in `cwd`, default this process's); finds the host through its runtime file in the data dir. */
async function cliIn(cwd: string | undefined, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [wraith, ...args, '--data-dir', host.dataDir], { cwd, env: { ...process.env, WRAITH_URL: '', WRAITH_TOKEN: '' } });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const cli = (...args: string[]) => cliIn(undefined, ...args);

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
  // No Node flags at all, the way `npm run serve` or a user's shell starts it. In a process group
  // of its own, so the cleanup below reaches the host child even before its pid is known.
  const wrapper = spawn(process.execPath, [wraith, 'serve', '--data-dir', dataDir], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
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
    // A failed check (or a timeout before the runtime file) must not leave the host running
    // without the process that waited for it: end the whole group, then the host by pid.
    for (const target of [-(wrapper.pid ?? 0), hostPid]) {
      if (!target) continue;
      try {
        process.kill(target, 'SIGKILL');
      } catch {
        // already gone, as it should be
      }
    }
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
    message: 'Unknown command "frob". The commands are serve, methods, call and events: wraith --help says more.',
  });
});

/** Runs the CLI with these arguments and environment variables only (no --data-dir added). */
async function cliWithEnv(env: Record<string, string>, ...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return run(process.execPath, [wraith, ...args], { env: { ...process.env, WRAITH_URL: '', WRAITH_TOKEN: '', ...env }, timeout: 20_000 }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (e: { code: number | null; stdout: string; stderr: string }) => e,
  );
}

test('half of --url/--token (or of WRAITH_URL/WRAITH_TOKEN) is refused, never answered by the local host', async () => {
  // A local host is running and findable through --data-dir: a fallback to it would answer with exit 0.
  const urlOnly = await cli('call', 'health.ping', '--url', 'http://127.0.0.1:9');
  expect(urlOnly.code).toBe(1);
  expect(JSON.parse(urlOnly.stderr)).toEqual({ code: 'EBADARGS', message: '--url needs --token (the token is in the URL `wraith serve` printed).' });

  const tokenOnly = await cli('call', 'health.ping', '--token', host.token);
  expect(tokenOnly.code).toBe(1);
  expect(JSON.parse(tokenOnly.stderr)).toMatchObject({ code: 'EBADARGS', message: expect.stringMatching(/^--token needs --url/) });

  const envUrlOnly = await cliWithEnv({ WRAITH_URL: 'http://127.0.0.1:9' }, 'call', 'health.ping', '--data-dir', host.dataDir);
  expect(envUrlOnly.code).toBe(1);
  expect(JSON.parse(envUrlOnly.stderr)).toEqual({ code: 'EBADARGS', message: 'WRAITH_URL needs WRAITH_TOKEN (the token is in the URL `wraith serve` printed).' });

  const envTokenOnly = await cliWithEnv({ WRAITH_TOKEN: host.token }, 'call', 'health.ping', '--data-dir', host.dataDir);
  expect(envTokenOnly.code).toBe(1);
  expect(JSON.parse(envTokenOnly.stderr)).toMatchObject({ code: 'EBADARGS', message: expect.stringMatching(/^WRAITH_TOKEN needs WRAITH_URL/) });
}, 60_000);

test('--url takes the URL `wraith serve` printed, token included; a bad address or token says which, never echoing the token', async () => {
  // No --data-dir with a host in it: only the given address can answer.
  const empty = mkdtempSync(join(tmpdir(), 'wraith-cli-url-'));
  try {
    const printed = await cliWithEnv({}, 'call', 'health.ping', '--url', host.openUrl, '--data-dir', empty);
    expect(printed).toMatchObject({ code: 0 });
    expect(JSON.parse(printed.stdout)).toEqual({ ok: true });
    const fromEnv = await cliWithEnv({ WRAITH_URL: host.openUrl }, 'call', 'health.ping', '--data-dir', empty);
    expect(JSON.parse(fromEnv.stdout)).toEqual({ ok: true });

    const port = new URL(host.url).port;
    const noScheme = await cliWithEnv({}, 'call', 'health.ping', '--url', `127.0.0.1:${port}`, '--token', host.token, '--data-dir', empty);
    expect(noScheme.code).toBe(1);
    expect(JSON.parse(noScheme.stderr)).toMatchObject({ code: 'EBADARGS', message: expect.stringContaining(`"127.0.0.1:${port}" is not an http:// or https:// address`) });

    const wrongToken = await cliWithEnv({}, 'call', 'health.ping', '--url', `${host.url}/?token=not-the-token`, '--data-dir', empty);
    expect(wrongToken.code).toBe(1);
    const refused = JSON.parse(wrongToken.stderr) as { code: string; message: string };
    expect(refused).toMatchObject({ code: 'EDENIED', message: expect.stringContaining('refused the token') });
    expect(refused.message).not.toContain('not-the-token');

    const unreachable = await cliWithEnv({}, 'call', 'health.ping', '--url', 'http://127.0.0.1:9/?token=s3cret-token', '--data-dir', empty);
    expect(unreachable.code).toBe(1);
    expect(JSON.parse(unreachable.stderr)).toMatchObject({ code: 'EUNAVAILABLE' });
    expect(unreachable.stderr).not.toContain('s3cret-token');

    const twoTokens = await cliWithEnv({}, 'call', 'health.ping', '--url', host.openUrl, '--token', 'another', '--data-dir', empty);
    expect(twoTokens.code).toBe(1);
    expect(JSON.parse(twoTokens.stderr)).toEqual({ code: 'EBADARGS', message: 'The token in --url and --token differ: give one of them.' });
  } finally {
    rmSync(empty, { recursive: true, force: true });
  }
}, 60_000);

test('argument mistakes are one sentence each, and an extra argument is refused, not dropped', async () => {
  const missing = await cliAlone('serve', '--port');
  expect(JSON.parse(missing.stderr)).toEqual({ code: 'EBADARGS', message: "Option '--port' needs a value. wraith --help lists the options." });

  const bogus = await cliAlone('call', 'health.ping', '--bogus');
  expect(JSON.parse(bogus.stderr)).toEqual({ code: 'EBADARGS', message: "Unknown option '--bogus'. wraith --help lists the options." });

  const extra = await cli('call', 'health.ping', '{}', 'extra');
  expect(extra.code).toBe(1);
  expect(JSON.parse(extra.stderr)).toEqual({
    code: 'EBADARGS',
    message: 'Unexpected argument "extra": wraith call takes METHOD and one JSON argument (quote the JSON so the shell passes it as one).',
  });
  const methodsExtra = await cli('methods', 'all');
  expect(methodsExtra.code).toBe(1);
  expect(JSON.parse(methodsExtra.stderr)).toMatchObject({ code: 'EBADARGS', message: expect.stringContaining('"all"') });
}, 60_000);

test('input that is not UTF-8 is refused, from stdin or an argument', async () => {
  const child = spawn(process.execPath, [wraith, 'call', 'health.ping', '-', '--data-dir', host.dataDir], { env: { ...process.env, WRAITH_URL: '', WRAITH_TOKEN: '' } });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  // Latin-1 "café": a lone 0xE9 byte is not UTF-8.
  child.stdin.end(Buffer.concat([Buffer.from('{"text":"caf'), Buffer.from([0xe9]), Buffer.from('"}')]));
  expect(await exited).toBe(1);
  expect(JSON.parse(stderr)).toMatchObject({ code: 'EBADARGS', message: expect.stringMatching(/^The input is not UTF-8 text/) });

  // Node turns the byte into U+FFFD before the CLI sees the argument: that is what is refused.
  const argument = await cli('call', 'health.ping', '{"text":"caf\uFFFD"}');
  expect(argument.code).toBe(1);
  expect(JSON.parse(argument.stderr)).toMatchObject({ code: 'EBADARGS', message: expect.stringMatching(/^The input is not UTF-8 text/) });
  // Written as a JSON escape, the character is meant: it goes through (to a lookup that finds nothing).
  const escaped = await cli('call', 'connections.get', '{"id":"caf\\ufffd"}');
  expect(JSON.parse(escaped.stderr)).toMatchObject({ code: 'ENOTFOUND' });
}, 60_000);

test('--help lists only commands that are built', async () => {
  const help = await cliAlone('--help');
  expect(help.code).toBe(0);
  expect(help.stdout).toContain('wraith call');
  expect(help.stdout).not.toContain('wraith mcp');
});

test('bytes go in and come out as {"base64": …}: sftp.write data, sftp.readChunk, terminal.data events', async () => {
  const served = await startServedSession('cli-bytes');
  const events = spawn(process.execPath, [wraith, 'events', '--filter', 'terminal.data', '--url', served.host.openUrl], { env: { ...process.env, WRAITH_URL: '', WRAITH_TOKEN: '' } });
  try {
    const at = ['--url', served.host.url, '--token', served.host.token];
    const bytes = Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x00, 0xff, 0x0a]);
    const path = `${served.dir}/bytes.bin`;
    const written = await cliWithEnv({}, 'call', 'sftp.write', JSON.stringify({ sessionId: served.sessionId, path, data: { base64: bytes.toString('base64') } }), ...at);
    expect(written).toMatchObject({ code: 0 });
    expect(readFileSync(path).equals(bytes)).toBe(true);

    const read = await cliWithEnv({}, 'call', 'sftp.readChunk', JSON.stringify({ sessionId: served.sessionId, path, offset: 0, length: 1024 }), ...at);
    expect(read).toMatchObject({ code: 0 });
    expect(JSON.parse(read.stdout)).toEqual({ data: { base64: bytes.toString('base64') }, eof: true, size: bytes.length });

    const notBase64 = await cliWithEnv({}, 'call', 'sftp.write', JSON.stringify({ sessionId: served.sessionId, path, data: { base64: 'not base64!' } }), ...at);
    expect(notBase64.code).toBe(1);
    expect(JSON.parse(notBase64.stderr)).toMatchObject({ code: 'EBADARGS', message: expect.stringContaining('is not base64') });
    expect(readFileSync(path).equals(bytes)).toBe(true);

    let lines = '';
    events.stdout.setEncoding('utf8').on('data', (d: string) => (lines += d));
    const outputs = () =>
      lines
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { name: string; payload: { data: unknown } })
        .map((e) => e.payload.data)
        .map((d) => (typeof d === 'object' && d !== null && 'base64' in d && typeof d.base64 === 'string' ? Buffer.from(d.base64, 'base64').toString('utf8') : JSON.stringify(d)))
        .join('');
    // Typed again until the events stream, which subscribes as it starts, sees the echo.
    await until('the terminal output as base64 on the events stream', async () => {
      await cliWithEnv({}, 'call', 'terminal.write', JSON.stringify({ sessionId: served.sessionId, data: { base64: Buffer.from('echo wraith-$((6*7))\n').toString('base64') } }), ...at);
      return outputs().includes('wraith-42') || undefined;
    });
  } finally {
    events.kill('SIGTERM');
    await served.stop();
  }
}, 120_000);

test('wraith call makes a relative local path absolute from where it runs: the host refuses one', async () => {
  const here = mkdtempSync(join(tmpdir(), 'wraith-cli-cwd-'));
  try {
    const keyDir = mkdtempSync(join(here, 'key-'));
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(keyDir, 'k')]);
    const [type, b64] = readFileSync(join(keyDir, 'k.pub'), 'utf8').split(' ');
    writeFileSync(join(here, 'known_hosts'), `cli-cwd.example ${type} ${b64}\n`);

    const r = await cliIn(here, 'call', 'hostkeys.importKnownHosts', '{"path":"known_hosts"}');
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual({ imported: 1, skipped: 0, conflicts: 0, conflicting: [], revoked: 0, revokedForgotten: [] });
    const list = await cliIn(here, 'call', 'hostkeys.list');
    expect(JSON.parse(list.stdout)).toContainEqual(expect.objectContaining({ host: 'cli-cwd.example', keyType: type }));
  } finally {
    rmSync(here, { recursive: true, force: true });
  }
});
