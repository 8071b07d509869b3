/**
 * The known_hosts names the Known hosts filter asks the host to hash: as ssh-keygen -F reads a
 * host, plus the ports Wraith knows a bare host by.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { hashedNameMatches } from '../../src-main/node/hostkeys/host-key-store.js';
import { knownHostsNamesFor } from '../../src-renderer/features/hostkeys/hashed-query.js';

const none = () => [];

describe('knownHostsNamesFor', () => {
  test('a host is itself on port 22 and "[host]:port" on every port Wraith knows it by', () => {
    expect(knownHostsNamesFor('web01', none)).toEqual(['web01']);
    expect(knownHostsNamesFor('  Web01.Example.COM ', none)).toEqual(['web01.example.com']);
    const ports = (h: string) => (h === '127.0.0.1' ? [2222, 22, 2222] : []);
    expect(knownHostsNamesFor('127.0.0.1', ports)).toEqual(['127.0.0.1', '[127.0.0.1]:2222']);
  });

  test('a port in the query names that port only', () => {
    const ports = () => [2200];
    expect(knownHostsNamesFor('web01:2222', ports)).toEqual(['[web01]:2222']);
    expect(knownHostsNamesFor('[web01]:2222', ports)).toEqual(['[web01]:2222']);
    expect(knownHostsNamesFor('web01:22', ports)).toEqual(['web01']);
    expect(knownHostsNamesFor('[::1]:2222', ports)).toEqual(['[::1]:2222']);
    expect(knownHostsNamesFor('[::1]', none)).toEqual(['::1']);
    expect(knownHostsNamesFor('::1', none)).toEqual(['::1']);
  });

  test('an empty query or one with spaces names no host', () => {
    expect(knownHostsNamesFor('', () => [22])).toEqual([]);
    expect(knownHostsNamesFor('ssh-ed25519 SHA256:abc', () => [22])).toEqual([]);
  });

  test('the names are what ssh-keygen -H hashes, and what the host matches', () => {
    const dir = mkdtempSync(join(tmpdir(), 'wraith-hashed-query-'));
    try {
      const path = join(dir, 'known_hosts');
      const key = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEnTcTb8UIP4N8vOOT7LLokg486AEzSiSIECg+UKPET+';
      writeFileSync(path, `web01 ${key}\n[10.0.0.7]:2222 ${key}\n`);
      execFileSync('ssh-keygen', ['-H', '-f', path], { stdio: 'ignore' });
      const hashed = readFileSync(path, 'utf8').trim().split('\n').map((l) => l.split(' ')[0] ?? '');
      const matches = hashedNameMatches;
      const [web01 = '', ten = ''] = hashed;
      expect(knownHostsNamesFor('WEB01', none).some((n) => matches(web01, n))).toBe(true);
      expect(knownHostsNamesFor('10.0.0.7:2222', none).some((n) => matches(ten, n))).toBe(true);
      expect(knownHostsNamesFor('10.0.0.7', () => [2222]).some((n) => matches(ten, n))).toBe(true);
      expect(knownHostsNamesFor('10.0.0.7', none).some((n) => matches(ten, n))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
