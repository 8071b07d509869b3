/**
 * terminal.read's `restore` against a real sshd: a full-screen program's modes, set long before
 * the bytes a view reads back, come with the read, so the view can start in them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { ContractClient } from '../../src-main/common/client.js';
import { App } from '../../src-main/node/app.js';
import { connectInProcess } from '../../src-main/node/in-process.js';
import { type SshdHandle, savePasswordConnection, startSshd } from '../fixtures/sshd.js';
import { until } from '../fixtures/poll.js';

let sshd: SshdHandle;
let app: App;
let client: ContractClient;
let dataDir: string;
let connectionId: string;

beforeAll(async () => {
  sshd = await startSshd();
  dataDir = mkdtempSync(join(tmpdir(), 'wraith-read-restore-'));
  app = new App({ dataDir, host: 'in-process' });
  client = connectInProcess(app);
  connectionId = (await savePasswordConnection(client, sshd)).id;
});

afterAll(async () => {
  client?.close();
  await app?.dispose();
  await sshd?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const VIEW_READ = 256 * 1024;

/** Waits until the session's output after `sinceSeq` has a line `line`. */
async function waitForLine(sessionId: string, line: string, sinceSeq: number): Promise<void> {
  await until(line, async () => {
    const r = await client.call('terminal.read', { sessionId, sinceSeq, stripAnsi: true, maxBytes: 4 * 1024 * 1024 });
    return r.text.split('\n').includes(line);
  });
}

test('a read of the last 256 KiB says how to restore the alternate screen and mouse mode set before it', async () => {
  const { sessionId } = await client.call('ssh.open', { connectionId, cols: 100, rows: 30 });
  await until('the prompt', async () => /\$ $/.test((await client.call('terminal.read', { sessionId, stripAnsi: true })).text));
  let mark = (await client.call('terminal.read', { sessionId, maxBytes: 1 })).nextSeq;
  // As vim with mouse=a sets itself up, then more than a view reads back (300 lines of 1,000 bytes).
  await client.call('terminal.write', {
    sessionId,
    data: "printf '\\033[?1049h\\033[?1000h\\033[?1006h'; for i in $(seq 300); do printf '%01000d\\n' 0; done; echo flood-$((6*7)); read x; printf '\\033[?1006l\\033[?1000l\\033[?1049l'; echo left-$((6*7))\n",
  });
  await waitForLine(sessionId, 'flood-42', mark);

  const tail = await client.call('terminal.read', { sessionId, maxBytes: VIEW_READ });
  expect(tail.seq).toBeGreaterThan(mark); // the read starts after the sequences that set the modes
  expect(tail.text).not.toContain('\x1b[?1049h');
  expect(tail.restore).toBe('\x1b[?1049h\x1b[?1000;1006h');
  // The XO's read: the same text as ever, the restore beside it.
  const plain = await client.call('terminal.read', { sessionId, maxBytes: VIEW_READ, stripAnsi: true });
  expect(plain.text).not.toContain('\x1b');
  expect(plain.restore).toBe(tail.restore);
  // A read from before the program started does not enter the alternate screen: its bytes do.
  // (Bash's prompt may have bracketed paste on there.)
  expect((await client.call('terminal.read', { sessionId, sinceSeq: mark, maxBytes: 4 * 1024 * 1024 })).restore).not.toMatch(/1049|1000|1006/);

  // The program leaves the alternate screen and the mouse. The last 256 KiB still start inside it
  // (and hold its leaving); a read from after it restores neither.
  mark = tail.nextSeq;
  await client.call('terminal.write', { sessionId, data: '\n' });
  await waitForLine(sessionId, 'left-42', mark);
  expect((await client.call('terminal.read', { sessionId, maxBytes: VIEW_READ })).restore).toBe(tail.restore);
  const after = (await client.call('terminal.read', { sessionId, maxBytes: 1 })).nextSeq;
  expect((await client.call('terminal.read', { sessionId, sinceSeq: after })).restore).not.toMatch(/1049|1000|1006/);
  await client.call('sessions.close', { sessionId });
});
