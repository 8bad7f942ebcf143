import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createModelClient, ModelProviderError, type ChatEvent, type ModelClient } from '../src/ai/index.js';
import { Outbound, OutboundError } from '../src/outbound/index.js';
import { startModelProvider, type ModelProvider } from './fixtures/model-provider.js';

async function collect(events: AsyncIterable<ChatEvent>): Promise<ChatEvent[]> {
  const all: ChatEvent[] = [];
  for await (const e of events) all.push(e);
  return all;
}

describe('the model client against the stand-in provider', () => {
  let provider: ModelProvider;
  let allowed: Outbound;
  let guarded: Outbound;
  let client: ModelClient;
  beforeAll(async () => {
    provider = await startModelProvider();
    allowed = new Outbound({ allowPrivate: ['127.0.0.1'], timeoutMs: 500 });
    guarded = new Outbound({ timeoutMs: 500 });
    client = createModelClient({
      baseUrl: provider.baseUrl,
      model: 'stand-in',
      apiKey: 'sk-test',
      outbound: allowed,
      retries: 1,
      retryBaseMs: 1,
      deadlineMs: 2_000,
    });
  });
  afterAll(async () => {
    await provider.close();
    await allowed.close();
    await guarded.close();
  });

  it('streams text and reports usage', async () => {
    provider.answer({ text: 'Revenue rose by 4%.', usage: { promptTokens: 21, completionTokens: 7 } });
    const events = await collect(
      client.chat({
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'What changed?' },
        ],
        maxTokens: 64,
      }),
    );
    const text = events.filter((e) => e.type === 'text').map((e) => (e as { delta: string }).delta);
    expect(text.length).toBeGreaterThan(1);
    expect(text.join('')).toBe('Revenue rose by 4%.');
    expect(events.at(-1)).toEqual({ type: 'done', usage: { promptTokens: 21, completionTokens: 7 }, finishReason: 'stop' });
    const sent = provider.requests.at(-1)!;
    expect(sent.authorization).toBe('Bearer sk-test');
    expect(sent.body).toMatchObject({ model: 'stand-in', stream: true, stream_options: { include_usage: true }, max_tokens: 64 });
    expect(sent.body.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'What changed?' },
    ]);
  });

  it('assembles a tool call from its streamed pieces and sends tools and tool results', async () => {
    provider.answer({ toolCalls: [{ id: 'call_a', name: 'list_dashboards', arguments: { deploymentId: 1, search: 'revenue' } }] });
    const events = await collect(
      client.chat({
        messages: [
          { role: 'user', content: 'Find it' },
          { role: 'assistant', content: null, toolCalls: [{ id: 'c0', name: 'whoami', arguments: '{}' }] },
          { role: 'tool', content: '{"user":1}', toolCallId: 'c0' },
        ],
        tools: [
          { name: 'list_dashboards', description: 'Lists dashboards', parameters: { type: 'object', properties: { deploymentId: { type: 'integer' } } } },
        ],
      }),
    );
    expect(events.filter((e) => e.type === 'tool-call')).toEqual([
      { type: 'tool-call', id: 'call_a', name: 'list_dashboards', arguments: JSON.stringify({ deploymentId: 1, search: 'revenue' }) },
    ]);
    expect(events.at(-1)).toMatchObject({ type: 'done', finishReason: 'tool_calls' });
    const sent = provider.requests.at(-1)!.body;
    expect(sent.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'list_dashboards',
          description: 'Lists dashboards',
          parameters: { type: 'object', properties: { deploymentId: { type: 'integer' } } },
        },
      },
    ]);
    expect(sent.messages?.[1]).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c0', type: 'function', function: { name: 'whoami', arguments: '{}' } }],
    });
    expect(sent.messages?.[2]).toEqual({ role: 'tool', content: '{"user":1}', tool_call_id: 'c0' });
  });

  it('retries a 500 before the first byte, then answers', async () => {
    const before = provider.requests.length;
    provider.fail(500);
    provider.answer({ text: 'ok' });
    const events = await collect(client.chat({ messages: [{ role: 'user', content: 'x' }] }));
    expect(events[0]).toEqual({ type: 'text', delta: 'ok' });
    expect(provider.requests.length - before).toBe(2);
  });

  it.each([
    [500, 'unreachable'],
    [429, 'rate-limited'],
    [401, 'refused'],
    ['close', 'unreachable'],
    ['close-mid-stream', 'unreachable'],
    ['hang', 'timeout'],
    ['stall-mid-stream', 'timeout'],
  ] as const)('a provider that answers %s fails with %s, never hangs', async (failure, kind) => {
    provider.fail(failure);
    provider.fail(failure);
    const error = await collect(client.chat({ messages: [{ role: 'user', content: 'x' }] })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelProviderError);
    expect((error as ModelProviderError).kind).toBe(kind);
    expect((error as Error).message).not.toContain('sk-test');
    // A failure that was not retried leaves the second queued: it must not meet the next test.
    provider.clear();
  });

  it('holds an answer to its total deadline even while the provider keeps streaming slowly', async () => {
    const slow = new Outbound({ allowPrivate: ['127.0.0.1'], timeoutMs: 5_000 });
    try {
      const strict = createModelClient({ baseUrl: provider.baseUrl, model: 'm', apiKey: '', outbound: slow, retries: 0, deadlineMs: 300 });
      provider.fail('stall-mid-stream');
      const events: ChatEvent[] = [];
      const error = await (async () => {
        for await (const e of strict.chat({ messages: [{ role: 'user', content: 'x' }] })) events.push(e);
      })().catch((e: unknown) => e);
      expect(events).toEqual([{ type: 'text', delta: 'Partly' }]);
      expect((error as ModelProviderError).kind).toBe('timeout');
      expect((error as Error).message).toContain('within 300 ms');
    } finally {
      await slow.close();
    }
  });

  it('a caller that aborts mid-answer gets its abort back, never a "done"', async () => {
    provider.fail('stall-mid-stream');
    const controller = new AbortController();
    const events: ChatEvent[] = [];
    const error = await (async () => {
      for await (const e of client.chat({ messages: [{ role: 'user', content: 'x' }], signal: controller.signal })) {
        events.push(e);
        controller.abort(new Error('the user left'));
      }
    })().catch((e: unknown) => e);
    expect(events).toEqual([{ type: 'text', delta: 'Partly' }]);
    expect((error as Error).message).toBe('the user left');
  });

  it('outbound.fetch checks a host name where it connects: localhost is private, refused', async () => {
    const port = new URL(provider.baseUrl).port;
    const refused = await guarded.fetch(`http://localhost:${port}/v1/models`).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OutboundError);
    expect((refused as OutboundError).kind).toBe('refused');
    expect((refused as Error).message).toMatch(/localhost resolves to .*a private address/);
    // Allowed, the same call reaches the stand-in (by its address: localhost may resolve to ::1 first, where it does not listen).
    const response = await allowed.fetch(`http://127.0.0.1:${port}/v1/models`);
    expect(response.status).toBe(404);
    await response.body?.cancel();
  });

  it('an unreachable port fails fast', async () => {
    const dead = createModelClient({ baseUrl: 'http://127.0.0.1:9/v1', model: 'm', apiKey: '', outbound: allowed, retries: 0 });
    const error = await collect(dead.chat({ messages: [{ role: 'user', content: 'x' }] })).catch((e: unknown) => e);
    expect((error as ModelProviderError).kind).toBe('unreachable');
  });

  it('the address guard refuses a private address unless allowed', async () => {
    const before = provider.requests.length;
    const refused = createModelClient({ baseUrl: provider.baseUrl, model: 'm', apiKey: '', outbound: guarded, retries: 2, retryBaseMs: 1 });
    const error = await collect(refused.chat({ messages: [{ role: 'user', content: 'x' }] })).catch((e: unknown) => e);
    expect((error as ModelProviderError).kind).toBe('refused');
    expect(provider.requests.length).toBe(before);
  });
});
