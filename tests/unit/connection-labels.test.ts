/** How connections and groups are named in the tree, the pickers and the filter. */
import { describe, expect, test } from 'vitest';
import type { Group } from '../../src-main/common/contract/connections.js';
import { connectionAddress, groupChoices, groupPath } from '../../src-renderer/features/connections/labels.js';

describe('connectionAddress', () => {
  test('user@host, with the port only when it is not the kind’s own, and IPv6 in brackets before a port', () => {
    expect(connectionAddress({ kind: 'ssh', host: 'web01', port: 22, username: 'ops' })).toBe('ops@web01');
    expect(connectionAddress({ kind: 'ssh', host: 'web01', port: 2222, username: 'ops' })).toBe('ops@web01:2222');
    expect(connectionAddress({ kind: 'rdp', host: 'desk', port: 3389, username: '' })).toBe('desk');
    expect(connectionAddress({ kind: 'rdp', host: 'desk', port: 22, username: '' })).toBe('desk:22');
    expect(connectionAddress({ kind: 'ssh', host: 'fd00::7', port: 2200, username: 'ops' })).toBe('ops@[fd00::7]:2200');
    expect(connectionAddress({ kind: 'ssh', host: 'fd00::7', port: 22, username: 'ops' })).toBe('ops@fd00::7');
  });
});

describe('group names in pickers', () => {
  const g = (id: string, name: string, parentId: string | null): Group => ({ id, name, parentId, position: 0 });
  const groups = [g('l', 'Linux', null), g('lp', 'prod', 'l'), g('w', 'Windows', null), g('wp', 'prod', 'w'), g('wpd', 'db', 'wp')];

  test('two groups of one name in different folders are told apart by their path', () => {
    expect(groupPath(groups, 'lp')).toBe('Linux / prod');
    expect(groupChoices(groups).map((c) => c.label)).toEqual(['Linux', 'Linux / prod', 'Windows', 'Windows / prod', 'Windows / prod / db']);
  });

  test('a group being moved is not offered itself or anything under it', () => {
    expect(groupChoices(groups, 'w').map((c) => c.id)).toEqual(['l', 'lp']);
  });

  test('a parent loop in stored data does not hang the picker', () => {
    const looped = [g('a', 'A', 'b'), g('b', 'B', 'a')];
    expect(groupChoices(looped).map((c) => c.label).sort()).toEqual(['A / B', 'B / A']);
  });
});
