import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../src/areas/api-keys/key-format.js';
import { userSecurityContext as securityContextOf } from '../src/areas/embed-tenants/index.js';
import { TenantCache } from '../src/cache/tenant-cache.js';
import { storeFor, type Store } from '../src/db/database.js';
import { DIALECTS, problem, TestApp } from './harness.js';
import { serverEnv, type ServerEnv } from './server-env.js';
import { startServerProcess, type HttpAnswer, type ServerProcess } from './server-process.js';

/*
 * Issue: "Who is calling ... must not cost a query each on every request. Cache them in process
 * with exact invalidation: a revoked or expired key, a deactivated user, a changed policy or group
 * membership takes effect on the very next request, on every server process ... Tests prove
 * immediate effect across two processes." Every change below is made through server A, and the
 * very next request to server B, whose cache holds the caller from the request before, sees it.
 */
describe.each(DIALECTS)('the caller cache answers the very next request after a change on another process (%s)', (dialect) => {
  const adminKey = generateApiKey();
  let env: ServerEnv;
  let a: ServerProcess;
  let b: ServerProcess;
  let userId: number;
  let key: string;
  let keyId: number;
  let deploymentId: number;
  let workbookUrl: string;
  let store: Store;

  /** Deployments have no create operation in the API; they are inserted as the operator's tooling does. */
  async function deployment(name: string): Promise<number> {
    const at = new Date().toISOString();
    const tenant = await store.db.selectFrom('tenants').select('id').orderBy('id').executeTakeFirstOrThrow();
    const row = await store.db
      .insertInto('deployments')
      .values({ tenant_id: tenant.id, name, settings: '{}', created_by: null, created_at: at, updated_at: at })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  const ok = (res: HttpAnswer, status = 200) => {
    expect(res.status, res.text).toBe(status);
    return res.body as Record<string, any>;
  };

  beforeAll(async () => {
    env = await serverEnv(dialect);
    const extra = { ...env.env, ADMIN_API_KEY: adminKey, RATE_LIMIT_PER_MINUTE: '0' };
    const started = await Promise.allSettled([startServerProcess(extra, env.dataDir), startServerProcess(extra, env.dataDir)]);
    const failure = started.find((s) => s.status === 'rejected');
    [a, b] = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : [])) as [ServerProcess, ServerProcess];
    if (failure) throw failure.reason;
    store = storeFor({ databaseUrl: env.env.DATABASE_URL ?? null, dataDir: env.dataDir });
    userId = ok(await a.post('/api/v1/users', { email: 'cached@example.com', role: 'EXPLORER' }, adminKey), 201).id;
    const created = ok(await a.post('/api/v1/api-keys', { name: 'cached', userId }, adminKey), 201);
    [key, keyId] = [created.key, created.id];
    deploymentId = await deployment('cached');
    const workbook = ok(await a.put(`/api/v1/deployments/${deploymentId}/workbooks/by-slug/cached`, { name: 'Cached' }, adminKey), 201);
    workbookUrl = `/api/v1/deployments/${deploymentId}/workbooks/${workbook.id}`;
  });

  afterAll(async () => {
    await Promise.allSettled([a?.stop(), b?.stop()]);
    await store?.close();
    await env?.destroy();
  });

  it('a policy granted or removed on one process applies to the next request on the other', async () => {
    // Twice: the second answer comes from B's cache of the key and the (empty) grants.
    for (let i = 0; i < 2; i++) expect((await b.get(workbookUrl, key)).status).toBe(403);
    const policy = ok(
      await a.post(
        '/api/v1/policies',
        { principal: { type: 'USER', id: userId }, resource: { type: 'DEPLOYMENT', id: deploymentId }, access: 'VIEW' },
        adminKey,
      ),
      201,
    );
    for (let i = 0; i < 2; i++) ok(await b.get(workbookUrl, key));
    ok(await a.del(`/api/v1/policies/${policy.id}`, adminKey), 204);
    expect((await b.get(workbookUrl, key)).status).toBe(403);
  });

  it('a group membership added or removed on one process applies to the next request on the other', async () => {
    const group = ok(await a.post('/api/v1/groups', { name: 'cached readers' }, adminKey), 201);
    ok(
      await a.post(
        '/api/v1/policies',
        { principal: { type: 'GROUP', id: group.id }, resource: { type: 'DEPLOYMENT', id: deploymentId }, access: 'VIEW' },
        adminKey,
      ),
      201,
    );
    for (let i = 0; i < 2; i++) expect((await b.get(workbookUrl, key)).status).toBe(403);
    ok(await a.post(`/api/v1/groups/${group.id}/members`, { userIds: [userId] }, adminKey));
    for (let i = 0; i < 2; i++) ok(await b.get(workbookUrl, key));
    expect((await a.del(`/api/v1/groups/${group.id}/members/${userId}`, adminKey)).status).toBeLessThan(300);
    expect((await b.get(workbookUrl, key)).status).toBe(403);
  });

  it('a role change on one process applies to the next request on the other', async () => {
    expect((await b.get(workbookUrl, key)).status).toBe(403);
    ok(await a.put(`/api/v1/users/${userId}`, { role: 'ADMIN' }, adminKey));
    ok(await b.get(workbookUrl, key));
    ok(await a.put(`/api/v1/users/${userId}`, { role: 'EXPLORER' }, adminKey));
    expect((await b.get(workbookUrl, key)).status).toBe(403);
  });

  it('a deactivated user is refused on the next request on the other process, and accepted again once reactivated', async () => {
    for (let i = 0; i < 2; i++) expect(ok(await b.get('/api/v1/users/me', key)).id).toBe(userId);
    ok(await a.put(`/api/v1/users/${userId}`, { active: false }, adminKey));
    expect((await b.get('/api/v1/users/me', key)).status).toBe(401);
    ok(await a.put(`/api/v1/users/${userId}`, { active: true }, adminKey));
    ok(await b.get('/api/v1/users/me', key));
  });

  it('a deleted deployment is gone on the next request on the other process', async () => {
    const doomed = await deployment('doomed');
    for (let i = 0; i < 2; i++) ok(await b.get(`/api/v1/deployments/${doomed}/workspace`, adminKey));
    expect((await a.del(`/api/v1/deployments/${doomed}`, adminKey)).status).toBeLessThan(300);
    expect((await b.get(`/api/v1/deployments/${doomed}/workspace`, adminKey)).status).toBe(404);
  });

  it('a key revoked on one process is refused on the next request on the other', async () => {
    for (let i = 0; i < 2; i++) ok(await b.get('/api/v1/users/me', key));
    ok(await a.del(`/api/v1/api-keys/${keyId}`, adminKey), 204);
    expect((await b.get('/api/v1/users/me', key)).status).toBe(401);
    expect((await a.get('/api/v1/users/me', key)).status).toBe(401);
  });
});

describe.each(DIALECTS)('the caller cache never answers for another tenant (%s)', (dialect) => {
  let t: TestApp;
  let acme: Awaited<ReturnType<TestApp['tenant']>>;
  let ours: number;
  beforeAll(async () => {
    t = await TestApp.create(dialect, { baseDomain: 'mapi.test' });
    acme = await t.tenant('acme');
    ours = await t.deployment('ours');
  });
  afterAll(async () => t?.close());

  it("a key cached for its tenant is refused on another tenant's host", async () => {
    for (let i = 0; i < 2; i++) expect((await t.request({ url: '/api/v1/users/me', host: 'default.mapi.test' })).statusCode).toBe(200);
    problem(await t.request({ url: '/api/v1/users/me', host: 'acme.mapi.test' }), 401, 'UNAUTHENTICATED');
  });

  it("a deployment cached for its tenant is not found by another tenant's admin asking for the same id", async () => {
    for (let i = 0; i < 2; i++) expect((await t.request({ url: `/api/v1/deployments/${ours}/workspace`, host: 'default.mapi.test' })).statusCode).toBe(200);
    problem(await t.request({ url: `/api/v1/deployments/${ours}/workspace`, host: 'acme.mapi.test', key: acme.admin.key }), 404, 'DEPLOYMENT_NOT_FOUND');
  });

  it('two tenants asking for the same cache key get their own answers', async () => {
    const cache = new TenantCache(t.store.db);
    const [mine, theirs] = [await cache.snapshot(t.tenantId), await cache.snapshot(acme.tenantId)];
    expect(await mine.memo('deployment:1', () => Promise.resolve('default tenant'))).toBe('default tenant');
    expect(await theirs.memo('deployment:1', () => Promise.resolve('acme'))).toBe('acme');
    expect(await (await cache.snapshot(t.tenantId)).memo('deployment:1', () => Promise.resolve('reloaded'))).toBe('default tenant');
  });

  it("a change in one tenant leaves the other tenant's cache valid, and empties its own", async () => {
    const cache = new TenantCache(t.store.db);
    await (await cache.snapshot(t.tenantId)).memo('probe', () => Promise.resolve('before'));
    await (await cache.snapshot(acme.tenantId)).memo('probe', () => Promise.resolve('before'));
    await t.user('VIEWER', { tenantId: acme.tenantId });
    expect(await (await cache.snapshot(t.tenantId)).memo('probe', () => Promise.resolve('after'))).toBe('before');
    expect(await (await cache.snapshot(acme.tenantId)).memo('probe', () => Promise.resolve('after'))).toBe('after');
  });
});

/*
 * The caller's user attributes (what row-level security reads) are cached under the tenant's
 * `auth_version` like the rest, and triggers bump it: a write that never goes through the service
 * (an operator's SQL, another application on the same database) reaches the very next request too.
 */
describe.each(DIALECTS)('the caller cache sees user attributes written directly in the database (%s)', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await TestApp.create(dialect);
  });
  afterAll(async () => t?.close());

  it('an attribute or value inserted, changed or deleted by SQL applies to the next request', async () => {
    const db = () => t.store.db;
    const { userId } = await t.user('EXPLORER');
    const cache = new TenantCache(db());
    // What the data API does on each request: the tenant's snapshot, then the caller's context through it.
    const attributes = async () => (await securityContextOf(db(), t.tenantId, userId, {}, await cache.snapshot(t.tenantId))).userAttributes;
    const version = async () =>
      Number((await db().selectFrom('tenants').select('auth_version').where('id', '=', t.tenantId).executeTakeFirstOrThrow()).auth_version);
    const at = new Date().toISOString();
    const value = () => db().updateTable('user_attribute_values').where('user_id', '=', userId);

    for (let i = 0; i < 2; i++) expect(await attributes()).toEqual({});
    const { id } = await db()
      .insertInto('user_attributes')
      .values({ tenant_id: t.tenantId, name: 'region', type: 'string', default_value: '"EU"', created_at: at, updated_at: at })
      .returning('id')
      .executeTakeFirstOrThrow();
    for (let i = 0; i < 2; i++) expect(await attributes()).toEqual({ region: 'EU' });
    await db()
      .insertInto('user_attribute_values')
      .values({ tenant_id: t.tenantId, user_id: userId, attribute_id: id, value: '"US"', updated_at: at })
      .execute();
    expect(await attributes()).toEqual({ region: 'US' });
    await value().set({ value: '"APAC"' }).execute();
    expect(await attributes()).toEqual({ region: 'APAC' });
    // An upsert updates the row in place: the update trigger, not the insert one, must see it.
    await db()
      .insertInto('user_attribute_values')
      .values({ tenant_id: t.tenantId, user_id: userId, attribute_id: id, value: '"LATAM"', updated_at: at })
      .onConflict((oc) => oc.columns(['user_id', 'attribute_id']).doUpdateSet({ value: '"LATAM"' }))
      .execute();
    expect(await attributes()).toEqual({ region: 'LATAM' });
    await db().deleteFrom('user_attribute_values').where('user_id', '=', userId).execute();
    expect(await attributes()).toEqual({ region: 'EU' });
    await db().updateTable('user_attributes').set({ default_value: '"Nordics"' }).where('id', '=', id).execute();
    expect(await attributes()).toEqual({ region: 'Nordics' });
    await db().updateTable('user_attributes').set({ name: 'area' }).where('id', '=', id).execute();
    expect(await attributes()).toEqual({ area: 'Nordics' });
    await db().deleteFrom('user_attributes').where('id', '=', id).execute();
    expect(await attributes()).toEqual({});

    // A write of nothing a context holds (the time of the last change) keeps the tenant's cache.
    const { id: kept } = await db()
      .insertInto('user_attributes')
      .values({ tenant_id: t.tenantId, name: 'tier', type: 'string', default_value: '"gold"', created_at: at, updated_at: at })
      .returning('id')
      .executeTakeFirstOrThrow();
    const before = await version();
    await db().updateTable('user_attributes').set({ updated_at: new Date().toISOString() }).where('id', '=', kept).execute();
    expect(await version()).toBe(before);
  });
});
