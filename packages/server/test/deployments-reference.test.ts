import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CREATION_STEPS } from '../src/areas/deployments/deployments.schemas.js';
import { DIALECTS, TestApp, problem } from './harness.js';

/*
 * Issue 14, "The reference's deployment shapes" and "Versions, regions" (reference 1.2, 1.4, 1.6,
 * 1.7, 1.15): the settings a PUT merges, the release channel rules, the versions a deployment may
 * switch to, the regions, and the list's filter and deprecated paging.
 */

type Json = Record<string, any>;

for (const dialect of DIALECTS) {
  describe(`deployments as the reference shapes them (${dialect})`, () => {
    let t: TestApp;
    const create = async (body: Json) => {
      const res = await t.request({ method: 'POST', url: '/build/api/v1/deployments/', body });
      expect(res.statusCode, res.body).toBe(200);
      return res.json() as Json;
    };
    const put = (id: number, body: unknown, key?: string) => t.request({ method: 'PUT', url: `/api/v1/deployments/${id}`, body, ...(key ? { key } : {}) });
    const settings = async (id: number) => (await t.request({ url: `/api/v1/deployments/${id}/settings` })).json() as Json;

    beforeAll(async () => {
      t = await TestApp.create(dialect);
    });
    afterAll(() => t.close());

    it('GET …/settings has every required field of DeploymentSettings, with the documented values', async () => {
      const { id, deploymentUrl } = await create({ name: 'settings shape' });
      expect(await settings(id)).toMatchObject({
        id,
        name: 'settings shape',
        template: 'single',
        cloudProvider: 'platform',
        creationStep: 'project',
        deploymentUrl,
        releaseChannel: 'release',
        deployBranchName: 'main',
        deployBranchReadOnly: false,
        deployBranchMergeAllowed: true,
        deployProjectRoot: '',
        isPlatformSqlEnabled: true,
        isSupportPreAggregations: true,
        releaseChannelVersion: '1.1.0',
        releaseChannelVersionHold: false,
        platformImageVersion: 'mapi/runtime:v1.1.0',
        region: 'local',
        isManaged: true,
      });
      expect(deploymentUrl).toBe(`https://localhost/deployments/${id}`);
    });

    it('PUT merges: fields left out or null keep their values; templateVariables merge key by key; the answer is the settings after it (reference 1.4)', async () => {
      const { id } = await create({ name: 'merging' });
      const first = await put(id, {
        templateVariables: { a: 1, b: { c: 2 } },
        launchpadTabs: ['x', 'y'],
        defaultLaunchpadViewGroup: 'g',
        customDomain: 'Data.Example.com',
        template: 'simpleCluster',
      });
      expect(first.statusCode, first.body).toBe(200);
      const second = (await put(id, { templateVariables: { b: { d: 3 }, e: 4 }, template: null, launchpadTabs: null })).json() as Json;
      expect(second).toMatchObject({
        templateVariables: { a: 1, b: { c: 2, d: 3 }, e: 4 },
        launchpadTabs: ['x', 'y'],
        defaultLaunchpadViewGroup: 'g',
        customDomain: 'data.example.com',
        template: 'simpleCluster',
      });
      expect((await put(id, { templateVariables: { a: null } })).json().templateVariables).toEqual({ b: { c: 2, d: 3 }, e: 4 });
      const csps = { enabled: true, storageProvider: 's3', s3Bucket: 'pre-aggs', s3Region: 'eu-west-1' };
      expect((await put(id, { cspsConfig: csps })).json().cspsConfig).toEqual(csps);
      problem(await put(id, { cspsConfig: { enabled: true } }), 400, 'VALIDATION_FAILED');
      problem(await put(id, { region: 'mars' }), 400, 'VALIDATION_FAILED');
      problem(await put(id, { platformImageVersion: 'x' }), 400, 'VALIDATION_FAILED');
    });

    it('a version that is not the channel’s newest holds unless the body says otherwise; changing the channel alone moves to its newest; an unlisted version is 400 (reference 1.4)', async () => {
      const { id } = await create({ name: 'versions' });
      // Listed for the tenant once it has run it: the release channel's newest, 1.1.0, here.
      const latest = (await put(id, { releaseChannel: 'latest' })).json() as Json;
      expect(latest).toMatchObject({ releaseChannel: 'latest', releaseChannelVersion: '1.2.0', releaseChannelVersionHold: false });
      const pinned = (await put(id, { releaseChannelVersion: 'v1.1.0', releaseChannel: 'release' })).json() as Json;
      expect(pinned).toMatchObject({ releaseChannel: 'release', releaseChannelVersion: '1.1.0', releaseChannelVersionHold: false });
      // 1.1.0 is in the tenant's history on the latest channel too? No: only versions it ran there, and the newest.
      problem(await put(id, { releaseChannel: 'latest', releaseChannelVersion: '1.0.0' }), 400, 'VALIDATION_FAILED');
      problem(await put(id, { releaseChannelVersion: 'banana' }), 400, 'VALIDATION_FAILED');
      // Back on latest, then pick the release channel's version it ran before, by its image reference: held.
      await put(id, { releaseChannel: 'latest' });
      const held = (await put(id, { releaseChannel: 'release', releaseChannelVersion: 'registry.example.com/mapi/runtime:v1.1.0' })).json() as Json;
      expect(held).toMatchObject({ releaseChannelVersion: '1.1.0', releaseChannelVersionHold: false });
      const explicit = (await put(id, { releaseChannelVersionHold: true })).json() as Json;
      expect(explicit).toMatchObject({ releaseChannelVersion: '1.1.0', releaseChannelVersionHold: true });
      const versions = (await t.request({ url: `/api/v1/deployments/${id}/versions` })).json() as Json;
      expect(versions.items).toEqual(
        expect.arrayContaining([
          { releaseChannelVersion: '1.2.0', version: '1.2.0', releaseChannel: 'latest', isLatestInChannel: true, isCurrent: false },
          { releaseChannelVersion: '1.1.0', version: '1.1.0', releaseChannel: 'release', isLatestInChannel: true, isCurrent: true },
        ]),
      );
      expect(versions.items.filter((v: Json) => v.isCurrent)).toHaveLength(1);
    });

    it('lists regions: items a page, data the whole list (reference 1.15), for any key', async () => {
      const viewer = await t.user('VIEWER');
      for (const url of ['/api/v1/regions', '/api/v1/regions/']) {
        const res = await t.request({ url, key: viewer.key });
        expect(res.statusCode).toBe(200);
        expect(res.json()).toMatchObject({ items: [{ id: 1, name: 'local' }], data: [{ id: 1, name: 'local' }] });
      }
      const page = (await t.request({ url: '/api/v1/regions?first=1' })).json() as Json;
      expect(page.pageInfo.hasNextPage).toBe(false);
    });

    it('a tenant limited to some regions sees only those, and creating or moving a deployment elsewhere is 400 (reference 1.15)', async () => {
      const other = await TestApp.create(dialect, {
        catalog: {
          versions: { release: ['1.0.0'], latest: ['1.1.0'] },
          regions: [
            { id: 1, name: 'local', title: 'local', provider: 'platform' },
            { id: 2, name: 'eu-west', title: 'eu-west', provider: 'platform' },
          ],
        },
      });
      try {
        const req = (method: 'GET' | 'POST' | 'PUT', url: string, body?: unknown) => other.request({ method, url, ...(body === undefined ? {} : { body }) });
        expect(((await req('GET', '/api/v1/regions')).json() as Json).data.map((r: Json) => r.name)).toEqual(['local', 'eu-west']);
        await other.store.db
          .updateTable('tenants')
          .set({ regions: JSON.stringify(['eu-west']) })
          .where('id', '=', other.tenantId)
          .execute();
        expect(((await req('GET', '/api/v1/regions')).json() as Json).data.map((r: Json) => r.name)).toEqual(['eu-west']);
        const made = (await req('POST', '/build/api/v1/deployments/', { name: 'regional' })).json() as Json;
        expect(((await req('GET', `/api/v1/deployments/${made.id}/settings`)).json() as Json).region).toBe('eu-west');
        problem(await req('POST', '/build/api/v1/deployments/', { name: 'local one', region: 'local' }), 400, 'VALIDATION_FAILED');
        problem(await req('PUT', `/api/v1/deployments/${made.id}`, { region: 'local' }), 400, 'VALIDATION_FAILED');
      } finally {
        await other.close();
      }
    });

    it('filters the list by creationStep and keeps the deprecated offset and limit with pagination (reference 1.2)', async () => {
      const tenant = await t.tenant('list-filters');
      const key = tenant.admin.key;
      const host = 'list-filters.test';
      await t.store.db.insertInto('tenant_hosts').values({ host, tenant_id: tenant.tenantId, created_at: new Date().toISOString() }).execute();
      const make = async (name: string, creationStep: string) =>
        (await t.request({ method: 'POST', url: '/build/api/v1/deployments/', body: { name, creationStep }, key, host })).json() as Json;
      const a = await make('a', 'project');
      const b = await make('b', 'ready');
      const c = await make('c', 'databases');
      const list = (query: string) => t.request({ url: `/api/v1/deployments${query}`, key, host });
      const ready = (await list('?creationStep=ready')).json() as Json;
      expect(ready.items.map((d: Json) => d.id)).toEqual([b.id]);
      expect(ready.count).toBe(1);
      const two = (await list('?creationStep=ready&creationStep=databases')).json() as Json;
      expect(two.items.map((d: Json) => d.id)).toEqual([b.id, c.id]);
      const paged = (await list('?offset=1&limit=1')).json() as Json;
      expect(paged.items.map((d: Json) => d.id)).toEqual([b.id]);
      expect(paged.pagination).toEqual({ total: 3, offset: 1, limit: 1 });
      expect(paged.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: true });
      expect(((await list('')).json() as Json).pagination).toEqual({ total: 3, offset: 0, limit: 100 });
      problem(await list(`?offset=1&after=${paged.pageInfo.endCursor}`), 400, 'VALIDATION_FAILED');
      problem(await list('?creationStep=finished'), 400, 'VALIDATION_FAILED');
      expect(a.deploymentUrl).toMatch(/\/deployments\/\d+$/);
    });

    it('the setup wizard moves from any step to any other, as the reference does not restrict them; ready needs no build; reset goes back to project (reference 1.13, 1.14)', async () => {
      const { id } = await create({ name: 'wizard' });
      const advance = (creationStep: string, key?: string) =>
        t.request({ method: 'POST', url: `/api/v1/deployments/${id}/creation-step/advance`, body: { creationStep }, ...(key ? { key } : {}) });
      // Every ordered pair of steps, backwards and sideways included.
      for (const from of CREATION_STEPS) {
        for (const to of CREATION_STEPS) {
          expect((await advance(from)).json().creationStep).toBe(from);
          const moved = await advance(to);
          expect(moved.statusCode, `${from} -> ${to}: ${moved.body}`).toBe(200);
          expect(moved.json()).toMatchObject({ id, creationStep: to });
        }
      }
      // `ready` is a place in the wizard, not a build check: build status says whether production built.
      await advance('project');
      await t.store.db.deleteFrom('builds').where('deployment_id', '=', id).execute();
      expect((await advance('ready')).json().creationStep).toBe('ready');
      expect(((await t.request({ url: `/api/v1/deployments/${id}/settings` })).json() as Json).creationStep).toBe('ready');
      // Advancing to the current step changes nothing.
      const before = (await t.request({ url: `/api/v1/deployments/${id}` })).json() as Json;
      expect((await advance('ready')).json()).toMatchObject({ creationStep: 'ready', updatedAt: before.updatedAt });
      problem(await advance('finished'), 400, 'VALIDATION_FAILED');
      const reset = await t.request({ method: 'POST', url: `/api/v1/deployments/${id}/creation-step/reset` });
      expect(reset.json()).toMatchObject({ id, creationStep: 'project' });
      const viewer = await t.user('VIEWER');
      await t.grant({ type: 'USER', id: viewer.userId }, { type: 'DEPLOYMENT', id }, 'VIEW');
      problem(await advance('upload', viewer.key), 403, 'FORBIDDEN');
    });

    it('lists environments: one production, staging branches whose flag is on, a development environment per credential in dev mode (reference 1.17)', async () => {
      const { id, deploymentUrl } = await create({ name: 'environments' });
      const dev = await t.user('DEVELOPER', { email: 'dana@example.com' });
      await t.grant({ type: 'USER', id: dev.userId }, { type: 'DEPLOYMENT', id }, 'EDIT');
      await t.request({ method: 'POST', url: `/build/api/v1/deployments/${id}/branches`, body: { name: 'stage/eu' } });
      await t.request({ method: 'POST', url: `/build/api/v1/deployments/${id}/branches`, body: { name: 'quiet' } });
      expect(
        (
          await t.request({
            method: 'PUT',
            url: `/build/api/v1/deployments/${id}/branches/staging-environment`,
            body: { enabled: true, branchName: 'stage/eu' },
          })
        ).statusCode,
      ).toBe(200);
      const devBranch = (await t.request({ method: 'POST', url: `/build/api/v1/deployments/${id}/dev-mode`, key: dev.key })).json().branchName as string;
      const all = (await t.request({ url: `/api/v1/deployments/${id}/environments` })).json() as Json;
      expect(all.items).toEqual([
        {
          id: 'production',
          type: 'production',
          branch: 'main',
          user: null,
          api_credentials: [{ type: 'rest', version: 1, url: `${deploymentUrl}/data-api/v1` }],
        },
        {
          id: expect.stringMatching(/^staging-\d+$/),
          type: 'staging',
          branch: 'stage/eu',
          user: null,
          api_credentials: [{ type: 'rest', version: 1, url: `${deploymentUrl}/dev-mode/stage%2Feu/data-api/v1` }],
        },
        {
          id: expect.stringMatching(/^development-\d+$/),
          type: 'development',
          branch: devBranch,
          user: 'dana@example.com',
          api_credentials: [{ type: 'rest', version: 1, url: `${deploymentUrl}/dev-mode/${devBranch}/data-api/v1` }],
        },
      ]);
      expect(all.data).toEqual(all.items);
      expect(all.pagination).toEqual({ total: 3, offset: 0, limit: 100 });
      expect(((await t.request({ url: `/api/v1/deployments/${id}/environments?type=staging` })).json() as Json).items.map((e: Json) => e.branch)).toEqual([
        'stage/eu',
      ]);
      const second = (await t.request({ url: `/api/v1/deployments/${id}/environments?offset=1&limit=1` })).json() as Json;
      expect(second.items.map((e: Json) => e.type)).toEqual(['staging']);
      await t.request({ method: 'DELETE', url: `/build/api/v1/deployments/${id}/dev-mode`, key: dev.key });
      expect(((await t.request({ url: `/api/v1/deployments/${id}/environments?type=development` })).json() as Json).items).toEqual([]);
      const stranger = await t.user('DEVELOPER');
      problem(await t.request({ url: `/api/v1/deployments/${id}/environments`, key: stranger.key }), 403, 'FORBIDDEN');
    });

    it('settings and versions are readable with DeploymentRead; PUT needs DeploymentUpdate (MANAGE and a developer role)', async () => {
      const { id } = await create({ name: 'guarded settings' });
      const viewer = await t.user('VIEWER');
      await t.grant({ type: 'USER', id: viewer.userId }, { type: 'DEPLOYMENT', id }, 'VIEW');
      expect((await t.request({ url: `/api/v1/deployments/${id}/settings`, key: viewer.key })).statusCode).toBe(200);
      expect((await t.request({ url: `/api/v1/deployments/${id}/versions`, key: viewer.key })).statusCode).toBe(200);
      problem(await put(id, { template: 'single' }, viewer.key), 403, 'FORBIDDEN');
      const explorer = await t.user('EXPLORER');
      await t.grant({ type: 'USER', id: explorer.userId }, { type: 'DEPLOYMENT', id }, 'MANAGE');
      problem(await put(id, { template: 'single' }, explorer.key), 403, 'FORBIDDEN');
    });
  });
}
