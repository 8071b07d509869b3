import { Client } from 'ssh2';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type SshdHandle, startSshd } from '../fixtures/sshd.js';

let sshd: SshdHandle;
beforeAll(async () => {
  sshd = await startSshd();
});
afterAll(async () => {
  await sshd?.stop();
});

test('the harness sshd accepts the password user and runs a command', async () => {
  const out = await new Promise<string>((resolve, reject) => {
    const c = new Client();
    c.on('ready', () =>
      c.exec('whoami', (err, stream) => {
        if (err) return reject(err);
        let s = '';
        stream.on('data', (d: Buffer) => (s += d.toString()));
        stream.on('close', () => (c.end(), resolve(s.trim())));
      }),
    );
    c.on('error', reject);
    c.connect({ host: sshd.host, port: sshd.port, username: sshd.users.password.username, password: sshd.users.password.password });
  });
  expect(out).toBe('wraith-pw');
  expect(sshd.hostKeyFingerprint).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);
});
