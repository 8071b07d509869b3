/**
 * Why a connection that was up ended, as a session's reason says it: Node's socket errors ("read
 * ECONNRESET", "write EPIPE") put in words a person can read; anything else keeps its own message.
 */
import { describe, expect, test } from 'vitest';
import { droppedBecause } from '../../src-main/node/ssh/errors.js';

/** A socket error as Node reports it: the system call and its code. */
const socketError = (message: string, code: string) => Object.assign(new Error(message), { code, errno: -1, syscall: message.split(' ')[0] });

describe('droppedBecause', () => {
  test('a reset and a broken pipe are said in words, without the raw code', () => {
    const reset = droppedBecause(socketError('read ECONNRESET', 'ECONNRESET'));
    expect(reset).toBe('the connection was reset (the server, or a firewall or NAT on the way, ended it abruptly)');
    const pipe = droppedBecause(socketError('write EPIPE', 'EPIPE'));
    expect(pipe).toBe('the server closed the connection while we were sending');
    for (const words of [reset, pipe]) expect(words).not.toMatch(/E[A-Z]{3,}/);
  });

  test('a network that stopped carrying it, or a route that went away', () => {
    expect(droppedBecause(socketError('read ETIMEDOUT', 'ETIMEDOUT'))).toBe('the network stopped carrying it (what we sent was never acknowledged)');
    for (const code of ['EHOSTUNREACH', 'ENETUNREACH', 'ENETDOWN']) {
      expect(droppedBecause(socketError(`write ${code}`, code))).toBe('the server could no longer be reached over the network');
    }
  });

  test('an error without a socket code (ssh2 protocol errors) keeps its own message', () => {
    expect(droppedBecause(Object.assign(new Error('Bad packet length 1234'), { level: 'protocol' }))).toBe('Bad packet length 1234');
    expect(droppedBecause(socketError('read EWHATEVER', 'EWHATEVER'))).toBe('read EWHATEVER');
    expect(droppedBecause(new Error(''))).toBe('an unknown error');
  });
});
