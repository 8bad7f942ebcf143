import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, TestApp, problem, type Caller } from './harness.js';

interface Policy {
  resourceType: string;
  actions: string[];
  resources: string[];
}
interface Role {
  id: number;
  name: string;
  description?: string | null;
  policies: Policy[];
}
interface Page<T> {
  items: T[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
}

let seq = 0;
const unique = (prefix: string) => `${prefix} ${process.pid}-${++seq}`;
const BUILT_IN = ['Admin', 'Developer', 'AIBIDeveloper', 'D3User', 'AIBIUser', 'AIBIViewer', 'Guest', 'EmbedUser'];

describe.each(DIALECTS)('custom roles (%s)', (dialect) => {
  let t: TestApp;
  let other: { tenantId: number; admin: Caller };
  beforeAll(async () => {
    t = await TestApp.create(dialect);
    other = await t.tenant('roles-other', ['roles-other.example.test']);
  });
  afterAll(async () => t?.close());

  const create = (body: unknown, key?: string) => t.request({ method: 'POST', url: '/api/v1/roles', body, ...(key ? { key } : {}) });
  const update = (id: number, body: unknown, key?: string) => t.request({ method: 'PUT', url: `/api/v1/roles/${id}`, body, ...(key ? { key } : {}) });
  const get = (id: number, key?: string) => t.request({ url: `/api/v1/roles/${id}`, ...(key ? { key } : {}) });
  const remove = (id: number, key?: string) => t.request({ method: 'DELETE', url: `/api/v1/roles/${id}`, ...(key ? { key } : {}) });
  const assign = (roleId: number, userId: number, method: 'PUT' | 'DELETE' = 'PUT', key?: string) =>
    t.request({ method, url: `/api/v1/roles/${roleId}/users/${userId}`, ...(key ? { key } : {}) });
  const assignGroup = (roleId: number, groupId: number, method: 'PUT' | 'DELETE' = 'PUT', key?: string) =>
    t.request({ method, url: `/api/v1/roles/${roleId}/groups/${groupId}`, ...(key ? { key } : {}) });
  const makeRole = async (policies: Policy[] = [], extra: Record<string, unknown> = {}): Promise<Role> => {
    const res = await create({ name: unique('role'), policies, ...extra });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as Role;
  };
  const onDeployments = (actions: string[], resources: string[]): Policy => ({ resourceType: 'Deployment', actions, resources });
  const tier = (name: string): Policy => ({ resourceType: 'Global', actions: [name], resources: ['All'] });

  describe('reference 8.D.2: create', () => {
    it('reference 8.D.2: answers 200 with the Role: id, name, description and policies as sent', async () => {
      const name = unique('Analysts');
      const policies = [onDeployments(['DeploymentRead', 'SchemaRead'], ['12', 'All']), tier('AIBIView')];
      const res = await create({ name, description: 'read everything', policies });
      expect(res.statusCode).toBe(200);
      const role = res.json() as Role;
      expect(role).toEqual({ id: expect.any(Number), name, description: 'read everything', policies });
      expect((await get(role.id)).json()).toEqual(role);
    });

    it('reference 8.D.2: policies [] is allowed, and description may be null or left out', async () => {
      expect((await makeRole([])).policies).toEqual([]);
      expect((await makeRole([], { description: null })).description).toBeNull();
      expect((await makeRole([])).description).toBeNull();
    });

    it('reference 8.D.2: name is required and 1-255 characters; description at most 255; policies required', async () => {
      problem(await create({ policies: [] }), 400, 'VALIDATION_FAILED');
      problem(await create({ name: '', policies: [] }), 400, 'VALIDATION_FAILED');
      problem(await create({ name: 'x'.repeat(256), policies: [] }), 400, 'VALIDATION_FAILED');
      expect((await create({ name: `${'y'.repeat(250)}${++seq}`.slice(0, 255), policies: [] })).statusCode).toBe(200);
      problem(await create({ name: unique('long'), description: 'd'.repeat(256), policies: [] }), 400, 'VALIDATION_FAILED');
      problem(await create({ name: unique('no-policies') }), 400, 'VALIDATION_FAILED');
    });

    it('reference 8.D.2: at most 200 policies', async () => {
      const many = (n: number) => Array.from({ length: n }, (_, i) => onDeployments(['DeploymentRead'], [String(i + 1)]));
      expect((await create({ name: unique('200'), policies: many(200) })).statusCode).toBe(200);
      problem(await create({ name: unique('201'), policies: many(201) }), 400, 'VALIDATION_FAILED');
    });

    it('reference 8.D.2: 409 if the name already exists (ignoring case)', async () => {
      const role = await makeRole();
      problem(await create({ name: role.name, policies: [] }), 409, 'ROLE_NAME_TAKEN');
      problem(await create({ name: role.name.toUpperCase(), policies: [] }), 409, 'ROLE_NAME_TAKEN');
    });

    it('reference 8.D.2: 400 for each built-in name', async () => {
      for (const name of BUILT_IN) problem(await create({ name, policies: [] }), 400, 'ROLE_NAME_RESERVED');
      problem(await create({ name: 'admin', policies: [] }), 400, 'ROLE_NAME_RESERVED');
    });

    it('reference 8.D.2: 400 for a policy with no actions or no resources', async () => {
      problem(await create({ name: unique('r'), policies: [onDeployments([], ['1'])] }), 400, 'VALIDATION_FAILED');
      problem(await create({ name: unique('r'), policies: [onDeployments(['DeploymentRead'], [])] }), 400, 'VALIDATION_FAILED');
      problem(await create({ name: unique('r'), policies: [{ resourceType: 'Global', actions: ['AIBIView'], resources: [] }] }), 400, 'VALIDATION_FAILED');
    });

    it('reference 8.D.2: 400 for a Deployment resource that is not a numeric id string or All', async () => {
      for (const resource of ['abc', '12a', '-1', '1.5', '0', 'all', ' 12']) {
        const body = problem(await create({ name: unique('r'), policies: [onDeployments(['DeploymentRead'], ['3', resource])] }), 400, 'VALIDATION_FAILED');
        expect(body.errors).toEqual([{ pointer: '/body/policies/0/resources/1', message: expect.any(String) }]);
      }
      problem(
        await create({ name: unique('r'), policies: [{ resourceType: 'Deployment', actions: ['DeploymentRead'], resources: [12] }] }),
        400,
        'VALIDATION_FAILED',
      );
    });

    it('400 for an action outside the vocabulary of its resource type, or an unknown resource type', async () => {
      const body = problem(await create({ name: unique('r'), policies: [onDeployments(['DeploymentReed'], ['1'])] }), 400, 'VALIDATION_FAILED');
      expect(body.errors).toEqual([{ pointer: '/body/policies/0/actions/0', message: expect.any(String) }]);
      problem(await create({ name: unique('r'), policies: [tier('DeploymentRead')] }), 400, 'VALIDATION_FAILED');
      problem(await create({ name: unique('r'), policies: [{ resourceType: 'Folder', actions: ['All'], resources: ['1'] }] }), 400, 'VALIDATION_FAILED');
    });

    it('reference 8.D semantics: ids are checked for shape, not existence; a role without a tier is accepted', async () => {
      const role = await makeRole([onDeployments(['All'], ['987654321'])]);
      expect(role.policies).toEqual([onDeployments(['All'], ['987654321'])]);
    });
  });

  describe('reference 8.D.1: list', () => {
    it('reference 8.D.1: lists only custom roles, newest first, paged with first/after', async () => {
      const fresh = await TestApp.create(dialect);
      try {
        const made: Role[] = [];
        for (let i = 0; i < 3; i++)
          made.push((await fresh.request({ method: 'POST', url: '/api/v1/roles', body: { name: `r${i}`, policies: [] } })).json() as Role);
        const first = (await fresh.request({ url: '/api/v1/roles?first=2' })).json() as Page<Role>;
        expect(first.items.map((r) => r.name)).toEqual(['r2', 'r1']);
        expect(first.pageInfo.hasNextPage).toBe(true);
        const rest = (await fresh.request({ url: `/api/v1/roles?first=2&after=${encodeURIComponent(first.pageInfo.endCursor!)}` })).json() as Page<Role>;
        expect(rest.items.map((r) => r.name)).toEqual(['r0']);
        expect(rest.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
        const all = (await fresh.request({ url: '/api/v1/roles' })).json() as Page<Role>;
        expect(all.items.map((r) => r.name)).not.toEqual(expect.arrayContaining(BUILT_IN.map((n) => expect.stringMatching(new RegExp(`^${n}$`)))));
        expect(all.items).toHaveLength(3);
      } finally {
        await fresh.close();
      }
    });

    it('another tenant’s roles are not listed and are 404 by id', async () => {
      const mine = await makeRole();
      const theirs = (
        await t.request({
          method: 'POST',
          url: '/api/v1/roles',
          key: other.admin.key,
          host: 'roles-other.example.test',
          body: { name: unique('theirs'), policies: [] },
        })
      ).json() as Role;
      const listed = (await t.request({ url: '/api/v1/roles?first=200' })).json() as Page<Role>;
      expect(listed.items.map((r) => r.id)).toContain(mine.id);
      expect(listed.items.map((r) => r.id)).not.toContain(theirs.id);
      problem(await get(theirs.id), 404, 'ROLE_NOT_FOUND');
      problem(await update(theirs.id, { name: 'x' }), 404, 'ROLE_NOT_FOUND');
      problem(await remove(theirs.id), 404, 'ROLE_NOT_FOUND');
    });
  });

  describe('reference 8.D: every operation is admin', () => {
    it('reference 8.D: a non-admin gets 403 on every operation', async () => {
      const role = await makeRole();
      const dev = await t.user('DEVELOPER');
      problem(await t.request({ url: '/api/v1/roles', key: dev.key }), 403, 'FORBIDDEN');
      problem(await create({ name: unique('x'), policies: [] }, dev.key), 403, 'FORBIDDEN');
      problem(await get(role.id, dev.key), 403, 'FORBIDDEN');
      problem(await update(role.id, { name: unique('x') }, dev.key), 403, 'FORBIDDEN');
      problem(await remove(role.id, dev.key), 403, 'FORBIDDEN');
      problem(await assign(role.id, dev.userId, 'PUT', dev.key), 403, 'FORBIDDEN');
      problem(await assign(role.id, dev.userId, 'DELETE', dev.key), 403, 'FORBIDDEN');
      expect((await get(role.id)).statusCode).toBe(200);
    });

    it('an admin key scoped to deployments reads roles but cannot change them', async () => {
      const role = await makeRole();
      const scoped = await t.key(t.admin.userId, { deploymentIds: [await t.deployment(unique('scope'))] });
      expect((await get(role.id, scoped)).statusCode).toBe(200);
      problem(await create({ name: unique('x'), policies: [] }, scoped), 403, 'KEY_SCOPE_FORBIDDEN');
      problem(await assign(role.id, t.admin.userId, 'PUT', scoped), 403, 'KEY_SCOPE_FORBIDDEN');
    });
  });

  describe('reference 8.D.3 and 8.D.4: get and update', () => {
    it('reference 8.D.3: 200 Role with its policies; 404 for an unknown id', async () => {
      const role = await makeRole([onDeployments(['DeploymentRead'], ['5'])]);
      expect((await get(role.id)).json()).toEqual(role);
      problem(await get(999_999), 404, 'ROLE_NOT_FOUND');
    });

    it('reference 8.D.4: a field left out keeps its value; name changes; description null clears it', async () => {
      const role = await makeRole([onDeployments(['DeploymentRead'], ['5'])], { description: 'before' });
      const name = unique('renamed');
      const renamed = (await update(role.id, { name })).json() as Role;
      expect(renamed).toEqual({ ...role, name });
      const cleared = (await update(role.id, { description: null })).json() as Role;
      expect(cleared).toEqual({ ...role, name, description: null });
      expect((await get(role.id)).json()).toEqual(cleared);
    });

    it('reference 8.D.4: a null name or null policies is rejected', async () => {
      const role = await makeRole();
      problem(await update(role.id, { name: null }), 400, 'VALIDATION_FAILED');
      problem(await update(role.id, { policies: null }), 400, 'VALIDATION_FAILED');
      expect((await get(role.id)).json()).toEqual(role);
    });

    it('reference 8.D.4: policies replaces all; [] removes them all', async () => {
      const role = await makeRole([onDeployments(['DeploymentRead'], ['5']), tier('AIBIView')]);
      const replaced = (await update(role.id, { policies: [onDeployments(['All'], ['All'])] })).json() as Role;
      expect(replaced.policies).toEqual([onDeployments(['All'], ['All'])]);
      expect(((await update(role.id, { policies: [] })).json() as Role).policies).toEqual([]);
    });

    it('reference 8.D.4: 409 if the new name is taken; 400 for a built-in name or a bad policy', async () => {
      const a = await makeRole();
      const b = await makeRole();
      problem(await update(b.id, { name: a.name }), 409, 'ROLE_NAME_TAKEN');
      expect((await update(b.id, { name: b.name.toUpperCase() })).statusCode).toBe(200);
      problem(await update(b.id, { name: 'Guest' }), 400, 'ROLE_NAME_RESERVED');
      problem(await update(b.id, { policies: [onDeployments(['DeploymentRead'], ['x'])] }), 400, 'VALIDATION_FAILED');
      problem(await update(999_999, { name: unique('x') }), 404, 'ROLE_NOT_FOUND');
    });
  });

  describe('reference 8.D.5 to 8.D.7: delete and assignments', () => {
    it('reference 8.D.6: 204, and 204 again when the role is already held', async () => {
      const role = await makeRole();
      const user = await t.user('VIEWER');
      expect((await assign(role.id, user.userId)).statusCode).toBe(204);
      expect((await assign(role.id, user.userId)).statusCode).toBe(204);
      const rows = await t.store.db.selectFrom('role_users').selectAll().where('role_id', '=', role.id).execute();
      expect(rows.map((r) => r.user_id)).toEqual([user.userId]);
    });

    it('reference 8.D.6: 404 if the user or the role is unknown', async () => {
      const role = await makeRole();
      const user = await t.user('VIEWER');
      problem(await assign(role.id, 999_999), 404, 'USER_NOT_FOUND');
      problem(await assign(999_999, user.userId), 404, 'ROLE_NOT_FOUND');
      problem(await assign(role.id, other.admin.userId), 404, 'USER_NOT_FOUND');
    });

    it('reference 8.D.6: Admin is never assignable: built-in roles have no id here, so every id that is not a custom role is 404', async () => {
      const user = await t.user('VIEWER');
      for (const id of [1, 2, 3, 4, 5, 6, 7, 8]) {
        const exists = await t.store.db.selectFrom('roles').select('id').where('tenant_id', '=', t.tenantId).where('id', '=', id).executeTakeFirst();
        if (!exists) problem(await assign(id, user.userId), 404, 'ROLE_NOT_FOUND');
      }
      const me = (await t.request({ url: `/api/v1/users/${user.userId}` })).json() as { role: string };
      expect(me.role).toBe('VIEWER');
    });

    it('reference 8.D.7: 204, including when the role was not held; 404 if the user is unknown', async () => {
      const role = await makeRole();
      const user = await t.user('VIEWER');
      expect((await assign(role.id, user.userId, 'DELETE')).statusCode).toBe(204);
      expect((await assign(role.id, user.userId)).statusCode).toBe(204);
      expect((await assign(role.id, user.userId, 'DELETE')).statusCode).toBe(204);
      expect((await assign(role.id, user.userId, 'DELETE')).statusCode).toBe(204);
      expect(await t.store.db.selectFrom('role_users').selectAll().where('role_id', '=', role.id).execute()).toEqual([]);
      problem(await assign(role.id, 999_999, 'DELETE'), 404, 'USER_NOT_FOUND');
    });

    it('groups: PUT and DELETE /roles/{roleId}/groups/{groupId} are idempotent; 404 for an unknown group or role', async () => {
      const role = await makeRole();
      const group = await t.group(unique('g'));
      expect((await assignGroup(role.id, group)).statusCode).toBe(204);
      expect((await assignGroup(role.id, group)).statusCode).toBe(204);
      expect((await t.store.db.selectFrom('role_groups').selectAll().where('role_id', '=', role.id).execute()).length).toBe(1);
      expect((await assignGroup(role.id, group, 'DELETE')).statusCode).toBe(204);
      expect((await assignGroup(role.id, group, 'DELETE')).statusCode).toBe(204);
      problem(await assignGroup(role.id, 999_999), 404, 'GROUP_NOT_FOUND');
      problem(await assignGroup(999_999, group), 404, 'ROLE_NOT_FOUND');
    });

    it('reference 8.D.5: 204; removes the role and every assignment of it, to users and to groups', async () => {
      const role = await makeRole();
      const user = await t.user('VIEWER');
      const group = await t.group(unique('g'), [user.userId]);
      await assign(role.id, user.userId);
      await assignGroup(role.id, group);
      expect((await remove(role.id)).statusCode).toBe(204);
      problem(await get(role.id), 404, 'ROLE_NOT_FOUND');
      expect(await t.store.db.selectFrom('role_users').selectAll().where('role_id', '=', role.id).execute()).toEqual([]);
      expect(await t.store.db.selectFrom('role_groups').selectAll().where('role_id', '=', role.id).execute()).toEqual([]);
      problem(await remove(role.id), 404, 'ROLE_NOT_FOUND');
      // The name is free again.
      expect((await create({ name: role.name, policies: [] })).statusCode).toBe(200);
    });

    it('deleting a group removes its role assignments', async () => {
      const role = await makeRole();
      const group = await t.group(unique('g'));
      await assignGroup(role.id, group);
      expect((await t.request({ method: 'DELETE', url: `/api/v1/groups/${group}` })).statusCode).toBe(204);
      expect(await t.store.db.selectFrom('role_groups').selectAll().where('role_id', '=', role.id).execute()).toEqual([]);
    });
  });

  describe('reference 8.D semantics: what a custom role grants on deployments', () => {
    const read = (id: number, key: string) => t.request({ url: `/api/v1/deployments/${id}`, key });
    const listed = async (key: string) =>
      ((await t.request({ url: '/api/v1/deployments?first=200', key })).json() as { items: Array<{ id: number }> }).items.map((d) => d.id);
    const rename = (id: number, key: string) => t.request({ method: 'PUT', url: `/api/v1/deployments/${id}`, key, body: { name: unique('renamed') } });
    const envVars = (id: number, key: string) => t.request({ url: `/api/v1/deployments/${id}/env-vars`, key });

    /** A user whose only access to anything comes from one custom role holding `policies`. */
    async function holderOf(policies: Policy[], builtIn: 'VIEWER' | 'EXPLORER' | 'DEVELOPER' = 'VIEWER') {
      const user = await t.user(builtIn);
      const role = await makeRole(policies);
      expect((await assign(role.id, user.userId)).statusCode).toBe(204);
      return { user, role };
    }

    it('a user whose only access comes from DeploymentRead reads the deployment, sees it listed, reads its settings and content', async () => {
      const d = await t.deployment(unique('read'));
      const elsewhere = await t.deployment(unique('elsewhere'));
      const folder = (await t.request({ method: 'POST', url: `/api/v1/deployments/${d}/folders`, body: { name: 'shared' } })).json() as { id: number };
      const { user } = await holderOf([onDeployments(['DeploymentRead'], [String(d)])]);
      const res = await read(d, user.key);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ id: d, access: 'VIEW' });
      expect(await listed(user.key)).toEqual([d]);
      expect((await t.request({ url: `/api/v1/deployments/${d}/settings`, key: user.key })).statusCode).toBe(200);
      const folders = (await t.request({ url: `/api/v1/deployments/${d}/folders`, key: user.key })).json() as { items: Array<{ id: number }> };
      expect(folders.items.map((f) => f.id)).toContain(folder.id);
      problem(await read(elsewhere, user.key), 403, 'FORBIDDEN');
    });

    it('is refused what the role does not grant: updating, env-vars (SecretsManage), another deployment', async () => {
      const d = await t.deployment(unique('refused'));
      const { user } = await holderOf([onDeployments(['DeploymentRead'], [String(d)]), tier('AIBIDevelop')]);
      problem(await rename(d, user.key), 403, 'FORBIDDEN');
      problem(await envVars(d, user.key), 403, 'FORBIDDEN');
      problem(await t.request({ method: 'DELETE', url: `/api/v1/deployments/${d}`, key: user.key }), 403, 'FORBIDDEN');
      expect((await read(d, user.key)).statusCode).toBe(200);
    });

    it('reference 8.D semantics: a develop-tier action granted by a role needs the develop tier', async () => {
      const d = await t.deployment(unique('tier'));
      const policies = [onDeployments(['DeploymentRead', 'DeploymentUpdate', 'SecretsManage'], [String(d)])];
      const withoutTier = await holderOf(policies);
      problem(await rename(d, withoutTier.user.key), 403, 'FORBIDDEN');
      problem(await envVars(d, withoutTier.user.key), 403, 'FORBIDDEN');
      const exploreTier = await holderOf([...policies, tier('AIBIExplore')]);
      problem(await rename(d, exploreTier.user.key), 403, 'FORBIDDEN');
      const developTier = await holderOf([...policies, tier('AIBIDevelop')]);
      expect((await rename(d, developTier.user.key)).statusCode).toBe(200);
      expect((await envVars(d, developTier.user.key)).statusCode).toBe(200);
      // A built-in DEVELOPER holds the develop tier already: the union of their roles.
      const developer = await holderOf(policies, 'DEVELOPER');
      expect((await rename(d, developer.user.key)).statusCode).toBe(200);
    });

    it('reference 8.D semantics: a tier-free action needs no tier, and grants only itself', async () => {
      const d = await t.deployment(unique('agents'));
      const { user } = await holderOf([onDeployments(['DeploymentAgentRead'], [String(d)])]);
      expect((await t.request({ url: `/api/v1/deployments/${d}/agents`, key: user.key })).statusCode).toBe(200);
      problem(await read(d, user.key), 403, 'FORBIDDEN');
      expect(await listed(user.key)).toEqual([]);
      problem(await t.request({ method: 'POST', url: `/api/v1/deployments/${d}/agents`, key: user.key, body: { name: 'not mine' } }), 403, 'FORBIDDEN');
    });

    it('reference 8.D semantics: a user holds the union of their roles, the tier from one and the grant from another', async () => {
      const d = await t.deployment(unique('union'));
      const { user } = await holderOf([onDeployments(['DeploymentRead', 'DeploymentUpdate'], [String(d)])]);
      problem(await rename(d, user.key), 403, 'FORBIDDEN');
      const tierRole = await makeRole([tier('AIBIDevelop')]);
      await assign(tierRole.id, user.userId);
      expect((await rename(d, user.key)).statusCode).toBe(200);
    });

    it('reference 8.D semantics: action All is full access; resources ["All"] covers every deployment, later ones too', async () => {
      const before = await t.deployment(unique('all-before'));
      const { user } = await holderOf([onDeployments(['All'], ['All']), tier('AIBIDevelop')]);
      const after = await t.deployment(unique('all-after'));
      for (const d of [before, after]) {
        expect((await read(d, user.key)).json()).toMatchObject({ access: 'MANAGE' });
        expect((await envVars(d, user.key)).statusCode).toBe(200);
        expect((await rename(d, user.key)).statusCode).toBe(200);
      }
      expect(await listed(user.key)).toEqual(expect.arrayContaining([before, after]));
    });

    it('reference 8.D semantics: without the develop tier, All gives only the tier-free actions', async () => {
      const d = await t.deployment(unique('all-view'));
      const { user } = await holderOf([onDeployments(['All'], [String(d)])]);
      expect((await read(d, user.key)).json()).toMatchObject({ access: 'VIEW' });
      problem(await rename(d, user.key), 403, 'FORBIDDEN');
      problem(await envVars(d, user.key), 403, 'FORBIDDEN');
    });

    it('reference 8.D semantics: a deleted deployment’s id is kept and grants nothing', async () => {
      const d = await t.deployment(unique('doomed'));
      const { user, role } = await holderOf([onDeployments(['DeploymentRead'], [String(d)])]);
      expect((await read(d, user.key)).statusCode).toBe(200);
      expect((await t.request({ method: 'DELETE', url: `/api/v1/deployments/${d}` })).statusCode).toBe(200);
      expect(((await get(role.id)).json() as Role).policies).toEqual([onDeployments(['DeploymentRead'], [String(d)])]);
      expect(await listed(user.key)).toEqual([]);
      problem(await read(d, user.key), 404, 'DEPLOYMENT_NOT_FOUND');
      const next = await t.deployment(unique('next'));
      problem(await read(next, user.key), 403, 'FORBIDDEN');
    });

    it('a role assigned to a group is held by its members, and goes when unassigned', async () => {
      const d = await t.deployment(unique('via-group'));
      const member = await t.user('VIEWER');
      const group = await t.group(unique('g'), [member.userId]);
      const role = await makeRole([onDeployments(['DeploymentRead'], [String(d)])]);
      problem(await read(d, member.key), 403, 'FORBIDDEN');
      await assignGroup(role.id, group);
      expect((await read(d, member.key)).statusCode).toBe(200);
      await assignGroup(role.id, group, 'DELETE');
      problem(await read(d, member.key), 403, 'FORBIDDEN');
    });

    it('access ends when the role is unassigned, changed or deleted', async () => {
      const d = await t.deployment(unique('ends'));
      const { user, role } = await holderOf([onDeployments(['DeploymentRead'], [String(d)])]);
      expect((await read(d, user.key)).statusCode).toBe(200);
      await assign(role.id, user.userId, 'DELETE');
      problem(await read(d, user.key), 403, 'FORBIDDEN');
      await assign(role.id, user.userId);
      await update(role.id, { policies: [] });
      problem(await read(d, user.key), 403, 'FORBIDDEN');
      await update(role.id, { policies: [onDeployments(['DeploymentRead'], [String(d)])] });
      expect((await read(d, user.key)).statusCode).toBe(200);
      await remove(role.id);
      problem(await read(d, user.key), 403, 'FORBIDDEN');
    });

    it('custom roles add to the policies the user already holds and never take from them', async () => {
      const d = await t.deployment(unique('policies'));
      const user = await t.user('EXPLORER');
      await t.grant({ type: 'USER', id: user.userId }, { type: 'DEPLOYMENT', id: d }, 'MANAGE');
      const role = await makeRole([onDeployments(['DeploymentRead'], [String(d)])]);
      await assign(role.id, user.userId);
      expect((await read(d, user.key)).json()).toMatchObject({ access: 'MANAGE' });
    });
  });

  describe('with the caller cache on', () => {
    it('a change to a role, an assignment or a group membership applies from the next request', async () => {
      const cached = await TestApp.create(dialect, { tenantCacheMs: 60_000 });
      try {
        const d = await cached.deployment('cached');
        const user = await cached.user('VIEWER');
        const read = () => cached.request({ url: `/api/v1/deployments/${d}`, key: user.key });
        problem(await read(), 403, 'FORBIDDEN');
        const role = (
          await cached.request({ method: 'POST', url: '/api/v1/roles', body: { name: 'cached', policies: [onDeployments(['DeploymentRead'], [String(d)])] } })
        ).json() as Role;
        problem(await read(), 403, 'FORBIDDEN');
        await cached.request({ method: 'PUT', url: `/api/v1/roles/${role.id}/users/${user.userId}` });
        expect((await read()).statusCode).toBe(200);
        await cached.request({ method: 'PUT', url: `/api/v1/roles/${role.id}`, body: { policies: [] } });
        problem(await read(), 403, 'FORBIDDEN');
        await cached.request({ method: 'PUT', url: `/api/v1/roles/${role.id}`, body: { policies: [onDeployments(['DeploymentRead'], [String(d)])] } });
        expect((await read()).statusCode).toBe(200);
        await cached.request({ method: 'DELETE', url: `/api/v1/roles/${role.id}/users/${user.userId}` });
        problem(await read(), 403, 'FORBIDDEN');
        const group = (await cached.request({ method: 'POST', url: '/api/v1/groups', body: { name: 'cached-group' } })).json() as { id: number };
        await cached.request({ method: 'PUT', url: `/api/v1/roles/${role.id}/groups/${group.id}` });
        problem(await read(), 403, 'FORBIDDEN');
        await cached.request({ method: 'POST', url: `/api/v1/groups/${group.id}/members`, body: { userIds: [user.userId] } });
        expect((await read()).statusCode).toBe(200);
        await cached.request({ method: 'DELETE', url: `/api/v1/roles/${role.id}` });
        problem(await read(), 403, 'FORBIDDEN');
      } finally {
        await cached.close();
      }
    });
  });

  describe('audit events', () => {
    it('records role create, update, delete, assign and unassign while the audit log is on', async () => {
      expect((await t.request({ method: 'PUT', url: '/api/v1/tenant/settings', body: { auditLogEnabled: true } })).statusCode).toBe(200);
      try {
        const role = await makeRole();
        const user = await t.user('VIEWER');
        const group = await t.group(unique('g'));
        await update(role.id, { description: 'changed' });
        await assign(role.id, user.userId);
        await assign(role.id, user.userId);
        await assignGroup(role.id, group);
        await assign(role.id, user.userId, 'DELETE');
        await remove(role.id);
        const res = await t.request({ url: '/api/v1/tenant/audit-events?first=200' });
        const events = (res.json() as { items: Array<{ action: string; target: Record<string, unknown>; details: Record<string, unknown> }> }).items.filter(
          (e) => e.action.startsWith('role.'),
        );
        const mine = events.filter((e) => e.target.roleId === role.id).map((e) => [e.action, e.target]);
        expect(mine.reverse()).toEqual([
          ['role.created', { roleId: role.id }],
          ['role.updated', { roleId: role.id }],
          ['role.assigned', { roleId: role.id, userId: user.userId }],
          ['role.assigned', { roleId: role.id, groupId: group }],
          ['role.unassigned', { roleId: role.id, userId: user.userId }],
          ['role.deleted', { roleId: role.id }],
        ]);
      } finally {
        await t.request({ method: 'PUT', url: '/api/v1/tenant/settings', body: { auditLogEnabled: false } });
      }
    });
  });
});
