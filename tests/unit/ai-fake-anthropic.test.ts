import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeAnthropic, apiKeyOf, startFakeAnthropic } from '../fixtures/fake-anthropic.js';

// The fake server is only worth something if the official SDK accepts it as the real API.
describe('fake Anthropic Messages API, read by the official SDK', () => {
  let fake: FakeAnthropic;
  let client: Anthropic;

  beforeAll(async () => {
    fake = await startFakeAnthropic();
    client = new Anthropic({ apiKey: 'sk-ant-test', baseURL: fake.url, maxRetries: 0 });
  });
  afterAll(async () => fake.stop());
  beforeEach(() => fake.reset());

  it('streams text deltas that messages.stream() assembles into the final message', async () => {
    fake.enqueue({ content: [{ type: 'text', text: 'Aye, Commander. All systems nominal.' }], chunkSize: 5, usage: { input_tokens: 42, output_tokens: 9, cache_read_input_tokens: 7 } });
    const deltas: string[] = [];
    const stream = client.messages.stream({ model: 'claude-sonnet-5-5', max_tokens: 100, messages: [{ role: 'user', content: 'status?' }] });
    stream.on('text', (d) => deltas.push(d));
    const final = await stream.finalMessage();
    expect(deltas.length).toBeGreaterThan(3);
    expect(deltas.join('')).toBe('Aye, Commander. All systems nominal.');
    expect(final.content).toEqual([{ type: 'text', text: 'Aye, Commander. All systems nominal.' }]);
    expect(final.stop_reason).toBe('end_turn');
    expect(final.usage.input_tokens).toBe(42);
    expect(final.usage.output_tokens).toBe(9);
    expect(final.usage.cache_read_input_tokens).toBe(7);
    expect(final.model).toBe('claude-sonnet-5-5');
  });

  it('streams tool_use blocks whose input_json_delta pieces parse into the tool input', async () => {
    fake.enqueue({
      content: [
        { type: 'text', text: 'Checking.' },
        { type: 'tool_use', id: 'toolu_1', name: 'terminal_write', input: { sessionId: 's1', text: 'uname -a\n' } },
        { type: 'tool_use', id: 'toolu_2', name: 'list_sessions', input: {} },
      ],
      chunkSize: 3,
    });
    const jsonDeltas: string[] = [];
    const stream = client.messages.stream({
      model: 'claude-sonnet-5-5',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'go' }],
      tools: [{ name: 'terminal_write', input_schema: { type: 'object', properties: {} } }],
    });
    stream.on('inputJson', (d) => jsonDeltas.push(d));
    const final = await stream.finalMessage();
    expect(final.stop_reason).toBe('tool_use');
    expect(final.content[1]).toEqual({ type: 'tool_use', id: 'toolu_1', name: 'terminal_write', input: { sessionId: 's1', text: 'uname -a\n' } });
    expect(final.content[2]).toEqual({ type: 'tool_use', id: 'toolu_2', name: 'list_sessions', input: {} });
    expect(jsonDeltas.length).toBeGreaterThan(5);
  });

  it('records every request body exactly as the SDK sent it', async () => {
    await client.messages.stream({ model: 'm', max_tokens: 10, system: [{ type: 'text', text: 'sys', cache_control: { type: 'ephemeral' } }], messages: [{ role: 'user', content: 'hello' }] }).finalMessage();
    expect(fake.requests).toHaveLength(1);
    const r = fake.requests[0];
    expect(r?.body.stream).toBe(true);
    expect(r?.body.messages).toEqual([{ role: 'user', content: 'hello' }]);
    expect(r?.body.system).toEqual([{ type: 'text', text: 'sys', cache_control: { type: 'ephemeral' } }]);
    expect(r ? apiKeyOf(r) : null).toBe('sk-ant-test');
  });

  it('answers scripted errors the SDK classifies (401, 429 with retry-after, 529)', async () => {
    fake.enqueue({ error: { status: 401, type: 'authentication_error', message: 'invalid x-api-key' } });
    await expect(client.messages.stream({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }).finalMessage()).rejects.toBeInstanceOf(Anthropic.AuthenticationError);
    fake.enqueue({ error: { status: 429, type: 'rate_limit_error', message: 'slow down', retryAfter: 0 } });
    const e429 = await client.messages.stream({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }).finalMessage().catch((e: unknown) => e);
    expect(e429).toBeInstanceOf(Anthropic.RateLimitError);
    expect(e429 instanceof Anthropic.APIError ? e429.headers?.get('retry-after') : null).toBe('0');
    fake.enqueue({ error: { status: 529, type: 'overloaded_error', message: 'Overloaded' } });
    const e529 = await client.messages.stream({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }).finalMessage().catch((e: unknown) => e);
    expect(e529).toBeInstanceOf(Anthropic.InternalServerError);
    expect(e529 instanceof Anthropic.APIError ? e529.status : null).toBe(529);
  });

  it('lets the SDK retry a 429 and then succeed', async () => {
    const retrying = new Anthropic({ apiKey: 'k', baseURL: fake.url, maxRetries: 2 });
    fake.enqueue({ error: { status: 429, type: 'rate_limit_error', message: 'slow down', retryAfter: 0 } }, { content: [{ type: 'text', text: 'second time lucky' }] });
    const final = await retrying.messages.stream({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }).finalMessage();
    expect(final.content).toEqual([{ type: 'text', text: 'second time lucky' }]);
    expect(fake.requests).toHaveLength(2);
  });

  it('stalls mid-stream until the client aborts', async () => {
    fake.enqueue({ content: [{ type: 'text', text: 'this will never finish being said' }], chunkSize: 4, stallAfterEvents: 4 });
    const stream = client.messages.stream({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] });
    const got: string[] = [];
    const firstText = new Promise<void>((resolve) => stream.on('text', (d) => (got.push(d), resolve())));
    await firstText;
    expect(fake.stalled()).toBe(1);
    stream.abort();
    await expect(stream.finalMessage()).rejects.toBeInstanceOf(Anthropic.APIUserAbortError);
    expect(got.join('').length).toBeLessThan('this will never finish being said'.length);
  });

  it('serves non-streaming requests too', async () => {
    fake.enqueue({ content: [{ type: 'text', text: 'plain' }] });
    const m = await client.messages.create({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] });
    expect(m.content).toEqual([{ type: 'text', text: 'plain' }]);
  });
});
