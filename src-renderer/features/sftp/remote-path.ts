/** Paths on the SFTP server: always POSIX, whatever the local machine is. */

export function joinRemote(dir: string, name: string): string {
  return dir.endsWith('/') ? `${dir}${name}` : `${dir}/${name}`;
}

/**
 * An absolute path with its `.` and `..` segments and doubled slashes taken out, as written (not
 * through symlinks): for a name typed to create, "a/../b" means b, and no folder a on the way.
 */
export function normalizeRemote(path: string): string {
  const out: string[] = [];
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') out.pop();
    else out.push(part);
  }
  return `/${out.join('/')}`;
}

export function parentOf(path: string): string {
  const i = path.replace(/\/+$/, '').lastIndexOf('/');
  return i <= 0 ? '/' : path.slice(0, i);
}

/**
 * What a person typed into the path bar, as an absolute path: `/x` as is, `~` and `~/x` under
 * the home folder, anything else relative to the folder shown. `.` and `..` are left for the
 * server to resolve (sftp.list and sftp.stat take the path through realpath), so symlinked
 * folders resolve the way the shell would. Returns null for nothing but blanks.
 */
export function resolveTypedPath(typed: string, current: string, home: string): string | null {
  const t = typed.trim();
  if (!t) return null;
  if (t.startsWith('/')) return t;
  if (t === '~') return home;
  if (t.startsWith('~/')) return joinRemote(home, t.slice(2));
  return joinRemote(current, t);
}
