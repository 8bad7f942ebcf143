import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify, type JSONWebKeySet, type JWTPayload } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { environmentTokenContext } from '../src/areas/tokens/tokens.store.js';
import { DIALECTS, TestApp, problem, type Caller } from './harness.js';

/** The default tenant's origin when the app does not listen (PUBLIC_URL unset). */
const ORIGIN = 'https://localhost';

describe.each(DIALECTS)('deployment and environment tokens (%s)', (dialect) => {
  let t: TestApp;
  let deploymentId: number;
  let dataApi: string;
  let viewer: Caller;
  let editor: Caller;
  let explorerViewing: Caller;

  beforeAll(async () => {
    t = await TestApp.create(dialect);
    deploymentId = await t.deployment('tokens');
    dataApi = `${ORIGIN}/deployments/${deploymentId}/data-api/v1`;
    viewer = await t.user('VIEWER');
    await t.grant({ type: 'USER', id: viewer.userId }, { type: 'DEPLOYMENT', id: deploymentId }, 'VIEW');
    editor = await t.user('EXPLORER');
    await t.grant({ type: 'USER', id: editor.userId }, { type: 'DEPLOYMENT', id: deploymentId }, 'EDIT');
    explorerViewing = await t.user('EXPLORER');
    await t.grant({ type: 'USER', id: explorerViewing.userId }, { type: 'DEPLOYMENT', id: deploymentId }, 'VIEW');
  });
  afterAll(async () => t?.close());

  async function keySet(): Promise<JSONWebKeySet> {
    return (await t.request({ url: '/api/v1/data-api/jwks.json', key: null })).json() as JSONWebKeySet;
  }
  async function verified(token: string, audience: string): Promise<JWTPayload> {
    return (await jwtVerify(token, createLocalJWKSet(await keySet()), { issuer: ORIGIN, audience })).payload;
  }
  const envUrl = (env = 'production', path = 'tokens') => `/api/v1/deployments/${deploymentId}/environments/${env}/${path}`;
  async function mint(body: unknown, key?: string, env = 'production', path = 'tokens') {
    const res = await t.request({ method: 'POST', url: envUrl(env, path), body, ...(key ? { key } : {}) });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { data: { token: string; security_context: Record<string, unknown>; scopes: string[]; created_at: string; expires_at: string } })
      .data;
  }

  describe('POST /api/v1/deployments/{id}/token (reference 1.16)', () => {
    it('mints a day-long JWT for the production data API naming the deployment and the caller; no body needed', async () => {
      const res = await t.request({ method: 'POST', url: `/api/v1/deployments/${deploymentId}/token` });
      expect(res.statusCode, res.body).toBe(200);
      const { platformApiToken } = res.json() as { platformApiToken: string };
      const claims = await verified(platformApiToken, dataApi);
      expect(claims).toMatchObject({
        iss: ORIGIN,
        aud: dataApi,
        sub: `user:${t.admin.userId}`,
        deployment_id: deploymentId,
        environment_id: 'production',
        branch: 'main',
        user_id: t.admin.userId,
        email: t.admin.email,
      });
      expect(claims.exp! - claims.iat!).toBe(86_400);
      expect(decodeProtectedHeader(platformApiToken)).toMatchObject({ alg: 'ES256', typ: 'deployment+jwt' });
    });

    it('expiresIn: 60 to 86400 seconds, null for the default; outside: 400', async () => {
      for (const [expiresIn, lifetime] of [
        [60, 60],
        [86_400, 86_400],
        [null, 86_400],
      ] as const) {
        const res = await t.request({ method: 'POST', url: `/api/v1/deployments/${deploymentId}/token`, body: { expiresIn } });
        expect(res.statusCode, res.body).toBe(200);
        const claims = decodeJwt((res.json() as { platformApiToken: string }).platformApiToken);
        expect(claims.exp! - claims.iat!).toBe(lifetime);
      }
      for (const expiresIn of [59, 86_401, 'long']) {
        problem(await t.request({ method: 'POST', url: `/api/v1/deployments/${deploymentId}/token`, body: { expiresIn } }), 400, 'VALIDATION_FAILED');
      }
    });

    it('a VIEWER with VIEW may mint (DeploymentRead); without access 403; a key scoped elsewhere 403; another tenant 404', async () => {
      const res = await t.request({ method: 'POST', url: `/api/v1/deployments/${deploymentId}/token`, key: viewer.key });
      expect(res.statusCode, res.body).toBe(200);
      expect(decodeJwt((res.json() as { platformApiToken: string }).platformApiToken).user_id).toBe(viewer.userId);
      const stranger = await t.user('DEVELOPER');
      problem(await t.request({ method: 'POST', url: `/api/v1/deployments/${deploymentId}/token`, key: stranger.key }), 403, 'FORBIDDEN');
      const scoped = await t.key(t.admin.userId, { deploymentIds: [await t.deployment('tokens-elsewhere')] });
      problem(await t.request({ method: 'POST', url: `/api/v1/deployments/${deploymentId}/token`, key: scoped }), 403, 'KEY_SCOPE_FORBIDDEN');
      const other = await t.tenant('tokens-other');
      const theirs = await t.deployment('theirs', { tenantId: other.tenantId });
      problem(await t.request({ method: 'POST', url: `/api/v1/deployments/${theirs}/token` }), 404, 'DEPLOYMENT_NOT_FOUND');
    });
  });

  describe('POST …/environments/{environmentId}/tokens (reference 1.19)', () => {
    it('signs only meta and sql-runner, drops a `scope` claim, and answers what it signed; an hour by default', async () => {
      const data = await mint({
        security_context: { tenant: 'acme', scope: 'admin', nested: { a: 1 } },
        scopes: ['meta', 'sql-runner', 'admin', 'meta-private'],
      });
      expect(data.scopes).toEqual(['meta', 'sql-runner']);
      expect(data.security_context).toEqual({ tenant: 'acme', nested: { a: 1 } });
      const claims = await verified(data.token, dataApi);
      expect(claims).toMatchObject({
        deployment_id: deploymentId,
        environment_id: 'production',
        branch: 'main',
        user_id: t.admin.userId,
        scopes: ['meta', 'sql-runner'],
        security_context: { tenant: 'acme', nested: { a: 1 } },
      });
      expect(claims).not.toHaveProperty('scope');
      expect(claims.exp! - claims.iat!).toBe(3_600);
      expect(new Date(data.expires_at).getTime()).toBe(claims.exp! * 1000);
      expect(new Date(data.created_at).getTime()).toBe(claims.iat! * 1000);
      expect(decodeProtectedHeader(data.token).typ).toBe('environment+jwt');
    });

    it('expires_in 1 to 3600 (null: 3600); outside, or a missing or null security_context: 400', async () => {
      for (const [expiresIn, lifetime] of [
        [1, 1],
        [3_600, 3_600],
        [null, 3_600],
      ] as const) {
        const claims = decodeJwt((await mint({ security_context: {}, expires_in: expiresIn })).token);
        expect(claims.exp! - claims.iat!).toBe(lifetime);
      }
      for (const body of [
        { security_context: {}, expires_in: 0 },
        { security_context: {}, expires_in: 3_601 },
        { security_context: null },
        {},
        { security_context: [] },
      ]) {
        problem(await t.request({ method: 'POST', url: envUrl(), body }), 400, 'VALIDATION_FAILED');
      }
    });

    it('a caller without EDIT access gets its security context dropped and no sql-runner; EDIT keeps both', async () => {
      for (const caller of [viewer, explorerViewing]) {
        const data = await mint({ security_context: { tenant: 'acme' }, scopes: ['meta', 'sql-runner'] }, caller.key);
        expect(data.security_context).toEqual({});
        expect(data.scopes).toEqual(['meta']);
        expect(decodeJwt(data.token)).toMatchObject({ security_context: {}, scopes: ['meta'], user_id: caller.userId });
      }
      const data = await mint({ security_context: { tenant: 'acme', scope: 'x' }, scopes: ['sql-runner'] }, editor.key);
      expect(data.security_context).toEqual({ tenant: 'acme' });
      expect(data.scopes).toEqual(['sql-runner']);
    });

    it('an unknown environment is 404 ENVIRONMENT_NOT_FOUND; a staging environment signs for its branch’s data API', async () => {
      for (const env of ['staging-999999', 'development-1', 'nope', 'production-1', 'staging-0']) {
        problem(await t.request({ method: 'POST', url: envUrl(env), body: { security_context: {} } }), 404, 'ENVIRONMENT_NOT_FOUND');
        problem(await t.request({ url: envUrl(env) }), 404, 'ENVIRONMENT_NOT_FOUND');
      }
      const at = new Date().toISOString();
      const branch = await t.store.db
        .insertInto('branches')
        .values({
          tenant_id: t.tenantId,
          deployment_id: deploymentId,
          name: 'feature',
          parent_name: 'main',
          owner_key_id: null,
          staging_enabled: 0,
          created_at: at,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      // Only while its staging environment is on.
      problem(await t.request({ method: 'POST', url: envUrl(`staging-${branch.id}`), body: { security_context: {} } }), 404, 'ENVIRONMENT_NOT_FOUND');
      await t.store.db.updateTable('branches').set({ staging_enabled: 1 }).where('id', '=', branch.id).execute();
      const data = await mint({ security_context: {} }, undefined, `staging-${branch.id}`);
      const audience = `${ORIGIN}/deployments/${deploymentId}/dev-mode/feature/data-api/v1`;
      expect(await verified(data.token, audience)).toMatchObject({ environment_id: `staging-${branch.id}`, branch: 'feature' });
      await expect(verified(data.token, dataApi)).rejects.toThrow();
    });

    it('no access: 403; a key scoped elsewhere: 403; another tenant’s deployment: 404', async () => {
      const theirs = await t.deployment('theirs', { tenantId: (await t.tenant('tokens-env-other')).tenantId });
      for (const path of ['tokens', 'tokens-for-meta-sync']) {
        problem(
          await t.request({ method: 'POST', url: `/api/v1/deployments/${theirs}/environments/production/${path}`, body: { security_context: {} } }),
          404,
          'DEPLOYMENT_NOT_FOUND',
        );
      }
      problem(await t.request({ url: `/api/v1/deployments/${theirs}/environments/production/tokens` }), 404, 'DEPLOYMENT_NOT_FOUND');
      const scoped = await t.key(t.admin.userId, { deploymentIds: [theirs] });
      problem(await t.request({ method: 'POST', url: envUrl(), body: { security_context: {} }, key: scoped }), 403, 'KEY_SCOPE_FORBIDDEN');
      const nobody = await t.user('EXPLORER');
      problem(await t.request({ method: 'POST', url: envUrl(), body: { security_context: {} }, key: nobody.key }), 403, 'FORBIDDEN');
    });
  });

  describe('POST …/tokens-for-meta-sync (reference 1.20)', () => {
    it('always meta, other scopes ignored; meta-private when asked for by a SchemaRead holder', async () => {
      expect((await mint({ security_context: {}, scopes: ['sql-runner', 'admin'] }, undefined, 'production', 'tokens-for-meta-sync')).scopes).toEqual(['meta']);
      expect((await mint({ security_context: {} }, undefined, 'production', 'tokens-for-meta-sync')).scopes).toEqual(['meta']);
      const data = await mint({ security_context: { tenant: 'acme', scope: 'x' }, scopes: ['meta-private'] }, undefined, 'production', 'tokens-for-meta-sync');
      expect(data.scopes).toEqual(['meta', 'meta-private']);
      expect(data.security_context).toEqual({ tenant: 'acme' });
      expect(await verified(data.token, dataApi)).toMatchObject({ scopes: ['meta', 'meta-private'] });
      // A viewer holds SchemaRead (VIEW), but not EDIT: its security context is dropped.
      const viewed = await mint(
        { security_context: { tenant: 'acme' }, scopes: ['meta-private', 'sql-runner'] },
        viewer.key,
        'production',
        'tokens-for-meta-sync',
      );
      expect(viewed.scopes).toEqual(['meta', 'meta-private']);
      expect(viewed.security_context).toEqual({});
    });
  });

  describe('GET …/environments/{environmentId}/tokens (reference 1.18)', () => {
    it('lists only the caller’s own tokens, newest first, with the token and what it signed', async () => {
      const listed = await t.deployment('tokens-list');
      const url = `/api/v1/deployments/${listed}/environments/production/tokens`;
      const mine = [];
      for (const n of [1, 2]) {
        const res = await t.request({ method: 'POST', url, body: { security_context: { n }, scopes: ['meta'] } });
        mine.push((res.json() as { data: { token: string } }).data.token);
      }
      await t.grant({ type: 'USER', id: viewer.userId }, { type: 'DEPLOYMENT', id: listed }, 'VIEW');
      expect((await t.request({ method: 'POST', url, body: { security_context: {} }, key: viewer.key })).statusCode).toBe(200);
      const res = await t.request({ url });
      expect(res.statusCode, res.body).toBe(200);
      const page = res.json() as {
        items: Array<{ token: string; security_context: unknown; created_at: string; expires_at: string }>;
        data: unknown[];
        pageInfo: { hasNextPage: boolean };
        pagination: { total: number };
      };
      expect(page.items.map((i) => i.token)).toEqual([...mine].reverse());
      expect(page.items[0]).toMatchObject({ security_context: { n: 2 }, scopes: ['meta'] });
      expect(page.data).toEqual(page.items);
      expect(page.pagination).toEqual({ total: 2, offset: 0, limit: 100 });
      const theirs = (await t.request({ url, key: viewer.key })).json() as { items: Array<{ security_context: unknown }> };
      expect(theirs.items).toHaveLength(1);
      // Pages: first/after and the deprecated offset/limit.
      const first = (await t.request({ url: `${url}?first=1` })).json() as {
        items: Array<{ token: string }>;
        pageInfo: { endCursor: string; hasNextPage: boolean };
      };
      expect(first.items.map((i) => i.token)).toEqual([mine[1]]);
      expect(first.pageInfo.hasNextPage).toBe(true);
      const next = (await t.request({ url: `${url}?first=1&after=${first.pageInfo.endCursor}` })).json() as { items: Array<{ token: string }> };
      expect(next.items.map((i) => i.token)).toEqual([mine[0]]);
      const legacy = (await t.request({ url: `${url}?offset=1&limit=1` })).json() as { items: Array<{ token: string }> };
      expect(legacy.items.map((i) => i.token)).toEqual([mine[0]]);
      problem(await t.request({ url: `${url}?after=nonsense` }), 400, 'INVALID_CURSOR');
    });

    it('shows at most the environment’s newest 1,000 live tokens; expired ones never', async () => {
      const capped = await t.deployment('tokens-cap');
      const other = await t.user('ADMIN');
      const now = Date.now();
      const row = (userId: number, n: number, expiresAt = new Date(now + 3_600_000).toISOString()) => {
        const jti = `cap-${userId}-${n}`;
        return {
          tenant_id: t.tenantId,
          deployment_id: capped,
          environment_id: 'production',
          jti,
          created_by_user_id: userId,
          token: t.app.services.secrets.seal(`token-${userId}-${n}`, environmentTokenContext(capped, jti)),
          security_context: '{}',
          scopes: '[]',
          created_at: new Date(now).toISOString(),
          expires_at: expiresAt,
        };
      };
      // Oldest first: 3 expired of the admin, 5 live of the admin, then 995 of another user.
      const rows = [
        ...[1, 2, 3].map((n) => row(t.admin.userId, 100 + n, new Date(now - 1_000).toISOString())),
        ...[1, 2, 3, 4, 5].map((n) => row(t.admin.userId, n)),
        ...Array.from({ length: 995 }, (_, n) => row(other.userId, n)),
      ];
      for (let i = 0; i < rows.length; i += 200)
        await t.store.db
          .insertInto('environment_tokens')
          .values(rows.slice(i, i + 200))
          .execute();
      const url = `/api/v1/deployments/${capped}/environments/production/tokens`;
      const total = async () => (await t.request({ url })).json() as { pagination: { total: number }; items: Array<{ token: string }> };
      let page = await total();
      expect(page.pagination.total).toBe(5);
      expect(page.items.map((i) => i.token)).toEqual([5, 4, 3, 2, 1].map((n) => `token-${t.admin.userId}-${n}`));
      await t.store.db
        .insertInto('environment_tokens')
        .values([row(other.userId, 1000), row(other.userId, 1001)])
        .execute();
      page = await total();
      expect(page.pagination.total).toBe(3);
      expect(page.items.map((i) => i.token)).toEqual([5, 4, 3].map((n) => `token-${t.admin.userId}-${n}`));
      expect(((await t.request({ url, key: other.key })).json() as { pagination: { total: number } }).pagination.total).toBe(997);
    });
  });
});
