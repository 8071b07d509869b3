/** The files panel's path bar: what a typed path means on the server. */
import { describe, expect, it } from 'vitest';
import { joinRemote, parentOf, resolveTypedPath } from '../../src-renderer/features/sftp/remote-path.js';

describe('resolveTypedPath', () => {
  const cur = '/srv/app';
  const home = '/home/ops';

  it('keeps absolute paths, puts ~ under the home folder, and the rest under the folder shown', () => {
    expect(resolveTypedPath('/etc/nginx', cur, home)).toBe('/etc/nginx');
    expect(resolveTypedPath('~', cur, home)).toBe('/home/ops');
    expect(resolveTypedPath('~/logs/app.log', cur, home)).toBe('/home/ops/logs/app.log');
    expect(resolveTypedPath('releases/42', cur, home)).toBe('/srv/app/releases/42');
    expect(resolveTypedPath('..', cur, home)).toBe('/srv/app/..');
    expect(resolveTypedPath('logs', '/', home)).toBe('/logs');
  });

  it('trims what was pasted around the path, and means nothing for blanks', () => {
    expect(resolveTypedPath('  /var/log \n', cur, home)).toBe('/var/log');
    expect(resolveTypedPath('   ', cur, home)).toBeNull();
    expect(resolveTypedPath('', cur, home)).toBeNull();
  });

  it('reads ~name as a name in the folder shown, not as another user', () => {
    expect(resolveTypedPath('~backup', cur, home)).toBe('/srv/app/~backup');
  });
});

describe('joinRemote and parentOf', () => {
  it('join without doubling slashes and stop at the root', () => {
    expect(joinRemote('/', 'etc')).toBe('/etc');
    expect(joinRemote('/etc/', 'hosts')).toBe('/etc/hosts');
    expect(parentOf('/etc/nginx/')).toBe('/etc');
    expect(parentOf('/etc')).toBe('/');
    expect(parentOf('/')).toBe('/');
  });
});
