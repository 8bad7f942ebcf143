import Fastify from 'fastify';
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inspect } from 'node:util';
import { ModelProviderError, type ChatEvent, type ModelClient } from '../src/ai/index.js';
import { ConfigError, loadConfig } from '../src/config.js';
import { installErrorHandler } from '../src/http/error-handler.js';
import { installOpenApi } from '../src/http/openapi.js';
import { Masked } from '../src/mail/index.js';
import { ApiError } from '../src/shared/problems.js';
import { sharedSchemas } from '../src/shared/schemas.js';
import { startModelProvider, type ModelProvider } from './fixtures/model-provider.js';
import { DIALECTS, TestApp, problem, type Caller } from './harness.js';

const SETTINGS = '/api/v1/ai/settings';
const USAGE = '/api/v1/ai/usage';

async function collect(events: AsyncIterable<ChatEvent>): Promise<ChatEvent[]> {
  const all: ChatEvent[] = [];
  for await (const e of events) all.push(e);
  return all;
}

const textOf = (events: ChatEvent[]) =>
  events
    .filter((e) => e.type === 'text')
    .map((e) => (e as { delta: string }).delta)
    .join('');

describe('the server’s default provider (AI_PROVIDER_*)', () => {
  it('is off unless AI_PROVIDER_URL is set; with it, the model is required and the key never shows in the printed configuration', () => {
    expect(loadConfig({}).aiProvider).toBeNull();
    const config = loadConfig({ AI_PROVIDER_URL: 'http://127.0.0.1:8080/v1/', AI_PROVIDER_MODEL: 'qwen', AI_PROVIDER_API_KEY: 'sk-very-secret' });
    expect(config.aiProvider).toMatchObject({ baseUrl: 'http://127.0.0.1:8080/v1', model: 'qwen' });
    expect(config.aiProvider!.apiKey.reveal()).toBe('sk-very-secret');
    expect(JSON.stringify(config) + inspect(config, { depth: 10 })).not.toContain('sk-very-secret');
    // A local server asks for no key.
    expect(loadConfig({ AI_PROVIDER_URL: 'http://127.0.0.1:8080/v1', AI_PROVIDER_MODEL: 'qwen' }).aiProvider!.apiKey.reveal()).toBe('');
    expect(() => loadConfig({ AI_PROVIDER_URL: 'http://127.0.0.1:8080/v1' })).toThrow(/AI_PROVIDER_URL needs AI_PROVIDER_MODEL/);
    expect(() => loadConfig({ AI_PROVIDER_URL: 'https://api.openai.com/v1/chat/completions', AI_PROVIDER_MODEL: 'm' })).toThrow(/API root/);
    expect(() => loadConfig({ AI_PROVIDER_URL: 'ftp://models', AI_PROVIDER_MODEL: 'm' })).toThrow(ConfigError);
    expect(() => loadConfig({ AI_PROVIDER_MODEL: 'm' })).toThrow(/need AI_PROVIDER_URL/);
  });
});

describe.each(DIALECTS)('AI settings (%s)', (dialect) => {
  let provider: ModelProvider;
  let t: TestApp;
  let bare: TestApp;
  let developer: Caller;
  let embedUserId: number;
  // The app's clock: usage is counted by its month.
  let at = new Date('2026-12-07T10:00:00Z');

  beforeAll(async () => {
    provider = await startModelProvider();
    [t, bare] = await Promise.all([
      TestApp.create(dialect, {
        now: () => at,
        // One attempt's limit: a provider that hangs is given up on quickly.
        outbound: { timeoutMs: 1_000 },
        aiProvider: { baseUrl: provider.baseUrl, model: 'server-model', apiKey: new Masked('sk-server-key') },
      }),
      TestApp.create(dialect),
    ]);
    developer = await t.user('DEVELOPER');
    const embed = await t.request({ method: 'POST', url: '/api/v1/embed-tenants/acme/user', body: { externalId: 'viewer-1' } });
    expect(embed.statusCode, embed.body).toBe(200);
    embedUserId = (embed.json() as { id: number }).id;
    expect((await t.request({ method: 'PUT', url: '/api/v1/tenant/settings', body: { auditLogEnabled: true } })).statusCode).toBe(200);
  });
  afterAll(async () => {
    await Promise.all([t?.close(), bare?.close()]);
    await provider?.close();
  });

  const put = (body: unknown, key?: string) => t.request({ method: 'PUT', url: SETTINGS, body, ...(key ? { key } : {}) });
  const ai = () => t.app.services.ai;

  it('starts with AI off, the server’s provider (its key never shown) and the default limits; without one, no provider', async () => {
    const res = await t.request({ url: SETTINGS });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      enabled: false,
      provider: { baseUrl: provider.baseUrl, model: 'server-model', apiKeySet: true, source: 'server' },
      limits: { maxTokensPerAnswer: 1024, maxToolCallsPerAnswer: 8, tokensPerUserPerMonth: null },
    });
    expect(res.body).not.toContain('sk-server-key');
    expect((await bare.request({ url: SETTINGS })).json()).toMatchObject({ enabled: false, provider: null });
    expect(await bare.app.services.ai.clientFor(bare.tenantId)).toBeNull();
    expect(await bare.app.services.ai.enabled(bare.tenantId)).toBe(false);
  });

  it('a change with the audit log off answers too (what the log needs is read once the change is committed)', async () => {
    const on = await bare.request({ method: 'PUT', url: SETTINGS, body: { enabled: true } });
    expect(on.statusCode, on.body).toBe(200);
    expect(await bare.app.services.ai.enabled(bare.tenantId)).toBe(true);
    expect((await bare.request({ method: 'PUT', url: SETTINGS, body: { enabled: false } })).json()).toMatchObject({ enabled: false });
  });

  it('only admins read or change them, and a change needs an unscoped key', async () => {
    problem(await t.request({ url: SETTINGS, key: developer.key }), 403, 'FORBIDDEN');
    problem(await put({ enabled: true }, developer.key), 403, 'FORBIDDEN');
    problem(await t.request({ url: USAGE, key: developer.key }), 403, 'FORBIDDEN');
    const deployment = await t.deployment('scoped');
    const scoped = await t.key(t.admin.userId, { deploymentIds: [deployment] });
    problem(await put({ enabled: true }, scoped), 403, 'KEY_SCOPE_FORBIDDEN');
    problem(await t.request({ url: SETTINGS, key: null }), 401, 'UNAUTHENTICATED');
    expect((await t.request({ url: SETTINGS })).json()).toMatchObject({ enabled: false });
  });

  it('round trip: the account’s own provider with a sealed key that is never answered, kept when omitted, dropped with provider: null', async () => {
    const res = await put({
      enabled: true,
      provider: { baseUrl: 'https://llm.example.com/v1/', model: 'account-model', apiKey: 'sk-account-secret' },
      limits: { maxTokensPerAnswer: 2048 },
    });
    expect(res.statusCode, res.body).toBe(200);
    const expected = {
      enabled: true,
      provider: { baseUrl: 'https://llm.example.com/v1', model: 'account-model', apiKeySet: true, source: 'account' },
      limits: { maxTokensPerAnswer: 2048, maxToolCallsPerAnswer: 8, tokensPerUserPerMonth: null },
    };
    expect(res.json()).toEqual(expected);
    expect(res.body).not.toContain('sk-account-secret');
    const read = await t.request({ url: SETTINGS });
    expect(read.json()).toEqual(expected);
    expect(read.body).not.toContain('sk-account-secret');
    // Sealed at rest.
    const row = await t.store.db.selectFrom('ai_settings').selectAll().where('tenant_id', '=', t.tenantId).executeTakeFirstOrThrow();
    expect(row.provider_api_key).not.toContain('sk-account-secret');
    expect(await ai().enabled(t.tenantId)).toBe(true);

    // Another model at the same origin: the key is kept.
    const moved = await put({ provider: { baseUrl: 'https://llm.example.com/v2', model: 'other-model' } });
    expect(moved.json()).toMatchObject({ provider: { baseUrl: 'https://llm.example.com/v2', model: 'other-model', apiKeySet: true, source: 'account' } });
    // Another origin: the stored key does not follow unless sent again (or null).
    const elsewhere = problem(await put({ provider: { baseUrl: 'https://other.example.com/v1', model: 'm' } }), 400, 'VALIDATION_FAILED');
    expect(elsewhere.errors).toEqual([{ pointer: '/body/provider/apiKey', message: expect.stringContaining('https://llm.example.com') }]);
    const noKey = await put({ provider: { baseUrl: 'https://other.example.com/v1', model: 'm', apiKey: null } });
    expect(noKey.json()).toMatchObject({ provider: { apiKeySet: false, source: 'account' } });

    const dropped = await put({ provider: null, enabled: false, limits: { maxTokensPerAnswer: 1024 } });
    expect(dropped.json()).toEqual({
      enabled: false,
      provider: { baseUrl: provider.baseUrl, model: 'server-model', apiKeySet: true, source: 'server' },
      limits: { maxTokensPerAnswer: 1024, maxToolCallsPerAnswer: 8, tokensPerUserPerMonth: null },
    });

    // Each kind of change is in the audit log, never the key.
    const events = await t.request({ url: '/api/v1/tenant/audit-events?first=100' });
    const actions = (events.json() as { items: Array<{ action: string }> }).items.map((e) => e.action);
    for (const action of ['ai.enabled', 'ai.disabled', 'ai.provider.set', 'ai.provider.removed', 'ai.limits.changed']) expect(actions).toContain(action);
    expect(events.body).not.toContain('sk-account-secret');
  });

  it('refuses what is not valid with 400 and pointers, changing nothing', async () => {
    const before = (await t.request({ url: SETTINGS })).body;
    const bad = async (body: unknown, pointer: string) => {
      const res = problem(await put(body), 400, 'VALIDATION_FAILED');
      expect((res.errors as Array<{ pointer: string }>).map((e) => e.pointer)).toContain(pointer);
    };
    await bad({ provider: { baseUrl: 'ftp://llm.example.com/v1', model: 'm', apiKey: 'k' } }, '/body/provider/baseUrl');
    await bad({ provider: { baseUrl: 'https://api.openai.com/v1/chat/completions', model: 'm', apiKey: 'k' } }, '/body/provider/baseUrl');
    await bad({ provider: { baseUrl: 'https://user:pw@llm.example.com/v1', model: 'm', apiKey: 'k' } }, '/body/provider/baseUrl');
    await bad({ provider: { baseUrl: 'https://llm.example.com/v1', model: '', apiKey: 'k' } }, '/body/provider/model');
    await bad({ limits: { maxTokensPerAnswer: 0 } }, '/body/limits/maxTokensPerAnswer');
    await bad({ limits: { tokensPerUserPerMonth: -5 } }, '/body/limits/tokensPerUserPerMonth');
    problem(await put({ enabled: 'yes' }), 400, 'VALIDATION_FAILED');
    problem(await put({ surprise: true }), 400, 'VALIDATION_FAILED');
    problem(await t.request({ url: `${USAGE}?month=2026-13` }), 400, 'VALIDATION_FAILED');
    expect((await t.request({ url: SETTINGS })).body).toBe(before);
  });

  it('usage: rows per user and embed user and month appear after recordUsage; the month defaults to the app clock’s', async () => {
    at = new Date('2026-11-15T12:00:00Z');
    await ai().recordUsage(t.tenantId, { userId: developer.userId }, { promptTokens: 100, completionTokens: 20 });
    await ai().recordUsage(t.tenantId, { userId: developer.userId }, { promptTokens: 50, completionTokens: 5 });
    await ai().recordUsage(t.tenantId, { embedUserId }, { promptTokens: 7, completionTokens: 3 });
    const november = await t.request({ url: USAGE });
    expect(november.statusCode, november.body).toBe(200);
    expect(november.json()).toEqual({
      month: '2026-11',
      limit: null,
      items: [
        { userId: developer.userId, embedUserId: null, promptTokens: 150, completionTokens: 25, answers: 2 },
        { userId: null, embedUserId, promptTokens: 7, completionTokens: 3, answers: 1 },
      ],
    });
    at = new Date('2026-12-01T00:00:00Z');
    expect((await t.request({ url: USAGE })).json()).toEqual({ month: '2026-12', limit: null, items: [] });
    expect((await t.request({ url: `${USAGE}?month=2026-11` })).json()).toMatchObject({ month: '2026-11', items: [{ answers: 2 }, { answers: 1 }] });
  });

  it('the budget: 429 saying what was used and the limit once a user spent the month’s tokens, and a new month starts afresh', async () => {
    expect((await put({ limits: { tokensPerUserPerMonth: 100 } })).statusCode).toBe(200);
    at = new Date('2026-12-10T00:00:00Z');
    const who = { userId: t.admin.userId };
    await ai().checkBudget(t.tenantId, who);
    await ai().recordUsage(t.tenantId, who, { promptTokens: 80, completionTokens: 30 });
    const error = await ai()
      .checkBudget(t.tenantId, who)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code: 'AI_BUDGET_EXCEEDED', status: 429 });
    expect((error as ApiError).detail).toContain('110 tokens in 2026-12');
    expect((error as ApiError).detail).toContain('100 tokens per user a month');
    // Another spender, and an embed user, have their own budget.
    await ai().checkBudget(t.tenantId, { userId: developer.userId });
    await ai().checkBudget(t.tenantId, { embedUserId });
    expect((await t.request({ url: USAGE })).json()).toMatchObject({ limit: 100 });
    at = new Date('2027-01-01T00:00:00Z');
    await ai().checkBudget(t.tenantId, who);
    expect((await put({ limits: { tokensPerUserPerMonth: null } })).json()).toMatchObject({ limits: { tokensPerUserPerMonth: null } });
  });

  it('notification summaries: the account’s model writes them while AI is on for it; otherwise there is none (no NOTIFICATION_SUMMARY_URL here)', async () => {
    const summariser = t.app.services.summariser;
    expect((await put({ enabled: false, provider: null })).statusCode).toBe(200);
    expect(await summariser.available(t.tenantId)).toBe(false);
    expect(await bare.app.services.summariser.available(bare.tenantId)).toBe(false);
    expect((await put({ enabled: true })).statusCode).toBe(200);
    expect(await summariser.available(t.tenantId)).toBe(true);
    const before = provider.requests.length;
    provider.answer({ text: ' Revenue fell from 180 to 100. ' });
    expect(await summariser.summarise(t.tenantId, 'Revenue', '[{"total":180}]', '[{"total":100}]')).toBe('Revenue fell from 180 to 100.');
    const sent = provider.requests[before]!.body;
    expect(sent).toMatchObject({ model: 'server-model', max_tokens: 300, stream: true });
    expect(String(sent.messages?.[1]?.content)).toContain('Previous data (JSON):\n[{"total":180}]');
    expect((await put({ enabled: false })).statusCode).toBe(200);
  });

  it('a notification summary counts in its reader’s month of usage, and is refused once their budget is spent, without calling the provider', async () => {
    const summariser = t.app.services.summariser;
    expect((await put({ enabled: true, limits: { tokensPerUserPerMonth: null } })).statusCode).toBe(200);
    at = new Date('2027-02-10T00:00:00Z');
    const reader = { userId: developer.userId };
    provider.answer({ text: 'Orders rose.', usage: { promptTokens: 40, completionTokens: 9 } });
    expect(await summariser.summarise(t.tenantId, 'Orders', '[1]', '[2]', reader)).toBe('Orders rose.');
    expect((await t.request({ url: USAGE })).json()).toEqual({
      month: '2027-02',
      limit: null,
      items: [{ userId: developer.userId, embedUserId: null, promptTokens: 40, completionTokens: 9, answers: 1 }],
    });
    try {
      expect((await put({ limits: { tokensPerUserPerMonth: 49 } })).statusCode).toBe(200);
      const before = provider.requests.length;
      await expect(summariser.summarise(t.tenantId, 'Orders', '[1]', '[2]', reader)).rejects.toMatchObject({ code: 'AI_BUDGET_EXCEEDED' });
      expect(provider.requests).toHaveLength(before);
    } finally {
      expect((await put({ enabled: false, limits: { tokensPerUserPerMonth: null } })).statusCode).toBe(200);
    }
  });

  describe('the client', () => {
    let client: ModelClient;
    beforeAll(async () => {
      expect((await put({ provider: null })).statusCode).toBe(200);
      const model = await ai().clientFor(t.tenantId);
      expect(model).not.toBeNull();
      expect(model!.limits).toMatchObject({ maxTokensPerAnswer: 1024 });
      client = model!.client;
    });

    it('streams text from the server’s provider (private, yet allowed: the operator chose it)', async () => {
      const before = provider.requests.length;
      provider.answer({ text: 'Revenue fell from 180 to 100.', usage: { promptTokens: 40, completionTokens: 9 } });
      const events = await collect(client.chat({ messages: [{ role: 'user', content: 'What changed?' }], maxTokens: 100 }));
      expect(events.filter((e) => e.type === 'text').length).toBeGreaterThan(1);
      expect(textOf(events)).toBe('Revenue fell from 180 to 100.');
      expect(events.at(-1)).toEqual({ type: 'done', usage: { promptTokens: 40, completionTokens: 9 }, finishReason: 'stop' });
      const sent = provider.requests[before]!;
      expect(sent.authorization).toBe('Bearer sk-server-key');
      expect(sent.body).toMatchObject({ model: 'server-model', stream: true, stream_options: { include_usage: true }, max_tokens: 100 });
    });

    it('assembles a tool call from its streamed pieces', async () => {
      provider.answer({ toolCalls: [{ id: 'call_1', name: 'list_dashboards', arguments: { deploymentId: 3, search: 'revenue' } }] });
      const events = await collect(
        client.chat({
          messages: [{ role: 'user', content: 'Find the revenue dashboard' }],
          tools: [
            { name: 'list_dashboards', description: 'Lists dashboards', parameters: { type: 'object', properties: { deploymentId: { type: 'integer' } } } },
          ],
        }),
      );
      expect(events.filter((e) => e.type === 'tool-call')).toEqual([
        { type: 'tool-call', id: 'call_1', name: 'list_dashboards', arguments: '{"deploymentId":3,"search":"revenue"}' },
      ]);
      expect(provider.requests.at(-1)!.body.tools).toEqual([
        {
          type: 'function',
          function: {
            name: 'list_dashboards',
            description: 'Lists dashboards',
            parameters: { type: 'object', properties: { deploymentId: { type: 'integer' } } },
          },
        },
      ]);
    });

    it('a provider that is down or hangs ends in AI_PROVIDER_UNAVAILABLE (502), not a hang', async () => {
      const app = Fastify({ logger: false });
      for (const schema of sharedSchemas) app.addSchema(schema);
      installErrorHandler(app, [], { strictProblemCodes: true });
      await installOpenApi(app);
      app.post(
        '/ask',
        { schema: { operationId: 'ask', response: { 200: Type.Object({ text: Type.String() }) }, problems: ['AI_PROVIDER_UNAVAILABLE'] } },
        async () => ({ text: textOf(await collect(client.chat({ messages: [{ role: 'user', content: 'Hi' }] }))) }),
      );
      await app.ready();
      try {
        // Refused outright: not retried.
        provider.fail(401);
        const refused = problem(await app.inject({ method: 'POST', url: '/ask' }), 502, 'AI_PROVIDER_UNAVAILABLE');
        expect(refused.detail).toContain('refused the request with 401');
        // No answer within the outbound timeout (1 s here).
        provider.fail('hang');
        const hung = problem(await app.inject({ method: 'POST', url: '/ask' }), 502, 'AI_PROVIDER_UNAVAILABLE');
        expect(hung.detail).toMatch(/did not answer/);
        // The connection dropped on every attempt (retried, then given up).
        provider.fail('close');
        provider.fail('close');
        provider.fail('close');
        const closed = problem(await app.inject({ method: 'POST', url: '/ask' }), 502, 'AI_PROVIDER_UNAVAILABLE');
        expect(closed.detail).toMatch(/could not be reached/);
        expect(JSON.stringify([refused, hung, closed])).not.toContain('sk-server-key');
      } finally {
        provider.clear();
        await app.close();
      }
    });

    it('an account’s provider on a private address is refused by the guard; the request never leaves', async () => {
      expect((await put({ provider: { baseUrl: provider.baseUrl, model: 'account-model', apiKey: 'sk-account' } })).statusCode).toBe(200);
      const before = provider.requests.length;
      const model = await ai().clientFor(t.tenantId);
      const error = await collect(model!.client.chat({ messages: [{ role: 'user', content: 'Hi' }] })).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ModelProviderError);
      expect((error as ModelProviderError).kind).toBe('refused');
      expect((error as Error).message).toMatch(/private address/);
      expect(provider.requests.length).toBe(before);
      expect((await put({ provider: null })).statusCode).toBe(200);
    });
  });
});
