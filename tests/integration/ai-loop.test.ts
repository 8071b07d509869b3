import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ContractClient } from '../../src-main/common/client.js';
import { App } from '../../src-main/node/app.js';
import { connectInProcess } from '../../src-main/node/in-process.js';
import { type FakeAnthropic, apiKeyOf, startFakeAnthropic } from '../fixtures/fake-anthropic.js';
import { EventLog, lastToolResult, toolNames, toolResults } from './ai-helpers.js';

// The XO loop against the fake Messages API, with no remote servers: session tools and
// approvals on a bare host. SSH/SFTP/RDP scenarios live in ai-ssh.test.ts / ai-rdp.test.ts.
describe('XO loop', () => {
  let fake: FakeAnthropic;
  let dataDir: string;
  let app: App;
  let client: ContractClient;
  let log: EventLog;

  beforeAll(async () => {
    fake = await startFakeAnthropic();
    process.env.ANTHROPIC_BASE_URL = fake.url;
    process.env.ANTHROPIC_API_KEY = 'sk-ant-env-key-for-tests-000000';
    dataDir = mkdtempSync(join(tmpdir(), 'wraith-ai-'));
    app = new App({ dataDir, host: 'in-process' });
    client = connectInProcess(app);
    client.subscribe(['ai.']);
    log = new EventLog(client);
  });
  afterAll(async () => {
    client.close();
    await app.dispose();
    await fake.stop();
  });
  beforeEach(async () => {
    fake.reset();
    log.clear();
    await client.call('ai.mode.set', { mode: 'ask' });
  });

  async function runToEnd(message: string, conversationId?: string) {
    const r = await client.call('ai.send', conversationId ? { message, conversationId } : { message });
    const done = await log.wait('ai.done', (d) => d.runId === r.runId);
    return { ...r, done };
  }

  it('streams an answer and sends the persona, cached system prompt and cached tools', async () => {
    fake.enqueue({ content: [{ type: 'text', text: 'Aye, Commander. Standing by.' }], chunkSize: 4 });
    const { runId, conversationId, done } = await runToEnd('Status report.');
    const text = log.of('ai.text').filter((t) => t.runId === runId).map((t) => t.text).join('');
    expect(text).toBe('Aye, Commander. Standing by.');
    expect(done.stopReason).toBe('end_turn');
    const req = fake.requests[0];
    expect(req?.body.model).toBe('claude-sonnet-5-5');
    expect(req?.body.max_tokens).toBe(4096);
    expect(req ? apiKeyOf(req) : null).toBe('sk-ant-env-key-for-tests-000000');
    expect(JSON.stringify(req?.body.system)).toContain('XO (Executive Officer)');
    expect(JSON.stringify(req?.body.system)).toContain('untrusted-output');
    expect(req?.body.system).toEqual([expect.objectContaining({ cache_control: { type: 'ephemeral' } })]);
    expect(req?.body.tools?.at(-1)?.cache_control).toEqual({ type: 'ephemeral' });
    expect(req?.body.tools?.slice(0, -1).every((t) => t.cache_control === undefined)).toBe(true);
    // input_schema generated from zod
    const write = req?.body.tools?.find((t) => t.name === 'terminal_write');
    expect(write?.input_schema).toMatchObject({ type: 'object', required: ['sessionId', 'text'] });
    // The system prompt is a file the Commander can edit.
    expect(readFileSync(join(dataDir, 'xo-system-prompt.md'), 'utf8')).toContain('XO');
    const conv = await client.call('ai.conversations.get', { id: conversationId });
    expect(conv.items).toEqual([
      { type: 'user', text: 'Status report.' },
      { type: 'assistant', text: 'Aye, Commander. Standing by.' },
    ]);
    expect(conv.title).toBe('Status report.');
  });

  it('calls read tools, returns tool_results, and continues until end_turn (parallel calls keep order)', async () => {
    fake.enqueue(
      { content: [{ type: 'text', text: 'Checking.' }, { type: 'tool_use', id: 'toolu_a', name: 'list_sessions', input: {} }, { type: 'tool_use', id: 'toolu_b', name: 'list_connections', input: {} }] },
      { content: [{ type: 'text', text: 'Nothing is open.' }] },
    );
    const { done } = await runToEnd('What is open?');
    expect(done.stopReason).toBe('end_turn');
    expect(fake.requests).toHaveLength(2);
    const results = toolResults(fake.requests[1]?.body ?? {});
    expect(results.map((r) => r.id)).toEqual(['toolu_a', 'toolu_b']);
    expect(results[0]?.text).toContain('No sessions are open');
    expect(results[1]?.text).toContain('No saved connections');
    expect(results.every((r) => !r.isError)).toBe(true);
    const audit = await client.call('audit.list', { limit: 10 });
    expect(audit.filter((a) => a.toolUseId === 'toolu_a' || a.toolUseId === 'toolu_b').map((a) => a.decision)).toEqual(['not_required', 'not_required']);
  });

  it('in ask mode an act waits for the Commander; deny sends the reason back to the model', async () => {
    fake.enqueue(
      { content: [{ type: 'tool_use', id: 'toolu_w', name: 'terminal_write', input: { sessionId: 'no-such', text: 'systemctl restart nginx\n' } }] },
      { content: [{ type: 'text', text: 'Understood, standing down.' }] },
    );
    const { runId } = await client.call('ai.send', { message: 'Restart nginx' });
    const req = await log.wait('ai.approval_request', (a) => a.runId === runId);
    expect(req.details.text).toBe('systemctl restart nginx\n');
    expect(req.details.action).toContain('Type into');
    expect(req.summary).toContain('Typed `systemctl restart nginx⏎`');
    // Nothing moves until the Commander decides.
    await new Promise((r) => setTimeout(r, 200));
    expect(fake.requests).toHaveLength(1);
    expect(log.of('ai.tool_result').filter((t) => t.runId === runId)).toHaveLength(0);
    // A panel that missed the event finds the run and what it waits for (ai.runs).
    const { runId: _r, conversationId, ...asked } = req;
    expect(await client.call('ai.runs')).toEqual([{ runId, conversationId, approvals: [asked] }]);
    await client.call('ai.deny', { runId, toolUseId: 'toolu_w', reason: 'not during business hours' });
    await log.wait('ai.done', (d) => d.runId === runId);
    await expect.poll(() => client.call('ai.runs')).toEqual([]);
    const result = lastToolResult(fake.requests[1]);
    expect(result?.isError).toBe(true);
    expect(result?.text).toContain('not during business hours');
    const [entry] = await client.call('audit.list', { limit: 1 });
    expect(entry).toMatchObject({ tool: 'terminal_write', decision: 'denied', status: 'denied', decidedBy: 'commander (test)', effect: 'act' });
    // Deciding twice is an error, not a crash.
    await expect(client.call('ai.approve', { runId, toolUseId: 'toolu_w' })).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });

  it('approved acts run through the router, whose errors reach the model as is_error', async () => {
    fake.enqueue(
      { content: [{ type: 'tool_use', id: 'toolu_s', name: 'sftp_write', input: { sessionId: 's1', path: '/tmp/x', content: 'hi' } }] },
      { content: [{ type: 'text', text: 'ok' }] },
    );
    const { runId } = await client.call('ai.send', { message: 'write a file' });
    await log.wait('ai.approval_request', (a) => a.runId === runId);
    await client.call('ai.approve', { runId, toolUseId: 'toolu_s' });
    await log.wait('ai.done', (d) => d.runId === runId);
    const result = lastToolResult(fake.requests[1]);
    expect(result?.isError).toBe(true);
    expect(result?.text).toMatch(/^ENOTFOUND: .*s1/);
    const [entry] = await client.call('audit.list', { limit: 1 });
    expect(entry).toMatchObject({ decision: 'approved', status: 'error' });
  });

  it('readonly offers no act tools, and refuses one the model calls anyway', async () => {
    await client.call('ai.mode.set', { mode: 'readonly' });
    expect(log.of('ai.mode_changed').at(-1)).toEqual({ mode: 'readonly' });
    fake.enqueue(
      { content: [{ type: 'tool_use', id: 'toolu_r', name: 'terminal_exec', input: { sessionId: 's', command: 'id' } }] },
      { content: [{ type: 'text', text: 'ok' }] },
    );
    await runToEnd('look around');
    const names = toolNames(fake.requests[0]);
    expect(names).toContain('terminal_read');
    expect(names).toContain('rdp_screenshot');
    for (const act of ['terminal_write', 'terminal_exec', 'sftp_write', 'rdp_click', 'rdp_type', 'connect_ssh', 'disconnect']) expect(names).not.toContain(act);
    expect(log.of('ai.approval_request')).toHaveLength(0);
    expect(lastToolResult(fake.requests[1])?.text).toContain('read-only mode');
  });

  it('auto mode runs acts without asking but still enforces deny rules', async () => {
    await client.call('ai.mode.set', { mode: 'auto' });
    fake.enqueue(
      {
        content: [
          { type: 'tool_use', id: 'toolu_rm', name: 'terminal_exec', input: { sessionId: 's', command: 'sudo rm -rf / --no-preserve-root' } },
          { type: 'tool_use', id: 'toolu_ok', name: 'terminal_exec', input: { sessionId: 's', command: 'uptime' } },
        ],
      },
      { content: [{ type: 'text', text: 'ok' }] },
    );
    await runToEnd('clean up');
    expect(log.of('ai.approval_request')).toHaveLength(0);
    const [rm, ok] = toolResults(fake.requests[1]?.body ?? {});
    expect(rm?.isError).toBe(true);
    expect(rm?.text).toContain('deny rules');
    // uptime was allowed; it fails only because no SSH session exists here.
    expect(ok?.text).not.toContain('deny rules');
    const entries = await client.call('audit.list', { limit: 2 });
    expect(entries.map((e) => e.decision).sort()).toEqual(['auto', 'rule_denied']);
  });

  it('ask mode flags a deny-rule match in the approval request; approve-all covers later acts of the run', async () => {
    fake.enqueue(
      { content: [{ type: 'tool_use', id: 'toolu_1', name: 'terminal_write', input: { sessionId: 's', text: 'reboot\n' } }] },
      { content: [{ type: 'tool_use', id: 'toolu_2', name: 'terminal_write', input: { sessionId: 's', text: 'ls\n' } }] },
      { content: [{ type: 'text', text: 'done' }] },
    );
    const { runId } = await client.call('ai.send', { message: 'reboot then ls' });
    const a = await log.wait('ai.approval_request', (x) => x.toolUseId === 'toolu_1');
    expect(a.details.matchedDenyRule).toContain('reboot');
    await client.call('ai.approve', { runId, toolUseId: 'toolu_1', all: true });
    await log.wait('ai.done', (d) => d.runId === runId);
    expect(log.of('ai.approval_request').map((x) => x.toolUseId)).toEqual(['toolu_1']);
    const entries = await client.call('audit.list', { limit: 2 });
    expect(entries.map((e) => e.decision)).toEqual(['approved_all', 'approved']);
  });

  it('aborts mid-stream; the conversation stays usable', async () => {
    fake.enqueue({ content: [{ type: 'text', text: 'Let me think about this for a very long time indeed' }], chunkSize: 5, stallAfterEvents: 5 });
    const { runId, conversationId } = await client.call('ai.send', { message: 'long task' });
    await log.wait('ai.text', (t) => t.runId === runId);
    expect(fake.stalled()).toBe(1);
    expect(await client.call('ai.abort', { runId })).toEqual({ aborted: 1 });
    const done = await log.wait('ai.done', (d) => d.runId === runId);
    expect(done.stopReason).toBe('aborted');
    expect(log.of('ai.error').filter((e) => e.runId === runId)).toHaveLength(0);
    fake.enqueue({ content: [{ type: 'text', text: 'Resumed.' }] });
    await runToEnd('go on', conversationId);
    const roles = (fake.requests.at(-1)?.body.messages ?? []).map((m) => m.role);
    expect(roles).toEqual(['user', 'assistant', 'user']);
    expect(JSON.stringify(fake.requests.at(-1)?.body.messages?.[1])).toContain('Interrupted by the Commander');
  });

  it('aborting while an approval is pending drops it and ends the run', async () => {
    fake.enqueue({ content: [{ type: 'tool_use', id: 'toolu_p', name: 'terminal_write', input: { sessionId: 's', text: 'x' } }] });
    const { runId } = await client.call('ai.send', { message: 'type x' });
    await log.wait('ai.approval_request', (a) => a.runId === runId);
    await client.call('ai.abort', {});
    const done = await log.wait('ai.done', (d) => d.runId === runId);
    expect(done.stopReason).toBe('aborted');
    expect(log.of('ai.tool_result').find((t) => t.toolUseId === 'toolu_p')?.status).toBe('aborted');
    expect(fake.requests).toHaveLength(1);
  });

  it('turns API errors into clear messages, retrying the retryable ones', async () => {
    fake.enqueue({ error: { status: 401, type: 'authentication_error', message: 'invalid x-api-key' } });
    const r1 = await client.call('ai.send', { message: 'hello' });
    const e1 = await log.wait('ai.error', (e) => e.runId === r1.runId);
    expect(e1).toMatchObject({ code: 'EAUTH', retryable: false });
    expect(e1.message).toContain('API key');
    expect(fake.requests).toHaveLength(1);

    fake.reset();
    const overloaded = { error: { status: 529, type: 'overloaded_error', message: 'Overloaded', retryAfterMs: 1 } };
    fake.enqueue(overloaded, overloaded, { content: [{ type: 'text', text: 'made it' }] });
    const r2 = await client.call('ai.send', { message: 'hello again' });
    const d2 = await log.wait('ai.done', (d) => d.runId === r2.runId);
    expect(d2.stopReason).toBe('end_turn');
    expect(fake.requests).toHaveLength(3);

    fake.reset();
    const limited = { error: { status: 429, type: 'rate_limit_error', message: 'slow down', retryAfterMs: 1 } };
    fake.setFallback(() => limited);
    const r3 = await client.call('ai.send', { message: 'and again' });
    const e3 = await log.wait('ai.error', (e) => e.runId === r3.runId);
    expect(e3).toMatchObject({ code: 'EUNAVAILABLE', retryable: true });
    expect(e3.message).toContain('Rate limited');
    expect(fake.requests).toHaveLength(4); // 1 + 3 retries

    // A refused request says the API's own words, not its JSON.
    fake.reset();
    fake.setFallback(() => ({ error: { status: 400, type: 'invalid_request_error', message: 'prompt is too long: 210000 tokens > 200000 maximum' } }));
    const r4 = await client.call('ai.send', { message: 'read it all' });
    const e4 = await log.wait('ai.error', (e) => e.runId === r4.runId);
    expect(e4).toMatchObject({ code: 'EBADARGS', retryable: false });
    expect(e4.message).toBe('The Anthropic API rejected the request (invalid_request_error): prompt is too long: 210000 tokens > 200000 maximum');
  });

  it('without an API key ai.send fails with EUNAVAILABLE and says how to add one; the rest of the app works', async () => {
    const saved = process.env.ANTHROPIC_API_KEY;
    delete process.env.ANTHROPIC_API_KEY;
    try {
      await expect(client.call('ai.send', { message: 'hi' })).rejects.toMatchObject({ code: 'EUNAVAILABLE', message: expect.stringContaining('XO settings') });
      expect((await client.call('ai.settings.get')).apiKeySource).toBeNull();
      expect(await client.call('sessions.list')).toEqual([]);
    } finally {
      process.env.ANTHROPIC_API_KEY = saved;
    }
  });

  it('takes the API key from the vault when one is set in XO settings', async () => {
    await client.call('vault.init', { protection: 'keyfile' });
    const view = await client.call('ai.settings.set', { apiKey: 'sk-ant-vault-key-1234567890' });
    expect(view.apiKeySource).toBe('vault');
    expect(view.apiKeyHint).toBe('sk-ant-…7890');
    expect(JSON.stringify(view)).not.toContain('vault-key-1234567890');
    fake.enqueue({ content: [{ type: 'text', text: 'ok' }] });
    await runToEnd('hi');
    expect(fake.requests[0] ? apiKeyOf(fake.requests[0]) : null).toBe('sk-ant-vault-key-1234567890');
    // Choosing a model (the XO panel's picker sends only that) keeps the key and every other setting.
    const budget = await client.call('ai.settings.set', { monthlyTokenBudget: 5_000_000 });
    const picked = await client.call('ai.settings.set', { model: 'claude-opus-4-1' });
    expect(picked).toMatchObject({ model: 'claude-opus-4-1', apiKeySource: 'vault', monthlyTokenBudget: 5_000_000, denyRules: budget.denyRules });
    await client.call('ai.settings.set', { monthlyTokenBudget: 0 });
    await client.call('ai.settings.set', { apiKey: '' });
    expect((await client.call('ai.settings.get')).apiKeySource).toBe('env');
    await expect(client.call('ai.settings.set', { denyRules: ['(unclosed'] })).rejects.toMatchObject({ code: 'EBADARGS' });
  });

  it('caps the iterations of a run', async () => {
    await client.call('ai.settings.set', { maxIterations: 2 });
    fake.setFallback((_req, i) => ({ content: [{ type: 'tool_use', id: `toolu_loop${i}`, name: 'list_sessions', input: {} }] }));
    const { done } = await runToEnd('loop forever');
    expect(done.stopReason).toBe('max_iterations');
    expect(fake.requests).toHaveLength(2);
    await client.call('ai.settings.set', { maxIterations: 25 });
  });

  it('adds up token usage per conversation, day and month, and warns past the budget without blocking', async () => {
    const before = await client.call('ai.usage');
    fake.enqueue(
      { content: [{ type: 'tool_use', id: 'toolu_u', name: 'list_sessions', input: {} }], usage: { input_tokens: 100, output_tokens: 20, cache_read_input_tokens: 300, cache_creation_input_tokens: 50 } },
      { content: [{ type: 'text', text: 'ok' }], usage: { input_tokens: 7, output_tokens: 3, cache_read_input_tokens: 400, cache_creation_input_tokens: 0 } },
    );
    const { conversationId, done } = await runToEnd('count tokens');
    expect(done.usage).toEqual({ inputTokens: 107, outputTokens: 23, cacheReadTokens: 700, cacheCreationTokens: 50 });
    const after = await client.call('ai.usage', { conversationId });
    expect(after.conversation).toEqual(done.usage);
    expect(after.today.inputTokens - before.today.inputTokens).toBe(107);
    expect(after.month.cacheReadTokens - before.month.cacheReadTokens).toBe(700);
    expect(after.days.reduce((s, d) => s + d.outputTokens, 0)).toBe(after.month.outputTokens);
    expect(after.budget.state).toBe('none');

    await client.call('ai.settings.set', { monthlyTokenBudget: after.budget.usedThisMonth + 10 });
    fake.enqueue({ content: [{ type: 'text', text: 'ok' }], usage: { input_tokens: 50, output_tokens: 5 } });
    const r = await runToEnd('one more');
    expect(r.done.budget.state).toBe('exceeded');
    expect(log.of('ai.budget_warning').at(-1)?.state).toBe('exceeded');
    // Never blocks.
    fake.enqueue({ content: [{ type: 'text', text: 'still here' }] });
    expect((await runToEnd('and another')).done.stopReason).toBe('end_turn');
    await client.call('ai.settings.set', { monthlyTokenBudget: 0 });
  });

  it('lists, renames, searches and deletes conversations', async () => {
    fake.enqueue({ content: [{ type: 'text', text: 'The zanzibar cluster is healthy.' }] });
    const { conversationId } = await runToEnd('check the zanzibar cluster');
    const found = await client.call('ai.conversations.search', { query: 'zanzibar' });
    expect(found.map((f) => f.conversationId)).toEqual([conversationId]);
    expect(found[0]?.snippet).toContain('[zanzibar]');
    // FTS syntax in the query is plain text, not an error.
    expect(await client.call('ai.conversations.search', { query: 'AND OR "(' })).toEqual([]);
    const renamed = await client.call('ai.conversations.rename', { id: conversationId, title: 'Zanzibar health' });
    expect(renamed.title).toBe('Zanzibar health');
    expect((await client.call('ai.conversations.list')).some((c) => c.id === conversationId && c.messageCount === 2)).toBe(true);
    await client.call('ai.conversations.delete', { id: conversationId });
    expect(await client.call('ai.conversations.search', { query: 'zanzibar' })).toEqual([]);
    await expect(client.call('ai.conversations.get', { id: conversationId })).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });

  it('keeps the audit log append-only', () => {
    expect(() => app.db.prepare('UPDATE audit_log SET status = ?').run('ok')).toThrow(/append-only/);
    expect(() => app.db.prepare('DELETE FROM audit_log').run()).toThrow(/append-only/);
  });

  it('a conversation survives an App restart on the same data dir', async () => {
    fake.enqueue({ content: [{ type: 'text', text: 'Logged: the password is in the safe.' }] });
    const { conversationId } = await runToEnd('remember the safe');
    client.close();
    await app.dispose();
    app = new App({ dataDir, host: 'in-process' });
    client = connectInProcess(app);
    client.subscribe(['ai.']);
    log = new EventLog(client);
    const conv = await client.call('ai.conversations.get', { id: conversationId });
    expect(conv.items.map((i) => i.type)).toEqual(['user', 'assistant']);
    fake.enqueue({ content: [{ type: 'text', text: 'The safe, Commander.' }] });
    const { done } = await runToEnd('where is it?', conversationId);
    expect(done.stopReason).toBe('end_turn');
    const msgs = fake.requests.at(-1)?.body.messages ?? [];
    expect(msgs).toHaveLength(3);
    expect(JSON.stringify(msgs[0])).toContain('remember the safe');
  });
});
