import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, hostname, tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
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

const byName = (created: { id: string; name: string }[]) => Object.fromEntries(created.map((c) => [c.name, app.connections.get(c.id)]));

test('keywords are matched whatever their case, as ssh matches them', () => {
  const r = importSshConfig(app.connections, {
    text: `
Host bastion
  HostName 10.0.0.1
  User ops

Host lower
  hostname 10.1.1.1
  user loweruser
  port 2222
  identityfile ~/.ssh/id_lower
  proxyjump bastion
  localforward 5432 db:5432
  forwardagent yes

Host matched
  hostname 10.5.5.5

Match host 10.5.5.5
  USER matcheduser

Host *
  User defaultuser
`,
  });
  const c = byName(r.created);
  expect(c.lower).toMatchObject({
    host: '10.1.1.1',
    username: 'loweruser',
    port: 2222,
    authMethod: 'key',
    keyPath: join(homedir(), '.ssh/id_lower'),
    jumpHostId: c.bastion?.id,
    sshOptions: { forwards: [{ kind: 'local', bindHost: '127.0.0.1', bindPort: 5432, targetHost: 'db', targetPort: 5432 }], agentForward: true },
  });
  // Match host tests the HostName, written here in lower case.
  expect(c.matched).toMatchObject({ host: '10.5.5.5', username: 'matcheduser' });
  expect(r.skipped).toEqual([]);
});

test('ProxyCommand is a note, unless a ProxyJump came first', () => {
  const r = importSshConfig(app.connections, {
    text: `
Host bastion
  HostName 10.0.0.1
Host legacy
  HostName 10.9.9.9
  ProxyCommand ssh -W %h:%p oldbastion
Host jumpfirst
  ProxyJump bastion
  ProxyCommand ssh -W %h:%p oldbastion
Host commandfirst
  ProxyCommand nc -X 5 -x proxy:1080 %h %p
  ProxyJump bastion
Host off
  ProxyCommand none
Host *
  User u
`,
  });
  const c = byName(r.created);
  expect(c.legacy).toMatchObject({ host: '10.9.9.9', jumpHostId: null });
  expect(c.jumpfirst).toMatchObject({ jumpHostId: c.bastion?.id });
  // As ssh: of the two, the one met first is used, so this one does not go through bastion.
  expect(c.commandfirst).toMatchObject({ jumpHostId: null });
  expect(r.notes).toEqual([
    { host: 'legacy', note: expect.stringMatching(/^ProxyCommand ssh -W %h:%p oldbastion: not imported, .*connects to 10\.9\.9\.9 directly/) },
    { host: 'commandfirst', note: expect.stringMatching(/^ProxyCommand nc -X 5 -x proxy:1080 %h %p: not imported/) },
  ]);
});

test('a ProxyJump chain keeps every hop, without changing how a hop connects on its own', () => {
  const r = importSshConfig(app.connections, {
    text: `
Host bastion
  HostName 10.0.0.1
Host chain
  HostName 10.4.4.4
  ProxyJump ops@jump1.example.com:2222,bastion
Host other
  HostName 10.4.4.5
  ProxyJump root@jump2,ops@jump1.example.com:2222
Host direct
  HostName 10.4.4.6
  ProxyJump ops@jump1.example.com:2222
Host *
  User u
`,
  });
  const c = byName(r.created);
  expect(Object.keys(c).sort()).toEqual([
    'bastion',
    'bastion via ops@jump1.example.com:2222',
    'chain',
    'direct',
    'ops@jump1.example.com:2222',
    'ops@jump1.example.com:2222 via root@jump2',
    'other',
    'root@jump2',
  ]);
  const jump1 = c['ops@jump1.example.com:2222'];
  expect(jump1).toMatchObject({ host: 'jump1.example.com', port: 2222, username: 'ops', jumpHostId: null });
  // chain → bastion (reached through jump1) → jump1; bastion itself still connects directly.
  const hop = c['bastion via ops@jump1.example.com:2222'];
  expect(hop).toMatchObject({ host: '10.0.0.1', port: 22, username: 'u', jumpHostId: jump1?.id });
  expect(c.chain).toMatchObject({ jumpHostId: hop?.id });
  expect(c.bastion).toMatchObject({ jumpHostId: null });
  // jump1 as a second hop is not jump1 as a first: each route is its own connection.
  expect(c['ops@jump1.example.com:2222 via root@jump2']).toMatchObject({ host: 'jump1.example.com', port: 2222, jumpHostId: c['root@jump2']?.id });
  expect(c.other).toMatchObject({ jumpHostId: c['ops@jump1.example.com:2222 via root@jump2']?.id });
  expect(c.direct).toMatchObject({ jumpHostId: jump1?.id });
  expect(r.notes.map((n) => n.host)).toEqual(['bastion via ops@jump1.example.com:2222', 'ops@jump1.example.com:2222 via root@jump2']);
  expect(r.skipped).toEqual([]);
});

test('a hop that cannot be imported names the entry left out with it', () => {
  const r = importSshConfig(app.connections, { text: 'Host target\n  User u\n  ProxyJump bad\nHost bad\n  User u\n  Port 99999\n' });
  expect(r.created).toEqual([]);
  expect(r.skipped).toEqual([
    { host: 'bad', reason: expect.stringContaining('99999') },
    { host: 'target', reason: 'ProxyJump bad: the jump host bad could not be imported' },
  ]);
});

test('settings that change where or how a connection goes, which Wraith cannot keep, are notes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wraith-exec-'));
  const marker = join(dir, 'ran');
  // A home without the key files named below.
  vi.stubEnv('HOME', dir);
  const r = importSshConfig(app.connections, {
    text: `
Host web
  HostName 10.0.0.7
  User u
  IdentityFile ~/.ssh/id_web
  IdentityFile ~/.ssh/id_rsa
  CertificateFile ~/.ssh/id_web-cert.pub
  IdentityAgent ~/.1password/agent.sock
  BindAddress 192.0.2.1
  RemoteCommand tmux new -A
  ForwardAgent $MY_AGENT

Match host 10.0.0.7 exec "touch ${marker}"
  Port 2200

Host plain
  HostName 10.0.0.8
  User u
  IdentityAgent SSH_AUTH_SOCK
`,
  });
  vi.unstubAllEnvs();
  expect(r.notes.filter((n) => n.host === 'web').map((n) => n.note)).toEqual([
    'IdentityFile ~/.ssh/id_rsa: not imported, a connection keeps one key file (this one uses ~/.ssh/id_web, the first written, as none of them exists here).',
    'BindAddress 192.0.2.1: not imported, Wraith connects from the address the system picks.',
    'CertificateFile ~/.ssh/id_web-cert.pub: not imported, Wraith logs in with the key alone, without a certificate.',
    'IdentityAgent ~/.1password/agent.sock: not imported, Wraith uses the agent at SSH_AUTH_SOCK.',
    'RemoteCommand tmux new -A: not imported, a session opens a shell: run the command in it.',
    expect.stringMatching(/^ForwardAgent \$MY_AGENT: not imported/),
    expect.stringMatching(/^Match host 10\.0\.0\.7 exec "touch .*": not run, /),
  ]);
  // Importing runs no command from the config, pasted text above all.
  expect(existsSync(marker)).toBe(false);
  rmSync(dir, { recursive: true, force: true });
  expect(byName(r.created).web).toMatchObject({ port: 22, sshOptions: {} });
  expect(r.notes.filter((n) => n.host === 'plain')).toEqual([]);
});

test('pasted text: an Include is not followed, and says so', () => {
  const r = importSshConfig(app.connections, { text: 'Include conf.d/*.conf\n\nHost web\n  HostName 10.0.0.7\n  User u\n' });
  expect(r.created.map((c) => c.name)).toEqual(['web']);
  expect(r.notes).toEqual([{ host: 'pasted text', note: expect.stringMatching(/^Include conf\.d\/\*\.conf: not followed, pasted text/) }]);
});

test('a config file read from disk brings in what it Includes, as ssh reads it', () => {
  const home = mkdtempSync(join(tmpdir(), 'wraith-home-'));
  const ssh = join(home, '.ssh');
  const write = (path: string, text: string) => {
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, text);
  };
  write(
    join(ssh, 'config'),
    `Include conf.d/*.conf ~/elsewhere/extra missing.conf
Include adir

Host main
  HostName 10.0.0.1
  Include settings/main

Host other
  Include conf.d/hosts-under-host

Match all
  Include late/config
`,
  );
  // Sorted as glob(7) sorts them: a.conf first, so its User wins (the first value found wins).
  write(join(ssh, 'conf.d/b.conf'), 'Host fromb\n  HostName 10.0.0.3\nHost *\n  User b-user\n');
  write(join(ssh, 'conf.d/a.conf'), 'Host froma\n  HostName 10.0.0.2\nHost *\n  User a-user\n');
  write(join(ssh, 'conf.d/.hidden.conf'), 'Host hidden\n  HostName 10.0.0.9\n');
  write(join(ssh, 'conf.d/hosts-under-host'), 'Host underother\n  HostName 10.0.0.10\n');
  write(join(home, 'elsewhere/extra'), 'Host fromextra\n  HostName 10.0.0.4\n  Include ../.ssh/loop\n');
  write(join(ssh, 'loop'), 'Include loop\n');
  write(join(ssh, 'settings/main'), 'Port 2201\n');
  write(join(ssh, 'late/config'), 'Host late\n  HostName 10.0.0.5\n');
  mkdirSync(join(ssh, 'adir'));

  // A relative Include is looked up in ~/.ssh: this home stands in for the user's.
  vi.stubEnv('HOME', home);
  try {
    const r = importSshConfig(app.connections, {});
    const c = byName(r.created);
    expect(Object.keys(c).sort()).toEqual(['froma', 'fromb', 'fromextra', 'late', 'main', 'other']);
    expect(c.froma).toMatchObject({ host: '10.0.0.2', username: 'a-user' });
    expect(c.fromb).toMatchObject({ host: '10.0.0.3', username: 'a-user' });
    expect(c.main).toMatchObject({ host: '10.0.0.1', port: 2201 });
    expect(c.late).toMatchObject({ host: '10.0.0.5' });
    expect(r.notes).toEqual([
      { host: '~/.ssh/loop', note: expect.stringMatching(/^Include loop: not followed, Includes nest more than 16 deep/) },
      { host: '~/.ssh/config', note: `Include missing.conf: no file matches ${join(ssh, 'missing.conf')}.` },
      { host: '~/.ssh/config', note: expect.stringMatching(/^Include adir: .*\/\.ssh\/adir cannot be read \(.*\/\.ssh\/adir is a folder/) },
      { host: '~/.ssh/config', note: expect.stringMatching(/^Include conf\.d\/hosts-under-host: the Host and Match entries it reads are not imported, as they apply only where "Host other" does/) },
    ]);
  } finally {
    vi.unstubAllEnvs();
    rmSync(home, { recursive: true, force: true });
  }
});

describe('IdentityFile', () => {
  let home: string;
  /** A file (a key, for the importer: it only looks whether one exists) under the temp home. */
  const touch = (path: string) => {
    mkdirSync(join(home, path, '..'), { recursive: true });
    writeFileSync(join(home, path), 'key\n');
  };
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), 'wraith-keys-'));
    // ~, %d and the notes' "~/" are this home.
    vi.stubEnv('HOME', home);
  });
  afterEach(() => {
    vi.unstubAllEnvs();
    rmSync(home, { recursive: true, force: true });
  });
  const notesOf = (r: ReturnType<typeof importSshConfig>, host: string) => r.notes.filter((n) => n.host === host).map((n) => n.note);

  test('its %-tokens and ~ are expanded for each host, as ssh expands them', () => {
    touch('keys/web02-ops@2200');
    const r = importSshConfig(app.connections, {
      text: `
Host Web01 web02
  HostName %h.Example.com
  User ops
  Port 2200
  IdentityFile ~/.ssh/id_%h
  IdentityFile %d/keys/%n-%r@%p

Host tokens
  HostName 10.0.0.9
  User deploy
  HostKeyAlias KeyAlias
  IdentityFile ~/.ssh/%u-%i-%L-%l-%k-100%%

Host noalias
  HostName 10.0.0.10
  User deploy
  IdentityFile ~/.ssh/id_%k
`,
    });
    const c = byName(r.created);
    // %h is the host connected to, in lower case as ssh matches it; %n the name as given.
    expect(c.Web01).toMatchObject({ host: 'Web01.Example.com', authMethod: 'key', keyPath: join(home, '.ssh/id_web01.example.com') });
    expect(notesOf(r, 'Web01')).toEqual([
      'IdentityFile %d/keys/%n-%r@%p: not imported, a connection keeps one key file (this one uses ~/.ssh/id_web01.example.com, the first written, as none of them exists here).',
    ]);
    // For web02 the second file exists: each host's own values decide which.
    expect(c.web02).toMatchObject({ keyPath: join(home, 'keys/web02-ops@2200') });
    expect(notesOf(r, 'web02')).toEqual([
      'IdentityFile ~/.ssh/id_%h: not imported, a connection keeps one key file (this one uses ~/keys/web02-ops@2200, the first that exists here).',
    ]);
    const local = hostname();
    expect(c.tokens?.keyPath).toBe(join(home, `.ssh/${userInfo().username}-${process.getuid?.()}-${local.split('.')[0]}-${local}-keyalias-100%`));
    expect(c.noalias?.keyPath).toBe(join(home, '.ssh/id_noalias'));
    expect(notesOf(r, 'tokens')).toEqual([]);
    expect(r.skipped).toEqual([]);
  });

  test('of several, the first that exists is kept, and each other one is a note', () => {
    touch('.ssh/id_there');
    touch('.ssh/id_also_there');
    mkdirSync(join(home, '.ssh/a_folder'));
    const r = importSshConfig(app.connections, {
      text: `
Host multi
  HostName 10.0.0.7
  User u
  IdentityFile ~/.ssh/id_missing
  IdentityFile ~/.ssh/a_folder
  IdentityFile ~/.ssh/id_there
  IdentityFile ~/.ssh/id_also_there

Host *
  IdentityFile ~/.ssh/id_there
`,
    });
    expect(byName(r.created).multi).toMatchObject({ authMethod: 'key', keyPath: join(home, '.ssh/id_there') });
    const kept = '(this one uses ~/.ssh/id_there, the first that exists here).';
    // The same file from Host * is the one kept, not another to note.
    expect(notesOf(r, 'multi')).toEqual([
      `IdentityFile ~/.ssh/id_missing: not imported, a connection keeps one key file ${kept}`,
      `IdentityFile ~/.ssh/a_folder: not imported, a connection keeps one key file ${kept}`,
      `IdentityFile ~/.ssh/id_also_there: not imported, a connection keeps one key file ${kept}`,
    ]);
  });

  test('a path with what cannot be known at import (%C, ~user, ${VAR}) is kept as written, with a note', () => {
    touch('.ssh/id_there');
    const r = importSshConfig(app.connections, {
      text: `
Host hashed
  HostName 10.0.0.8
  User u
  IdentityFile ~/.ssh/id_%C

Host others
  HostName 10.0.0.9
  User u
  IdentityFile ~someone/.ssh/id_%h
  IdentityFile \${KEYS}/id_%j
  IdentityFile ~/.ssh/id_there
`,
    });
    const c = byName(r.created);
    expect(c.hashed).toMatchObject({ authMethod: 'key', keyPath: '~/.ssh/id_%C' });
    expect(notesOf(r, 'hashed')).toEqual([
      "IdentityFile ~/.ssh/id_%C: kept as written, Wraith cannot know %C when importing. Edit the connection's key file if ssh would read another.",
    ]);
    // Whether those exist is not known; one that does is kept.
    expect(c.others).toMatchObject({ keyPath: join(home, '.ssh/id_there') });
    expect(notesOf(r, 'others')).toEqual([
      'IdentityFile ~someone/.ssh/id_%h: not imported, a connection keeps one key file (this one uses ~/.ssh/id_there, the first that exists here).',
      'IdentityFile ${KEYS}/id_%j: not imported, a connection keeps one key file (this one uses ~/.ssh/id_there, the first that exists here).',
    ]);
  });
});
