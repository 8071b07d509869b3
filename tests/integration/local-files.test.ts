/**
 * Files on the host's machine that a caller names (a known_hosts file, an ssh_config and what it
 * Includes, a private key, an upload, a shell's folder): a device or a FIFO is refused instead of
 * read (reading /dev/zero never ends, a FIFO blocks the host until someone writes), and a relative
 * path is refused, as the host cannot know the caller's working directory.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import type { ContractClient } from '../../src-main/common/client.js';
import { App } from '../../src-main/node/app.js';
import { connectInProcess } from '../../src-main/node/in-process.js';
import { failure } from '../fixtures/errors.js';

let app: App;
let client: ContractClient;
let dataDir: string;
let files: string;
const writers: ChildProcess[] = [];

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'wraith-local-files-'));
  files = mkdtempSync(join(tmpdir(), 'wraith-local-files-in-'));
  app = new App({ dataDir, host: 'in-process' });
  client = connectInProcess(app);
});

afterEach(() => {
  for (const w of writers.splice(0)) w.kill();
});

afterAll(async () => {
  client?.close();
  await app?.dispose();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(files, { recursive: true, force: true });
});

/**
 * A FIFO with a writer waiting on it to hand over `text`: read as a file, it gives that text (so a
 * host that reads it imports what it says, rather than hanging this test); refused, it gives nothing.
 */
function fifoWithWriter(name: string, text: string): string {
  const path = join(files, name);
  execFileSync('mkfifo', [path]);
  writers.push(spawn('sh', ['-c', 'printf "%s" "$1" > "$2"', 'sh', text, path], { stdio: 'ignore' }));
  return path;
}

/** A known_hosts line OpenSSH would write for host (a real ed25519 key from ssh-keygen). */
function knownHostsLine(host: string): string {
  const dir = mkdtempSync(join(files, 'key-'));
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(dir, 'k')]);
  const pub = execFileSync('cat', [join(dir, 'k.pub')], { encoding: 'utf8' }).split(' ');
  return `${host} ${pub[0]} ${pub[1]}\n`;
}

describe('a device or a FIFO named as a file is refused, not read', () => {
  test('hostkeys.importKnownHosts', async () => {
    const dev = await failure(client.call('hostkeys.importKnownHosts', { path: '/dev/null' }));
    expect(dev).toMatchObject({ code: 'EBADARGS', message: expect.stringContaining('/dev/null is not a regular file') });

    const fifo = fifoWithWriter('known_hosts.fifo', knownHostsLine('fifo.example.com'));
    const e = await failure(client.call('hostkeys.importKnownHosts', { path: fifo }));
    expect(e).toMatchObject({ code: 'EBADARGS', message: expect.stringContaining(`${fifo} is not a regular file`) });
    expect((await client.call('hostkeys.list')).map((k) => k.host)).not.toContain('fifo.example.com');
  });

  test('connections.importSshConfig, and a FIFO it Includes', async () => {
    const fifo = fifoWithWriter('config.fifo', 'Host from-fifo\n  HostName 10.9.9.9\n  User ops\n');
    const e = await failure(client.call('connections.importSshConfig', { path: fifo }));
    expect(e).toMatchObject({ code: 'EBADARGS', message: expect.stringContaining(`${fifo} is not a regular file`) });

    const included = fifoWithWriter('included.fifo', 'Host from-include\n  HostName 10.9.9.8\n  User ops\n');
    const config = join(files, 'config');
    writeFileSync(config, `Include ${included}\nHost plain\n  HostName 10.9.9.7\n  User ops\n`);
    const r = await client.call('connections.importSshConfig', { path: config });
    expect(r.created.map((c) => c.name)).toEqual(['plain']);
    expect(r.notes).toContainEqual({ host: config, note: expect.stringContaining(`${included} is not a regular file`) });
  });

  test('a key file: connections.create refuses it on the keyPath field', async () => {
    const e = await failure(
      client.call('connections.create', { name: 'dev-key', kind: 'ssh', host: 'k.example', username: 'ops', authMethod: 'key', keyPath: '/dev/null' }),
    );
    expect(e.code).toBe('EBADARGS');
    expect(e.message).toContain('keyPath: /dev/null is not a regular file');
  });
});

describe('a relative local path is refused: the host cannot know the caller\'s folder', () => {
  test('known_hosts, ssh_config, key file, upload, download and a shell\'s folder', async () => {
    const relative = (p: Promise<unknown>) => failure(p).then((e) => ({ code: e.code, message: e.message }));
    expect(await relative(client.call('hostkeys.importKnownHosts', { path: 'known_hosts' }))).toEqual({
      code: 'EBADARGS',
      message: 'Give the full path of the local file: known_hosts is relative.',
    });
    expect(await relative(client.call('connections.importSshConfig', { path: '.ssh/config' }))).toMatchObject({ code: 'EBADARGS', message: expect.stringContaining('.ssh/config is relative') });
    expect(
      await relative(client.call('connections.create', { name: 'rel-key', kind: 'ssh', host: 'k.example', username: 'ops', authMethod: 'key', keyPath: 'id_ed25519' })),
    ).toMatchObject({ code: 'EBADARGS', message: expect.stringContaining('id_ed25519 is relative') });
    // Refused before the session is looked for: the path alone is wrong.
    const sessionId = randomUUID();
    expect(await relative(client.call('sftp.upload', { sessionId, localPath: 'small.txt', remotePath: '/tmp/small.txt' }))).toEqual({
      code: 'EBADARGS',
      message: 'Give the full path of the local file: small.txt is relative.',
    });
    expect(await relative(client.call('sftp.download', { sessionId, remotePath: '/tmp/small.txt', localPath: 'out/small.txt' }))).toMatchObject({
      code: 'EBADARGS',
      message: expect.stringContaining('out/small.txt is relative'),
    });
    expect(await relative(client.call('pty.spawn', { shell: 'sh', cwd: 'node_modules' }))).toEqual({
      code: 'EBADARGS',
      message: 'Give the full path of the local folder: node_modules is relative.',
    });
  });

  test('"~/" still means the home folder', async () => {
    const e = await failure(client.call('hostkeys.importKnownHosts', { path: '~/no-such-known-hosts-' + randomUUID() }));
    expect(e).toMatchObject({ code: 'ENOTFOUND', message: expect.stringMatching(/^No known_hosts file at \/.*\/no-such-known-hosts-/) });
  });
});

describe('hostkeys.trust takes only what Wraith itself would trust', () => {
  const ssh = { kind: 'ssh' as const, port: 22, keyType: 'ssh-ed25519', fingerprint: 'SHA256:' + 'A'.repeat(43) };
  const rdpHex = Array.from({ length: 32 }, (_, i) => i.toString(16).padStart(2, '0')).join(':');

  test('a fingerprint in another form, or a host with a port or spaces, is refused', async () => {
    for (const bad of [
      { ...ssh, host: 'web01', fingerprint: 'hello world' },
      { ...ssh, host: 'web01', fingerprint: 'SHA256:short' },
      { ...ssh, host: 'web01', fingerprint: rdpHex },
      { ...ssh, kind: 'rdp' as const, host: 'web01', keyType: 'x509', fingerprint: ssh.fingerprint },
      { ...ssh, kind: 'rdp' as const, host: 'web01', keyType: 'x509', fingerprint: rdpHex.slice(3) },
      { ...ssh, host: '127.0.0.1:22' },
      { ...ssh, host: '[::1]:22' },
      { ...ssh, host: 'a b\nc' },
      { ...ssh, host: 'web01\tx' },
    ]) {
      expect((await failure(client.call('hostkeys.trust', bad))).code, JSON.stringify(bad)).toBe('EBADARGS');
    }
    expect((await client.call('hostkeys.list')).filter((k) => k.source === 'user')).toEqual([]);
  });

  test('the forms the product produces are taken: an SSH SHA256 and an RDP certificate\'s hex, IPv6 with or without brackets', async () => {
    expect(await client.call('hostkeys.trust', { ...ssh, host: '::1' })).toMatchObject({ host: '::1', fingerprint: ssh.fingerprint });
    // Stored as the bare address every connection dials and looks its key up under (hostKeyHost).
    expect(await client.call('hostkeys.trust', { ...ssh, host: '[fe80::1]', port: 2222 })).toMatchObject({ host: 'fe80::1', port: 2222 });
    const rdp = await client.call('hostkeys.trust', { kind: 'rdp', host: 'desk.example', port: 3389, keyType: 'x509', fingerprint: rdpHex.toUpperCase() });
    expect(rdp.fingerprint).toBe(rdpHex);
  });

  test('hostkeys.forget says how many keys it forgot', async () => {
    expect(await client.call('hostkeys.forget', { kind: 'ssh', host: 'never-trusted.example', port: 22 })).toEqual({ ok: true, forgotten: 0 });
    await client.call('hostkeys.trust', { ...ssh, host: 'forget-me.example' });
    await client.call('hostkeys.trust', { ...ssh, host: 'forget-me.example', keyType: 'ssh-rsa', fingerprint: 'SHA256:' + 'B'.repeat(43) });
    expect(await client.call('hostkeys.forget', { kind: 'ssh', host: 'forget-me.example', port: 22 })).toEqual({ ok: true, forgotten: 2 });
  });
});
