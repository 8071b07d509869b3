import { describe, expect, test } from 'vitest';
import { cancelledText, doneText, transfersStopped, transfersWillStop } from '../../src-renderer/features/sftp/transfer-text.js';

const MB = 1024 * 1024;
const row = { direction: 'upload' as const, bytes: 0, totalBytes: 0, filesDone: 0, filesTotal: 1, batch: false, madeFolders: [], leftBehind: [] };

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

  test('a partial copy the host could not remove (the connection was gone) is named, with when it goes', () => {
    const temp = '/home/me/site/.big.bin.wraith-part-0a1b2c3d';
    const text = cancelledText({ ...row, bytes: MB, totalBytes: 3 * MB, leftBehind: [temp] });
    expect(text).toBe(
      'Cancelled — the connection was lost before its partial copy could be removed: .big.bin.wraith-part-0a1b2c3d stays in /home/me/site on the server until the next connection to it, which removes it.',
    );
    expect(text).not.toContain('nothing was left behind');
    expect(cancelledText({ ...row, batch: true, filesTotal: 32, filesDone: 11, leftBehind: [temp, '/home/me/site/.b.wraith-part-1'] })).toBe(
      'Cancelled — 11 of 32 files had arrived and stay on the server; the connection was lost before its 2 partial copies could be removed ' +
        '(.big.bin.wraith-part-0a1b2c3d, .b.wraith-part-1): they stay on the server until the next connection to it, which removes them.',
    );
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

describe('the transfers that stop with a closed tab', () => {
  const GB = 1024 * MB;
  const big = { direction: 'upload' as const, name: 'big1g', remotePath: '/srv/big1g', bytes: 0.125 * GB, totalBytes: GB };
  const logs = { direction: 'download' as const, name: 'logs', remotePath: '/var/logs', bytes: 5 * MB, totalBytes: null };

  test('named with how far each is, in the question and in what is said afterwards', () => {
    expect(transfersWillStop([big])).toBe('The upload of big1g (12 %) will stop.');
    expect(transfersStopped('Closing web01', [big])).toBe('Closing web01 stopped the upload of big1g (12 %).');
    // A size not known yet: no percentage.
    expect(transfersWillStop([big, logs])).toBe('2 transfers will stop: the upload of big1g (12 %) and the download of logs.');
    expect(transfersStopped('Closing 2 tabs', [logs, big])).toBe('Closing 2 tabs stopped 2 transfers: the download of logs and the upload of big1g (12 %).');
  });

  test('many: the first named, the rest counted; none: nothing to say', () => {
    const many = ['a', 'b', 'c', 'd', 'e'].map((name) => ({ ...big, name, bytes: 0 }));
    expect(transfersWillStop(many)).toBe('5 transfers will stop: the upload of a (0 %), the upload of b (0 %), the upload of c (0 %) and 2 more.');
    expect(transfersWillStop(many.slice(0, 4))).toBe('4 transfers will stop: the upload of a (0 %), the upload of b (0 %), the upload of c (0 %) and the upload of d (0 %).');
    expect(transfersWillStop([])).toBe('');
  });
});
