import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { violatedUniqueIndex } from '../src/db/errors.js';
import { DIALECTS, TestApp, problem, type Caller } from './harness.js';

interface User {
  id: number;
  email: string;
  firstName: string | null;
  role: string;
  active: boolean;
  createdAt: string;
  updatedAt: string;
}

let seq = 0;
const unique = (prefix: string) => `${prefix}-${process.pid}-${++seq}@example.com`;

describe.each(DIALECTS)('users (%s)', (dialect) => {
  let t: TestApp;
  let other: { tenantId: number; admin: Caller };
  beforeAll(async () => {
    t = await TestApp.create(dialect);
    other = await t.tenant('other', ['other.example.test']);
  });
  afterAll(async () => t?.close());

  const create = (body: unknown, key?: string) => t.request({ method: 'POST', url: '/api/v1/users', body, ...(key ? { key } : {}) });

  /** A tenant of its own whose only admin is `admin`, for rules about the last admin. */
  async function soloTenant(slug: string) {
    const made = await t.tenant(slug, [`${slug}.example.test`]);
    const host = `${slug}.example.test`;
    const call = (method: 'GET' | 'PUT' | 'DELETE' | 'POST', url: string, body?: unknown) => t.request({ method, url, body, key: made.admin.key, host });
    return { ...made, call };
  }

  describe('create', () => {
    it('creates an EXPLORER by default and returns the user in camelCase', async () => {
      const email = unique('new');
      const res = await create({ email });
      expect(res.statusCode).toBe(201);
      const user = res.json() as User;
      expect(user).toEqual({
        id: expect.any(Number),
        email,
        firstName: null,
        role: 'EXPLORER',
        active: true,
        createdAt: user.createdAt,
        updatedAt: user.createdAt,
      });
      expect(new Date(user.createdAt).toISOString()).toBe(user.createdAt);
      const fetched = await t.request({ url: `/api/v1/users/${user.id}` });
      expect(fetched.json()).toEqual(user);
    });

    it('takes firstName and role', async () => {
      const res = await create({ email: unique('dev'), firstName: 'Ada', role: 'DEVELOPER' });
      expect(res.statusCode).toBe(201);
      expect(res.json()).toMatchObject({ firstName: 'Ada', role: 'DEVELOPER' });
    });

    it('is for admins only', async () => {
      for (const role of ['DEVELOPER', 'EXPLORER', 'VIEWER'] as const) {
        const caller = await t.user(role);
        problem(await create({ email: unique('x') }, caller.key), 403, 'FORBIDDEN');
      }
    });

    it('refuses an email that exists in the tenant, ignoring case', async () => {
      const email = unique('Case');
      expect((await create({ email })).statusCode).toBe(201);
      const body = problem(await create({ email: email.toUpperCase() }), 409, 'EMAIL_TAKEN');
      expect(body.detail).toContain(email.toUpperCase());
    });

    it('accepts an email that exists only in another tenant', async () => {
      const email = unique('shared');
      await t.user('VIEWER', { tenantId: other.tenantId, email });
      expect((await create({ email })).statusCode).toBe(201);
    });

    it('gives exactly one 201 when the same email is created concurrently; the rest 409', async () => {
      const email = unique('race');
      const results = await Promise.all(Array.from({ length: 6 }, (_, i) => create({ email: i % 2 ? email : email.toUpperCase() })));
      expect(results.filter((r) => r.statusCode === 201)).toHaveLength(1);
      for (const r of results.filter((r) => r.statusCode !== 201)) problem(r, 409, 'EMAIL_TAKEN');
    });

    it("recognises this dialect's unique-index error, which concurrent creates turn into 409", async () => {
      const at = new Date().toISOString();
      const row = {
        tenant_id: t.tenantId,
        email: t.admin.email.toUpperCase(),
        first_name: null,
        role: 'VIEWER' as const,
        deactivated_at: null,
        created_at: at,
        updated_at: at,
      };
      const error = await t.store.db
        .insertInto('users')
        .values(row)
        .execute()
        .catch((e: unknown) => e);
      expect(violatedUniqueIndex(error)).toBe('users_tenant_email');
      expect(violatedUniqueIndex(new Error('other'))).toBeUndefined();
    });

    it('validates the body', async () => {
      problem(await create({ email: 'not-an-email' }), 400, 'VALIDATION_FAILED');
      problem(await create({ email: unique('r'), role: 'OWNER' }), 400, 'VALIDATION_FAILED');
      const extra = problem(await create({ email: unique('r'), admin: true }), 400, 'VALIDATION_FAILED');
      expect(extra.errors).toEqual([{ pointer: '/body/admin', message: 'is not a known field' }]);
      problem(await create({}), 400, 'VALIDATION_FAILED');
    });
  });

  describe('read', () => {
    it('GET /users/me answers any caller with themselves', async () => {
      const viewer = await t.user('VIEWER');
      const res = await t.request({ url: '/api/v1/users/me', key: viewer.key });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ id: viewer.userId, email: viewer.email, role: 'VIEWER', active: true });
    });

    it('GET /users/{id}: a non-admin may read themselves but nobody else', async () => {
      const explorer = await t.user('EXPLORER');
      expect((await t.request({ url: `/api/v1/users/${explorer.userId}`, key: explorer.key })).statusCode).toBe(200);
      problem(await t.request({ url: `/api/v1/users/${t.admin.userId}`, key: explorer.key }), 403, 'FORBIDDEN');
    });

    it("answers 404 for an unknown id and for another tenant's user", async () => {
      problem(await t.request({ url: '/api/v1/users/999999' }), 404, 'USER_NOT_FOUND');
      problem(await t.request({ url: `/api/v1/users/${other.admin.userId}` }), 404, 'USER_NOT_FOUND');
      problem(await t.request({ method: 'PUT', url: `/api/v1/users/${other.admin.userId}`, body: { firstName: 'x' } }), 404, 'USER_NOT_FOUND');
      problem(await t.request({ method: 'DELETE', url: `/api/v1/users/${other.admin.userId}` }), 404, 'USER_NOT_FOUND');
      // and the other tenant's user is untouched
      const theirs = await t.request({ url: '/api/v1/users/me', key: other.admin.key, host: 'other.example.test' });
      expect(theirs.json()).toMatchObject({ id: other.admin.userId, active: true, firstName: null });
    });

    it('lists for admins only', async () => {
      const developer = await t.user('DEVELOPER');
      problem(await t.request({ url: '/api/v1/users', key: developer.key }), 403, 'FORBIDDEN');
    });

    it('lists only this tenant, filtered by role and active', async () => {
      const viewer = await t.user('VIEWER');
      const gone = await t.user('VIEWER');
      expect((await t.request({ method: 'DELETE', url: `/api/v1/users/${gone.userId}` })).statusCode).toBe(204);

      const all = (await t.request({ url: '/api/v1/users?first=200' })).json().items as User[];
      expect(all.map((u) => u.id)).not.toContain(other.admin.userId);

      const viewers = (await t.request({ url: '/api/v1/users?role=VIEWER&first=200' })).json().items as User[];
      expect(viewers.every((u) => u.role === 'VIEWER')).toBe(true);
      expect(viewers.map((u) => u.id)).toEqual(expect.arrayContaining([viewer.userId, gone.userId]));

      const inactive = (await t.request({ url: '/api/v1/users?active=false&first=200' })).json().items as User[];
      expect(inactive.map((u) => u.id)).toContain(gone.userId);
      expect(inactive.every((u) => !u.active)).toBe(true);
      const active = (await t.request({ url: '/api/v1/users?active=true&role=VIEWER&first=200' })).json().items as User[];
      expect(active.map((u) => u.id)).toContain(viewer.userId);
      expect(active.map((u) => u.id)).not.toContain(gone.userId);
    });

    it('pages with first/after: every user exactly once, in id order', async () => {
      for (let i = 0; i < 7; i++) await t.user('EXPLORER');
      const everyone = ((await t.request({ url: '/api/v1/users?first=200' })).json().items as User[]).map((u) => u.id);
      expect(everyone.length).toBeGreaterThan(7);
      const seen: number[] = [];
      let after: string | null = null;
      for (let pages = 0; pages < 100; pages++) {
        const res = await t.request({ url: `/api/v1/users?first=3${after ? `&after=${after}` : ''}` });
        expect(res.statusCode).toBe(200);
        const page = res.json() as { items: User[]; pageInfo: { endCursor: string | null; hasNextPage: boolean; hasPreviousPage: boolean } };
        expect(page.items.length).toBeLessThanOrEqual(3);
        expect(page.pageInfo.hasPreviousPage).toBe(after !== null);
        seen.push(...page.items.map((u) => u.id));
        if (!page.pageInfo.hasNextPage) break;
        after = page.pageInfo.endCursor;
      }
      expect(seen).toEqual(everyone);
      expect(new Set(seen).size).toBe(seen.length);
    });

    it('rejects a cursor it did not issue', async () => {
      problem(await t.request({ url: '/api/v1/users?after=garbage' }), 400, 'INVALID_CURSOR');
    });
  });

  describe('update', () => {
    it('changes only the fields given', async () => {
      const made = (await create({ email: unique('upd'), firstName: 'Bo', role: 'VIEWER' })).json() as User;
      const res = await t.request({ method: 'PUT', url: `/api/v1/users/${made.id}`, body: { role: 'DEVELOPER' } });
      expect(res.statusCode).toBe(200);
      const updated = res.json() as User;
      expect(updated).toMatchObject({ id: made.id, email: made.email, firstName: 'Bo', role: 'DEVELOPER', active: true, createdAt: made.createdAt });
      expect(updated.updatedAt >= made.updatedAt).toBe(true);
      const cleared = await t.request({ method: 'PUT', url: `/api/v1/users/${made.id}`, body: { firstName: null } });
      expect(cleared.json()).toMatchObject({ firstName: null, role: 'DEVELOPER' });
    });

    it('is for admins only', async () => {
      const explorer = await t.user('EXPLORER');
      problem(await t.request({ method: 'PUT', url: `/api/v1/users/${explorer.userId}`, key: explorer.key, body: { role: 'ADMIN' } }), 403, 'FORBIDDEN');
      const me = (await t.request({ url: '/api/v1/users/me', key: explorer.key })).json();
      expect(me.role).toBe('EXPLORER');
    });

    it('refuses an email another user holds, ignoring case, but lets a user change the case of their own', async () => {
      const a = (await create({ email: unique('a') })).json() as User;
      const b = (await create({ email: unique('b') })).json() as User;
      problem(await t.request({ method: 'PUT', url: `/api/v1/users/${b.id}`, body: { email: a.email.toUpperCase() } }), 409, 'EMAIL_TAKEN');
      const own = await t.request({ method: 'PUT', url: `/api/v1/users/${a.id}`, body: { email: a.email.toUpperCase() } });
      expect(own.statusCode).toBe(200);
      expect(own.json().email).toBe(a.email.toUpperCase());
    });

    it('answers 404 for an unknown user and 400 for unknown fields', async () => {
      problem(await t.request({ method: 'PUT', url: '/api/v1/users/999999', body: { firstName: 'x' } }), 404, 'USER_NOT_FOUND');
      problem(await t.request({ method: 'PUT', url: `/api/v1/users/${t.admin.userId}`, body: { deactivatedAt: null } }), 400, 'VALIDATION_FAILED');
    });
  });

  describe('the last active admin', () => {
    it('cannot be demoted or deactivated, by PUT or DELETE', async () => {
      const solo = await soloTenant('solo1');
      const url = `/api/v1/users/${solo.admin.userId}`;
      problem(await solo.call('PUT', url, { role: 'DEVELOPER' }), 409, 'LAST_ADMIN');
      problem(await solo.call('PUT', url, { active: false }), 409, 'LAST_ADMIN');
      problem(await solo.call('DELETE', url), 409, 'LAST_ADMIN');
      expect((await solo.call('GET', url)).json()).toMatchObject({ role: 'ADMIN', active: true });
      // a harmless change to the same admin is fine
      expect((await solo.call('PUT', url, { firstName: 'Root', role: 'ADMIN', active: true })).statusCode).toBe(200);
    });

    it('can step down once another admin is active, and the remaining one is then protected', async () => {
      const solo = await soloTenant('solo2');
      const second = (await solo.call('POST', '/api/v1/users', { email: 'second@solo2.example.com', role: 'ADMIN' })).json() as User;
      const demoted = await solo.call('PUT', `/api/v1/users/${solo.admin.userId}`, { role: 'VIEWER' });
      expect(demoted.statusCode).toBe(200);
      expect(demoted.json().role).toBe('VIEWER');
      const adminKey = await t.key(second.id, { tenantId: solo.tenantId });
      const asSecond = (method: 'PUT' | 'DELETE', body?: unknown) =>
        t.request({ method, url: `/api/v1/users/${second.id}`, key: adminKey, host: 'solo2.example.test', body });
      problem(await asSecond('DELETE'), 409, 'LAST_ADMIN');
      problem(await asSecond('PUT', { role: 'EXPLORER' }), 409, 'LAST_ADMIN');
    });

    it('does not count deactivated admins', async () => {
      const solo = await soloTenant('solo3');
      const second = (await solo.call('POST', '/api/v1/users', { email: 'second@solo3.example.com', role: 'ADMIN' })).json() as User;
      expect((await solo.call('DELETE', `/api/v1/users/${second.id}`)).statusCode).toBe(204);
      problem(await solo.call('PUT', `/api/v1/users/${solo.admin.userId}`, { role: 'DEVELOPER' }), 409, 'LAST_ADMIN');
    });
  });

  describe('deactivation', () => {
    it('keeps the user listed as inactive and stops their API keys at once', async () => {
      const dev = await t.user('DEVELOPER');
      expect((await t.request({ url: '/api/v1/users/me', key: dev.key })).statusCode).toBe(200);
      expect((await t.request({ method: 'DELETE', url: `/api/v1/users/${dev.userId}` })).statusCode).toBe(204);
      problem(await t.request({ url: '/api/v1/users/me', key: dev.key }), 401, 'UNAUTHENTICATED');
      problem(await t.request({ url: '/api/v1/groups', key: dev.key }), 401, 'UNAUTHENTICATED');
      const shown = await t.request({ url: `/api/v1/users/${dev.userId}` });
      expect(shown.statusCode).toBe(200);
      expect(shown.json()).toMatchObject({ id: dev.userId, active: false });
    });

    it('is idempotent', async () => {
      const viewer = await t.user('VIEWER');
      expect((await t.request({ method: 'DELETE', url: `/api/v1/users/${viewer.userId}` })).statusCode).toBe(204);
      const first = (await t.request({ url: `/api/v1/users/${viewer.userId}` })).json() as User;
      expect((await t.request({ method: 'DELETE', url: `/api/v1/users/${viewer.userId}` })).statusCode).toBe(204);
      expect((await t.request({ url: `/api/v1/users/${viewer.userId}` })).json()).toEqual(first);
    });

    it("is undone by PUT active: true, and the user's keys work again", async () => {
      const explorer = await t.user('EXPLORER');
      await t.request({ method: 'PUT', url: `/api/v1/users/${explorer.userId}`, body: { active: false } });
      problem(await t.request({ url: '/api/v1/users/me', key: explorer.key }), 401, 'UNAUTHENTICATED');
      const back = await t.request({ method: 'PUT', url: `/api/v1/users/${explorer.userId}`, body: { active: true } });
      expect(back.json()).toMatchObject({ active: true });
      expect((await t.request({ url: '/api/v1/users/me', key: explorer.key })).statusCode).toBe(200);
    });

    it('is for admins only, and unknown ids are 404', async () => {
      const developer = await t.user('DEVELOPER');
      const victim = await t.user('VIEWER');
      problem(await t.request({ method: 'DELETE', url: `/api/v1/users/${victim.userId}`, key: developer.key }), 403, 'FORBIDDEN');
      expect((await t.request({ url: '/api/v1/users/me', key: victim.key })).statusCode).toBe(200);
      problem(await t.request({ method: 'DELETE', url: '/api/v1/users/999999' }), 404, 'USER_NOT_FOUND');
    });
  });

  describe('bulk create', () => {
    const bulk = (users: unknown[], key?: string) => t.request({ method: 'POST', url: '/api/v1/users/bulk', body: { users }, ...(key ? { key } : {}) });

    it("applies items in order, reporting each failure with the single create's status and message", async () => {
      const taken = unique('taken');
      await create({ email: taken });
      const [a, b] = [unique('bulk-a'), unique('bulk-b')];
      const res = await bulk([{ email: a, role: 'VIEWER' }, { email: taken.toUpperCase() }, { email: b, firstName: 'Bee' }, { email: a.toUpperCase() }]);
      expect(res.statusCode).toBe(200);
      const body = res.json() as { created: User[]; failed: Array<{ index: number; email: string; error: { status: number; message: string } }> };
      expect(body.created.map((u) => [u.email, u.role, u.firstName])).toEqual([
        [a, 'VIEWER', null],
        [b, 'EXPLORER', 'Bee'],
      ]);
      expect(body.failed.map((f) => [f.index, f.email, f.error.status])).toEqual([
        [1, taken.toUpperCase(), 409],
        [3, a.toUpperCase(), 409],
      ]);
      const single = problem(await create({ email: a.toUpperCase() }), 409, 'EMAIL_TAKEN');
      expect(body.failed[1]?.error.message).toBe(single.message);
      for (const user of body.created) expect((await t.request({ url: `/api/v1/users/${user.id}` })).json()).toEqual(user);
    });

    it('accepts 1 to 100 items', async () => {
      problem(await bulk([]), 400, 'VALIDATION_FAILED');
      problem(await bulk(Array.from({ length: 101 }, () => ({ email: unique('over') }))), 400, 'VALIDATION_FAILED');
      const hundred = Array.from({ length: 100 }, () => ({ email: unique('hundred') }));
      const res = await bulk(hundred);
      expect(res.statusCode).toBe(200);
      expect(res.json().created.map((u: User) => u.email)).toEqual(hundred.map((u) => u.email));
      expect(res.json().failed).toEqual([]);
    });

    it('refuses a malformed item before creating anything', async () => {
      const fine = unique('fine');
      const bad = problem(await bulk([{ email: fine }, { email: 'nope' }]), 400, 'VALIDATION_FAILED');
      expect(bad.errors?.[0]?.pointer).toBe('/body/users/1/email');
      expect((await create({ email: fine })).statusCode).toBe(201);
    });

    it('is for admins only', async () => {
      const developer = await t.user('DEVELOPER');
      problem(await bulk([{ email: unique('nope') }], developer.key), 403, 'FORBIDDEN');
    });
  });
});
