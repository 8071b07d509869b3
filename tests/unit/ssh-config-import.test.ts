import { mkdtempSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { App } from '../../src-main/node/app.js';
import { importSshConfig } from '../../src-main/node/connections/ssh-config-import.js';

let app: App;
beforeEach(() => {
  app = new App({ dataDir: mkdtempSync(join(tmpdir(), 'wraith-import-')), host: 'in-process' });
});
afterEach(async () => {
  await app.dispose();
});

const SAMPLE = `
Host bastion
  HostName bastion.example.com
  Port 2222
  IdentityFile ~/.ssh/bastion_ed25519

Host web01 web02
  HostName %h.internal
  ProxyJump bastion

Host db
  HostName 10.0.0.5
  User postgres
  ProxyJump bastion,web01

Host *.corp
  User nobody

# defaults last: in OpenSSH the first value found wins
Host *
  User deploy
  ServerAliveInterval 30
`;

test('imports hosts with HostName, User, Port, IdentityFile and ProxyJump chains', () => {
  const result = importSshConfig(app.connections, { text: SAMPLE });
  const byName = Object.fromEntries(result.created.map((c) => [c.name, app.connections.get(c.id)]));
  expect(Object.keys(byName).sort()).toEqual(['bastion', 'db', 'web01', 'web02']);
  expect(byName.bastion).toMatchObject({ host: 'bastion.example.com', port: 2222, username: 'deploy', authMethod: 'key', keyPath: join(homedir(), '.ssh/bastion_ed25519'), jumpHostId: null });
  expect(byName.web01).toMatchObject({ host: 'web01.internal', username: 'deploy', port: 22, authMethod: 'agent', jumpHostId: byName.bastion?.id });
  // ProxyJump bastion,web01: db hops through web01, which hops through bastion.
  expect(byName.db).toMatchObject({ host: '10.0.0.5', username: 'postgres', jumpHostId: byName.web01?.id });
  expect(result.skipped).toEqual([]);
});

test('importing twice skips what exists', () => {
  importSshConfig(app.connections, { text: SAMPLE });
  const again = importSshConfig(app.connections, { text: SAMPLE });
  expect(again.created).toEqual([]);
  expect(again.skipped.map((s) => s.host).sort()).toEqual(['bastion', 'db', 'web01', 'web02']);
});

test('a missing file is ENOTFOUND; a bad port is skipped with a reason', () => {
  expect(() => importSshConfig(app.connections, { path: '/nonexistent/config' })).toThrow(expect.objectContaining({ code: 'ENOTFOUND' }));
  const r = importSshConfig(app.connections, { text: 'Host x\n  Port 99999\n' });
  expect(r.created).toEqual([]);
  expect(r.skipped).toEqual([{ host: 'x', reason: expect.stringContaining('99999') }]);
});

test('LocalForward, RemoteForward and DynamicForward become saved forwards; what Wraith cannot run is a note', () => {
  const r = importSshConfig(app.connections, {
    text: `
Host db
  HostName 10.0.0.5
  User postgres
  LocalForward 5432 localhost:5432
  LocalForward [::1]:8080 [2001:db8::7]:80
  LocalForward 127.0.0.1/9090 metrics/9090
  RemoteForward 9000 localhost:3000
  DynamicForward 1080
  LocalForward *:8443 web:443
  LocalForward /tmp/docker.sock /var/run/docker.sock
  RemoteForward 1081
  DynamicForward 0.0.0.0:1082
  LocalForward 70000 x:1
`,
  });
  expect(r.created.map((c) => c.name)).toEqual(['db']);
  expect(r.created[0]?.sshOptions.forwards).toEqual([
    { kind: 'local', bindHost: '127.0.0.1', bindPort: 5432, targetHost: 'localhost', targetPort: 5432 },
    { kind: 'local', bindHost: '::1', bindPort: 8080, targetHost: '2001:db8::7', targetPort: 80 },
    { kind: 'local', bindHost: '127.0.0.1', bindPort: 9090, targetHost: 'metrics', targetPort: 9090 },
    { kind: 'remote', bindHost: '127.0.0.1', bindPort: 9000, targetHost: 'localhost', targetPort: 3000 },
    { kind: 'dynamic', bindHost: '127.0.0.1', bindPort: 1080 },
  ]);
  expect(r.notes.map((n) => `${n.host}: ${n.note}`)).toEqual([
    "db: LocalForward *:8443 web:443: not imported, Wraith's forwards listen on loopback only, not on *.",
    'db: LocalForward /tmp/docker.sock /var/run/docker.sock: not imported, Wraith forwards TCP ports, not Unix sockets.',
    'db: LocalForward 70000 x:1: not imported, "70000" is not a port.',
    'db: RemoteForward 1081: not imported, a SOCKS proxy on the server (RemoteForward without a target) is not one Wraith runs.',
    "db: DynamicForward 0.0.0.0:1082: not imported, Wraith's forwards listen on loopback only, not on 0.0.0.0.",
  ]);
  // Stored with the connection, so its sessions start them.
  expect(app.connections.get(r.created[0]?.id ?? '').sshOptions.forwards).toHaveLength(5);
});
