import { describe, expect, it } from 'vitest';
import { PasswordPromptTracker, Redactor } from '../../src-main/node/security/redact.js';

const PEM = `-----BEGIN OPENSSH PRIVATE KEY-----
b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW
QyNTUxOQAAACDdQ1Qb8mB3eGZ0xM7yQ9Kq9w1mF5XvU2Qz2yTQGq4mCgAAAJgTx7Q1E8e0
-----END OPENSSH PRIVATE KEY-----`;

describe('Redactor', () => {
  const r = new Redactor();

  it('removes private key blocks, whole or cut off', () => {
    const out = r.redact(`before\n${PEM}\nafter`);
    expect(out).toBe('before\n[REDACTED OPENSSH PRIVATE KEY]\nafter');
    expect(r.redact('-----BEGIN RSA PRIVATE KEY-----\nMIIEow...truncated')).toBe('[REDACTED RSA PRIVATE KEY]');
    // Inside JSON (a GCP service-account file), newlines escaped.
    const json = '{"type":"service_account","private_key":"-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADAN\\n-----END PRIVATE KEY-----\\n","client_email":"x@y"}';
    expect(r.redact(json)).not.toContain('MIIEvQIBADAN');
    expect(r.redact(json)).toContain('client_email');
  });

  it('removes cloud and API tokens', () => {
    const samples = [
      'AKIAIOSFODNN7EXAMPLE',
      'aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
      'AIzaSyA1234567890abcdefghijklmnopqrstuv',
      'ghp_0123456789abcdefghijklmnopqrstuvwxyz',
      'github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz',
      'sk-ant-api03-abcdefghijklmnop_qrstuvwxyz-0123456789',
      'sk-proj-abcdefghijklmnopqrstuvwxyz0123',
      'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.abc.def0123456789',
      'xoxb-123456789012-abcdefghijkl',
    ];
    for (const s of samples) {
      const out = r.redact(`value ${s} end`);
      expect(out, s).toContain('REDACTED');
      expect(out, s).toMatch(/^value .* end$/);
    }
    expect(r.redact('aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY')).not.toContain('wJalrXUtn');
    expect(r.redact('Authorization: Bearer abcdefghijklmnop123')).toBe('Authorization: Bearer [REDACTED]');
  });

  it('removes password= style pairs and URL credentials, keeping the key', () => {
    expect(r.redact('DB_PASSWORD=hunter22 next')).toBe('DB_PASSWORD=[REDACTED] next');
    expect(r.redact('{"password": "s3cr3t!", "user": "bob"}')).toBe('{"password": "[REDACTED]", "user": "bob"}');
    expect(r.redact("api_key: 'abc123xyz'")).toBe("api_key: '[REDACTED]'");
    expect(r.redact('postgres://app:pa55word@db:5432/x')).toBe('postgres://app:[REDACTED]@db:5432/x');
    // A prompt with nothing after it is not a secret, and the next line is not swallowed.
    expect(r.redact('Password:\nls -la')).toBe('Password:\nls -la');
  });

  it('leaves ordinary output alone', () => {
    const text = 'Linux web01 6.1.0-18-amd64 #1 SMP x86_64 GNU/Linux\ntotal 12\ndrwxr-xr-x 2 root root 4096 .';
    expect(r.redact(text)).toBe(text);
  });

  it('redacts strings inside values but not image bytes', () => {
    const img = 'A'.repeat(5000);
    const v = r.redactValue({ a: ['token=abcdef123'], image: { data: img } });
    expect(v).toEqual({ a: ['token=[REDACTED]'], image: { data: img } });
  });
});

describe('PasswordPromptTracker', () => {
  it('treats what is typed after a password prompt as a secret, wherever it shows up later', () => {
    const red = new Redactor();
    const t = new PasswordPromptTracker(red);
    t.noteOutput('s1', 'bob@web01:~$ sudo -k; sudo true\r\n[sudo] password for bob: ');
    expect(t.atPasswordPrompt('s1')).toBe(true);
    expect(t.noteInput('s1', 'Tr0ub4dor')).toBe(true);
    expect(t.noteInput('s1', '&3\r')).toBe(true);
    expect(t.atPasswordPrompt('s1')).toBe(false);
    expect(t.noteInput('s1', 'ls\r')).toBe(false);
    expect(red.redact('echoed: Tr0ub4dor&3 oops')).toBe('echoed: [REDACTED] oops');
  });

  it('follows the last line across chunks of any size, as bytes', () => {
    const t = new PasswordPromptTracker(new Redactor());
    const bytes = (s: string) => new Uint8Array(Buffer.from(s, 'utf8'));
    // a flood of ordinary lines, then a prompt split over two chunks
    t.noteOutput('s1', bytes(`${'line of output\r\n'.repeat(5000)}[sudo] pass`));
    expect(t.atPasswordPrompt('s1')).toBe(false);
    t.noteOutput('s1', bytes('word for bob: '));
    expect(t.atPasswordPrompt('s1')).toBe(true);
    // a line break ends it; a coloured shell prompt follows
    t.noteOutput('s1', bytes('\r\n\x1b[32mbob@web01\x1b[0m:~$ '));
    expect(t.atPasswordPrompt('s1')).toBe(false);
    // a very long line without a break (more than is decoded) still ends in a prompt that counts
    t.noteOutput('s2', bytes('é'.repeat(20_000) + ' Enter passphrase for key: '));
    expect(t.atPasswordPrompt('s2')).toBe(true);
    // and a bare \r (progress bars redraw this way) starts the line again
    t.noteOutput('s2', bytes('\r50%'));
    expect(t.atPasswordPrompt('s2')).toBe(false);
  });

  it('ignores input at an ordinary shell prompt', () => {
    const red = new Redactor();
    const t = new PasswordPromptTracker(red);
    t.noteOutput('s1', '\x1b[32mbob@web01\x1b[0m:~$ ');
    expect(t.noteInput('s1', 'echo hello\r')).toBe(false);
    expect(red.knownCount()).toBe(0);
  });
});
