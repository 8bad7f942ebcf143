import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../src/areas/api-keys/key-format.js';
import { storeFor, type Store } from '../src/db/database.js';
import { startModelProvider, type ModelProvider } from './fixtures/model-provider.js';
import { DIALECTS } from './harness.js';
import { serverEnv, type ServerEnv } from './server-env.js';
import { startServerProcess, type ServerProcess } from './server-process.js';

type Json = Record<string, any>;

/*
 * Issue "Agents and AI settings": two real server processes over one store answer follow-ups in
 * one thread at once. Each question and each answer gets its own seq: 1, 2, … without gaps or
 * duplicates, and every answer comes after its question.
 */
describe.each(DIALECTS)('agent answers across two server processes (%s)', (dialect) => {
  const adminKey = generateApiKey();
  const FOLLOW_UPS = 10;
  let env: ServerEnv;
  let a: ServerProcess;
  let b: ServerProcess;
  let store: Store;
  let provider: ModelProvider;

  beforeAll(async () => {
    env = await serverEnv(dialect);
    provider = await startModelProvider();
    const extra = {
      ...env.env,
      ADMIN_API_KEY: adminKey,
      RATE_LIMIT_PER_MINUTE: '0',
      RATE_LIMIT_PER_IP_PER_MINUTE: '0',
      AI_PROVIDER_URL: provider.baseUrl,
      AI_PROVIDER_MODEL: 'stand-in',
    };
    // One after the other: the first start bootstraps the tenant and writes the certificate.
    a = await startServerProcess(extra, env.dataDir);
    b = await startServerProcess(extra, env.dataDir);
    store = storeFor({ databaseUrl: env.env.DATABASE_URL ?? null, dataDir: env.dataDir });
  }, 120_000);
  afterAll(async () => {
    await Promise.allSettled([a?.stop(), b?.stop()]);
    await store?.close();
    await provider?.close();
    await env?.destroy();
  });

  it('follow-ups sent to both processes at once are stored in one order, each answer after its question', { timeout: 90_000 }, async () => {
    const tenant = await store.db.selectFrom('tenants').select('id').orderBy('id').executeTakeFirstOrThrow();
    const at = new Date().toISOString();
    const { id: deploymentId } = await store.db
      .insertInto('deployments')
      .values({ tenant_id: tenant.id, name: `agents-${dialect}`, settings: '{}', created_by: null, created_at: at, updated_at: at })
      .returning('id')
      .executeTakeFirstOrThrow();
    expect((await a.put('/api/v1/ai/settings', { enabled: true }, adminKey)).status).toBe(200);
    const agent = await a.post(`/api/v1/deployments/${deploymentId}/agents`, { name: 'Two processes' }, adminKey);
    expect(agent.status, agent.text).toBe(200);
    const threads = `/api/v1/deployments/${deploymentId}/agents/${agent.body.id}/threads`;
    provider.answer({ text: 'First answer.' });
    const first = await a.post(threads, { question: 'question 0' }, adminKey);
    expect(first.status, first.text).toBe(200);
    const threadId = first.body.thread.id as string;

    for (let i = 0; i < FOLLOW_UPS; i++) provider.answer({ text: 'An answer.' });
    const answers = await Promise.all(
      Array.from({ length: FOLLOW_UPS }, (_, i) => (i % 2 === 0 ? a : b).post(`${threads}/${threadId}/messages`, { question: `question ${i + 1}` }, adminKey)),
    );
    for (const answer of answers) expect(answer.status, answer.text).toBe(200);

    const thread = await b.get(`/api/v1/deployments/${deploymentId}/threads/${threadId}`, adminKey);
    expect(thread.status).toBe(200);
    const messages = thread.body.messages as Json[];
    expect(messages.map((m) => m.seq)).toEqual(Array.from({ length: 2 * (FOLLOW_UPS + 1) }, (_, i) => i + 1));
    expect(
      messages
        .filter((m) => m.role === 'user')
        .map((m) => m.text as string)
        .sort(),
    ).toEqual(Array.from({ length: FOLLOW_UPS + 1 }, (_, i) => `question ${i}`).sort());
    expect(messages.filter((m) => m.role === 'assistant')).toHaveLength(FOLLOW_UPS + 1);
    answers.forEach((answer, i) => {
      const asked = messages.find((m) => m.text === `question ${i + 1}`)!;
      expect(answer.body.message.seq).toBeGreaterThan(asked.seq);
      expect(messages.find((m) => m.seq === answer.body.message.seq)).toMatchObject({ role: 'assistant' });
    });
    expect(a.errors().concat(b.errors())).toEqual([]);
  });
});
