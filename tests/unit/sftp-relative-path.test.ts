import { describe, expect, test } from 'vitest';
import { relativePathOf } from '../../src-renderer/features/sftp/relative-path.js';

describe("where a file picked with its folder goes (its path in the folder)", () => {
  test('its webkitRelativePath, which ends in its name; a file picked alone: its name', () => {
    expect(relativePathOf({ name: 'a.txt', webkitRelativePath: 'site/css/a.txt' })).toBe('site/css/a.txt');
    expect(relativePathOf({ name: 'a.txt', webkitRelativePath: '' })).toBe('a.txt');
  });

  test('a backslash in the name, written as a slash in the path (Chromium), stays in the name: no folder of part of it', () => {
    expect(relativePathOf({ name: 'back\\slash.txt', webkitRelativePath: 'names/back/slash.txt' })).toBe('names/back\\slash.txt');
    expect(relativePathOf({ name: 'a\\b\\c', webkitRelativePath: 'top/sub/a/b/c' })).toBe('top/sub/a\\b\\c');
    expect(relativePathOf({ name: '\\lead', webkitRelativePath: 'names//lead' })).toBe('names/\\lead');
  });

  test('a path whose tail is not the name in any way: the name in place of its last segment', () => {
    expect(relativePathOf({ name: 'real.txt', webkitRelativePath: 'names/other.txt' })).toBe('names/real.txt');
  });
});
