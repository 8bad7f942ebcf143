import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, TestApp, problem } from './harness.js';
import { scimError } from './scim-harness.js';

describe.each(DIALECTS)('API keys and authentication (%s)', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await TestApp.create(dialect);
  });
  afterAll(async () => t?.close());

  it('creates a key shown once in the mapi_ + 40 alphanumerics format, and it authenticates', async () => {
    const created = await t.request({ method: 'POST', url: '/api/v1/api-keys', body: { name: 'ci' } });
    expect(created.statusCode).toBe(201);
    const body = created.json();
    expect(body.key).toMatch(/^mapi_[A-Za-z0-9]{40}$/);
    expect(body.prefix).toBe(body.key.slice(0, 9));
    expect(body).toMatchObject({ name: 'ci', userId: t.admin.userId, deploymentIds: null, expiresAt: null, revokedAt: null });
    const listed = await t.request({ url: '/api/v1/api-keys', key: body.key });
    expect(listed.statusCode).toBe(200);
    expect(listed.body).not.toContain(body.key);
    expect(listed.json().items.map((k: { id: number }) => k.id)).toContain(body.id);
  });

  it('stores only a SHA-256 hash of the key', async () => {
    const { key, id } = (await t.request({ method: 'POST', url: '/api/v1/api-keys', body: { name: 'hashed' } })).json();
    const row = await t.store.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    const { createHash } = await import('node:crypto');
    expect(row.key_hash).toBe(createHash('sha256').update(key).digest('hex'));
    expect(JSON.stringify(row)).not.toContain(key);
  });

  describe('401 (spec: Authentication 1, Errors)', () => {
    const cases: Array<[string, Record<string, string>]> = [
      ['no Authorization header', {}],
      ['a scheme other than Bearer', { authorization: 'Basic YWRtaW46YWRtaW4=' }],
      ['a malformed key', { authorization: 'Bearer mapi_short' }],
      ['a well-formed unknown key', { authorization: `Bearer mapi_${'A'.repeat(40)}` }],
      ['the Api-Key scheme outside SCIM', { authorization: `Api-Key mapi_${'A'.repeat(40)}` }],
    ];
    it.each(cases)('answers %s with 401, problem details and WWW-Authenticate: Bearer', async (_name, headers) => {
      const res = await t.request({ url: '/api/v1/api-keys', key: null, headers });
      problem(res, 401, 'UNAUTHENTICATED');
      expect(res.headers['www-authenticate']).toMatch(/^Bearer /);
    });

    it('also guards GET /api/v1/spec and /build/api/v1', async () => {
      problem(await t.request({ url: '/api/v1/spec', key: null }), 401, 'UNAUTHENTICATED');
      problem(await t.request({ method: 'POST', url: '/build/api/v1/deployments/', key: null, body: { name: 'x' } }), 401, 'UNAUTHENTICATED');
    });

    it('rejects an expired key', async () => {
      const user = await t.user('EXPLORER');
      const expired = await t.key(user.userId, { expiresAt: new Date(Date.now() - 1000).toISOString() });
      const res = await t.request({ url: '/api/v1/api-keys', key: expired });
      expect(problem(res, 401, 'UNAUTHENTICATED').detail).toMatch(/expired/);
    });

    it('rejects a revoked key on the very next request', async () => {
      const { key, id } = (await t.request({ method: 'POST', url: '/api/v1/api-keys', body: { name: 'short-lived' } })).json();
      expect((await t.request({ url: '/api/v1/api-keys', key })).statusCode).toBe(200);
      expect((await t.request({ method: 'DELETE', url: `/api/v1/api-keys/${id}` })).statusCode).toBe(204);
      problem(await t.request({ url: '/api/v1/api-keys', key }), 401, 'UNAUTHENTICATED');
      const listed = await t.request({ url: '/api/v1/api-keys?includeRevoked=true' });
      expect(listed.json().items.find((k: { id: number }) => k.id === id).revokedAt).not.toBeNull();
    });
  });

  describe('SCIM scheme (spec: Authentication 5)', () => {
    it('accepts Api-Key and Bearer under /api/scim/v2 and refuses bad tokens there', async () => {
      for (const scheme of ['Api-Key', 'Bearer', 'api-key']) {
        const res = await t.request({ url: '/api/scim/v2/Users', key: null, headers: { authorization: `${scheme} ${t.admin.key}` } });
        expect(res.statusCode, res.body).toBe(200);
      }
      // SCIM refuses in its own error schema (RFC 7644 section 3.12).
      const bad = await t.request({ url: '/api/scim/v2/Users', key: null, headers: { authorization: `Api-Key mapi_${'B'.repeat(40)}` } });
      scimError(bad, 401);
    });
  });

  describe('scope (spec: Authentication 4)', () => {
    it('answers 403 for a path targeting a deployment outside the key scope, before looking at the body', async () => {
      const inScope = await t.deployment('in');
      const outOfScope = await t.deployment('out');
      const scoped = await t.key(t.admin.userId, { deploymentIds: [inScope] });
      for (const id of [outOfScope, 999_999]) {
        const res = await t.request({ method: 'PUT', url: `/api/v1/deployments/${id}`, key: scoped, body: { bogus: true } });
        problem(res, 403, 'KEY_SCOPE_FORBIDDEN');
      }
    });

    it('answers 403 even when the body is not JSON at all', async () => {
      const inScope = await t.deployment('in-json');
      const outOfScope = await t.deployment('out-json');
      const scoped = await t.key(t.admin.userId, { deploymentIds: [inScope] });
      const res = await t.request({
        method: 'PUT',
        url: `/api/v1/deployments/${outOfScope}`,
        key: scoped,
        body: '{"name":',
        headers: { 'content-type': 'application/json' },
      });
      problem(res, 403, 'KEY_SCOPE_FORBIDDEN');
    });

    it("a scoped admin key cannot widen anyone's reach: no promotions, memberships, grants or deployments", async () => {
      const inScope = await t.deployment('in-admin');
      const scoped = await t.key(t.admin.userId, { deploymentIds: [inScope] });
      const user = await t.user('EXPLORER');
      const group = await t.group('scoped-admin-group');
      const attempts = [
        { method: 'PUT' as const, url: `/api/v1/users/${user.userId}`, body: { role: 'ADMIN' } },
        { method: 'POST' as const, url: '/api/v1/users', body: { email: 'scoped-made@example.com', role: 'ADMIN' } },
        { method: 'POST' as const, url: `/api/v1/groups/${group}/members`, body: { userIds: [user.userId] } },
        {
          method: 'POST' as const,
          url: '/api/v1/policies',
          body: { principal: { type: 'USER', id: user.userId }, resource: { type: 'DEPLOYMENT', id: inScope }, access: 'MANAGE' },
        },
        { method: 'POST' as const, url: '/build/api/v1/deployments/', body: { name: 'from a scoped key' } },
      ];
      for (const attempt of attempts) problem(await t.request({ ...attempt, key: scoped }), 403, 'KEY_SCOPE_FORBIDDEN');
      const after = await t.request({ url: `/api/v1/users/${user.userId}` });
      expect(after.json().role).toBe('EXPLORER');
    });

    it('a scoped key cannot mint a key that reaches further than itself', async () => {
      const a = await t.deployment('a');
      const b = await t.deployment('b');
      const scoped = await t.key(t.admin.userId, { deploymentIds: [a] });
      problem(await t.request({ method: 'POST', url: '/api/v1/api-keys', key: scoped, body: { name: 'wider' } }), 403, 'KEY_SCOPE_FORBIDDEN');
      problem(
        await t.request({ method: 'POST', url: '/api/v1/api-keys', key: scoped, body: { name: 'other', deploymentIds: [b] } }),
        403,
        'KEY_SCOPE_FORBIDDEN',
      );
      const narrower = await t.request({ method: 'POST', url: '/api/v1/api-keys', key: scoped, body: { name: 'same', deploymentIds: [a] } });
      expect(narrower.statusCode).toBe(201);
      expect(narrower.json().deploymentIds).toEqual([a]);
    });

    it('refuses a scope naming deployments that do not exist, with a pointer to each', async () => {
      const a = await t.deployment('exists');
      const res = await t.request({ method: 'POST', url: '/api/v1/api-keys', body: { name: 'x', deploymentIds: [a, 424242] } });
      expect(problem(res, 404, 'DEPLOYMENT_NOT_FOUND').errors).toEqual([{ pointer: '/body/deploymentIds/1', message: 'is not a deployment' }]);
    });
  });

  describe('ownership', () => {
    it('only an admin may create a key for another user', async () => {
      const alice = await t.user('EXPLORER');
      const bob = await t.user('EXPLORER');
      problem(await t.request({ method: 'POST', url: '/api/v1/api-keys', key: alice.key, body: { name: 'x', userId: bob.userId } }), 403, 'FORBIDDEN');
      const own = await t.request({ method: 'POST', url: '/api/v1/api-keys', key: alice.key, body: { name: 'mine', userId: alice.userId } });
      expect(own.statusCode).toBe(201);
      const forBob = await t.request({ method: 'POST', url: '/api/v1/api-keys', body: { name: 'for bob', userId: bob.userId } });
      expect(forBob.statusCode).toBe(201);
      // The key acts as its user: bob sees it among his own keys.
      const bobsKeys = await t.request({ url: '/api/v1/api-keys', key: forBob.json().key });
      expect(bobsKeys.json().items.every((k: { userId: number }) => k.userId === bob.userId)).toBe(true);
      expect(bobsKeys.json().items.map((k: { id: number }) => k.id)).toContain(forBob.json().id);
    });

    it("a non-admin lists only their own keys and cannot revoke someone else's", async () => {
      const carol = await t.user('DEVELOPER');
      const listed = await t.request({ url: '/api/v1/api-keys', key: carol.key });
      expect(listed.json().items.every((k: { userId: number }) => k.userId === carol.userId)).toBe(true);
      problem(await t.request({ url: `/api/v1/api-keys?userId=${t.admin.userId}`, key: carol.key }), 403, 'FORBIDDEN');
      const adminKeys = (await t.request({ url: '/api/v1/api-keys' })).json().items;
      const res = await t.request({ method: 'DELETE', url: `/api/v1/api-keys/${adminKeys[0].id}`, key: carol.key });
      problem(res, 404, 'API_KEY_NOT_FOUND');
      expect((await t.request({ url: '/api/v1/api-keys' })).statusCode).toBe(200);
    });

    it("another tenant's key id is 404", async () => {
      const other = await t.tenant('keys-other');
      const theirs = await t.store.db.selectFrom('api_keys').select('id').where('tenant_id', '=', other.tenantId).executeTakeFirstOrThrow();
      problem(await t.request({ method: 'DELETE', url: `/api/v1/api-keys/${theirs.id}` }), 404, 'API_KEY_NOT_FOUND');
    });
  });

  describe('validation', () => {
    it('refuses an expiry in the past and creates nothing', async () => {
      const before = (await t.request({ url: '/api/v1/api-keys' })).json().items.length;
      const res = await t.request({ method: 'POST', url: '/api/v1/api-keys', body: { name: 'x', expiresAt: '2001-01-01T00:00:00Z' } });
      expect(problem(res, 400, 'VALIDATION_FAILED').errors).toEqual([{ pointer: '/body/expiresAt', message: 'must be a real date-time in the future' }]);
      expect((await t.request({ url: '/api/v1/api-keys' })).json().items.length).toBe(before);
    });

    it('refuses a date-time no calendar has (a leap second on an ordinary day) with 400, not 500', async () => {
      const res = await t.request({ method: 'POST', url: '/api/v1/api-keys', body: { name: 'x', expiresAt: '2030-12-31T23:59:60Z' } });
      expect(problem(res, 400, 'VALIDATION_FAILED').errors?.[0]?.pointer).toBe('/body/expiresAt');
    });

    it('a key with a future expiry works and shows it', async () => {
      const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
      const res = await t.request({ method: 'POST', url: '/api/v1/api-keys', body: { name: 'hour', expiresAt } });
      expect(res.json().expiresAt).toBe(expiresAt);
      expect((await t.request({ url: '/api/v1/api-keys', key: res.json().key })).statusCode).toBe(200);
    });
  });

  describe('lastUsedAt', () => {
    it('is recorded in batches, not written on every request', async () => {
      const user = await t.user('VIEWER');
      const mine = async () => (await t.request({ url: '/api/v1/api-keys', key: user.key })).json().items[0];
      await t.app.lastUsed.flush();
      expect((await mine()).lastUsedAt).toBeNull();
      for (let i = 0; i < 5; i++) await t.request({ url: '/api/v1/api-keys', key: user.key });
      // Still not written: uses wait in memory for the next flush.
      expect((await mine()).lastUsedAt).toBeNull();
      await t.app.lastUsed.flush();
      const used = (await mine()).lastUsedAt;
      expect(used).not.toBeNull();
      expect(Date.now() - Date.parse(used)).toBeLessThan(60_000);
    });
  });

  describe('pagination', () => {
    it('walks every key exactly once with first/after', async () => {
      const user = await t.user('EXPLORER');
      for (let i = 0; i < 4; i++) await t.request({ method: 'POST', url: '/api/v1/api-keys', key: user.key, body: { name: `k${i}` } });
      const seen: number[] = [];
      let after: string | null = null;
      for (;;) {
        const res = await t.request({ url: `/api/v1/api-keys?first=2${after ? `&after=${after}` : ''}`, key: user.key });
        const page = res.json();
        seen.push(...page.items.map((k: { id: number }) => k.id));
        expect(page.pageInfo.hasPreviousPage).toBe(after !== null);
        if (!page.pageInfo.hasNextPage) break;
        after = page.pageInfo.endCursor;
      }
      expect(seen.length).toBe(5);
      expect(new Set(seen).size).toBe(5);
      expect([...seen].sort((a, b) => a - b)).toEqual(seen);
    });

    it('refuses a cursor it did not issue', async () => {
      const res = await t.request({ url: '/api/v1/api-keys?after=not-a-cursor' });
      expect(problem(res, 400, 'INVALID_CURSOR').errors?.[0]?.pointer).toBe('/query/after');
    });
  });
});
