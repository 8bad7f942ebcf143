import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkspaceFixtures } from './workspace-fixtures.js';
import { DIALECTS, TestApp, problem } from './harness.js';

interface Policy {
  id: number;
  principal: { type: string; id: number };
  resource: { type: string; id: number };
  access: string;
  createdBy: number | null;
  createdAt: string;
}

describe.each(DIALECTS)('policies (%s)', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await TestApp.create(dialect);
  });
  afterAll(async () => t?.close());

  const create = (body: unknown, key?: string) => t.request({ method: 'POST', url: '/api/v1/policies', body, key });
  const list = (query = '', key?: string) => t.request({ url: `/api/v1/policies${query}`, key });
  const remove = (id: number, key?: string) => t.request({ method: 'DELETE', url: `/api/v1/policies/${id}`, key });
  const ids = (body: { items: Policy[] }) => body.items.map((p) => p.id);

  describe('create', () => {
    it('grants a user access to a deployment; the grant shows on the deployment at once', async () => {
      const dev = await t.user('DEVELOPER');
      const deployment = await t.deployment('granted');
      problem(await t.request({ url: `/api/v1/deployments/${deployment}`, key: dev.key }), 403, 'FORBIDDEN');
      const res = await create({ principal: { type: 'USER', id: dev.userId }, resource: { type: 'DEPLOYMENT', id: deployment }, access: 'EDIT' });
      expect(res.statusCode).toBe(201);
      expect(res.json()).toEqual({
        id: expect.any(Number),
        principal: { type: 'USER', id: dev.userId },
        resource: { type: 'DEPLOYMENT', id: deployment },
        access: 'EDIT',
        createdBy: t.admin.userId,
        createdAt: expect.any(String),
      });
      expect((await t.request({ url: `/api/v1/deployments/${deployment}`, key: dev.key })).json().access).toBe('EDIT');
    });

    it('grants a group, which reaches its members', async () => {
      const member = await t.user('EXPLORER');
      const group = await t.group('analysts', [member.userId]);
      const deployment = await t.deployment('for-analysts');
      const res = await create({ principal: { type: 'GROUP', id: group }, resource: { type: 'DEPLOYMENT', id: deployment }, access: 'VIEW' });
      expect(res.statusCode).toBe(201);
      expect((await t.request({ url: `/api/v1/deployments/${deployment}`, key: member.key })).json().access).toBe('VIEW');
    });

    it('grants on folders, workbooks and reports that exist in this tenant; others are 404', async () => {
      const user = await t.user('EXPLORER');
      const w = new WorkspaceFixtures(t, await t.deployment('items'));
      const items = { FOLDER: await w.folder('granted'), WORKBOOK: await w.workbook('granted'), REPORT: await w.report('granted') };
      for (const [type, id] of Object.entries(items)) {
        const res = await create({ principal: { type: 'USER', id: user.userId }, resource: { type, id }, access: 'MANAGE' });
        expect(res.statusCode, res.body).toBe(201);
        expect(res.json().resource).toEqual({ type, id });
      }
      const other = await t.tenant('items-elsewhere');
      const foreign = new WorkspaceFixtures(t, await t.deployment('foreign-items', { tenantId: other.tenantId }));
      const foreignFolder = await t.store.db
        .insertInto('folders')
        .values({
          tenant_id: other.tenantId,
          deployment_id: foreign.deploymentId,
          parent_id: null,
          name: 'x',
          created_by: null,
          created_at: 'now',
          updated_at: 'now',
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      const principal = { type: 'USER', id: user.userId };
      problem(await create({ principal, resource: { type: 'FOLDER', id: foreignFolder.id }, access: 'VIEW' }), 404, 'FOLDER_NOT_FOUND');
      problem(await create({ principal, resource: { type: 'WORKBOOK', id: 999_999 }, access: 'VIEW' }), 404, 'WORKBOOK_NOT_FOUND');
      problem(await create({ principal, resource: { type: 'REPORT', id: 999_999 }, access: 'VIEW' }), 404, 'REPORT_NOT_FOUND');
    });

    it('is for admins only', async () => {
      const dev = await t.user('DEVELOPER');
      const deployment = await t.deployment('own', { createdBy: dev.userId });
      // Even full access to the deployment does not let a non-admin hand out access.
      problem(
        await create({ principal: { type: 'USER', id: dev.userId }, resource: { type: 'DEPLOYMENT', id: deployment }, access: 'VIEW' }, dev.key),
        403,
        'FORBIDDEN',
      );
    });

    it('refuses a key scoped to deployments, even an admin one, so a scoped key cannot widen access (spec: Authentication 4, 7)', async () => {
      const deployment = await t.deployment('scoped');
      const user = await t.user('EXPLORER');
      const key = await t.key(t.admin.userId, { deploymentIds: [deployment] });
      const body = { principal: { type: 'USER', id: user.userId }, resource: { type: 'DEPLOYMENT', id: deployment }, access: 'VIEW' };
      problem(await create(body, key), 403, 'KEY_SCOPE_FORBIDDEN');
      const made = (await create(body)).json();
      problem(await remove(made.id, key), 403, 'KEY_SCOPE_FORBIDDEN');
    });

    it('answers 404 for a principal or deployment that is not in this tenant', async () => {
      const user = await t.user('EXPLORER');
      const deployment = await t.deployment('target');
      const other = await t.tenant('elsewhere');
      const foreignUser = await t.user('EXPLORER', { tenantId: other.tenantId });
      const foreignGroup = await t.group('foreign', [], { tenantId: other.tenantId });
      const foreignDeployment = await t.deployment('foreign', { tenantId: other.tenantId });
      const on = { type: 'DEPLOYMENT', id: deployment };
      const to = { type: 'USER', id: user.userId };
      problem(await create({ principal: { type: 'USER', id: 999_999 }, resource: on, access: 'VIEW' }), 404, 'USER_NOT_FOUND');
      problem(await create({ principal: { type: 'USER', id: foreignUser.userId }, resource: on, access: 'VIEW' }), 404, 'USER_NOT_FOUND');
      problem(await create({ principal: { type: 'GROUP', id: 999_999 }, resource: on, access: 'VIEW' }), 404, 'GROUP_NOT_FOUND');
      problem(await create({ principal: { type: 'GROUP', id: foreignGroup }, resource: on, access: 'VIEW' }), 404, 'GROUP_NOT_FOUND');
      problem(await create({ principal: to, resource: { type: 'DEPLOYMENT', id: 999_999 }, access: 'VIEW' }), 404, 'DEPLOYMENT_NOT_FOUND');
      problem(await create({ principal: to, resource: { type: 'DEPLOYMENT', id: foreignDeployment }, access: 'VIEW' }), 404, 'DEPLOYMENT_NOT_FOUND');
    });

    it('rejects unknown access levels, principal or resource types, and extra fields', async () => {
      const user = await t.user('EXPLORER');
      const principal = { type: 'USER', id: user.userId };
      const resource = { type: 'FOLDER', id: 1 };
      for (const body of [
        { principal, resource, access: 'OWNER' },
        { principal: { type: 'ROLE', id: 1 }, resource, access: 'VIEW' },
        { principal, resource: { type: 'DASHBOARD', id: 1 }, access: 'VIEW' },
        { principal, resource: { type: 'FOLDER', id: '1' }, access: 'VIEW' },
        { principal, resource, access: 'VIEW', note: 'x' },
        { principal, access: 'VIEW' },
      ]) {
        problem(await create(body), 400, 'VALIDATION_FAILED');
      }
    });

    it('refuses a second policy for the same principal and resource with 409, whatever its access', async () => {
      const user = await t.user('EXPLORER');
      const deployment = await t.deployment('once');
      const base = { principal: { type: 'USER', id: user.userId }, resource: { type: 'DEPLOYMENT', id: deployment } };
      expect((await create({ ...base, access: 'VIEW' })).statusCode).toBe(201);
      problem(await create({ ...base, access: 'MANAGE' }), 409, 'POLICY_EXISTS');
      expect((await t.request({ url: `/api/v1/deployments/${deployment}`, key: user.key })).json().access).toBe('VIEW');
    });

    it('gives concurrent duplicate creates one 201 and 409 for the rest', async () => {
      const user = await t.user('EXPLORER');
      const report = await new WorkspaceFixtures(t, await t.deployment('concurrent')).report('contended');
      const body = { principal: { type: 'USER', id: user.userId }, resource: { type: 'REPORT', id: report }, access: 'EDIT' };
      // Enough at once that some pass the existence check together and meet at the unique index.
      const results = await Promise.all(Array.from({ length: 20 }, () => create(body)));
      expect(results.filter((r) => r.statusCode === 201)).toHaveLength(1);
      expect(results.filter((r) => r.statusCode === 409)).toHaveLength(19);
      for (const res of results.filter((r) => r.statusCode === 409)) problem(res, 409, 'POLICY_EXISTS');
    });
  });

  describe('list', () => {
    it('shows an admin every policy, filtered by principal and resource', async () => {
      const a = await t.user('EXPLORER');
      const b = await t.user('EXPLORER');
      const deployment = await t.deployment('filtered');
      const p1 = await t.grant({ type: 'USER', id: a.userId }, { type: 'DEPLOYMENT', id: deployment }, 'VIEW');
      const p2 = await t.grant({ type: 'USER', id: b.userId }, { type: 'DEPLOYMENT', id: deployment }, 'EDIT');
      const p3 = await t.grant({ type: 'USER', id: a.userId }, { type: 'FOLDER', id: deployment }, 'MANAGE');
      expect(ids((await list(`?resourceType=DEPLOYMENT&resourceId=${deployment}`)).json())).toEqual([p1, p2]);
      expect(ids((await list(`?principalType=USER&principalId=${a.userId}`)).json())).toEqual([p1, p3]);
      expect(ids((await list(`?principalId=${a.userId}&resourceType=FOLDER`)).json())).toEqual([p3]);
      expect(ids((await list('?first=200')).json())).toEqual(expect.arrayContaining([p1, p2, p3]));
    });

    it('shows anyone else only the policies that apply to them: their own and their groups’', async () => {
      const me = await t.user('DEVELOPER');
      const someone = await t.user('DEVELOPER');
      const mine = await t.group('mine', [me.userId]);
      const theirs = await t.group('theirs', [someone.userId]);
      const direct = await t.grant({ type: 'USER', id: me.userId }, { type: 'WORKBOOK', id: 5 }, 'EDIT');
      const viaGroup = await t.grant({ type: 'GROUP', id: mine }, { type: 'REPORT', id: 6 }, 'VIEW');
      await t.grant({ type: 'USER', id: someone.userId }, { type: 'WORKBOOK', id: 5 }, 'MANAGE');
      await t.grant({ type: 'GROUP', id: theirs }, { type: 'REPORT', id: 6 }, 'MANAGE');
      expect(ids((await list('', me.key)).json())).toEqual([direct, viaGroup]);
      // Asking for someone else's policies finds nothing rather than leaking them.
      expect(ids((await list(`?principalType=USER&principalId=${someone.userId}`, me.key)).json())).toEqual([]);
      expect(ids((await list('?resourceType=REPORT', me.key)).json())).toEqual([viaGroup]);
    });

    it('pages with first/after, never repeating or skipping a policy', async () => {
      const user = await t.user('EXPLORER');
      const made: number[] = [];
      for (let i = 1; i <= 5; i++) made.push(await t.grant({ type: 'USER', id: user.userId }, { type: 'REPORT', id: 1000 + i }, 'VIEW'));
      const query = `?principalType=USER&principalId=${user.userId}&first=2`;
      const seen: number[] = [];
      let res = (await list(query)).json();
      seen.push(...ids(res));
      expect(res.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
      while (res.pageInfo.hasNextPage) {
        res = (await list(`${query}&after=${res.pageInfo.endCursor}`)).json();
        expect(res.pageInfo.hasPreviousPage).toBe(true);
        seen.push(...ids(res));
      }
      expect(seen).toEqual(made);
      problem(await list('?after=not-a-cursor'), 400, 'INVALID_CURSOR');
    });
  });

  describe('delete', () => {
    it('revokes a policy; the access it gave is gone on the next request', async () => {
      const user = await t.user('EXPLORER');
      const deployment = await t.deployment('briefly');
      const policy = (
        await create({ principal: { type: 'USER', id: user.userId }, resource: { type: 'DEPLOYMENT', id: deployment }, access: 'MANAGE' })
      ).json();
      expect((await t.request({ url: `/api/v1/deployments/${deployment}`, key: user.key })).statusCode).toBe(200);
      const res = await remove(policy.id);
      expect(res.statusCode).toBe(204);
      problem(await t.request({ url: `/api/v1/deployments/${deployment}`, key: user.key }), 403, 'FORBIDDEN');
      problem(await remove(policy.id), 404, 'POLICY_NOT_FOUND');
    });

    it('is for admins only', async () => {
      const user = await t.user('DEVELOPER');
      const policy = await t.grant({ type: 'USER', id: user.userId }, { type: 'FOLDER', id: 9 }, 'VIEW');
      problem(await remove(policy, user.key), 403, 'FORBIDDEN');
      expect(ids((await list(`?principalId=${user.userId}`)).json())).toEqual([policy]);
    });

    it("answers 404 for another tenant's policy and leaves it in place", async () => {
      const other = await t.tenant('policy-tenant');
      const at = new Date().toISOString();
      const row = await t.store.db
        .insertInto('policies')
        .values({
          tenant_id: other.tenantId,
          principal_type: 'USER',
          principal_id: other.admin.userId,
          resource_type: 'FOLDER',
          resource_id: 1,
          access: 'VIEW',
          created_by: null,
          created_at: at,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      problem(await remove(row.id), 404, 'POLICY_NOT_FOUND');
      expect(ids((await list('?first=200')).json())).not.toContain(row.id);
      expect(await t.store.db.selectFrom('policies').select('id').where('id', '=', row.id).executeTakeFirst()).toBeDefined();
    });
  });
});
