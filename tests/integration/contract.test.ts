/**
 * One contract suite, three transports: in-process, the Electron port transport (over Node's
 * MessagePort: same structured clone, no Electron runtime here), and WebSocket against a real
 * `wraith serve` process.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ContractClient } from '../../src-main/common/client.js';
import { type Settings, methods } from '../../src-main/common/contract/index.js';
import { WraithError } from '../../src-main/common/errors.js';
import { App } from '../../src-main/node/app.js';
import { connectInProcess } from '../../src-main/node/in-process.js';
import { connectWebSocket } from '../../src-main/server/ws-client.js';
import { startServer } from '../../src-main/server/ws-server.js';
import { failure } from '../fixtures/errors.js';
import { until } from '../fixtures/poll.js';
import { portClient } from '../fixtures/port-client.js';
import { type WraithServer, startWraithServer } from '../fixtures/wraith-server.js';

interface Harness {
  client: ContractClient;
  /** One more client of the same host, over the same transport (another window, the CLI). */
  connectAnother(): Promise<ContractClient>;
  /** Emits an event inside the host (only where the test shares the process). */
  emit?: (app: App) => void;
  app?: App;
  close(): Promise<void>;
}

const tempDir = () => mkdtempSync(join(tmpdir(), 'wraith-contract-'));

async function inProcess(): Promise<Harness> {
  const app = new App({ dataDir: tempDir(), host: 'in-process' });
  const client = connectInProcess(app);
  return { client, app, connectAnother: async () => connectInProcess(app), close: async () => (client.close(), await app.dispose()) };
}

async function electronPort(): Promise<Harness> {
  const app = new App({ dataDir: tempDir(), host: 'in-process' });
  const first = portClient(app);
  return { client: first.client, app, connectAnother: async () => portClient(app).client, close: async () => (first.close(), await app.dispose()) };
}

async function webSocket(): Promise<Harness> {
  const host: WraithServer = await startWraithServer();
  const client = await connectWebSocket(host.url, host.token);
  return { client, connectAnother: () => connectWebSocket(host.url, host.token), close: async () => (client.close(), void (await host.stop())) };
}

/** A real WebSocket, with the host in this process so the test can emit events into it. */
async function webSocketInProcessHost(): Promise<Harness> {
  const app = new App({ dataDir: tempDir(), host: 'in-process' });
  const server = await startServer({ app });
  const client = await connectWebSocket(server.url, server.token);
  return { client, app, connectAnother: () => connectWebSocket(server.url, server.token), close: async () => (client.close(), await server.close(), await app.dispose()) };
}

const transports = {
  'in-process': inProcess,
  'electron port': electronPort,
  'websocket (wraith serve process)': webSocket,
  'websocket (host in this process)': webSocketInProcessHost,
};

for (const [name, make] of Object.entries(transports)) {
  describe(`contract over ${name}`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await make();
      h.client.subscribe(['']);
    });
    afterAll(async () => {
      await h?.close();
    });

    test('ping and describe every method with JSON Schemas', async () => {
      expect(await h.client.call('health.ping')).toEqual({ ok: true });
      const info = await h.client.call('health.info');
      expect(info.name).toBe('wraith');
      expect(info.methods.map((m) => m.name).sort()).toEqual(Object.keys(methods).sort());
      const create = info.methods.find((m) => m.name === 'connections.create');
      expect(create?.implemented).toBe(true);
      expect(create?.input).toMatchObject({ type: 'object', required: expect.arrayContaining(['name', 'kind', 'host']) });
    });

    test('connections and groups round trip', async () => {
      const group = await h.client.call('connections.groups.create', { name: 'Prod' });
      const c = await h.client.call('connections.create', {
        name: 'web01',
        kind: 'ssh',
        host: 'web01.example.com',
        username: 'ops',
        groupId: group.id,
        tags: ['web', 'prod'],
      });
      expect(c).toMatchObject({ port: 22, groupId: group.id, tags: ['prod', 'web'], hasPassword: false });
      const rdp = await h.client.call('connections.create', { name: 'dc01', kind: 'rdp', host: '10.1.2.3' });
      expect(rdp.port).toBe(3389);
      const updated = await h.client.call('connections.update', { id: c.id, patch: { port: 2222, tags: ['web'] } });
      // A patch changes what it names and nothing else (no field falls back to its default).
      expect(updated).toMatchObject({ port: 2222, tags: ['web'], name: 'web01', username: 'ops', groupId: group.id });
      const noted = await h.client.call('connections.update', { id: c.id, patch: { notes: 'behind the VPN' } });
      expect(noted).toMatchObject({ notes: 'behind the VPN', username: 'ops', groupId: group.id, tags: ['web'], port: 2222 });
      const dup = await h.client.call('connections.duplicate', { id: c.id });
      expect(dup.name).toBe('web01 (copy)');
      const listed = await h.client.call('connections.list', { query: 'web' });
      expect(listed.connections.map((x) => x.name)).toEqual(['web01', 'web01 (copy)']);
      expect(listed.groups).toEqual([expect.objectContaining({ name: 'Prod' })]);
      await h.client.call('connections.groups.delete', { id: group.id });
      expect((await h.client.call('connections.get', { id: c.id })).groupId).toBeNull();
      // A second copy, of the original or of the copy, is told apart from the first.
      const again = await h.client.call('connections.duplicate', { id: c.id });
      const ofCopy = await h.client.call('connections.duplicate', { id: dup.id });
      expect([again.name, ofCopy.name]).toEqual(['web01 (copy 2)', 'web01 (copy 3)']);
      for (const extra of [again, ofCopy]) await h.client.call('connections.delete', { id: extra.id });
      await h.client.call('connections.delete', { id: dup.id });
      await expect(h.client.call('connections.get', { id: dup.id })).rejects.toMatchObject({ code: 'ENOTFOUND' });
    });

    test('bad arguments name the field; unknown methods are ENOTFOUND', async () => {
      const err = await h.client.call('connections.create', { name: 'x', kind: 'ssh', host: 'h', port: 70000 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(WraithError);
      expect(err).toMatchObject({ code: 'EBADARGS', details: { issues: [{ path: ['port'] }] } });
      await expect(h.client.callRaw('no.such.method', {})).rejects.toMatchObject({ code: 'ENOTFOUND' });
      await expect(h.client.callRaw('connections.get', { id: 42 })).rejects.toMatchObject({ code: 'EBADARGS' });
    });

    test('bad params are refused in sentences that name the field and what it needs, with the issues in details', async () => {
      const refused = async (method: string, params: unknown) => failure(h.client.callRaw(method, params));
      // A field left out, one out of range, a fraction: never zod's "expected string, received undefined".
      const missing = await refused('ssh.exec', { sessionId: 'x' });
      expect(missing).toMatchObject({ code: 'EBADARGS', message: 'command is required (text).' });
      expect(missing.details?.issues).toEqual([{ path: ['command'], code: 'invalid_type', message: 'Required (text).' }]);
      expect((await refused('ssh.exec', { sessionId: 'x', command: 'ls', timeoutMs: -5 })).message).toBe(
        'timeoutMs must be a whole number of milliseconds from 1 to 3600000; got -5.',
      );
      expect((await refused('ssh.exec', { sessionId: 'x', command: 'ls', maxBytes: 1.5 })).message).toBe(
        'maxBytes must be a whole number of bytes from 1 to 67108864; got 1.5.',
      );
      // A choice: the choices, and the one meant when it is a slip.
      expect((await refused('ai.mode.set', { mode: 'Auto' })).message).toBe('mode must be one of "ask", "auto" or "readonly"; did you mean "auto"?');
      // The wrong kind of value is named by its kind, never repeated (it may be a secret in the wrong field).
      const wrongKind = await refused('ssh.open', { connectionId: 'c', credentials: [{ connectionId: 'c', secret: 123456 }] });
      expect(wrongKind.message).toBe('credentials[0].secret must be text; got a number.');
      // Text or bytes: the bytes option refuses a number for its kind, not with words of its own.
      expect((await refused('terminal.write', { sessionId: 'x', data: 5 })).message).toBe('data must be text or bytes; got a number.');
      expect(wrongKind.message).not.toContain('123456');
      expect((await refused('ssh.exec', 'ls')).message).toBe('The parameters of ssh.exec must be an object; got text.');
    });

    test('a field a method does not have is refused, nested ones too, and nothing is done', async () => {
      const before = await h.client.call('connections.list');
      const misspelt = await failure(h.client.callRaw('connections.groups.create', { name: 'Staging', parentID: null }));
      expect(misspelt.message).toBe('parentID is not a field of connections.groups.create; did you mean parentId?');
      expect(misspelt.details?.issues).toEqual([{ path: [], code: 'unrecognized_keys', message: 'Not a field here: parentID.', keys: ['parentID'] }]);
      // The misspelling comes first: it is why the field it meant is missing.
      expect((await failure(h.client.callRaw('ssh.exec', { sessionId: 'x', comand: 'ls' }))).message).toBe(
        'comand is not a field of ssh.exec; did you mean command? command is required (text).',
      );
      const nested = await failure(
        h.client.callRaw('connections.create', { name: 'n', kind: 'ssh', host: 'h', username: 'ops', sshOptions: { agentForwad: true, forwards: [{ bindPort: 8080, targetPort: 80, remote: true }] } }),
      );
      expect(nested.message).toBe(
        'remote is not a field of sshOptions.forwards[0] in connections.create; its fields are kind, bindHost, bindPort, targetHost, targetPort. ' +
          'agentForwad is not a field of sshOptions in connections.create; did you mean agentForward?',
      );
      expect((await failure(h.client.callRaw('health.ping', { verbose: true }))).message).toBe('verbose is not a field of health.ping, which takes none.');
      const after = await h.client.call('connections.list');
      expect([after.connections.length, after.groups.length]).toEqual([before.connections.length, before.groups.length]);
    });

    test('secrets need the vault; once set up they are stored and never returned', async () => {
      await expect(
        h.client.call('connections.create', { name: 's', kind: 'ssh', host: 'h', username: 'ops', secrets: { password: 'pw' } }),
      ).rejects.toMatchObject({ code: 'ELOCKED' });
      expect((await h.client.call('vault.status')).state).toBe('uninitialized');
      await h.client.call('vault.init', { protection: 'password', password: 'correct horse battery' });
      const c = await h.client.call('connections.create', { name: 's', kind: 'ssh', host: 'h', username: 'ops', secrets: { password: 'pw' } });
      expect(c.hasPassword).toBe(true);
      expect(JSON.stringify(c)).not.toContain('"pw"');
      await h.client.call('vault.lock');
      await expect(h.client.call('vault.unlock', { password: 'wrong password' })).rejects.toMatchObject({ code: 'EAUTH' });
      expect((await h.client.call('vault.unlock', { password: 'correct horse battery' })).state).toBe('unlocked');
    });

    test('settings are typed and ranged', async () => {
      const s = await h.client.call('settings.set', { 'terminal.fontSize': 16 });
      expect(s['terminal.fontSize']).toBe(16);
      // Setting one key leaves the others as they were (a panel resize keeps the font size).
      const after = await h.client.call('settings.set', { 'ui.leftPanelWidth': 300 });
      expect(after).toMatchObject({ 'terminal.fontSize': 16, 'ui.leftPanelWidth': 300 });
      await expect(h.client.callRaw('settings.set', { 'terminal.fontSize': 1000 })).rejects.toMatchObject({ code: 'EBADARGS' });
      await expect(h.client.callRaw('settings.set', { 'no.such.key': 1 })).rejects.toMatchObject({ code: 'EBADARGS' });
    });

    test('a settings change reaches every other client, all settings as settings.get has them', async () => {
      const other = await h.connectAnother();
      try {
        const heard: Settings[] = [];
        other.on('settings.changed', (s) => heard.push(s));
        other.subscribe(['settings.']);
        // One connection handles its messages in order: once this answers, the subscription holds.
        await other.call('health.ping');
        const after = await h.client.call('settings.set', { 'terminal.cursorStyle': 'bar', 'terminal.scrollback': 12_345 });
        await until('the other client to hear of the change', () => heard.length > 0);
        expect(heard).toEqual([after]);
        expect(heard[0]).toEqual(await other.call('settings.get'));
        expect(heard[0]).toMatchObject({ 'terminal.cursorStyle': 'bar', 'terminal.scrollback': 12_345 });
        // A refused change changed nothing, and says so to nobody.
        await expect(h.client.callRaw('settings.set', { 'terminal.cursorStyle': 'triangle' })).rejects.toMatchObject({ code: 'EBADARGS' });
        await other.call('health.ping');
        expect(heard).toHaveLength(1);
      } finally {
        other.close();
      }
    });

    test('a blank font family is refused (EBADARGS, on the field, in words), and the family is kept', async () => {
      const before = (await h.client.call('settings.get'))['terminal.fontFamily'];
      for (const blank of ['', '   ']) {
        const err = await h.client.callRaw('settings.set', { 'terminal.fontFamily': blank }).then(
          () => null,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(WraithError);
        expect(err).toMatchObject({ code: 'EBADARGS', details: { issues: [{ path: ['terminal.fontFamily'] }] } });
        expect((err as WraithError).message).toContain('Name at least one font');
      }
      expect((await h.client.call('settings.get'))['terminal.fontFamily']).toBe(before);
    });

    test("numbers out of range or not numbers are refused with their range, not zod's wording", async () => {
      const issue = async (method: 'settings.set' | 'connections.create', params: unknown) => {
        const err = await h.client.callRaw(method, params).then(
          () => null,
          (e: unknown) => e,
        );
        expect(err).toMatchObject({ code: 'EBADARGS' });
        const issues = (err as WraithError).details?.issues;
        expect(Array.isArray(issues)).toBe(true);
        const first = (issues as { path: string[]; message: string }[])[0];
        return first && { path: first.path, message: first.message };
      };
      for (const bad of [Number.NaN, -5, 99_999_999, 1.5]) {
        expect(await issue('settings.set', { 'terminal.scrollback': bad })).toEqual({ path: ['terminal.scrollback'], message: 'Must be a whole number from 0 to 200000.' });
      }
      expect(await issue('settings.set', { 'terminal.fontSize': Number.NaN })).toEqual({ path: ['terminal.fontSize'], message: 'Must be a whole number from 6 to 48.' });
      expect(await issue('settings.set', { 'terminal.lineHeight': 0 })).toEqual({ path: ['terminal.lineHeight'], message: 'Must be a number from 1 to 2.' });
      for (const bad of [Number.NaN, 0, 70_000]) {
        expect(await issue('connections.create', { name: 'n', kind: 'ssh', host: 'h', port: bad })).toEqual({ path: ['port'], message: 'A port is a whole number from 1 to 65535.' });
      }
    });

    test('a notify is carried out without an answer; a failing one reports its error', async () => {
      const errors: WraithError[] = [];
      const off = h.client.onNotifyError((e) => errors.push(e));
      const unmatched = h.client.unmatchedReplies;
      h.client.notify('settings.set', { 'terminal.fontSize': 17 });
      h.client.notify('settings.set', { 'terminal.fontSize': 1000 });
      // One connection handles its messages in order: a call after them sees their effect.
      expect((await h.client.call('settings.get'))['terminal.fontSize']).toBe(17);
      await until('the failing notify to report', () => errors.length > 0);
      expect(errors).toEqual([expect.objectContaining({ code: 'EBADARGS' })]);
      // Nothing answered the notify that worked.
      expect(h.client.unmatchedReplies).toBe(unmatched);
      off();
    });

    // Emitting needs the host in this process; the serve-process harness covers the rest.
    if (name === 'websocket (wraith serve process)') return;
    test('bytes in events arrive as bytes', async () => {
      const bytes = new Uint8Array([0, 1, 2, 250, 255, 0x1b, 0x5b]);
      const got = new Promise<unknown>((resolve) => h.client.on('terminal.data', (p) => resolve(p.data)));
      h.app?.bus.emit('terminal.data', { sessionId: 's1', seq: 0, data: bytes });
      const data = await got;
      expect(data).toBeInstanceOf(Uint8Array);
      expect([...(data as Uint8Array)]).toEqual([...bytes]);
    });
  });
}
