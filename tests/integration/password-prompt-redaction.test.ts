/**
 * A password a person types at a prompt in any terminal becomes a secret: it is redacted from
 * everything the XO would send, even though the person (not the XO) typed it.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { App } from '../../src-main/node/app.js';
import { connectInProcess } from '../../src-main/node/in-process.js';

test('typed at "Password:" in a local shell → redacted; typed elsewhere → kept', async () => {
  const app = new App({ dataDir: mkdtempSync(join(tmpdir(), 'wraith-pwprompt-')), host: 'in-process' });
  const client = connectInProcess(app);
  try {
    const { sessionId } = await client.call('pty.spawn', { shell: '/bin/bash', cols: 80, rows: 24 });
    const secret = 'Typed-By-Human-9f2c';
    await client.call('terminal.write', { sessionId, data: "read -s -p 'Password: ' pw; echo; echo got-${#pw}\r" });
    await expect.poll(async () => (await client.call('terminal.read', { sessionId, stripAnsi: true })).text, { timeout: 10_000 }).toMatch(/Password: $/);
    // Typed as a person types: a few bytes at a time.
    for (const part of [secret.slice(0, 5), secret.slice(5), '\r']) await client.call('terminal.write', { sessionId, data: part });
    await expect.poll(async () => (await client.call('terminal.read', { sessionId, stripAnsi: true })).text, { timeout: 10_000 }).toContain(`got-${secret.length}`);
    expect(app.redactor.redact(`cat log: login with ${secret} ok`)).not.toContain(secret);

    const ordinary = 'echo not-a-secret-123';
    await client.call('terminal.write', { sessionId, data: ordinary + '\r' });
    expect(app.redactor.redact(ordinary)).toBe(ordinary);
    await client.call('sessions.close', { sessionId });
  } finally {
    client.close();
    await app.dispose();
  }
});
