import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkspaceFixtures } from './workspace-fixtures.js';
import { DIALECTS, TestApp, problem } from './harness.js';

interface Deployment {
  id: number;
  name: string;
  createdAt: string;
  updatedAt: string;
  access: 'VIEW' | 'EDIT' | 'MANAGE' | null;
}

describe.each(DIALECTS)('deployments (%s)', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await TestApp.create(dialect);
  });
  afterAll(async () => t?.close());

  const get = (id: number, key?: string) => t.request({ url: `/api/v1/deployments/${id}`, key });
  const put = (id: number, body: unknown, key?: string) => t.request({ method: 'PUT', url: `/api/v1/deployments/${id}`, body, key });
  const del = (id: number, key?: string) => t.request({ method: 'DELETE', url: `/api/v1/deployments/${id}`, key });
  const settings = (id: number, key?: string) => t.request({ url: `/api/v1/deployments/${id}/settings`, key });
  /** The free-form settings (an extension kept for earlier clients), beside the reference's settings every deployment has. */
  const freeForm = (body: Record<string, unknown>) => {
    expect(body).toMatchObject({
      deployBranchName: 'main',
      deployBranchReadOnly: false,
      deployBranchMergeAllowed: true,
      deployProjectRoot: '',
      deployMode: 'git',
    });
    return body.settings as Record<string, unknown>;
  };

  /**
   * Walks every page of the list, checking each page is honest about what follows, and that every
   * page's deprecated `count` and `totalCount` are the whole list's total (issue 11, reference shapes 0.3).
   */
  async function listAll(key: string, first = 2): Promise<Deployment[]> {
    const seen: Deployment[] = [];
    const totals: number[] = [];
    let after: string | null = null;
    for (;;) {
      const query: string = after === null ? `first=${first}` : `first=${first}&after=${after}`;
      const res = await t.request({ url: `/api/v1/deployments?${query}`, key });
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body.data).toEqual(body.items);
      expect(body.totalCount).toBe(body.count);
      totals.push(body.count);
      seen.push(...body.items);
      if (!body.pageInfo.hasNextPage) {
        expect(new Set(totals)).toEqual(new Set([seen.length]));
        return seen;
      }
      expect(body.items).toHaveLength(first);
      after = body.pageInfo.endCursor;
    }
  }

  describe('create', () => {
    it('lets an admin create one at POST /build/api/v1/deployments/ and answers 200 with the reference’s Deployment and full access (reference 1.1)', async () => {
      const res = await t.request({ method: 'POST', url: '/build/api/v1/deployments/', body: { name: 'sales' } });
      expect(res.statusCode).toBe(200);
      const created = res.json();
      expect(created).toEqual({
        id: expect.any(Number),
        name: 'sales',
        deploymentUrl: `https://localhost/deployments/${created.id}`,
        creationStep: 'project',
        createdAt: expect.any(String),
        updatedAt: created.createdAt,
        access: 'MANAGE',
      });
      expect((await get(created.id)).json()).toEqual(created);
    });

    it('takes the reference’s CreateDeploymentInput, and refuses a region that is not offered', async () => {
      const body = {
        name: 'full input',
        cloudProvider: 'platform',
        isManaged: false,
        region: 'local',
        targetPlatform: 'process',
        creationStep: 'databases',
        creationMethod: 'upload',
        deployMode: 'cli',
      };
      const res = await t.request({ method: 'POST', url: '/build/api/v1/deployments', body });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ name: 'full input', creationStep: 'databases' });
      expect((await settings(res.json().id)).json()).toMatchObject({
        cloudProvider: 'platform',
        isManaged: false,
        region: 'local',
        targetPlatform: 'process',
        creationStep: 'databases',
        creationMethod: 'upload',
        deployMode: 'cli',
      });
      problem(
        await t.request({ method: 'POST', url: '/build/api/v1/deployments', body: { ...body, name: 'elsewhere', region: 'mars' } }),
        400,
        'VALIDATION_FAILED',
      );
    });

    it('keeps deployment names unique in the account, whatever their case (409)', async () => {
      expect((await t.request({ method: 'POST', url: '/build/api/v1/deployments/', body: { name: 'Unique Name' } })).statusCode).toBe(200);
      problem(await t.request({ method: 'POST', url: '/build/api/v1/deployments/', body: { name: 'unique name' } }), 409, 'DEPLOYMENT_NAME_TAKEN');
      const other = (await t.request({ method: 'POST', url: '/build/api/v1/deployments/', body: { name: 'Other Name' } })).json();
      problem(await put(other.id, { name: 'UNIQUE NAME' }), 409, 'DEPLOYMENT_NAME_TAKEN');
    });

    it('accepts the path without its trailing slash too', async () => {
      const res = await t.request({ method: 'POST', url: '/build/api/v1/deployments', body: { name: 'no-slash' } });
      expect(res.statusCode).toBe(200);
    });

    it('lets a DEVELOPER create one (DeploymentCreate), and refuses an EXPLORER and a VIEWER with 403', async () => {
      const dev = await t.user('DEVELOPER');
      expect((await t.request({ method: 'POST', url: '/build/api/v1/deployments/', body: { name: 'by a developer' }, key: dev.key })).json().access).toBe(
        'MANAGE',
      );
      for (const role of ['EXPLORER', 'VIEWER'] as const) {
        const user = await t.user(role);
        problem(await t.request({ method: 'POST', url: '/build/api/v1/deployments/', body: { name: `by ${role}` }, key: user.key }), 403, 'FORBIDDEN');
      }
    });

    it('refuses a key scoped to deployments, even an admin one (spec: Authentication 4, 7)', async () => {
      const id = await t.deployment('scoped-home');
      const key = await t.key(t.admin.userId, { deploymentIds: [id] });
      problem(await t.request({ method: 'POST', url: '/build/api/v1/deployments/', body: { name: 'x' }, key }), 403, 'KEY_SCOPE_FORBIDDEN');
    });

    it('rejects an empty, overlong or missing name, and unknown fields', async () => {
      for (const body of [{ name: '' }, { name: 'x'.repeat(256) }, {}, { name: 'ok', colour: 'red' }, { name: 'ok', creationStep: 'done' }]) {
        problem(await t.request({ method: 'POST', url: '/build/api/v1/deployments/', body }), 400, 'VALIDATION_FAILED');
      }
      expect((await t.request({ method: 'POST', url: '/build/api/v1/deployments/', body: { name: 'x'.repeat(255) } })).statusCode).toBe(200);
    });

    it('makes the creator the owner: a DEVELOPER who created one holds MANAGE on it', async () => {
      const dev = await t.user('DEVELOPER');
      const id = await t.deployment('owned', { createdBy: dev.userId });
      expect((await get(id, dev.key)).json().access).toBe('MANAGE');
      expect((await put(id, { name: 'owned-renamed' }, dev.key)).statusCode).toBe(200);
    });
  });

  describe('tenancy and order of checks', () => {
    it("answers 404 for another tenant's deployment, as for one that never existed", async () => {
      const other = await t.tenant('other-co');
      const foreign = await t.deployment('theirs', { tenantId: other.tenantId });
      problem(await get(foreign), 404, 'DEPLOYMENT_NOT_FOUND');
      problem(await put(foreign, { name: 'mine' }), 404, 'DEPLOYMENT_NOT_FOUND');
      problem(await del(foreign), 404, 'DEPLOYMENT_NOT_FOUND');
      problem(await settings(foreign), 404, 'DEPLOYMENT_NOT_FOUND');
      problem(await get(999_999), 404, 'DEPLOYMENT_NOT_FOUND');
      expect((await listAll(t.admin.key, 200)).map((d) => d.id)).not.toContain(foreign);
    });

    it('checks existence before access: a user with no access gets 404 for a missing one, 403 for an existing one', async () => {
      const explorer = await t.user('EXPLORER');
      const id = await t.deployment('private');
      problem(await get(999_998, explorer.key), 404, 'DEPLOYMENT_NOT_FOUND');
      problem(await get(id, explorer.key), 403, 'FORBIDDEN');
    });

    it('checks key scope before anything, even for unknown ids (spec: Authentication 4)', async () => {
      const inScope = await t.deployment('in-scope');
      const outOfScope = await t.deployment('out-of-scope');
      const key = await t.key(t.admin.userId, { deploymentIds: [inScope] });
      expect((await get(inScope, key)).statusCode).toBe(200);
      problem(await get(outOfScope, key), 403, 'KEY_SCOPE_FORBIDDEN');
      problem(await get(999_997, key), 403, 'KEY_SCOPE_FORBIDDEN');
      problem(await put(outOfScope, { name: 'x' }, key), 403, 'KEY_SCOPE_FORBIDDEN');
      problem(await del(outOfScope, key), 403, 'KEY_SCOPE_FORBIDDEN');
      problem(await settings(outOfScope, key), 403, 'KEY_SCOPE_FORBIDDEN');
      // The body is never looked at: an invalid one still gets the scope answer.
      problem(await put(outOfScope, { name: '' }, key), 403, 'KEY_SCOPE_FORBIDDEN');
    });
  });

  describe('access (DESIGN.md, Roles and access)', () => {
    it('shows the caller’s effective access on each deployment; an admin holds MANAGE everywhere', async () => {
      const id = await t.deployment('anyone-s');
      expect((await get(id)).json().access).toBe('MANAGE');
    });

    it('applies a direct grant: VIEW reads but cannot update or delete', async () => {
      const explorer = await t.user('EXPLORER');
      const id = await t.deployment('viewable');
      await t.grant({ type: 'USER', id: explorer.userId }, { type: 'DEPLOYMENT', id }, 'VIEW');
      expect((await get(id, explorer.key)).json().access).toBe('VIEW');
      expect((await settings(id, explorer.key)).statusCode).toBe(200);
      problem(await put(id, { name: 'nope' }, explorer.key), 403, 'FORBIDDEN');
      problem(await del(id, explorer.key), 403, 'FORBIDDEN');
    });

    it('applies grants to a group the user belongs to, and the highest grant wins', async () => {
      const dev = await t.user('DEVELOPER');
      const id = await t.deployment('grouped');
      const group = await t.group('engineers', [dev.userId]);
      await t.grant({ type: 'USER', id: dev.userId }, { type: 'DEPLOYMENT', id }, 'VIEW');
      await t.grant({ type: 'GROUP', id: group }, { type: 'DEPLOYMENT', id }, 'EDIT');
      expect((await get(id, dev.key)).json().access).toBe('EDIT');
      problem(await put(id, { name: 'edit-is-not-enough' }, dev.key), 403, 'FORBIDDEN');

      const admins = await t.group('deployment-admins', [dev.userId]);
      await t.grant({ type: 'GROUP', id: admins }, { type: 'DEPLOYMENT', id }, 'MANAGE');
      expect((await get(id, dev.key)).json().access).toBe('MANAGE');
      expect((await put(id, { name: 'managed' }, dev.key)).json()).toMatchObject({ id, name: 'managed' });
    });

    it('caps a VIEWER at VIEW, whatever the policy says and even on what they created', async () => {
      const viewer = await t.user('VIEWER');
      const granted = await t.deployment('viewer-granted');
      const own = await t.deployment('viewer-own', { createdBy: viewer.userId });
      await t.grant({ type: 'USER', id: viewer.userId }, { type: 'DEPLOYMENT', id: granted }, 'MANAGE');
      expect((await get(granted, viewer.key)).json().access).toBe('VIEW');
      expect((await get(own, viewer.key)).json().access).toBe('VIEW');
      problem(await put(granted, { name: 'x' }, viewer.key), 403, 'FORBIDDEN');
      problem(await del(own, viewer.key), 403, 'FORBIDDEN');
      const listed = await listAll(viewer.key);
      expect(listed.filter((d) => [granted, own].includes(d.id)).map((d) => d.access)).toEqual(['VIEW', 'VIEW']);
    });

    it('shows a user with no grant no deployment at all, and 403 on each', async () => {
      const explorer = await t.user('EXPLORER');
      const id = await t.deployment('invisible');
      expect(await listAll(explorer.key)).toEqual([]);
      problem(await get(id, explorer.key), 403, 'FORBIDDEN');
      problem(await settings(id, explorer.key), 403, 'FORBIDDEN');
    });

    it('lists, with access null, a deployment where the user holds grants only on items inside; its settings stay closed', async () => {
      const explorer = await t.user('EXPLORER');
      const id = await t.deployment('items-only');
      const w = new WorkspaceFixtures(t, id);
      const group = await t.group(`items-only-${explorer.userId}`, [explorer.userId]);
      await t.grant({ type: 'GROUP', id: group }, { type: 'FOLDER', id: await w.folder('shared') }, 'EDIT');
      expect((await listAll(explorer.key)).map((d) => [d.id, d.access])).toEqual([[id, null]]);
      expect((await get(id, explorer.key)).json()).toMatchObject({ id, access: null });
      problem(await settings(id, explorer.key), 403, 'FORBIDDEN');
    });

    it('removes group access on the next request once the user leaves the group', async () => {
      const dev = await t.user('DEVELOPER');
      const id = await t.deployment('team-only');
      const group = await t.group('team', [dev.userId]);
      await t.grant({ type: 'GROUP', id: group }, { type: 'DEPLOYMENT', id }, 'EDIT');
      expect((await get(id, dev.key)).json().access).toBe('EDIT');
      // The groups area owns membership; removing the row is exactly what leaving the group does.
      await t.store.db.deleteFrom('group_members').where('group_id', '=', group).where('user_id', '=', dev.userId).execute();
      problem(await get(id, dev.key), 403, 'FORBIDDEN');
      expect((await listAll(dev.key)).map((d) => d.id)).not.toContain(id);
    });

    it('removes access on the next request once the policy is deleted', async () => {
      const dev = await t.user('DEVELOPER');
      const id = await t.deployment('revocable');
      const policy = await t.grant({ type: 'USER', id: dev.userId }, { type: 'DEPLOYMENT', id }, 'MANAGE');
      expect((await listAll(dev.key)).map((d) => d.id)).toEqual([id]);
      expect((await t.request({ method: 'DELETE', url: `/api/v1/policies/${policy}` })).statusCode).toBe(204);
      problem(await put(id, { name: 'too-late' }, dev.key), 403, 'FORBIDDEN');
      expect(await listAll(dev.key)).toEqual([]);
    });
  });

  describe('list', () => {
    it('pages through every deployment for an admin, in id order, with legacy data, and count and totalCount the total', async () => {
      for (let i = 0; i < 5; i++) await t.deployment(`bulk-${i}`);
      const all = await t.store.db.selectFrom('deployments').select('id').where('tenant_id', '=', t.tenantId).orderBy('id').execute();
      const listed = await listAll(t.admin.key, 3);
      expect(listed.map((d) => d.id)).toEqual(all.map((r) => r.id));
      expect(new Set(listed.map((d) => d.access))).toEqual(new Set(['MANAGE']));
    });

    it('pages a non-admin through only what they may see, with no short page claiming more', async () => {
      const explorer = await t.user('EXPLORER');
      const group = await t.group('sparse-readers', [explorer.userId]);
      const visible: number[] = [];
      for (let i = 0; i < 9; i++) {
        const id = await t.deployment(`sparse-${i}`, { createdBy: i === 8 ? explorer.userId : null });
        if (i % 3 === 0) await t.grant({ type: 'USER', id: explorer.userId }, { type: 'DEPLOYMENT', id }, 'EDIT');
        if (i % 3 === 1) await t.grant({ type: 'GROUP', id: group }, { type: 'DEPLOYMENT', id }, 'VIEW');
        if (i % 3 !== 2 || i === 8) visible.push(id);
      }
      const listed = await listAll(explorer.key, 2);
      expect(listed.map((d) => d.id)).toEqual(visible);
      expect(listed.map((d) => d.access)).toEqual(['EDIT', 'VIEW', 'EDIT', 'VIEW', 'EDIT', 'VIEW', 'MANAGE']);
    });

    it('lists only in-scope deployments for a scoped key (spec: Authentication 4)', async () => {
      const a = await t.deployment('scope-a');
      await t.deployment('scope-b');
      const c = await t.deployment('scope-c');
      const key = await t.key(t.admin.userId, { deploymentIds: [c, a] });
      expect((await listAll(key, 1)).map((d) => d.id)).toEqual([a, c]);
    });

    it('intersects key scope with the user’s own access', async () => {
      const dev = await t.user('DEVELOPER');
      const granted = await t.deployment('scope-granted');
      const notGranted = await t.deployment('scope-not-granted');
      await t.grant({ type: 'USER', id: dev.userId }, { type: 'DEPLOYMENT', id: granted }, 'VIEW');
      const key = await t.key(dev.userId, { deploymentIds: [granted, notGranted] });
      expect((await listAll(key)).map((d) => d.id)).toEqual([granted]);
      problem(await get(notGranted, key), 403, 'FORBIDDEN');
    });

    it('rejects a cursor it did not issue, and a page size above 200', async () => {
      problem(await t.request({ url: '/api/v1/deployments?after=bogus' }), 400, 'INVALID_CURSOR');
      problem(await t.request({ url: '/api/v1/deployments?first=201' }), 400, 'VALIDATION_FAILED');
    });
  });

  describe('update and settings', () => {
    it('renames, and merges settings as a JSON merge patch: null removes, nested objects merge', async () => {
      const id = await t.deployment('patchable');
      const before = (await get(id)).json();
      const first = await put(id, { settings: { region: 'eu', build: { node: 20, cache: true }, retries: 3 } });
      expect(first.statusCode).toBe(200);
      const second = await put(id, { name: 'patched', settings: { retries: null, build: { cache: null, memory: '2g' } } });
      expect(second.json()).toMatchObject({ id, name: 'patched' });
      expect((await get(id)).json().updatedAt >= before.updatedAt).toBe(true);
      expect(freeForm((await settings(id)).json())).toEqual({ region: 'eu', build: { node: 20, memory: '2g' } });
    });

    it('leaves settings alone when only the name changes, and the name alone when only settings change', async () => {
      const id = await t.deployment('partial');
      await put(id, { settings: { a: 1 } });
      await put(id, { name: 'partial-2' });
      expect(freeForm((await settings(id)).json())).toEqual({ a: 1 });
      await put(id, { settings: { b: 2 } });
      expect((await get(id)).json().name).toBe('partial-2');
      expect(freeForm((await settings(id)).json())).toEqual({ a: 1, b: 2 });
    });

    it('never returns secrets from the settings, at any depth (spec: "secrets excluded")', async () => {
      const id = await t.deployment('secretive');
      await put(id, {
        settings: {
          warehouse: { host: 'db.internal', password: 'hunter2', authToken: 't', user: 'etl' },
          clientSecret: 's',
          PRIVATE_KEY: 'k',
          apiToken: 'x',
          sources: [{ name: 'crm', secretRef: 'vault:1' }],
          theme: 'dark',
        },
      });
      const res = await settings(id);
      expect(freeForm(res.json())).toEqual({ warehouse: { host: 'db.internal', user: 'etl' }, sources: [{ name: 'crm' }], theme: 'dark' });
      expect(res.body).not.toMatch(/hunter2|vault:1/);
    });

    it('rejects settings that are not an object, and unknown fields', async () => {
      const id = await t.deployment('strict');
      for (const body of [{ settings: [1] }, { settings: 'x' }, { name: '' }, { owner: 3 }]) {
        problem(await put(id, body), 400, 'VALIDATION_FAILED');
      }
    });

    it('refuses settings nested deeper than 32 levels with 400 (never a stack overflow), storing nothing', async () => {
      const id = await t.deployment('deep');
      const nest = (depth: number): unknown => (depth === 0 ? 1 : { a: nest(depth - 1) });
      expect((await put(id, { settings: nest(32) })).statusCode).toBe(200);
      for (const depth of [33, 5000]) {
        // Built as text: recursion in the test itself would not survive 5000 levels.
        const body = `{"settings":{"other":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}}`;
        const res = await t.request({ method: 'PUT', url: `/api/v1/deployments/${id}`, body, headers: { 'content-type': 'application/json' } });
        expect(problem(res, 400, 'VALIDATION_FAILED').errors?.[0]?.pointer).toBe('/body/settings');
      }
      expect(Object.keys(freeForm((await settings(id)).json()))).toEqual(['a']);
    });

    it('keeps every key of concurrent settings patches', async () => {
      const id = await t.deployment('concurrent');
      const results = await Promise.all(Array.from({ length: 6 }, (_, i) => put(id, { settings: { [`k${i}`]: i } })));
      expect(results.map((r) => r.statusCode)).toEqual([200, 200, 200, 200, 200, 200]);
      expect(freeForm((await settings(id)).json())).toEqual({ k0: 0, k1: 1, k2: 2, k3: 3, k4: 4, k5: 5 });
    });
  });

  describe('delete', () => {
    it('removes the deployment and the policies on it, and nothing else', async () => {
      const dev = await t.user('DEVELOPER');
      const doomed = await t.deployment('doomed');
      const kept = await t.deployment('kept');
      await t.grant({ type: 'USER', id: dev.userId }, { type: 'DEPLOYMENT', id: doomed }, 'VIEW');
      const keptPolicy = await t.grant({ type: 'USER', id: dev.userId }, { type: 'DEPLOYMENT', id: kept }, 'VIEW');
      const res = await del(doomed);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ success: true });
      problem(await get(doomed), 404, 'DEPLOYMENT_NOT_FOUND');
      problem(await del(doomed), 404, 'DEPLOYMENT_NOT_FOUND');
      const policies = (await t.request({ url: `/api/v1/policies?principalType=USER&principalId=${dev.userId}` })).json();
      expect(policies.items.map((p: { id: number }) => p.id)).toEqual([keptPolicy]);
      expect((await listAll(dev.key)).map((d) => d.id)).toEqual([kept]);
    });

    it('removes the grants on the folders, workbooks and reports inside it', async () => {
      const dev = await t.user('DEVELOPER');
      const doomed = await t.deployment('doomed-items');
      const w = new WorkspaceFixtures(t, doomed);
      await t.grant({ type: 'USER', id: dev.userId }, { type: 'FOLDER', id: await w.folder('f') }, 'VIEW');
      await t.grant({ type: 'USER', id: dev.userId }, { type: 'REPORT', id: await w.report('r') }, 'VIEW');
      expect((await del(doomed)).statusCode).toBe(200);
      const left = await t.store.db.selectFrom('policies').select('id').where('principal_id', '=', dev.userId).execute();
      expect(left).toEqual([]);
      expect(await t.store.db.selectFrom('folders').select('id').where('deployment_id', '=', doomed).execute()).toEqual([]);
    });

    it('lets a MANAGE grantee with a developer role delete (DeploymentDelete), and refuses an EDIT grantee', async () => {
      const editor = await t.user('DEVELOPER');
      const manager = await t.user('DEVELOPER');
      const id = await t.deployment('shared');
      await t.grant({ type: 'USER', id: editor.userId }, { type: 'DEPLOYMENT', id }, 'EDIT');
      await t.grant({ type: 'USER', id: manager.userId }, { type: 'DEPLOYMENT', id }, 'MANAGE');
      problem(await del(id, editor.key), 403, 'FORBIDDEN');
      expect((await del(id, manager.key)).statusCode).toBe(200);
    });
  });
});
