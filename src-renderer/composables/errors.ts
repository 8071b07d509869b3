import { WraithError, isErrorCode } from '@common/errors.js';

/** Anything thrown, as a WraithError (unknown failures become EIO with their message). */
export function asWraithError(err: unknown): WraithError {
  if (err instanceof WraithError) return err;
  if (err instanceof Error) return new WraithError('EIO', err.message);
  return new WraithError('EIO', String(err));
}

export function hasCode(err: unknown, code: string): boolean {
  return err instanceof WraithError && isErrorCode(code) && err.code === code;
}

function isIssueList(v: unknown): v is { path: unknown[]; message: unknown }[] {
  return Array.isArray(v) && v.every((i) => typeof i === 'object' && i !== null && Array.isArray((i as { path?: unknown }).path));
}

/**
 * EBADARGS → messages by field path ("host", "rdpOptions.width", "secrets.password"). Uses the
 * router's `details.issues`, else a service message of the form "field: message". `strip`
 * removes a wrapper segment such as "patch" of connections.update.
 */
export function fieldErrors(err: unknown, strip: string[] = []): Record<string, string> {
  const out: Record<string, string> = {};
  if (!(err instanceof WraithError) || err.code !== 'EBADARGS') return out;
  const issues = err.details?.issues;
  if (isIssueList(issues)) {
    for (const issue of issues) {
      const path = issue.path.map(String).filter((seg, i) => !(i === 0 && strip.includes(seg)));
      const key = path.join('.') || '_';
      out[key] ??= typeof issue.message === 'string' ? issue.message : 'Invalid value';
    }
    return out;
  }
  // Services name the field first: "jumpHostId: The jump host does not exist."
  const m = /^([A-Za-z]\w*): (.+)$/s.exec(err.message);
  if (m?.[1] && m[2]) out[m[1]] = m[2];
  else out._ = err.message;
  return out;
}
