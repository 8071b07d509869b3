/**
 * Every method refuses a field it does not have, at any depth (a dropped field was a silent
 * wrong answer: sftp.remove {recursiv: true} deleted non-recursively and said ok). What methods
 * return stays lenient: a stored connection with a field this build does not know still lists.
 */
import { expect, test } from 'vitest';
import { describeContract } from '../../src-main/common/contract/describe.js';
import { events, methods } from '../../src-main/common/contract/index.js';

/** Paths of the objects in a JSON Schema that take fields they do not name. */
function lenientObjects(schema: unknown, at: string, out: string[]): string[] {
  if (Array.isArray(schema)) schema.forEach((s, i) => lenientObjects(s, `${at}[${i}]`, out));
  else if (typeof schema === 'object' && schema !== null) {
    const node: Record<string, unknown> = Object.fromEntries(Object.entries(schema));
    if (node.type === 'object' && 'properties' in node && node.additionalProperties !== false) out.push(at || '(params)');
    for (const [key, value] of Object.entries(node)) lenientObjects(value, at ? `${at}.${key}` : key, out);
  }
  return out;
}

test('every method input, nested objects too, refuses fields it does not name', () => {
  const { methods: described } = describeContract(methods, events, () => true);
  const lenient = described.flatMap((m) => lenientObjects(m.input, '', []).map((at) => `${m.name} ${at}`));
  expect(lenient).toEqual([]);
  // `wraith methods` says so: a client can see which fields there are.
  expect(described.find((m) => m.name === 'sftp.remove')?.input).toMatchObject({ additionalProperties: false });
});

test('outputs still take a field they do not know (and drop it)', () => {
  const stored = {
    id: 'c1', name: 'web01', kind: 'ssh', host: 'web01', port: 22, username: 'ops', groupId: null, tags: [], authMethod: 'password',
    keyPath: null, jumpHostId: null, sshOptions: { fromANewerBuild: true }, rdpOptions: {}, notes: '', hasPassword: false,
    hasPassphrase: false, hasPrivateKey: false, createdAt: '', updatedAt: '', alsoNewer: 1,
  };
  const parsed = methods['connections.get'].output.safeParse(stored);
  expect(parsed.success).toBe(true);
  expect(parsed.data).not.toHaveProperty('alsoNewer');
  expect(parsed.data?.sshOptions).toEqual({});
});
