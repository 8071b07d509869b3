import { formatMode } from './format.js';

/** What a listing says of a file's ownership: its mode bits and owner and group names (OpenSSH's long names). */
export interface ListedOwnership {
  mode: number;
  owner: string | null;
  group: string | null;
}

/**
 * Why `login` cannot change a file, when its listed mode, owner and group say so for sure; null
 * when they say it can, or cannot tell. The owner may always save (Wraith writes a new file and
 * renames it over the old one, which needs the folder's permission, not the file's), root may,
 * and a group-writable file may be writable through a group the listing cannot show. Names are
 * all a listing gives: no owner name (a server without long names) or no login name, no answer —
 * the server has the last word when Save is pressed.
 */
export function readOnlyReason(name: string, f: ListedOwnership, login: string | null): string | null {
  if (!login || !f.owner || login === 'root' || f.owner === login) return null;
  if ((f.mode & 0o022) !== 0) return null;
  const owner = f.group ? `${f.owner}:${f.group}` : f.owner;
  return `${name} belongs to ${owner} with permissions ${formatMode(f.mode)}, which do not let ${login} change it.`;
}
