import { describe, expect, test } from 'vitest';
import { readOnlyReason } from '../../src-renderer/features/sftp/write-access.js';

describe('readOnlyReason: what a listed owner and mode say of writing a file', () => {
  const file = (mode: number, owner: string | null = 'www-data', group: string | null = 'www-data') => ({ mode, owner, group });

  test("another user's file without write bits for group or others is read-only, and says whose it is", () => {
    expect(readOnlyReason('site.conf', file(0o644), 'deploy')).toBe('site.conf belongs to www-data:www-data with permissions rw-r--r--, which do not let deploy change it.');
    expect(readOnlyReason('key', file(0o400, 'root', null), 'deploy')).toBe('key belongs to root with permissions r--------, which do not let deploy change it.');
  });

  test('the owner, root, and a file writable by its group or by anyone are not said to be read-only', () => {
    expect(readOnlyReason('a', file(0o444, 'deploy'), 'deploy')).toBeNull(); // the owner's save replaces it
    expect(readOnlyReason('a', file(0o644), 'root')).toBeNull();
    expect(readOnlyReason('a', file(0o664), 'deploy')).toBeNull(); // a group the listing cannot show
    expect(readOnlyReason('a', file(0o646), 'deploy')).toBeNull();
  });

  test('without an owner name or a login name there is no answer', () => {
    expect(readOnlyReason('a', file(0o644, null, null), 'deploy')).toBeNull();
    expect(readOnlyReason('a', file(0o644), null)).toBeNull();
  });
});
