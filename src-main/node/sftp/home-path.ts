/**
 * `path` with a leading `~` or `~/` made the login's home folder (`home`), as a shell reads it:
 * SFTP takes paths literally, and would look for a folder named "~". `~user` is left alone (whose
 * home that is, only the server knows), and so is every path while the home is unknown.
 */
export function expandHome(path: string, home: string | null): string {
  if (home === null || (path !== '~' && !path.startsWith('~/'))) return path;
  // Not posix.join: it would also fold "a/../b", which the server reads through symlinks.
  return home.endsWith('/') ? home + path.slice(2) : home + path.slice(1);
}
