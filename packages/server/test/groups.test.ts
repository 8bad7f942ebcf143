import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, TestApp, problem, type Caller } from './harness.js';

interface Member {
  id: number;
  email: string;
  firstName: string | null;
}
interface GroupDetail {
  id: number;
  name: string;
  description: string | null;
  memberCount: number;
  createdAt: string;
  updatedAt: string;
  members: Member[];
}

let seq = 0;
const uniqueName = (prefix: string) => `${prefix} ${process.pid}-${++seq}`;

describe.each(DIALECTS)('groups (%s)', (dialect) => {
  let t: TestApp;
  let other: { tenantId: number; admin: Caller };
  let viewer: Caller;
  beforeAll(async () => {
    t = await TestApp.create(dialect);
    other = await t.tenant('other', ['other.example.test']);
    viewer = await t.user('VIEWER');
  });
  afterAll(async () => t?.close());

  const create = (body: unknown, key?: string) => t.request({ method: 'POST', url: '/api/v1/groups', body, ...(key ? { key } : {}) });
  const makeGroup = async (body: Record<string, unknown> = {}) => (await create({ name: uniqueName('g'), ...body })).json() as GroupDetail;
  const members = (groupId: number, method: 'POST' | 'DELETE', userIds: unknown, key?: string) =>
    t.request({ method, url: `/api/v1/groups/${groupId}/members`, body: { userIds }, ...(key ? { key } : {}) });

  describe('create and read', () => {
    it('creates an empty group and returns it with its members', async () => {
      const name = uniqueName('Analysts');
      const res = await create({ name, description: 'people who read dashboards' });
      expect(res.statusCode).toBe(201);
      const group = res.json() as GroupDetail;
      expect(group).toEqual({
        id: expect.any(Number),
        name,
        description: 'people who read dashboards',
        memberCount: 0,
        createdAt: group.createdAt,
        updatedAt: group.createdAt,
        members: [],
      });
      expect(new Date(group.createdAt).toISOString()).toBe(group.createdAt);
      expect((await t.request({ url: `/api/v1/groups/${group.id}` })).json()).toEqual(group);
      expect((await create({ name: uniqueName('plain') })).json().description).toBeNull();
    });

    it('lets any caller read groups and members', async () => {
      const group = await makeGroup();
      await members(group.id, 'POST', [viewer.userId]);
      const one = await t.request({ url: `/api/v1/groups/${group.id}`, key: viewer.key });
      expect(one.statusCode).toBe(200);
      expect(one.json().members).toEqual([{ id: viewer.userId, email: viewer.email, firstName: null }]);
      const list = await t.request({ url: '/api/v1/groups?first=200', key: viewer.key });
      expect(list.statusCode).toBe(200);
      expect(list.json().items.find((g: GroupDetail) => g.id === group.id)).toMatchObject({ memberCount: 1 });
      expect(list.json().items[0]).not.toHaveProperty('members');
    });

    it('refuses a name already used in the tenant, ignoring case; another tenant may use it', async () => {
      const name = uniqueName('Finance');
      expect((await create({ name })).statusCode).toBe(201);
      const body = problem(await create({ name: name.toUpperCase() }), 409, 'GROUP_NAME_TAKEN');
      expect(body.detail).toContain(name.toUpperCase());
      await t.group(uniqueName('theirs'), [], { tenantId: other.tenantId });
      const theirs = await t.request({ method: 'POST', url: '/api/v1/groups', body: { name }, key: other.admin.key, host: 'other.example.test' });
      expect(theirs.statusCode).toBe(201);
    });

    it('gives exactly one 201 when the same name is created concurrently; the rest 409', async () => {
      const name = uniqueName('race');
      const results = await Promise.all(Array.from({ length: 6 }, (_, i) => create({ name: i % 2 ? name : name.toLowerCase() })));
      expect(results.filter((r) => r.statusCode === 201)).toHaveLength(1);
      for (const r of results.filter((r) => r.statusCode !== 201)) problem(r, 409, 'GROUP_NAME_TAKEN');
    });

    it('validates the body', async () => {
      problem(await create({ name: '' }), 400, 'VALIDATION_FAILED');
      problem(await create({ name: 'x'.repeat(256) }), 400, 'VALIDATION_FAILED');
      expect((await create({ name: uniqueName('y').padEnd(255, 'y') })).statusCode).toBe(201);
      const extra = problem(await create({ name: uniqueName('z'), members: [] }), 400, 'VALIDATION_FAILED');
      expect(extra.errors).toEqual([{ pointer: '/body/members', message: 'is not a known field' }]);
    });

    it("answers 404 for an unknown group and for another tenant's group, on every route", async () => {
      const theirs = await t.group(uniqueName('hidden'), [other.admin.userId], { tenantId: other.tenantId });
      for (const id of [999999, theirs]) {
        problem(await t.request({ url: `/api/v1/groups/${id}` }), 404, 'GROUP_NOT_FOUND');
        problem(await t.request({ method: 'PUT', url: `/api/v1/groups/${id}`, body: { name: 'mine' } }), 404, 'GROUP_NOT_FOUND');
        problem(await members(id, 'POST', [t.admin.userId]), 404, 'GROUP_NOT_FOUND');
        problem(await members(id, 'DELETE', [other.admin.userId]), 404, 'GROUP_NOT_FOUND');
        problem(await t.request({ method: 'DELETE', url: `/api/v1/groups/${id}/members/${other.admin.userId}` }), 404, 'GROUP_NOT_FOUND');
        problem(await t.request({ method: 'DELETE', url: `/api/v1/groups/${id}` }), 404, 'GROUP_NOT_FOUND');
      }
      const list = (await t.request({ url: '/api/v1/groups?first=200' })).json().items as GroupDetail[];
      expect(list.map((g) => g.id)).not.toContain(theirs);
      const still = await t.request({ url: `/api/v1/groups/${theirs}`, key: other.admin.key, host: 'other.example.test' });
      expect(still.json().members.map((m: Member) => m.id)).toEqual([other.admin.userId]);
    });

    it('pages with first/after: every group exactly once, in id order', async () => {
      for (let i = 0; i < 7; i++) await makeGroup();
      const everyone = ((await t.request({ url: '/api/v1/groups?first=200' })).json().items as GroupDetail[]).map((g) => g.id);
      expect(everyone.length).toBeGreaterThan(7);
      const seen: number[] = [];
      let after: string | null = null;
      for (let pages = 0; pages < 100; pages++) {
        const res = await t.request({ url: `/api/v1/groups?first=3${after ? `&after=${after}` : ''}`, key: viewer.key });
        const page = res.json() as { items: GroupDetail[]; pageInfo: { endCursor: string | null; hasNextPage: boolean; hasPreviousPage: boolean } };
        expect(page.items.length).toBeLessThanOrEqual(3);
        expect(page.pageInfo.hasPreviousPage).toBe(after !== null);
        seen.push(...page.items.map((g) => g.id));
        if (!page.pageInfo.hasNextPage) break;
        after = page.pageInfo.endCursor;
      }
      expect(seen).toEqual(everyone);
      expect(new Set(seen).size).toBe(seen.length);
    });
  });

  describe('update', () => {
    it('changes only the fields given; description null clears it', async () => {
      const group = await makeGroup({ description: 'old' });
      const renamed = await t.request({ method: 'PUT', url: `/api/v1/groups/${group.id}`, body: { name: `${group.name} renamed` } });
      expect(renamed.statusCode).toBe(200);
      expect(renamed.json()).toMatchObject({ id: group.id, name: `${group.name} renamed`, description: 'old', createdAt: group.createdAt, members: [] });
      const cleared = await t.request({ method: 'PUT', url: `/api/v1/groups/${group.id}`, body: { description: null } });
      expect(cleared.json()).toMatchObject({ name: `${group.name} renamed`, description: null });
    });

    it("refuses another group's name, ignoring case, but allows re-casing its own", async () => {
      const a = await makeGroup();
      const b = await makeGroup();
      problem(await t.request({ method: 'PUT', url: `/api/v1/groups/${b.id}`, body: { name: a.name.toUpperCase() } }), 409, 'GROUP_NAME_TAKEN');
      const own = await t.request({ method: 'PUT', url: `/api/v1/groups/${a.id}`, body: { name: a.name.toUpperCase() } });
      expect(own.statusCode).toBe(200);
      expect(own.json().name).toBe(a.name.toUpperCase());
    });
  });

  describe('members', () => {
    it('adds users in id order; adding an existing member changes nothing', async () => {
      const [u1, u2] = [await t.user('EXPLORER'), await t.user('VIEWER')];
      const group = await makeGroup();
      const added = await members(group.id, 'POST', [u2.userId, u1.userId, u2.userId]);
      expect(added.statusCode).toBe(200);
      const body = added.json() as GroupDetail;
      expect(body.members.map((m) => m.id)).toEqual([u1.userId, u2.userId]);
      expect(body.memberCount).toBe(2);
      const again = (await members(group.id, 'POST', [u1.userId])).json() as GroupDetail;
      expect(again).toEqual(body);
    });

    it('refuses the whole request when a user is unknown or belongs to another tenant', async () => {
      const known = await t.user('EXPLORER');
      const group = await makeGroup();
      for (const stranger of [999999, other.admin.userId]) {
        const res = problem(await members(group.id, 'POST', [known.userId, stranger]), 404, 'USER_NOT_FOUND');
        expect(res.errors).toEqual([{ pointer: '/body/userIds/1', message: 'is not a user' }]);
      }
      expect((await t.request({ url: `/api/v1/groups/${group.id}` })).json().members).toEqual([]);
    });

    it('removes users in bulk (non-members are skipped) and one at a time', async () => {
      const [u1, u2, u3, outsider] = [await t.user(), await t.user(), await t.user(), await t.user()];
      const group = await makeGroup();
      await members(group.id, 'POST', [u1.userId, u2.userId, u3.userId]);
      const removed = await members(group.id, 'DELETE', [u1.userId, outsider.userId]);
      expect(removed.statusCode).toBe(200);
      expect((removed.json() as GroupDetail).members.map((m) => m.id)).toEqual([u2.userId, u3.userId]);
      const one = await t.request({ method: 'DELETE', url: `/api/v1/groups/${group.id}/members/${u2.userId}` });
      expect(one.statusCode).toBe(204);
      const after = (await t.request({ url: `/api/v1/groups/${group.id}` })).json() as GroupDetail;
      expect(after.members.map((m) => m.id)).toEqual([u3.userId]);
      expect(after.memberCount).toBe(1);
      problem(await t.request({ method: 'DELETE', url: `/api/v1/groups/${group.id}/members/${other.admin.userId}` }), 404, 'USER_NOT_FOUND');
    });

    it('accepts 1 to 1000 user ids', async () => {
      const group = await makeGroup();
      problem(await members(group.id, 'POST', []), 400, 'VALIDATION_FAILED');
      problem(
        await members(
          group.id,
          'POST',
          Array.from({ length: 1001 }, (_, i) => i + 1),
        ),
        400,
        'VALIDATION_FAILED',
      );
      problem(await members(group.id, 'DELETE', []), 400, 'VALIDATION_FAILED');
      problem(await members(group.id, 'POST', ['1']), 400, 'VALIDATION_FAILED');
      const many = Array.from({ length: 1000 }, () => t.admin.userId);
      expect((await members(group.id, 'POST', many)).json().members).toHaveLength(1);
    });
  });

  describe('delete', () => {
    it('deletes the group with its memberships and the policies granted to it, and nothing else', async () => {
      const member = await t.user('EXPLORER');
      const group = await makeGroup();
      const keep = await makeGroup();
      await members(group.id, 'POST', [member.userId]);
      await members(keep.id, 'POST', [member.userId]);
      const deployment = await t.deployment();
      await t.grant({ type: 'GROUP', id: group.id }, { type: 'DEPLOYMENT', id: deployment }, 'EDIT');
      const kept = [
        await t.grant({ type: 'GROUP', id: keep.id }, { type: 'DEPLOYMENT', id: deployment }, 'VIEW'),
        // a user whose id happens to equal the group's keeps their grant
        await t.grant({ type: 'USER', id: group.id }, { type: 'DEPLOYMENT', id: deployment }, 'VIEW'),
      ];

      expect((await t.request({ method: 'DELETE', url: `/api/v1/groups/${group.id}` })).statusCode).toBe(204);
      problem(await t.request({ url: `/api/v1/groups/${group.id}` }), 404, 'GROUP_NOT_FOUND');
      problem(await t.request({ method: 'DELETE', url: `/api/v1/groups/${group.id}` }), 404, 'GROUP_NOT_FOUND');

      const policies = await t.store.db.selectFrom('policies').select('id').where('resource_id', '=', deployment).orderBy('id').execute();
      expect(policies.map((p) => p.id)).toEqual(kept);
      const memberships = await t.store.db.selectFrom('group_members').select('group_id').where('user_id', '=', member.userId).execute();
      expect(memberships.map((m) => m.group_id)).toEqual([keep.id]);
      // The name is free again, for a new, empty group.
      expect((await create({ name: group.name })).json()).toMatchObject({ memberCount: 0, members: [] });
    });
  });

  describe('writes are for admins only', () => {
    it('answers 403 to non-admins and changes nothing', async () => {
      const group = await makeGroup({ description: 'd' });
      for (const role of ['DEVELOPER', 'EXPLORER', 'VIEWER'] as const) {
        const { key, userId } = await t.user(role);
        problem(await create({ name: uniqueName('nope') }, key), 403, 'FORBIDDEN');
        problem(await t.request({ method: 'PUT', url: `/api/v1/groups/${group.id}`, body: { name: 'nope' }, key }), 403, 'FORBIDDEN');
        problem(await members(group.id, 'POST', [userId], key), 403, 'FORBIDDEN');
        problem(await members(group.id, 'DELETE', [userId], key), 403, 'FORBIDDEN');
        problem(await t.request({ method: 'DELETE', url: `/api/v1/groups/${group.id}/members/${userId}`, key }), 403, 'FORBIDDEN');
        problem(await t.request({ method: 'DELETE', url: `/api/v1/groups/${group.id}`, key }), 403, 'FORBIDDEN');
      }
      expect((await t.request({ url: `/api/v1/groups/${group.id}` })).json()).toEqual(group);
    });
  });
});
