import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, TestApp, problem, type Caller } from './harness.js';

interface EmbedGroup {
  id: number;
  name: string;
  description: string | null;
  userCount: number | null;
}
interface EmbedUser {
  id: number;
  externalId: string | null;
  email: string | null;
}
interface Page<T> {
  items: T[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

let seq = 0;
const uniqueTenant = () => `g-${process.pid}-${++seq}`;

describe.each(DIALECTS)('embed groups and members (%s)', (dialect) => {
  let t: TestApp;
  let other: { tenantId: number; admin: Caller };
  let explorer: Caller;
  beforeAll(async () => {
    t = await TestApp.create(dialect);
    other = await t.tenant('embed-groups-other', ['embed-groups-other.example.test']);
    explorer = await t.user('EXPLORER');
  });
  afterAll(async () => t?.close());

  /** An embed tenant with the given users (external ids). */
  const tenantWith = async (...externalIds: string[]) => {
    const name = uniqueTenant();
    const res = await t.request({
      method: 'POST',
      url: `/api/v1/embed-tenants/${name}/users`,
      body: { users: (externalIds.length ? externalIds : ['seed']).map((externalId) => ({ externalId })) },
    });
    expect(res.statusCode, res.body).toBe(200);
    return { name, users: res.json().succeeded as EmbedUser[] };
  };
  const groupsUrl = (tenant: string) => `/api/v1/embed-tenants/${tenant}/groups`;
  const create = (tenant: string, body: unknown, key?: string) => t.request({ method: 'POST', url: groupsUrl(tenant), body, ...(key ? { key } : {}) });
  const makeGroup = async (tenant: string, name: string, description?: string) => {
    const res = await create(tenant, { name, ...(description === undefined ? {} : { description }) });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as EmbedGroup;
  };
  const members = (tenant: string, id: number, method: 'POST' | 'DELETE', list: unknown[], key?: string) =>
    t.request({ method, url: `${groupsUrl(tenant)}/${id}/users`, body: { members: list }, ...(key ? { key } : {}) });
  const memberList = async (tenant: string, id: number, query = '') => {
    const res = await t.request({ url: `${groupsUrl(tenant)}/${id}/users${query}` });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as Page<EmbedUser>;
  };

  describe('create, get, list (4.6-4.8)', () => {
    it('creates a group and returns it with its member count', async () => {
      const { name } = await tenantWith();
      const group = await makeGroup(name, 'Editors', 'can edit');
      expect(group).toEqual({ id: expect.any(Number), name: 'Editors', description: 'can edit', userCount: 0 });
      expect((await t.request({ url: `${groupsUrl(name)}/${group.id}` })).json()).toEqual(group);
    });

    it('refuses a taken name (ignoring case) with 400, and a name starting with system: as reserved', async () => {
      const { name } = await tenantWith();
      await makeGroup(name, 'Team');
      problem(await create(name, { name: 'TEAM' }), 400, 'EMBED_GROUP_NAME_TAKEN');
      problem(await create(name, { name: 'system:anything' }), 400, 'EMBED_GROUP_NAME_RESERVED');
      problem(await create(name, { name: 'SYSTEM:tenant' }), 400, 'EMBED_GROUP_NAME_RESERVED');
      // Another embed tenant may use the name.
      const second = await tenantWith();
      expect((await create(second.name, { name: 'Team' })).statusCode).toBe(200);
    });

    it('refuses bad input: empty or long names, long descriptions, unknown members', async () => {
      const { name } = await tenantWith();
      problem(await create(name, { name: '' }), 400, 'VALIDATION_FAILED');
      problem(await create(name, { name: 'x'.repeat(101) }), 400, 'VALIDATION_FAILED');
      problem(await create(name, { name: 'ok', description: 'x'.repeat(501) }), 400, 'VALIDATION_FAILED');
      problem(await create(name, { name: 'ok', color: 'red' }), 400, 'VALIDATION_FAILED');
      expect((await create(name, { name: 'x'.repeat(100), description: 'x'.repeat(500) })).statusCode).toBe(200);
    });

    it('lists newest first with member counts, hides the system group, pages', async () => {
      const { name, users } = await tenantWith('a', 'b');
      const first = await makeGroup(name, 'first');
      const second = await makeGroup(name, 'second');
      const third = await makeGroup(name, 'third');
      await members(
        name,
        second.id,
        'POST',
        users.map((u) => ({ embedUserId: u.id })),
      );
      const res = await t.request({ url: groupsUrl(name) });
      const page = res.json() as Page<EmbedGroup>;
      expect(page.items.map((g) => [g.name, g.userCount])).toEqual([
        ['third', 0],
        ['second', 2],
        ['first', 0],
      ]);
      expect(page.items.some((g) => g.name.startsWith('system:'))).toBe(false);
      const one = (await t.request({ url: `${groupsUrl(name)}?first=2` })).json() as Page<EmbedGroup>;
      expect(one.items.map((g) => g.id)).toEqual([third.id, second.id]);
      const two = (await t.request({ url: `${groupsUrl(name)}?first=2&after=${one.pageInfo.endCursor}` })).json() as Page<EmbedGroup>;
      expect(two.items.map((g) => g.id)).toEqual([first.id]);
      expect(two.pageInfo.hasNextPage).toBe(false);
    });

    it('is 404 for a group of another embed tenant, an unknown group, an unknown tenant, and the system group', async () => {
      const a = await tenantWith();
      const b = await tenantWith();
      const group = await makeGroup(a.name, 'mine');
      problem(await t.request({ url: `${groupsUrl(b.name)}/${group.id}` }), 404, 'EMBED_GROUP_NOT_FOUND');
      problem(await t.request({ url: `${groupsUrl(a.name)}/999999` }), 404, 'EMBED_GROUP_NOT_FOUND');
      problem(await t.request({ url: `${groupsUrl(uniqueTenant())}/${group.id}` }), 404, 'EMBED_TENANT_NOT_FOUND');
      problem(await create(uniqueTenant(), { name: 'x' }), 404, 'EMBED_TENANT_NOT_FOUND');
      const system = await t.store.db.selectFrom('embed_groups').select('id').where('name', '=', `system:tenant:${a.name}`).executeTakeFirstOrThrow();
      problem(await t.request({ url: `${groupsUrl(a.name)}/${system.id}` }), 404, 'EMBED_GROUP_NOT_FOUND');
      problem(await t.request({ method: 'DELETE', url: `${groupsUrl(a.name)}/${system.id}` }), 404, 'EMBED_GROUP_NOT_FOUND');
    });
  });

  describe('update and delete (4.9, 4.10)', () => {
    it('changes the description only: left out keeps it, an empty string or null clears it, the name is fixed', async () => {
      const { name } = await tenantWith();
      const group = await makeGroup(name, 'Fixed', 'before');
      const patch = (body: unknown) => t.request({ method: 'PATCH', url: `${groupsUrl(name)}/${group.id}`, body });
      expect((await patch({ description: 'after' })).json()).toMatchObject({ name: 'Fixed', description: 'after' });
      expect((await patch({})).json()).toMatchObject({ description: 'after' });
      expect((await patch({ description: '' })).json()).toMatchObject({ description: null });
      await patch({ description: 'again' });
      expect((await patch({ description: null })).json()).toMatchObject({ description: null });
      problem(await patch({ name: 'Renamed' }), 400, 'VALIDATION_FAILED');
      expect((await t.request({ url: `${groupsUrl(name)}/${group.id}` })).json().name).toBe('Fixed');
    });

    it('refuses to delete a group with members (400), deletes it once empty (204), then 404', async () => {
      const { name, users } = await tenantWith('m');
      const group = await makeGroup(name, 'busy');
      await members(name, group.id, 'POST', [{ embedUserId: users[0]!.id }]);
      const del = () => t.request({ method: 'DELETE', url: `${groupsUrl(name)}/${group.id}` });
      problem(await del(), 400, 'EMBED_GROUP_HAS_MEMBERS');
      await members(name, group.id, 'DELETE', [{ externalId: 'm' }]);
      expect((await del()).statusCode).toBe(204);
      problem(await del(), 404, 'EMBED_GROUP_NOT_FOUND');
    });
  });

  describe('members (4.11-4.13)', () => {
    it('adds by embedUserId or externalId; existing members are unchanged; every requested member lands in one list', async () => {
      const { name, users } = await tenantWith('ann', 'ben');
      const group = await makeGroup(name, 'crew');
      const [ann, ben] = users as [EmbedUser, EmbedUser];
      const first = await members(name, group.id, 'POST', [{ embedUserId: ann.id }]);
      expect(first.statusCode, first.body).toBe(200);
      expect(first.json().addedMembers.map((u: EmbedUser) => u.id)).toEqual([ann.id]);
      const second = await members(name, group.id, 'POST', [{ externalId: 'ANN' }, { externalId: 'ben' }, { embedUserId: ben.id }]);
      expect(second.json().addedMembers.map((u: EmbedUser) => u.externalId)).toEqual(['ben']);
      expect(second.json().unchangedMembers.map((u: EmbedUser) => u.externalId)).toEqual(['ann']);
      expect((await t.request({ url: `${groupsUrl(name)}/${group.id}` })).json().userCount).toBe(2);
    });

    it('provisions an external id that has never signed in', async () => {
      const { name } = await tenantWith();
      const group = await makeGroup(name, 'newcomers');
      const res = await members(name, group.id, 'POST', [{ externalId: ' New-Person ' }]);
      expect(res.json().addedMembers).toEqual([expect.objectContaining({ externalId: 'new-person', email: `new-person@${name}.embed.invalid` })]);
      const listed = (await t.request({ url: `/api/v1/embed-tenants/${name}/users?search=new-person` })).json() as Page<EmbedUser>;
      expect(listed.items).toHaveLength(1);
    });

    it("adds without touching the user's other groups, global ones included", async () => {
      const { name } = await tenantWith();
      await t.group(`Global-${name}`);
      await makeGroup(name, 'one');
      const two = await makeGroup(name, 'two');
      await t.request({
        method: 'POST',
        url: `/api/v1/embed-tenants/${name}/user`,
        body: { externalId: 'kim', groups: [`Global-${name}`], tenantGroups: ['one'] },
      });
      await members(name, two.id, 'POST', [{ externalId: 'kim' }]);
      const rows = await t.store.db
        .selectFrom('embed_group_members')
        .innerJoin('embed_groups', 'embed_groups.id', 'embed_group_members.embed_group_id')
        .innerJoin('embed_users', 'embed_users.id', 'embed_group_members.embed_user_id')
        .select('embed_groups.name')
        .where('embed_users.external_id', '=', 'kim')
        .orderBy('embed_groups.name')
        .execute();
      expect(rows.map((r) => r.name)).toEqual(['one', 'two']);
      const global = await t.store.db
        .selectFrom('embed_user_groups')
        .innerJoin('groups', 'groups.id', 'embed_user_groups.group_id')
        .select('groups.name')
        .where('groups.name', '=', `Global-${name}`)
        .execute();
      expect(global).toHaveLength(1);
    });

    it('lists the most recently added first, each with id and externalId, and pages', async () => {
      const { name, users } = await tenantWith('p1', 'p2', 'p3');
      const group = await makeGroup(name, 'ordered');
      for (const user of users) await members(name, group.id, 'POST', [{ embedUserId: user.id }]);
      const page = await memberList(name, group.id, '?first=2');
      expect(page.items.map((u) => u.externalId)).toEqual(['p3', 'p2']);
      expect(page.items[0]).toMatchObject({ id: users[2]!.id, externalId: 'p3' });
      const rest = await memberList(name, group.id, `?first=2&after=${page.pageInfo.endCursor}`);
      expect(rest.items.map((u) => u.externalId)).toEqual(['p1']);
      problem(await t.request({ url: `${groupsUrl(name)}/999999/users` }), 404, 'EMBED_GROUP_NOT_FOUND');
    });

    it('refuses an entry with both or neither id form, an unknown embedUserId (404, nothing added), 0 or 1001 entries', async () => {
      const { name, users } = await tenantWith('q');
      const group = await makeGroup(name, 'strict');
      problem(await members(name, group.id, 'POST', [{ externalId: 'q', embedUserId: users[0]!.id }]), 400, 'VALIDATION_FAILED');
      problem(await members(name, group.id, 'POST', [{}]), 400, 'VALIDATION_FAILED');
      problem(await members(name, group.id, 'POST', [{ externalId: null, embedUserId: null }]), 400, 'VALIDATION_FAILED');
      problem(await members(name, group.id, 'POST', []), 400, 'VALIDATION_FAILED');
      problem(
        await members(
          name,
          group.id,
          'POST',
          Array.from({ length: 1001 }, (_, i) => ({ externalId: `u${i}` })),
        ),
        400,
        'VALIDATION_FAILED',
      );
      problem(await members(name, group.id, 'POST', [{ externalId: 'fresh' }, { embedUserId: 999999 }]), 404, 'EMBED_USER_NOT_FOUND');
      expect((await memberList(name, group.id)).items).toEqual([]);
      expect((await t.request({ url: `/api/v1/embed-tenants/${name}/users?search=fresh` })).json().items).toEqual([]);
      // A user of another embed tenant is unknown here.
      const elsewhere = await tenantWith('q');
      problem(await members(name, group.id, 'POST', [{ embedUserId: elsewhere.users[0]!.id }]), 404, 'EMBED_USER_NOT_FOUND');
    });

    it('takes 1000 entries at once', async () => {
      const { name } = await tenantWith();
      const group = await makeGroup(name, 'big');
      const res = await members(
        name,
        group.id,
        'POST',
        Array.from({ length: 1000 }, (_, i) => ({ externalId: `bulk-${i}` })),
      );
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().addedMembers).toHaveLength(1000);
      expect((await t.request({ url: `${groupsUrl(name)}/${group.id}` })).json().userCount).toBe(1000);
    });

    it('adding past the account cap is 429 and adds nobody', async () => {
      const capped = await TestApp.create(dialect, { embedUserLimit: 2 });
      try {
        await capped.request({ method: 'POST', url: '/api/v1/embed-tenants/cap/user', body: { externalId: 'one' } });
        const group = (await capped.request({ method: 'POST', url: '/api/v1/embed-tenants/cap/groups', body: { name: 'g' } })).json() as EmbedGroup;
        const res = await capped.request({
          method: 'POST',
          url: `/api/v1/embed-tenants/cap/groups/${group.id}/users`,
          body: { members: [{ externalId: 'one' }, { externalId: 'two' }, { externalId: 'three' }] },
        });
        problem(res, 429, 'EMBED_USER_LIMIT');
        const count = await capped.store.db
          .selectFrom('embed_users')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow();
        expect(Number(count.n)).toBe(1);
        expect(await capped.store.db.selectFrom('embed_group_members').selectAll().execute()).toEqual([]);
      } finally {
        await capped.close();
      }
    });

    it("removes only this group's memberships; idempotent; an unknown external id is never provisioned", async () => {
      const { name, users } = await tenantWith('r1', 'r2');
      const a = await makeGroup(name, 'a');
      const b = await makeGroup(name, 'b');
      await members(
        name,
        a.id,
        'POST',
        users.map((u) => ({ embedUserId: u.id })),
      );
      await members(
        name,
        b.id,
        'POST',
        users.map((u) => ({ embedUserId: u.id })),
      );
      const res = await members(name, a.id, 'DELETE', [{ externalId: 'R1' }, { externalId: 'ghost' }, { embedUserId: 999999 }]);
      expect(res.statusCode, res.body).toBe(204);
      expect((await memberList(name, a.id)).items.map((u) => u.externalId)).toEqual(['r2']);
      expect((await memberList(name, b.id)).items).toHaveLength(2);
      expect((await members(name, a.id, 'DELETE', [{ externalId: 'r1' }])).statusCode).toBe(204);
      expect((await t.request({ url: `/api/v1/embed-tenants/${name}/users?search=ghost` })).json().items).toEqual([]);
      problem(await members(name, 999999, 'DELETE', [{ externalId: 'r1' }]), 404, 'EMBED_GROUP_NOT_FOUND');
    });
  });

  describe('who may call', () => {
    it("refuses non-admins and a non-admin's key with 403, changing nothing", async () => {
      const { name, users } = await tenantWith('s');
      const group = await makeGroup(name, 'guarded');
      const calls = [
        { url: groupsUrl(name) },
        { method: 'POST' as const, url: groupsUrl(name), body: { name: 'x' } },
        { url: `${groupsUrl(name)}/${group.id}` },
        { method: 'PATCH' as const, url: `${groupsUrl(name)}/${group.id}`, body: { description: 'x' } },
        { method: 'DELETE' as const, url: `${groupsUrl(name)}/${group.id}` },
        { url: `${groupsUrl(name)}/${group.id}/users` },
        { method: 'POST' as const, url: `${groupsUrl(name)}/${group.id}/users`, body: { members: [{ embedUserId: users[0]!.id }] } },
        { method: 'DELETE' as const, url: `${groupsUrl(name)}/${group.id}/users`, body: { members: [{ embedUserId: users[0]!.id }] } },
      ];
      for (const call of calls) problem(await t.request({ ...call, key: explorer.key }), 403, 'FORBIDDEN');
      expect((await t.request({ url: `${groupsUrl(name)}/${group.id}` })).json()).toEqual(group);
    });

    it("is 404 for another account's admin", async () => {
      const { name } = await tenantWith();
      const group = await makeGroup(name, 'private');
      const theirs = { key: other.admin.key, host: 'embed-groups-other.example.test' };
      problem(await t.request({ url: `${groupsUrl(name)}/${group.id}`, ...theirs }), 404, 'EMBED_TENANT_NOT_FOUND');
      problem(await t.request({ method: 'DELETE', url: `${groupsUrl(name)}/${group.id}`, ...theirs }), 404, 'EMBED_TENANT_NOT_FOUND');
      expect((await t.request({ url: `${groupsUrl(name)}/${group.id}` })).statusCode).toBe(200);
    });
  });
});
