/**
 * What a folder transfer left out, all of it and why, as the host reports it: sftp.transfers
 * (Transfer.info) always carries the whole list; a transfer.progress event (progressEvent) only
 * when it changed since the transfer's last event, since events go several times a second and the
 * list can be long. The notice names the first five items either way.
 */
import { describe, expect, test } from 'vitest';
import { Transfer } from '../../src-main/node/sftp/transfer.js';

const item = (rel: string, folder = false) => ({ rel, folder, reason: `${rel} is a named pipe (FIFO): no contents of its own to copy.` });

describe('Transfer: what it left out', () => {
  test('every item and its reason: in each of its infos, and in the one event after each change', () => {
    const t = new Transfer('session', 'upload', 'folder', '/home/me/site', '/srv/site');
    expect(t.info().leftOut).toBeUndefined();
    expect(t.progressEvent().leftOut).toBeUndefined();

    const leftOut = ['a', 'b', 'c', 'd', 'e', 'f'].map((rel) => item(rel));
    t.leftOut(leftOut, null);
    const all = leftOut.map((i) => ({ path: i.rel, folder: false, reason: i.reason }));
    expect(t.progressEvent().leftOut).toEqual(all);
    expect(t.progressEvent().leftOut).toBeUndefined();
    expect(t.progressEvent().notice).toBe('6 items could not be read and were left out: a, b, c, d, e and 1 more.');
    expect(t.info().leftOut).toEqual(all);

    // One more met later (a file that could not be opened when its turn came): the next event has the list again.
    leftOut.push(item('locked', true));
    t.leftOut(leftOut, null);
    expect(t.progressEvent().leftOut).toEqual([...all, { path: 'locked', folder: true, reason: item('locked').reason }]);
    expect(t.progressEvent().leftOut).toBeUndefined();
    t.finish('done');
    expect(t.info().leftOut).toHaveLength(7);
  });
});
