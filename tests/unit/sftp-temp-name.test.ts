/**
 * Temp names in what a person reads: a failure while a file is written under its temp name
 * names the file it becomes, in our message and in the text the server or the OS gave.
 */
import { describe, expect, test } from 'vitest';
import { isTempBasename, shownPath, tempBasename, tempNameFor } from '../../src-main/node/sftp/temp-name.js';

describe('shownPath', () => {
  test('a temp file beside its destination reads as the destination', () => {
    for (const dest of ['/home/u/notes.txt', '/srv/my notes (v2).txt', '/etc/.bashrc', '/srv/ünïcødé.md', '/x/-rf']) {
      const temp = tempNameFor(dest);
      expect(temp).not.toBe(dest);
      expect(isTempBasename(temp.slice(temp.lastIndexOf('/') + 1))).toBe(true);
      expect(shownPath(temp)).toBe(dest);
    }
  });

  test('a folder built under a temp name reads as the folder, files inside it too', () => {
    const folder = tempNameFor('/srv/project');
    const file = `${folder}/src/${tempBasename('main.c')}`;
    expect(shownPath(file)).toBe('/srv/project/src/main.c');
  });

  test('paths inside a message, local Windows paths, and quoted paths', () => {
    expect(shownPath(`EIO: i/o error, write '/dl/${tempBasename('a b.iso')}'`)).toBe("EIO: i/o error, write '/dl/a b.iso'");
    expect(shownPath(`C:\\Users\\me\\${tempBasename('f.txt')}`)).toBe('C:\\Users\\me\\f.txt');
  });

  test('names that only look alike are left as they are', () => {
    for (const p of ['/x/.f.wraith-part-0123abcdX', '/x/.wraith-part-0123abcd', '/x/f.wraith-part-0123abcd', '/x/.f.wraith-part-0123', '/x/.f.wraith-part-0123ABCD']) {
      expect(shownPath(p)).toBe(p);
    }
  });
});
