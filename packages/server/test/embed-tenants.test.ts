import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { provisionEmbedUser, type ProvisionEmbedUserRequest } from '../src/areas/embed-tenants/provision.js';
import { lockKey, serialized } from '../src/db/transactions.js';
import { DIALECTS, TestApp, problem, type Caller } from './harness.js';

interface EmbedUser {
  id: number;
  username: string;
  email: string | null;
  externalId: string | null;
  firstName: string | null;
  createdAt: string | null;
  lastLogin: string | null;
}
interface EmbedTenant {
  id: number;
  name: string;
  userCount: number;
  displayName: string | null;
  createdAt: string | null;
}
interface Page<T> {
  items: T[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
}

let seq = 0;
const uniqueTenant = (prefix = 't') => `${prefix}-${process.pid}-${++seq}`;

describe.each(DIALECTS)('embed tenants and users (%s)', (dialect) => {
  let t: TestApp;
  let other: { tenantId: number; admin: Caller };
  let explorer: Caller;
  let scopedAdminKey: string;
  beforeAll(async () => {
    t = await TestApp.create(dialect);
    other = await t.tenant('embed-other', ['embed-other.example.test']);
    explorer = await t.user('EXPLORER');
    scopedAdminKey = await t.key(t.admin.userId, { deploymentIds: [await t.deployment('scoped')] });
  });
  afterAll(async () => t?.close());

  const provision = (tenant: string, body: unknown, key?: string) =>
    t.request({ method: 'POST', url: `/api/v1/embed-tenants/${tenant}/user`, body, ...(key ? { key } : {}) });
  const bulk = (tenant: string, users: unknown[], key?: string) =>
    t.request({ method: 'POST', url: `/api/v1/embed-tenants/${tenant}/users`, body: { users }, ...(key ? { key } : {}) });
  const users = async (tenant: string, query = '') => {
    const res = await t.request({ url: `/api/v1/embed-tenants/${tenant}/users${query}` });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as Page<EmbedUser>;
  };
  const tenants = async (query = '') => {
    const res = await t.request({ url: `/api/v1/embed-tenants${query}` });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as Page<EmbedTenant>;
  };
  const direct = (request: ProvisionEmbedUserRequest, tenantId = t.tenantId, userLimit = 10_000) =>
    serialized(t.store, lockKey.embedPeople(tenantId), (trx) => provisionEmbedUser(trx, tenantId, request, { userLimit, now: () => new Date() }));

  describe('provision one (4.4)', () => {
    it('creates the embed tenant on demand and the user, with the external id lowercased and trimmed and a synthetic email', async () => {
      const name = uniqueTenant('acme');
      const res = await provision(name, { externalId: '  User-One  ' });
      expect(res.statusCode, res.body).toBe(200);
      const user = res.json() as EmbedUser;
      expect(user).toEqual({
        id: expect.any(Number),
        username: 'user-one',
        email: `user-one@${name}.embed.invalid`,
        externalId: 'user-one',
        firstName: null,
        createdAt: expect.any(String),
        lastLogin: null,
      });
      const listed = await tenants(`?search=${name}`);
      expect(listed.items).toEqual([{ id: expect.any(Number), name, userCount: 1, displayName: null, createdAt: expect.any(String) }]);
    });

    it('is idempotent: the same external id in another case updates the one user, never makes a second', async () => {
      const name = uniqueTenant();
      const first = (await provision(name, { externalId: 'bob', email: 'Bob@Example.com' })).json() as EmbedUser;
      expect(first.email).toBe('bob@example.com');
      const again = await provision(name, { externalId: 'BOB', email: 'robert@example.com' });
      expect(again.statusCode).toBe(200);
      expect(again.json()).toMatchObject({ id: first.id, externalId: 'bob', email: 'robert@example.com' });
      expect((await users(name)).items).toHaveLength(1);
    });

    it('keeps the email when left out and goes back to the synthetic address on null', async () => {
      const name = uniqueTenant();
      await provision(name, { externalId: 'carol', email: 'carol@example.com' });
      expect((await provision(name, { externalId: 'carol' })).json().email).toBe('carol@example.com');
      expect((await provision(name, { externalId: 'carol', email: null })).json().email).toBe(`carol@${name}.embed.invalid`);
    });

    it('percent-encodes what cannot stand in an address in the synthetic email', async () => {
      const name = uniqueTenant();
      const user = (await provision(name, { externalId: 'a b@c%d' })).json() as EmbedUser;
      expect(user.email).toBe(`a%20b%40c%25d@${name}.embed.invalid`);
    });

    it('merges userProfile: fields given are overwritten, fields left out keep their value, null clears one', async () => {
      const name = uniqueTenant();
      await provision(name, { externalId: 'dan', userProfile: { displayName: 'Dan', picture: 'https://img.example.com/dan.png' } });
      const kept = await direct({ embedTenantName: name, externalId: 'dan', userProfile: { displayName: 'Daniel' } });
      expect(kept.user).toMatchObject({ displayName: 'Daniel', picture: 'https://img.example.com/dan.png' });
      expect(kept.embedUser.firstName).toBe('Daniel');
      const cleared = await direct({ embedTenantName: name, externalId: 'dan', userProfile: { picture: null } });
      expect(cleared.user).toMatchObject({ displayName: 'Daniel', picture: null });
      const untouched = await direct({ embedTenantName: name, externalId: 'dan', userProfile: null });
      expect(untouched.user).toMatchObject({ displayName: 'Daniel', picture: null });
    });

    it('refuses a picture that is not an absolute http(s) URL', async () => {
      const name = uniqueTenant();
      for (const picture of ['javascript:alert(1)', '/relative.png', 'ftp://example.com/a.png']) {
        problem(await provision(name, { externalId: 'x', userProfile: { picture } }), 400, 'VALIDATION_FAILED');
      }
      problem(await t.request({ url: `/api/v1/embed-tenants/${name}/users` }), 404, 'EMBED_TENANT_NOT_FOUND');
    });

    it('replaces global groups with a list, keeps them when left out or null, clears them with []', async () => {
      const name = uniqueTenant();
      await t.group(`Sales-${name}`);
      await t.group(`Ops-${name}`);
      const made = await direct({ embedTenantName: name, externalId: 'erin', groups: [`sales-${name}`, `Ops-${name}`] });
      expect(made.groups).toEqual([`Ops-${name}`, `Sales-${name}`]);
      expect((await direct({ embedTenantName: name, externalId: 'erin' })).groups).toEqual([`Ops-${name}`, `Sales-${name}`]);
      expect((await direct({ embedTenantName: name, externalId: 'erin', groups: null })).groups).toEqual([`Ops-${name}`, `Sales-${name}`]);
      expect((await direct({ embedTenantName: name, externalId: 'erin', groups: [`Ops-${name}`] })).groups).toEqual([`Ops-${name}`]);
      const res = await provision(name, { externalId: 'erin', groups: [] });
      expect(res.statusCode).toBe(200);
      expect((await direct({ embedTenantName: name, externalId: 'erin' })).groups).toEqual([]);
    });

    it('refuses an unknown global group with 400 "Groups with names … not found", never creates it, and changes nothing', async () => {
      const name = uniqueTenant();
      await t.group(`Known-${name}`);
      await provision(name, { externalId: 'fay', email: 'fay@example.com', groups: [`Known-${name}`] });
      const body = problem(await provision(name, { externalId: 'fay', email: 'new@example.com', groups: [`Known-${name}`, 'Nope'] }), 400, 'GROUPS_NOT_FOUND');
      expect(body.detail).toContain('Groups with names "Nope" not found');
      const after = await direct({ embedTenantName: name, externalId: 'fay' });
      expect(after.groups).toEqual([`Known-${name}`]);
      expect(after.user.email).toBe('fay@example.com');
      const groups = await t.store.db.selectFrom('groups').select('name').where('name', '=', 'Nope').execute();
      expect(groups).toEqual([]);
      // A refused first provisioning does not leave the embed tenant behind either.
      const fresh = uniqueTenant();
      problem(await provision(fresh, { externalId: 'x', groups: ['Nope'] }), 400, 'GROUPS_NOT_FOUND');
      expect((await tenants(`?search=${fresh}`)).items).toEqual([]);
    });

    it('refuses global groups whose names are reserved for embedding (system:)', async () => {
      const name = uniqueTenant();
      await t.group(`system:tenant:${name}:group:admins`);
      problem(await provision(name, { externalId: 'x', groups: [`system:tenant:${name}:group:admins`] }), 400, 'VALIDATION_FAILED');
    });

    it('replaces tenant groups (namespaced system:tenant:{name}:group:{group} for the session), and refuses unknown ones', async () => {
      const name = uniqueTenant();
      await provision(name, { externalId: 'seed' });
      for (const group of ['editors', 'viewers']) {
        expect((await t.request({ method: 'POST', url: `/api/v1/embed-tenants/${name}/groups`, body: { name: group } })).statusCode).toBe(200);
      }
      const made = await direct({ embedTenantName: name, externalId: 'gus', tenantGroups: ['editors', 'viewers'] });
      expect(made.tenantGroups).toEqual([`system:tenant:${name}:group:editors`, `system:tenant:${name}:group:viewers`]);
      expect(made.tenantSystemGroup).toBe(`system:tenant:${name}`);
      expect((await direct({ embedTenantName: name, externalId: 'gus' })).tenantGroupNames).toEqual(['editors', 'viewers']);
      expect((await direct({ embedTenantName: name, externalId: 'gus', tenantGroups: ['viewers'] })).tenantGroupNames).toEqual(['viewers']);
      expect((await direct({ embedTenantName: name, externalId: 'gus', tenantGroups: [] })).tenantGroupNames).toEqual([]);
      const body = problem(await provision(name, { externalId: 'gus', tenantGroups: ['ghosts'] }), 400, 'GROUPS_NOT_FOUND');
      expect(body.detail).toContain('"ghosts"');
      // The implicit system group is not a tenant group one can assign.
      problem(await provision(name, { externalId: 'gus', tenantGroups: [`system:tenant:${name}`] }), 400, 'GROUPS_NOT_FOUND');
    });

    it('lowercases the tenant name of the path and refuses one that does not fit the pattern', async () => {
      const name = uniqueTenant();
      expect((await provision(name.toUpperCase(), { externalId: 'x' })).statusCode).toBe(200);
      expect((await tenants(`?search=${name}`)).items.map((i) => i.name)).toEqual([name]);
      for (const bad of ['1abc', 'a', 'ab-', 'a_b', 'a'.repeat(37), 'a:b']) {
        problem(await provision(encodeURIComponent(bad), { externalId: 'x' }), 400, 'VALIDATION_FAILED');
      }
      // The pattern's own bounds: 2 and 36 characters.
      expect((await provision('ab', { externalId: 'x' })).statusCode).toBe(200);
      expect((await provision(`a${'b'.repeat(35)}`, { externalId: 'x' })).statusCode).toBe(200);
    });

    it('refuses bad input: empty or blank external id, unknown members, a bad email', async () => {
      const name = uniqueTenant();
      problem(await provision(name, { externalId: '' }), 400, 'VALIDATION_FAILED');
      problem(await provision(name, { externalId: '   ' }), 400, 'VALIDATION_FAILED');
      problem(await provision(name, {}), 400, 'VALIDATION_FAILED');
      problem(await provision(name, { externalId: 'x', email: 'not an email' }), 400, 'VALIDATION_FAILED');
      problem(await provision(name, { externalId: 'x', extra: 1 }), 400, 'VALIDATION_FAILED');
      expect((await tenants(`?search=${name}`)).items).toEqual([]);
    });
  });

  describe('attributes through the session function', () => {
    it('types values against the catalog, clears with null, refuses duplicates, unknown names and type clashes, writing nothing', async () => {
      const name = uniqueTenant();
      const at = new Date().toISOString();
      for (const [attr, type, def] of [
        [`region${seq}`, 'string', null],
        [`level${seq}`, 'number', '1'],
        [`tags${seq}`, 'string-list', null],
      ] as const) {
        await t.store.db
          .insertInto('user_attributes')
          .values({ tenant_id: t.tenantId, name: attr, type, default_value: def, created_at: at, updated_at: at })
          .execute();
      }
      const [region, level, tags] = [`region${seq}`, `level${seq}`, `tags${seq}`];
      const made = await direct({
        embedTenantName: name,
        externalId: 'h',
        userAttributes: [
          { name: region, value: 'eu' },
          { name: tags, value: ['a', 'b'] },
        ],
      });
      expect(made.userAttributes).toMatchObject({ [region]: 'eu', [level]: 1, [tags]: ['a', 'b'] });
      const kept = await direct({ embedTenantName: name, externalId: 'h', userAttributes: [{ name: level, value: 5 }] });
      expect(kept.userAttributes).toMatchObject({ [region]: 'eu', [level]: 5 });
      const cleared = await direct({ embedTenantName: name, externalId: 'h', userAttributes: [{ name: region, value: null }] });
      expect(cleared.userAttributes[region]).toBeUndefined();

      await expect(
        direct({
          embedTenantName: name,
          externalId: 'h',
          userAttributes: [
            { name: level, value: 2 },
            { name: level.toUpperCase(), value: 3 },
          ],
        }),
      ).rejects.toMatchObject({ status: 400, code: 'VALIDATION_FAILED' });
      await expect(direct({ embedTenantName: name, externalId: 'h', userAttributes: [{ name: 'nope', value: 'x' }] })).rejects.toMatchObject({
        status: 400,
        code: 'USER_ATTRIBUTES_NOT_FOUND',
        detail: expect.stringContaining('User attributes not found'),
      });
      await expect(
        direct({
          embedTenantName: name,
          externalId: 'h',
          userAttributes: [
            { name: level, value: 9 },
            { name: region, value: 7 },
          ],
        }),
      ).rejects.toMatchObject({ status: 400, code: 'VALIDATION_FAILED' });
      // Nothing of the refused calls was written: level is still 5.
      expect((await direct({ embedTenantName: name, externalId: 'h' })).userAttributes[level]).toBe(5);
    });
  });

  describe('the account-wide cap (4.0)', () => {
    it('counts embed users across every embed tenant of the account; past it 429 per entry; updates still pass; other accounts unaffected', async () => {
      const capped = await TestApp.create(dialect, { embedUserLimit: 3 });
      try {
        const go = (tenant: string, externalId: string) =>
          capped.request({ method: 'POST', url: `/api/v1/embed-tenants/${tenant}/user`, body: { externalId } });
        expect((await go('one', 'a')).statusCode).toBe(200);
        expect((await go('one', 'b')).statusCode).toBe(200);
        expect((await go('two', 'c')).statusCode).toBe(200);
        const body = problem(await go('two', 'd'), 429, 'EMBED_USER_LIMIT');
        expect(body.detail).toContain('EMBED_USER_LIMIT');
        // Updating an existing user is not a new one.
        expect((await go('one', 'A')).statusCode).toBe(200);
        const res = await capped.request({
          method: 'POST',
          url: '/api/v1/embed-tenants/two/users',
          body: { users: [{ externalId: 'c' }, { externalId: 'e' }, { externalId: 'f' }] },
        });
        expect(res.statusCode).toBe(200);
        expect(res.json().succeeded.map((u: EmbedUser) => u.externalId)).toEqual(['c']);
        expect(res.json().failed.map((f: { externalId: string; error: { status: number } }) => [f.externalId, f.error.status])).toEqual([
          ['e', 429],
          ['f', 429],
        ]);
        // Deleting a tenant frees its places.
        expect((await capped.request({ method: 'DELETE', url: '/api/v1/embed-tenants/one' })).statusCode).toBe(204);
        expect((await go('two', 'd')).statusCode).toBe(200);
        // Another account counts its own.
        const theirs = await capped.tenant('capped-other', ['capped-other.example.test']);
        const r = await capped.request({
          method: 'POST',
          url: '/api/v1/embed-tenants/one/user',
          body: { externalId: 'z' },
          key: theirs.admin.key,
          host: 'capped-other.example.test',
        });
        expect(r.statusCode).toBe(200);
      } finally {
        await capped.close();
      }
    });

    it('holds under concurrent provisioning: exactly the cap is created', async () => {
      const capped = await TestApp.create(dialect, { embedUserLimit: 5 });
      try {
        const results = await Promise.all(
          Array.from({ length: 12 }, (_, i) =>
            capped.request({ method: 'POST', url: `/api/v1/embed-tenants/race${i % 3}x/user`, body: { externalId: `u${i}` } }),
          ),
        );
        expect(results.filter((r) => r.statusCode === 200)).toHaveLength(5);
        expect(results.filter((r) => r.statusCode === 429)).toHaveLength(7);
        const count = await capped.store.db
          .selectFrom('embed_users')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow();
        expect(Number(count.n)).toBe(5);
      } finally {
        await capped.close();
      }
    });
  });

  describe('bulk provision (4.5)', () => {
    it('applies entries one by one in request order, reports failures with the single form status and message, last duplicate wins', async () => {
      const name = uniqueTenant();
      await t.group(`Bulk-${name}`);
      const res = await bulk(name, [
        { externalId: 'one', email: 'one@example.com' },
        { externalId: 'Two', groups: ['missing-group'] },
        { externalId: 'three' },
        { externalId: 'ONE', email: 'last@example.com', groups: [`Bulk-${name}`] },
      ]);
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json() as { succeeded: EmbedUser[]; failed: Array<{ externalId: string; error: { status: number; message: string } }> };
      expect(body.succeeded.map((u) => [u.externalId, u.email])).toEqual([
        ['one', 'one@example.com'],
        ['three', `three@${name}.embed.invalid`],
        ['one', 'last@example.com'],
      ]);
      const single = problem(await provision(name, { externalId: 'Two', groups: ['missing-group'] }), 400, 'GROUPS_NOT_FOUND');
      expect(body.failed).toEqual([{ externalId: 'two', error: { status: 400, message: single.detail } }]);
      const listed = await users(name);
      expect(listed.items.map((u) => [u.externalId, u.email])).toEqual([
        ['one', 'last@example.com'],
        ['three', `three@${name}.embed.invalid`],
      ]);
      // Re-sending the whole batch after fixing the failure is safe.
      await t.group('missing-group');
      const again = await bulk(name, [{ externalId: 'one' }, { externalId: 'two', groups: ['missing-group'] }]);
      expect(again.json().failed).toEqual([]);
      expect((await users(name)).items).toHaveLength(3);
    });

    it('takes 1-100 entries; more or none is a bad request that changes nothing', async () => {
      const name = uniqueTenant();
      problem(await bulk(name, []), 400, 'VALIDATION_FAILED');
      problem(
        await bulk(
          name,
          Array.from({ length: 101 }, (_, i) => ({ externalId: `u${i}` })),
        ),
        400,
        'VALIDATION_FAILED',
      );
      expect((await tenants(`?search=${name}`)).items).toEqual([]);
      const res = await bulk(
        name,
        Array.from({ length: 100 }, (_, i) => ({ externalId: `u${i}` })),
      );
      expect(res.json().succeeded).toHaveLength(100);
    });
  });

  describe('list users (4.3)', () => {
    it('sorts by email and pages with first/after', async () => {
      const name = uniqueTenant();
      await bulk(name, [
        { externalId: 'z', email: 'a@example.com' },
        { externalId: 'y', email: 'c@example.com' },
        { externalId: 'x', email: 'b@example.com' },
      ]);
      const first = await users(name, '?first=2');
      expect(first.items.map((u) => u.email)).toEqual(['a@example.com', 'b@example.com']);
      expect(first.pageInfo.hasNextPage).toBe(true);
      const second = await users(name, `?first=2&after=${first.pageInfo.endCursor}`);
      expect(second.items.map((u) => u.email)).toEqual(['c@example.com']);
      expect(second.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
      problem(await t.request({ url: `/api/v1/embed-tenants/${name}/users?after=garbage` }), 400, 'INVALID_CURSOR');
    });

    it('search matches a substring of the email or external id, or a complete external id, ignoring case; LIKE wildcards match themselves', async () => {
      const name = uniqueTenant();
      await bulk(name, [
        { externalId: 'emp-100', email: 'alice@corp.example' },
        { externalId: 'emp-200', email: 'bob@other.example' },
        { externalId: 'x_1', email: 'carol@corp.example' },
        { externalId: 'x11' },
      ]);
      const ids = async (search: string) => (await users(name, `?search=${encodeURIComponent(search)}`)).items.map((u) => u.externalId);
      expect(await ids('CORP')).toEqual(['emp-100', 'x_1']);
      expect(await ids('emp-2')).toEqual(['emp-200']);
      expect(await ids('EMP-100')).toEqual(['emp-100']);
      expect(await ids('x_')).toEqual(['x_1']);
      expect(await ids('%')).toEqual([]);
      expect(await ids('')).toHaveLength(4);
    });

    it("is 404 for an embed tenant the account does not have (another account's included)", async () => {
      const name = uniqueTenant();
      await provision(name, { externalId: 'x' });
      problem(
        await t.request({ url: `/api/v1/embed-tenants/${name}/users`, key: other.admin.key, host: 'embed-other.example.test' }),
        404,
        'EMBED_TENANT_NOT_FOUND',
      );
      problem(await t.request({ url: `/api/v1/embed-tenants/${uniqueTenant()}/users` }), 404, 'EMBED_TENANT_NOT_FOUND');
    });
  });

  describe('list tenants (4.1)', () => {
    it('lists by name with user counts; search is a case-insensitive substring of the name; pages', async () => {
      const tag = `ls${process.pid}x${++seq}`;
      await provision(`b-${tag}`, { externalId: 'x' });
      await bulk(`a-${tag}`, [{ externalId: 'x' }, { externalId: 'y' }]);
      await provision(`c-${tag}`, { externalId: 'x' });
      const all = await tenants(`?search=${tag.toUpperCase()}`);
      expect(all.items.map((i) => [i.name, i.userCount])).toEqual([
        [`a-${tag}`, 2],
        [`b-${tag}`, 1],
        [`c-${tag}`, 1],
      ]);
      const page = await tenants(`?search=${tag}&first=2`);
      expect(page.items.map((i) => i.name)).toEqual([`a-${tag}`, `b-${tag}`]);
      const next = await tenants(`?search=${tag}&first=2&after=${page.pageInfo.endCursor}`);
      expect(next.items.map((i) => i.name)).toEqual([`c-${tag}`]);
      expect((await tenants('?search=%25')).items).toEqual([]);
    });

    it("never shows another account's embed tenants", async () => {
      const name = uniqueTenant();
      await provision(name, { externalId: 'x' });
      const theirs = await t.request({ url: `/api/v1/embed-tenants?search=${name}`, key: other.admin.key, host: 'embed-other.example.test' });
      expect(theirs.json().items).toEqual([]);
    });
  });

  describe('delete tenant (4.2)', () => {
    it('removes the tenant with its users, groups, memberships and attribute values; idempotent', async () => {
      const name = uniqueTenant();
      await t.group(`Del-${name}`);
      await provision(name, { externalId: 'x', groups: [`Del-${name}`] });
      await t.request({ method: 'POST', url: `/api/v1/embed-tenants/${name}/groups`, body: { name: 'team' } });
      await provision(name, { externalId: 'x', tenantGroups: ['team'] });
      const row = await t.store.db.selectFrom('embed_tenants').select('id').where('name', '=', name).executeTakeFirstOrThrow();
      expect((await t.request({ method: 'DELETE', url: `/api/v1/embed-tenants/${name}` })).statusCode).toBe(204);
      for (const table of ['embed_users', 'embed_groups'] as const) {
        expect(await t.store.db.selectFrom(table).select('id').where('embed_tenant_id', '=', row.id).execute()).toEqual([]);
      }
      expect(
        await t.store.db
          .selectFrom('embed_user_groups')
          .selectAll()
          .innerJoin('groups', 'groups.id', 'embed_user_groups.group_id')
          .where('groups.name', '=', `Del-${name}`)
          .execute(),
      ).toEqual([]);
      expect((await tenants(`?search=${name}`)).items).toEqual([]);
      // The global group itself stays: it belongs to the account.
      expect(await t.store.db.selectFrom('groups').select('id').where('name', '=', `Del-${name}`).execute()).toHaveLength(1);
      expect((await t.request({ method: 'DELETE', url: `/api/v1/embed-tenants/${name}` })).statusCode).toBe(204);
      expect((await t.request({ method: 'DELETE', url: `/api/v1/embed-tenants/${uniqueTenant()}` })).statusCode).toBe(204);
    });

    it('refuses a name not in canonical lowercase form, deleting nothing', async () => {
      const name = uniqueTenant();
      await provision(name, { externalId: 'x' });
      const body = problem(await t.request({ method: 'DELETE', url: `/api/v1/embed-tenants/${name.toUpperCase()}` }), 400, 'VALIDATION_FAILED');
      expect(body.detail).toContain('canonical lowercase');
      expect((await tenants(`?search=${name}`)).items).toHaveLength(1);
    });

    it("does not reach another account's tenant of the same name", async () => {
      const name = uniqueTenant();
      await provision(name, { externalId: 'x' });
      const res = await t.request({ method: 'DELETE', url: `/api/v1/embed-tenants/${name}`, key: other.admin.key, host: 'embed-other.example.test' });
      expect(res.statusCode).toBe(204);
      expect((await tenants(`?search=${name}`)).items).toHaveLength(1);
    });
  });

  describe('who may call', () => {
    it("refuses non-admins and a non-admin's key with 403 on every route, changing nothing", async () => {
      const name = uniqueTenant();
      await provision(name, { externalId: 'x' });
      const calls = [
        { url: '/api/v1/embed-tenants' },
        { url: `/api/v1/embed-tenants/${name}/users` },
        { method: 'POST' as const, url: `/api/v1/embed-tenants/${name}/user`, body: { externalId: 'y' } },
        { method: 'POST' as const, url: `/api/v1/embed-tenants/${name}/users`, body: { users: [{ externalId: 'y' }] } },
        { method: 'DELETE' as const, url: `/api/v1/embed-tenants/${name}` },
      ];
      for (const call of calls) problem(await t.request({ ...call, key: explorer.key }), 403, 'FORBIDDEN');
      expect((await users(name)).items.map((u) => u.externalId)).toEqual(['x']);
    });

    it('takes `Authorization: Api-Key <key>` on the embed routes (reference 0.1); other REST routes keep Bearer only', async () => {
      const name = uniqueTenant();
      const res = await t.request({
        method: 'POST',
        url: `/api/v1/embed-tenants/${name}/user`,
        body: { externalId: 'x' },
        key: null,
        headers: { authorization: `Api-Key ${t.admin.key}` },
      });
      expect(res.statusCode, res.body).toBe(200);
      expect((await t.request({ url: '/api/v1/embed-tenants', key: null, headers: { authorization: `api-key ${t.admin.key}` } })).statusCode).toBe(200);
      problem(
        await t.request({ url: '/api/v1/embed-tenants', key: null, headers: { authorization: `Api-Key mapi_${'Z'.repeat(40)}` } }),
        401,
        'UNAUTHENTICATED',
      );
      problem(await t.request({ url: '/api/v1/groups', key: null, headers: { authorization: `Api-Key ${t.admin.key}` } }), 401, 'UNAUTHENTICATED');
    });

    it('lets an admin key scoped to deployments read, but not change, the account-wide embed people', async () => {
      const name = uniqueTenant();
      await provision(name, { externalId: 'x' });
      expect((await t.request({ url: `/api/v1/embed-tenants/${name}/users`, key: scopedAdminKey })).statusCode).toBe(200);
      problem(await provision(name, { externalId: 'y' }, scopedAdminKey), 403, 'KEY_SCOPE_FORBIDDEN');
      problem(await t.request({ method: 'DELETE', url: `/api/v1/embed-tenants/${name}`, key: scopedAdminKey }), 403, 'KEY_SCOPE_FORBIDDEN');
    });
  });
});
