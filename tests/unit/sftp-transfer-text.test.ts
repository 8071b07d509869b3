import { describe, expect, test } from 'vitest';
import { cancelledText, doneText } from '../../src-renderer/features/sftp/transfer-text.js';

const MB = 1024 * 1024;
const row = { direction: 'upload' as const, bytes: 0, totalBytes: 0, filesDone: 0, filesTotal: 1, batch: false, madeFolders: [] };

describe('doneText', () => {
  test('one file: its size', () => {
    expect(doneText({ ...row, bytes: 3.5 * MB, totalBytes: 3.5 * MB })).toBe('Uploaded 3.5 MB');
    expect(doneText({ ...row, direction: 'download', bytes: 12, totalBytes: null })).toBe('Downloaded 12 B');
  });

  test('a batch counts the files that arrived and their bytes, not those kept as they were', () => {
    // 6 files, 2.9 MB in all; 2 sent (1 MB), 4 already there and kept.
    expect(doneText({ ...row, batch: true, filesTotal: 6, filesDone: 2, bytes: 1 * MB, totalBytes: 2.9 * MB })).toBe('Uploaded 2 files, 1.0 MB');
    expect(doneText({ ...row, batch: true, filesTotal: 6, filesDone: 1, bytes: 512, totalBytes: 2.9 * MB })).toBe('Uploaded 1 file, 512 B');
  });

  test('a batch whose every file was kept sent nothing, and says so', () => {
    expect(doneText({ ...row, batch: true, filesTotal: 4, filesDone: 0, bytes: 0, totalBytes: 2.9 * MB })).toBe('Nothing uploaded');
  });
});

describe('cancelledText', () => {
  test('one file: no partial file stays', () => {
    expect(cancelledText({ ...row, bytes: MB, totalBytes: 3 * MB })).toBe('Cancelled — nothing was left behind');
  });

  test('a batch into a folder that was there: the files that had arrived stay, and it says so', () => {
    const text = cancelledText({ ...row, batch: true, filesTotal: 32, filesDone: 11 });
    expect(text).toBe('Cancelled — 11 of 32 files had arrived and stay on the server; no partial file was left.');
    expect(text).not.toContain('nothing was left behind');
    expect(cancelledText({ ...row, batch: true, filesTotal: 32, filesDone: 0 })).toBe('Cancelled — none of the 32 files had arrived, and no partial file was left.');
    // A folder of one file: no "none of the 1 files".
    expect(cancelledText({ ...row, batch: true, filesTotal: 1, filesDone: 0 })).toBe('Cancelled — the file had not arrived, and no partial file was left.');
  });

  test('a batch that made its folder: the folder stays too', () => {
    expect(cancelledText({ ...row, batch: true, filesTotal: 32, filesDone: 11, madeFolders: ['site'] })).toBe(
      'Cancelled — 11 of 32 files had arrived and stay on the server; no partial file was left. The folder site was made for this upload and stays.',
    );
    expect(cancelledText({ ...row, batch: true, filesTotal: 3, filesDone: 0, madeFolders: ['a', 'b'] })).toBe(
      'Cancelled — none of the 3 files had arrived, and no partial file was left. The 2 folders made for this upload (a, b) stay.',
    );
  });
});
