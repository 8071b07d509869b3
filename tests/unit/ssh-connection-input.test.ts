/**
 * What an SSH connection's host, user and key file fields take, and how a hop is dialled and its
 * shell's locale chosen: pure logic under the connect, whose real paths the sshd tests walk.
 */
import { describe, expect, it } from 'vitest';
import { methods } from '../../src-main/common/contract/index.js';
import { hostToDial } from '../../src-main/common/host-address.js';
import { localeEnv } from '../../src-main/node/ssh/ssh-service.js';

const base = { name: 'web01', kind: 'ssh', username: 'ops' } as const;
/** What connections.create and connections.update take, as the router parses them. */
const create = methods['connections.create'].input;
const update = methods['connections.update'].input;
const id = '00000000-0000-4000-8000-000000000000';

function hostIssues(host: string): string[] {
  const r = create.safeParse({ ...base, host });
  return r.success ? [] : r.error.issues.filter((i) => i.path[0] === 'host').map((i) => i.message);
}

describe('a connection host', () => {
  it('takes names, IPv4 and IPv6 addresses, bare or in brackets, with a zone', () => {
    for (const host of ['web01.example.com', '10.0.0.5', '::1', 'fe80::1', 'fe80::1%eth0', '2001:db8::5', '[::1]', '[fe80::1%eth0]']) {
      expect(hostIssues(host), host).toEqual([]);
    }
  });

  it('refuses a port after the host, on create and update, saying where the port goes', () => {
    for (const host of ['127.0.0.1:36307', 'web01:2222', '[::1]:2222', 'web01:']) {
      expect(hostIssues(host), host).toEqual(['Enter the host without a port: the port goes in the Port field.']);
    }
    const patch = update.safeParse({ id, patch: { host: 'web01:2222' } });
    expect(patch.error?.issues.map((i) => [i.path.join('.'), i.message])).toEqual([['patch.host', 'Enter the host without a port: the port goes in the Port field.']]);
  });

  it('is dialled without the brackets of an IPv6 address', () => {
    expect(hostToDial('[::1]')).toBe('::1');
    expect(hostToDial('[fe80::1%eth0]')).toBe('fe80::1%eth0');
    expect(hostToDial('::1')).toBe('::1');
    expect(hostToDial('web01.example.com')).toBe('web01.example.com');
  });
});

describe('user name and key file', () => {
  it('are saved without the spaces around them, on create and update', () => {
    const created = create.parse({ ...base, host: 'web01', username: ' wraith-pw  ', keyPath: '  /home/me/.ssh/id_ed25519 ' });
    expect(created).toMatchObject({ username: 'wraith-pw', keyPath: '/home/me/.ssh/id_ed25519' });
    expect(update.parse({ id, patch: { username: '\tops ', keyPath: ' ~/.ssh/id_rsa' } }).patch).toEqual({ username: 'ops', keyPath: '~/.ssh/id_rsa' });
  });
});

describe('the locale a session sends', () => {
  it("is this host's LANG and LC_*, nothing else", () => {
    expect(localeEnv({ LANG: 'de_DE.UTF-8', LC_TIME: 'en_GB.UTF-8', PATH: '/bin', LANGUAGE: 'de', HOME: '/root' })).toEqual({
      LANG: 'de_DE.UTF-8',
      LC_TIME: 'en_GB.UTF-8',
    });
  });

  it('says UTF-8 (LANG=C.UTF-8) where none of LANG, LC_ALL and LC_CTYPE is set, as the terminal is UTF-8', () => {
    expect(localeEnv({})).toEqual({ LANG: 'C.UTF-8' });
    expect(localeEnv({ LANG: '', LC_TIME: 'C' })).toEqual({ LANG: 'C.UTF-8', LC_TIME: 'C' });
    expect(localeEnv({ LC_CTYPE: 'fr_FR.UTF-8' })).toEqual({ LC_CTYPE: 'fr_FR.UTF-8' });
    expect(localeEnv({ LC_ALL: 'C.UTF-8' })).toEqual({ LC_ALL: 'C.UTF-8' });
  });

  it("never passes on the mark of another session's shell", () => {
    expect(localeEnv({ LANG: 'C.UTF-8', LC_WRAITH_SESSION: 'x' })).toEqual({ LANG: 'C.UTF-8' });
  });
});
