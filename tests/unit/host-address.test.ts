/**
 * A host beside its port, as messages, tunnel descriptions and the renderer's cards write it: an
 * IPv6 address in brackets ("[::1]:2222"), since "::1:2222" could be an address alone.
 */
import { describe, expect, test } from 'vitest';
import { describeForward } from '../../src-main/common/contract/tunnels.js';
import { hostAndPort, hostInUrl } from '../../src-main/common/host-address.js';
import { label, mapConnectError } from '../../src-main/node/ssh/errors.js';

describe('hostAndPort', () => {
  test('brackets an IPv6 address once, bare or bracketed as saved, and leaves names and IPv4 as they are', () => {
    expect(hostAndPort('web01.example.com', 22)).toBe('web01.example.com:22');
    expect(hostAndPort('10.0.0.5', 3389)).toBe('10.0.0.5:3389');
    expect(hostAndPort('::1', 2222)).toBe('[::1]:2222');
    expect(hostAndPort('[::1]', 2222)).toBe('[::1]:2222');
    expect(hostAndPort('fe80::1%eth0', 22)).toBe('[fe80::1%eth0]:22');
    expect(hostInUrl('[2001:db8::5]')).toBe('[2001:db8::5]');
  });
});

describe('where messages say they connected', () => {
  const hop = { name: 'lab', host: '::1', port: 2222, username: 'root' };

  test('an SSH hop and its failures', () => {
    expect(label(hop)).toBe('lab (root@[::1]:2222)');
    const refused = Object.assign(new Error('connect ECONNREFUSED ::1:2222'), { code: 'ECONNREFUSED' });
    expect(mapConnectError(refused, hop).message).toBe('[::1]:2222 refused the connection (lab): no SSH server listens on that port.');
    const login = Object.assign(new Error('All configured authentication methods failed'), { level: 'client-authentication' });
    expect(mapConnectError(login, hop).message).toMatch(/^lab \(root@\[::1\]:2222\) refused the login\./);
  });

  test('a port forward, on either side', () => {
    expect(describeForward({ kind: 'local', bindHost: '::1', bindPort: 8080, targetHost: '2001:db8::7', targetPort: 80 })).toBe('[::1]:8080 → [2001:db8::7]:80');
    expect(describeForward({ kind: 'remote', bindHost: '::1', bindPort: 0, targetHost: '[::1]', targetPort: 3000 })).toBe('Server [::1]:any free port → [::1]:3000 here');
    expect(describeForward({ kind: 'dynamic', bindHost: '127.0.0.1', bindPort: 1080 })).toBe('SOCKS5 proxy on 127.0.0.1:1080');
  });
});
