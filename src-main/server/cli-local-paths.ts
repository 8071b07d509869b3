import { isAbsolute, resolve } from 'node:path';

/**
 * The input fields, by method, that name a file or folder on the machine the host runs on. The
 * host refuses a relative one (it cannot know the caller's working directory); `wraith call`
 * runs beside it, in the shell's directory, so it makes them absolute as the shell user means them.
 */
const LOCAL_PATH_FIELDS: Readonly<Record<string, readonly (readonly string[])[]>> = {
  'sftp.upload': [['localPath']],
  'sftp.download': [['localPath']],
  'hostkeys.importKnownHosts': [['path']],
  'connections.importSshConfig': [['path']],
  'connections.create': [['keyPath']],
  'connections.update': [['patch', 'keyPath']],
  'pty.spawn': [['cwd']],
};

/** `params` with each relative local path of `method` resolved against `cwd`; "~/…" is left for the host to expand. */
export function resolveLocalPaths(method: string, params: unknown, cwd: string): unknown {
  const fields = LOCAL_PATH_FIELDS[method];
  if (!fields) return params;
  let out = params;
  for (const field of fields) out = resolveAt(out, field, cwd);
  return out;
}

function resolveAt(value: unknown, keys: readonly string[], cwd: string): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const [key, ...rest] = keys;
  if (key === undefined || !Object.hasOwn(value, key)) return value;
  const record = value as Record<string, unknown>;
  const inner = record[key];
  if (rest.length > 0) return { ...record, [key]: resolveAt(inner, rest, cwd) };
  if (typeof inner !== 'string') return value;
  const path = inner.trim();
  if (path === '' || path === '~' || path.startsWith('~/') || isAbsolute(path)) return value;
  return { ...record, [key]: resolve(cwd, path) };
}
