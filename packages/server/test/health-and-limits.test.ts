import { randomBytes } from 'node:crypto';
import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp, type App, type AppOptions } from '../src/app.js';
import { generateApiKey } from '../src/areas/api-keys/key-format.js';
import { bootstrapDefaultTenant } from '../src/areas/tenants/tenants.service.js';
import { openStore, type Store } from '../src/db/database.js';
import { installErrorHandler } from '../src/http/error-handler.js';
import { installRateLimit } from '../src/http/rate-limit.js';
import '../src/http/request-context.js';
import { systemClock } from '../src/time.js';
import { createTestStore, DIALECTS, type TestStore } from './harness.js';

/* Issue 11: health probes are public and never limited; keys are the unit of REST limits; shared Redis budgets. */

const REDIS_URL = 'redis://127.0.0.1:6379';

/** Things to close after each test, last opened first. */
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

async function storeWithAdmin(dialect: (typeof DIALECTS)[number]): Promise<{ store: TestStore; adminKey: string }> {
  const store = await createTestStore(dialect);
  cleanups.push(() => store.destroy());
  const adminKey = generateApiKey();
  await bootstrapDefaultTenant(store, systemClock, 'admin@example.com', adminKey);
  return { store, adminKey };
}

async function app(store: Store, options: Partial<AppOptions> = {}): Promise<App> {
  const built = await buildApp({ store, baseDomain: null, tenantCacheMs: 0, ...options });
  cleanups.push(() => built.close());
  return built;
}

const asKey = (key: string) => ({ authorization: `Bearer ${key}` });

describe.each(DIALECTS)('health probes (%s)', (dialect) => {
  it('/healthz and /readyz answer without a credential, never mention keys, and are never rate-limited', async () => {
    const { store } = await storeWithAdmin(dialect);
    const api = await app(store, { rateLimitPerMinute: 2, rateLimitPerIpPerMinute: 2 });
    for (const url of ['/healthz', '/readyz']) {
      for (let i = 0; i < 10; i++) {
        const res = await api.inject({ url });
        expect(res.statusCode, res.body).toBe(200);
        expect(res.json()).toEqual({ status: 'ok' });
        expect(res.headers['x-ratelimit-limit']).toBeUndefined();
        expect(res.body + JSON.stringify(res.headers)).not.toMatch(/key|authori[sz]/i);
      }
    }
    // A bad credential changes nothing: probes do not look at it.
    expect((await api.inject({ url: '/readyz', headers: asKey(`mapi_${'x'.repeat(40)}`) })).statusCode).toBe(200);
  });

  it('/readyz answers 503 problem details when the database does not answer, /healthz still 200', async () => {
    const { store } = await storeWithAdmin(dialect);
    const detached = store.reopen();
    const api = await app(detached);
    expect((await api.inject({ url: '/readyz' })).statusCode).toBe(200);
    await detached.close();
    const res = await api.inject({ url: '/readyz' });
    expect(res.statusCode).toBe(503);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({ status: 503, code: 'UNAVAILABLE', detail: expect.stringContaining('database') });
    expect(res.body).not.toMatch(/key|authori[sz]/i);
    expect((await api.inject({ url: '/healthz' })).statusCode).toBe(200);
  });
});

if (DIALECTS.includes('postgres')) {
  it('/readyz is 503 when PostgreSQL cannot be reached at all', async () => {
    const unreachable = openStore({ dialect: 'postgres', url: 'postgres://postgres@127.0.0.1:1/test' });
    cleanups.push(() => unreachable.close());
    const api = await app(unreachable);
    const res = await api.inject({ url: '/readyz' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ code: 'UNAVAILABLE' });
  });
}

describe('per-address budgets of public routes', () => {
  /** A bare app with the limiter and routes as future public routes will declare them. */
  async function publicApp(perIpPerMinute: number) {
    const bare = Fastify();
    installErrorHandler(bare);
    await installRateLimit(bare, { perKeyPerMinute: 100, perIpPerMinute, redisUrl: null });
    bare.post('/token', { config: { public: true, rateLimit: { max: 2 } } }, async () => ({ ok: true }));
    bare.get('/discovery', { config: { public: true } }, async () => ({ ok: true }));
    bare.get('/probe', { config: { public: true, rateLimit: false } }, async () => ({ ok: true }));
    await bare.ready();
    cleanups.push(() => bare.close());
    return bare;
  }

  it('a public route counts per client address, by its own declared budget or the default one, and 429 says retry when', async () => {
    const bare = await publicApp(3);
    const from = (remoteAddress: string, method: 'GET' | 'POST', url: string) => bare.inject({ method, url, remoteAddress });
    expect((await from('10.0.0.1', 'POST', '/token')).statusCode).toBe(200);
    expect((await from('10.0.0.1', 'POST', '/token')).statusCode).toBe(200);
    const refused = await from('10.0.0.1', 'POST', '/token');
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(refused.json()).toMatchObject({ code: 'RATE_LIMITED', detail: expect.stringContaining('from this address') });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // Another address has a budget of its own.
    expect((await from('10.0.0.2', 'POST', '/token')).statusCode).toBe(200);

    for (let i = 0; i < 3; i++) expect((await from('10.0.0.1', 'GET', '/discovery')).statusCode).toBe(200);
    expect((await from('10.0.0.1', 'GET', '/discovery')).statusCode).toBe(429);
    for (let i = 0; i < 10; i++) expect((await from('10.0.0.1', 'GET', '/probe')).statusCode).toBe(200);
  });

  it('RATE_LIMIT_PER_IP_PER_MINUTE=0 leaves undeclared public routes unlimited, declared ones keep their budget', async () => {
    const bare = await publicApp(0);
    for (let i = 0; i < 5; i++) expect((await bare.inject({ url: '/discovery' })).statusCode).toBe(200);
    await bare.inject({ method: 'POST', url: '/token' });
    await bare.inject({ method: 'POST', url: '/token' });
    expect((await bare.inject({ method: 'POST', url: '/token' })).statusCode).toBe(429);
  });
});

describe.each(DIALECTS)('rate limits shared through Redis (%s)', (dialect) => {
  it('two app instances with REDIS_URL share one budget per key: a key at its limit on one is refused on the other', async () => {
    const { store, adminKey } = await storeWithAdmin(dialect);
    const prefix = `mapi-test:${randomBytes(6).toString('hex')}:`;
    const options = { rateLimitPerMinute: 3, redisUrl: REDIS_URL, redisKeyPrefix: prefix };
    const [one, two] = [await app(store, options), await app(store, options)];
    const me = (api: App, key = adminKey) => api.inject({ url: '/api/v1/users/me', headers: asKey(key) });
    expect((await me(one)).statusCode).toBe(200);
    expect((await me(two)).statusCode).toBe(200);
    expect((await me(one)).statusCode).toBe(200);
    const refused = await me(two);
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({ code: 'RATE_LIMITED', detail: expect.stringContaining('this API key') });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect((await me(one)).statusCode).toBe(429);

    // The budget is the key's, not the address's: another key from the same client still passes.
    const other = await one.inject({ method: 'POST', url: '/api/v1/api-keys', headers: asKey(adminKey), payload: { name: 'other' } });
    expect(other.statusCode).toBe(429);
    const { insertKey } = await import('../src/areas/api-keys/api-keys.store.js');
    const admin = await store.db.selectFrom('users').select(['id', 'tenant_id']).executeTakeFirstOrThrow();
    const second = generateApiKey();
    await insertKey(store.db, { tenantId: admin.tenant_id, userId: admin.id, name: 'second', key: second, source: 'api', createdAt: new Date().toISOString() });
    expect((await me(two, second)).statusCode).toBe(200);
  });

  it('an unreachable Redis does not take the API down: requests pass unlimited and the outage is logged once', async () => {
    const { store, adminKey } = await storeWithAdmin(dialect);
    const logged: string[] = [];
    const api = await app(store, {
      rateLimitPerMinute: 1,
      redisUrl: 'redis://127.0.0.1:1',
      logger: { level: 'error', stream: { write: (line: string) => void logged.push(line) } },
    });
    for (let i = 0; i < 5; i++) {
      const res = await api.inject({ url: '/api/v1/users/me', headers: asKey(adminKey) });
      expect(res.statusCode, res.body).toBe(200);
    }
    const outages = logged.filter((line) => line.includes('REDIS_URL') && line.includes('not enforced'));
    expect(outages).toHaveLength(1);
  });
});
