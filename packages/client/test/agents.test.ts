import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_INDEPENDENT } from '../../server/test/harness.js';
import { ApiError, ChatInterruptedError, createClient, type Agent, type ChatEvent, type MapiClient, type ScheduledTask } from '../src/node.js';
import { startModelProvider, type ModelProvider } from '../../server/test/fixtures/model-provider.js';
import { createDeployment, startTestServer, uniqueName, type TestServer } from './support.js';

/** client.agents, client.scheduledTasks, client.ai against a real server; client.chat against a stand-in stream. */
describe.each(STORE_INDEPENDENT)('agent helpers (%s)', (dialect) => {
  let server: TestServer;
  let client: MapiClient;
  let d: number;

  beforeAll(async () => {
    server = await startTestServer(dialect);
    client = server.client();
    d = await createDeployment(client);
  });
  afterAll(async () => server?.close());

  it('creates, reads, lists, updates and deletes agents; lists starter prompts agent by agent', async () => {
    const first = await client.agents.create(d, { name: uniqueName('sales'), starterPrompts: ['Revenue by month?', 'Top customers?'] });
    const second = await client.agents.create(d, { name: uniqueName('ops'), members: ['orders'], starterPrompts: ['Late orders?'] });
    expect(first).toMatchObject({ deploymentId: d, instructions: '', members: null, createdBy: { email: 'admin@localhost' } });
    expect(await client.agents.get(d, second.id)).toEqual(second);
    const listed: Agent[] = [];
    for await (const agent of client.agents.list(d)) listed.push(agent);
    expect(listed.map((a) => a.id)).toEqual([second.id, first.id]);
    expect(await client.agents.suggestions(d)).toEqual([
      { agentId: first.id, agentName: first.name, prompt: 'Revenue by month?' },
      { agentId: first.id, agentName: first.name, prompt: 'Top customers?' },
      { agentId: second.id, agentName: second.name, prompt: 'Late orders?' },
    ]);
    const updated = await client.agents.update(d, second.id, { description: 'Operations', members: null });
    expect(updated).toMatchObject({ name: second.name, description: 'Operations', members: null, starterPrompts: ['Late orders?'] });
    const threads = [];
    for await (const thread of client.agents.threads(d, second.id)) threads.push(thread);
    expect(threads).toEqual([]);

    const taken = await client.agents.create(d, { name: first.name }).catch((e: unknown) => e);
    expect(taken).toBeInstanceOf(ApiError);
    expect(taken).toMatchObject({ status: 409, code: 'AGENT_NAME_TAKEN' });
    await client.agents.delete(d, second.id);
    await expect(client.agents.get(d, second.id)).rejects.toMatchObject({ status: 404 });
  });

  it('schedules, reads, lists, updates, runs and deletes tasks; a bad cron is a 400 with its pointer', async () => {
    const agent = await client.agents.create(d, { name: uniqueName('tasks') });
    const task = await client.scheduledTasks.create(d, { agentId: agent.id, prompt: 'Summarise yesterday', cron: '30 7 * * 1-5', timezone: 'Europe/Berlin' });
    expect(task).toMatchObject({ agentId: agent.id, cron: '30 7 * * 1-5', timezone: 'Europe/Berlin', active: true });
    expect(task.nextRunAt).not.toBeNull();
    expect(await client.scheduledTasks.get(d, task.id)).toEqual(task);
    const listed: ScheduledTask[] = [];
    for await (const t of client.scheduledTasks.list(d)) listed.push(t);
    expect(listed.map((t) => t.id)).toContain(task.id);
    expect(await client.scheduledTasks.update(d, task.id, { active: false })).toMatchObject({ active: false, nextRunAt: null, prompt: 'Summarise yesterday' });

    const run = await client.scheduledTasks.run(d, task.id);
    expect(run).toMatchObject({ taskId: task.id, trigger: 'manual', status: 'queued' });
    expect((await client.scheduledTasks.runs(d, task.id)).map((r) => r.id)).toEqual([run.id]);

    const bad = await client.scheduledTasks.create(d, { agentId: agent.id, prompt: 'x', cron: '*/5 * * * *' }).catch((e: unknown) => e);
    expect(bad).toMatchObject({ status: 400 });
    expect((bad as ApiError).errors?.map((e) => e.pointer)).toContain('/body/cron');
    await client.scheduledTasks.delete(d, task.id);
    await expect(client.scheduledTasks.get(d, task.id)).rejects.toMatchObject({ status: 404 });
  });

  it('reads and merges the AI settings; reads a month of usage', async () => {
    const before = await client.ai.settings();
    expect(before).toMatchObject({ enabled: false, limits: { maxTokensPerAnswer: 1024 } });
    const after = await client.ai.updateSettings({ enabled: true, limits: { tokensPerUserPerMonth: 5000 } });
    expect(after).toMatchObject({ enabled: true, limits: { maxTokensPerAnswer: 1024, tokensPerUserPerMonth: 5000 } });
    expect(await client.ai.usage({ month: '2026-01' })).toEqual({ month: '2026-01', limit: 5000, items: [] });
    await expect(client.ai.usage({ month: '2026-13' })).rejects.toMatchObject({ status: 400 });
    await client.ai.updateSettings({ enabled: false, limits: { tokensPerUserPerMonth: null } });
  });
});

/** `chat` and `agents.ask` against the server's answering routes, with a stand-in model provider. */
describe.each(STORE_INDEPENDENT)('chat against the server (%s)', (dialect) => {
  let server: TestServer;
  let provider: ModelProvider;
  let client: MapiClient;
  let d: number;
  let agentId: number;

  beforeAll(async () => {
    provider = await startModelProvider();
    server = await startTestServer(dialect, { env: { AI_PROVIDER_URL: provider.baseUrl, AI_PROVIDER_MODEL: 'stand-in', AI_PROVIDER_API_KEY: 'sk-test' } });
    client = server.client();
    d = await createDeployment(client);
    agentId = (await client.agents.create(d, { name: 'Orders', members: ['orders'] })).id;
  });
  afterAll(async () => {
    await server?.close();
    await provider?.close();
  });

  const collect = async (events: AsyncIterable<ChatEvent>) => {
    const out: ChatEvent[] = [];
    for await (const event of events) out.push(event);
    return out;
  };

  it('refuses while AI is off (403); streams an answer with its steps, continues the thread, and answers JSON too', async () => {
    await expect(collect(client.chat(d, agentId, 'How many orders?'))).rejects.toMatchObject({ status: 403, code: 'FORBIDDEN' });
    await client.ai.updateSettings({ enabled: true });

    provider.answer({ toolCalls: [{ name: 'run_query', arguments: { query: { measures: ['customers.count'] } } }] }, { text: 'I may only count orders.' });
    const events = await collect(client.chat(d, agentId, 'How many customers?'));
    expect(events.map((e) => e.event)).toEqual(['thread', 'step', ...events.slice(2, -1).map(() => 'text'), 'done']);
    const first = events[0] as Extract<ChatEvent, { event: 'thread' }>;
    expect(first.data.seq).toBe(1);
    expect(events[1]).toEqual({
      event: 'step',
      data: { kind: 'refused', tool: 'run_query', detail: expect.stringContaining('This agent may use only orders') },
    });
    const done = events.at(-1) as Extract<ChatEvent, { event: 'done' }>;
    expect(done.data.message).toMatchObject({ seq: 2, role: 'assistant', text: 'I may only count orders.' });
    expect(done.data.usage.promptTokens).toBeGreaterThan(0);

    provider.answer({ text: 'Still only orders.' });
    const again = await collect(client.chat(d, agentId, 'And customers by region?', { threadId: first.data.threadId }));
    expect(again[0]).toEqual({ event: 'thread', data: { threadId: first.data.threadId, seq: 3 } });

    provider.answer({ text: 'In JSON.' });
    const answer = await client.agents.ask(d, agentId, 'Once more', { threadId: first.data.threadId });
    expect(answer).toMatchObject({ thread: { id: first.data.threadId }, message: { seq: 6, text: 'In JSON.' } });
    expect((await client.agents.thread(d, first.data.threadId)).messages).toHaveLength(6);
  });

  it('rejects before the stream: 502 from a failing provider, 429 past the budget', async () => {
    await client.ai.updateSettings({ enabled: true });
    provider.fail(400);
    await expect(collect(client.chat(d, agentId, 'Hello'))).rejects.toMatchObject({ status: 502, code: 'AI_PROVIDER_UNAVAILABLE' });
    provider.clear();
    await client.ai.updateSettings({ limits: { tokensPerUserPerMonth: 1 } });
    await expect(collect(client.chat(d, agentId, 'Hello'))).rejects.toMatchObject({ status: 429, code: 'AI_BUDGET_EXCEEDED' });
    await client.ai.updateSettings({ limits: { tokensPerUserPerMonth: null } });
  });
});

/**
 * `chat` over a fetch that answers as the answering routes do: the events a few bytes at a time,
 * problems before the stream as problem responses.
 */
describe('chat', () => {
  const encoder = new TextEncoder();
  const frame = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
  const ANSWER =
    frame('thread', { threadId: 'th_1', seq: 2 }) +
    ': keep-alive\n\n' +
    frame('step', { kind: 'query', query: { measures: ['orders.count'] } }) +
    frame('step', { kind: 'rows', columns: ['orders.count'], rows: [[42]], total: 1, truncated: false }) +
    frame('progress', { ignored: true }) +
    frame('text', { delta: 'There are ' }) +
    frame('text', { delta: '42 orders.' }) +
    frame('done', {
      message: { seq: 2, role: 'assistant', text: 'There are 42 orders.', steps: [], usage: null, createdAt: '2026-12-07T10:00:00.000Z' },
      usage: { promptTokens: 20, completionTokens: 6 },
    });

  interface Seen {
    url: string;
    accept: string | null;
    body: unknown;
  }

  function streamingFetch(text: string, seen: Seen[], { chunk = 7, endEarly = false } = {}): typeof fetch {
    return async (input, init) => {
      const request = new Request(input, init);
      seen.push({ url: request.url, accept: request.headers.get('accept'), body: await request.json() });
      const bytes = encoder.encode(endEarly ? text.slice(0, text.indexOf('event: done')) : text);
      let offset = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (offset >= bytes.length) return controller.close();
          controller.enqueue(bytes.slice(offset, offset + chunk));
          offset += chunk;
        },
      });
      return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream; charset=utf-8' } });
    };
  }

  const clientWith = (fetch: typeof globalThis.fetch) => createClient({ baseUrl: 'https://mapi.test', token: 'mapi_test', fetch, retry: false });

  it('starts a thread and yields typed events in order, skipping unknown ones; continues a thread on its messages route', async () => {
    const seen: Seen[] = [];
    const client = clientWith(streamingFetch(ANSWER, seen));
    const events: ChatEvent[] = [];
    for await (const event of client.chat(3, 9, 'How many orders?')) events.push(event);
    expect(events.map((e) => e.event)).toEqual(['thread', 'step', 'step', 'text', 'text', 'done']);
    expect(events[0]).toEqual({ event: 'thread', data: { threadId: 'th_1', seq: 2 } });
    expect(events[2]).toEqual({ event: 'step', data: { kind: 'rows', columns: ['orders.count'], rows: [[42]], total: 1, truncated: false } });
    const text = events.flatMap((e) => (e.event === 'text' ? [e.data.delta] : [])).join('');
    expect(text).toBe('There are 42 orders.');
    expect(seen[0]).toEqual({
      url: 'https://mapi.test/api/v1/deployments/3/agents/9/threads',
      accept: 'text/event-stream',
      body: { question: 'How many orders?' },
    });

    for await (const event of client.chat(3, 9, 'And last week?', { threadId: 'th_1' })) void event;
    expect(seen[1]?.url).toBe('https://mapi.test/api/v1/deployments/3/agents/9/threads/th_1/messages');
  });

  it('rejects with the ApiError of a problem before the stream, and is never retried', async () => {
    let calls = 0;
    const client = createClient({
      baseUrl: 'https://mapi.test',
      token: 'mapi_test',
      retry: { retries: 3, baseDelayMs: 1 },
      fetch: async () => {
        calls += 1;
        const problem = { type: 'about:blank', status: 429, title: 'Too Many Requests', detail: 'Used 5000 of 5000 tokens', code: 'AI_BUDGET_EXCEEDED' };
        return new Response(JSON.stringify(problem), { status: 429, headers: { 'content-type': 'application/problem+json' } });
      },
    });
    const failure = await (async () => {
      for await (const event of client.chat(3, 9, 'Hi')) void event;
    })().catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ApiError);
    expect(failure).toMatchObject({ status: 429, code: 'AI_BUDGET_EXCEEDED', detail: 'Used 5000 of 5000 tokens' });
    expect(calls).toBe(1);
  });

  it('ends with an error event; a stream cut before done rejects; an abort stops it', async () => {
    const problem = { type: 'about:blank', status: 502, title: 'Bad Gateway', detail: 'The provider failed', code: 'AI_PROVIDER_UNAVAILABLE' };
    const errored = frame('thread', { threadId: 'th_2', seq: 1 }) + frame('error', problem) + frame('text', { delta: 'never' });
    const events: ChatEvent[] = [];
    for await (const event of clientWith(streamingFetch(errored, [])).chat(1, 1, 'q')) events.push(event);
    expect(events.at(-1)).toEqual({ event: 'error', data: problem });

    const cut = (async () => {
      for await (const event of clientWith(streamingFetch(ANSWER, [], { endEarly: true })).chat(1, 1, 'q')) void event;
    })();
    await expect(cut).rejects.toBeInstanceOf(ChatInterruptedError);

    const controller = new AbortController();
    const seenTypes: string[] = [];
    const aborted = (async () => {
      for await (const event of clientWith(streamingFetch(ANSWER, [], { chunk: 1 })).chat(1, 1, 'q', { signal: controller.signal })) {
        seenTypes.push(event.event);
        if (event.event === 'step') controller.abort();
      }
    })();
    await expect(aborted).rejects.toThrow();
    expect(seenTypes).toEqual(['thread', 'step']);
  });
});
