import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, TestApp, problem, type Caller } from './harness.js';
import { WorkspaceFixtures } from './workspace-fixtures.js';

interface EmbedAccess {
  allowEmbed: boolean;
  allEmbedUsers: { enabled: boolean; action: 'read' | 'none'; groupId: number | null };
  tenants: Array<{ embedTenantName: string; groupId: number; action: 'read' | 'none' }>;
}

let seq = 0;
const uniqueTenant = () => `a-${process.pid}-${++seq}`;

describe.each(DIALECTS)('embed access (%s)', (dialect) => {
  let t: TestApp;
  let deploymentId: number;
  let items: WorkspaceFixtures;
  let other: { tenantId: number; admin: Caller };
  let explorer: Caller;
  beforeAll(async () => {
    t = await TestApp.create(dialect);
    deploymentId = await t.deployment('embed-access');
    items = new WorkspaceFixtures({ store: t.store, tenantId: t.tenantId }, deploymentId);
    other = await t.tenant('embed-access-other', ['embed-access-other.example.test']);
    explorer = await t.user('EXPLORER');
  });
  afterAll(async () => t?.close());

  const embedTenant = async () => {
    const name = uniqueTenant();
    expect((await t.request({ method: 'POST', url: `/api/v1/embed-tenants/${name}/user`, body: { externalId: 'seed' } })).statusCode).toBe(200);
    return name;
  };
  const workbookUrl = (id: number, d = deploymentId) => `/api/v1/deployments/${d}/workbooks/${id}/embed-access`;
  const folderUrl = (id: number) => `/api/v1/deployments/${deploymentId}/folders/${id}/embed-access`;
  const put = (url: string, body: unknown, key?: string) => t.request({ method: 'PUT', url, body, ...(key ? { key } : {}) });
  const reach = async (name: string, source?: string, query = '') => {
    const res = await t.request({
      url: `/api/v1/deployments/${deploymentId}/embed-tenants/${name}/workbooks?${source ? `accessSource=${source}&` : ''}${query}`,
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { items: Array<{ id: number; name: string }>; pageInfo: { hasNextPage: boolean; endCursor: string | null } };
  };
  /** Publishes the workbook's dashboard through the dashboards routes (8.G.2, 8.G.3); returns its public id. */
  const publish = async (workbookId: number): Promise<string> => {
    const widget = { type: 'TEXT', position: { x: 0, y: 0, w: 6, h: 4 }, config: { text: 'hello' } };
    const draft = await t.request({
      method: 'PUT',
      url: `/api/v1/deployments/${deploymentId}/workbooks/${workbookId}/dashboard`,
      body: { dashboardDraft: { title: 'Embedded', widgets: [widget] } },
    });
    expect(draft.statusCode, draft.body).toBe(200);
    const res = await t.request({ method: 'POST', url: `/api/v1/deployments/${deploymentId}/workbooks/${workbookId}/publish` });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { publicId: string }).publicId;
  };

  describe("read and change a workbook's embed access (3.4, 3.5)", () => {
    it('starts with nothing shared and allowEmbed false', async () => {
      const workbookId = await items.workbook(`fresh-${seq}`);
      const res = await t.request({ url: workbookUrl(workbookId) });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({
        allowEmbed: false,
        allEmbedUsers: { enabled: false, action: 'none', groupId: expect.toSatisfy((v: unknown) => v === null || typeof v === 'number') },
        tenants: [],
      });
    });

    it('shares with an embed tenant (its system group) and removes the share; sharing twice is harmless', async () => {
      const name = await embedTenant();
      const workbookId = await items.workbook(`shared-${seq}`);
      const shared = await put(workbookUrl(workbookId), { embedTenantName: name.toUpperCase(), action: 'read' });
      expect(shared.statusCode, shared.body).toBe(200);
      const body = shared.json() as EmbedAccess;
      expect(body.tenants).toEqual([{ embedTenantName: name, groupId: expect.any(Number), action: 'read' }]);
      const system = await t.store.db.selectFrom('embed_groups').select(['id', 'name']).where('id', '=', body.tenants[0]!.groupId).executeTakeFirstOrThrow();
      expect(system.name).toBe(`system:tenant:${name}`);
      expect((await put(workbookUrl(workbookId), { embedTenantName: name, action: 'read' })).json().tenants).toHaveLength(1);
      expect((await t.request({ url: workbookUrl(workbookId) })).json()).toEqual(body);
      const removed = await put(workbookUrl(workbookId), { embedTenantName: name, action: 'none' });
      expect(removed.json().tenants).toEqual([]);
    });

    it('shares with all embed users through the built-in group', async () => {
      const workbookId = await items.workbook(`all-${seq}`);
      const res = await put(workbookUrl(workbookId), { allEmbedUsers: true, action: 'read' });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().allEmbedUsers).toEqual({ enabled: true, action: 'read', groupId: expect.any(Number) });
      const off = await put(workbookUrl(workbookId), { allEmbedUsers: true, action: 'none' });
      expect(off.json().allEmbedUsers).toMatchObject({ enabled: false, action: 'none' });
    });

    it('refuses: two targets, a target without action, an action without target, a request that changes nothing (400); unknown tenant (404)', async () => {
      const name = await embedTenant();
      const workbookId = await items.workbook(`strict-${seq}`);
      problem(await put(workbookUrl(workbookId), { embedTenantName: name, allEmbedUsers: true, action: 'read' }), 400, 'VALIDATION_FAILED');
      problem(await put(workbookUrl(workbookId), { embedTenantName: name }), 400, 'VALIDATION_FAILED');
      problem(await put(workbookUrl(workbookId), { action: 'read' }), 400, 'VALIDATION_FAILED');
      problem(await put(workbookUrl(workbookId), { allEmbedUsers: false, action: 'read' }), 400, 'VALIDATION_FAILED');
      problem(await put(workbookUrl(workbookId), {}), 400, 'VALIDATION_FAILED');
      problem(await put(workbookUrl(workbookId), { embedTenantName: uniqueTenant(), action: 'read' }), 404, 'EMBED_TENANT_NOT_FOUND');
      const bad = problem(await put(workbookUrl(workbookId), { embedTenantName: 'Not Valid!', action: 'read' }), 400, 'VALIDATION_FAILED');
      expect(bad.errors?.[0]?.pointer).toBe('/body/embedTenantName');
      expect((await t.request({ url: workbookUrl(workbookId) })).json().tenants).toEqual([]);
    });

    it('sets allowEmbed only on a workbook with a published dashboard (else 400), alone or with a share', async () => {
      const name = await embedTenant();
      const unpublished = await items.workbook(`unpublished-${seq}`);
      problem(await put(workbookUrl(unpublished), { allowEmbed: true }), 400, 'INVALID_OPERATION');
      problem(await put(workbookUrl(unpublished), { allowEmbed: true, embedTenantName: name, action: 'read' }), 400, 'INVALID_OPERATION');
      expect((await t.request({ url: workbookUrl(unpublished) })).json().tenants).toEqual([]);
      const published = await items.workbook(`published-${seq}`);
      const publicId = await publish(published);
      expect((await t.request({ url: workbookUrl(published) })).json().allowEmbed).toBe(false);
      expect((await put(workbookUrl(published), { allowEmbed: true })).json()).toMatchObject({ allowEmbed: true, tenants: [] });
      expect((await t.request({ url: workbookUrl(published) })).json().allowEmbed).toBe(true);
      // The same switch as the dashboard's own (3.6), both ways.
      expect((await t.request({ url: `/api/v1/deployments/${deploymentId}/workbooks/${published}` })).json().publishedDashboard.allowEmbed).toBe(true);
      expect((await t.request({ method: 'PATCH', url: `/api/v1/embed/dashboard/${publicId}`, body: { allowEmbed: false } })).statusCode).toBe(200);
      expect((await t.request({ url: workbookUrl(published) })).json().allowEmbed).toBe(false);
      const both = await put(workbookUrl(published), { allowEmbed: false, embedTenantName: name, action: 'read' });
      expect(both.json()).toMatchObject({ allowEmbed: false, tenants: [{ embedTenantName: name, action: 'read' }] });
    });

    it("is 404 for an unknown workbook, one of another deployment, and another account's", async () => {
      const elsewhere = await t.deployment('embed-access-elsewhere');
      const workbookId = await items.workbook(`here-${seq}`);
      problem(await t.request({ url: workbookUrl(999999) }), 404, 'WORKBOOK_NOT_FOUND');
      problem(await t.request({ url: workbookUrl(workbookId, elsewhere) }), 404, 'WORKBOOK_NOT_FOUND');
      problem(await t.request({ url: workbookUrl(workbookId), key: other.admin.key, host: 'embed-access-other.example.test' }), 404, 'DEPLOYMENT_NOT_FOUND');
    });

    it('needs read access to read and manage access to change it', async () => {
      const name = await embedTenant();
      const workbookId = await items.workbook(`guarded-${seq}`);
      problem(await t.request({ url: workbookUrl(workbookId), key: explorer.key }), 403, 'FORBIDDEN');
      await t.grant({ type: 'USER', id: explorer.userId }, { type: 'WORKBOOK', id: workbookId }, 'VIEW');
      expect((await t.request({ url: workbookUrl(workbookId), key: explorer.key })).statusCode).toBe(200);
      problem(await put(workbookUrl(workbookId), { embedTenantName: name, action: 'read' }, explorer.key), 403, 'FORBIDDEN');
      const owned = await items.workbook(`owned-${seq}`, null, explorer.userId);
      expect((await put(workbookUrl(owned), { embedTenantName: name, action: 'read' }, explorer.key)).statusCode).toBe(200);
    });
  });

  describe('workbooks an embed tenant can reach (4.14)', () => {
    it('filters by accessSource (tenant, allEmbedUsers, folder) and unions them when left out; one workbook may match several', async () => {
      const name = await embedTenant();
      const otherTenant = await embedTenant();
      const top = await items.folder(`top-${seq}`);
      const middle = await items.folder(`middle-${seq}`, top);
      const deep = await items.folder(`deep-${seq}`, middle);
      const direct = await items.workbook(`direct-${seq}`);
      const forAll = await items.workbook(`for-all-${seq}`);
      const inherited = await items.workbook(`inherited-${seq}`, deep);
      const both = await items.workbook(`both-${seq}`, middle);
      const theirs = await items.workbook(`theirs-${seq}`);
      const nowhere = await items.workbook(`nowhere-${seq}`);
      await put(workbookUrl(direct), { embedTenantName: name, action: 'read' });
      await put(workbookUrl(both), { embedTenantName: name, action: 'read' });
      await put(workbookUrl(forAll), { allEmbedUsers: true, action: 'read' });
      await put(workbookUrl(theirs), { embedTenantName: otherTenant, action: 'read' });
      expect((await put(folderUrl(top), { embedTenantName: name, action: 'read' })).json().tenants).toEqual([
        { embedTenantName: name, groupId: expect.any(Number), action: 'read' },
      ]);

      const ids = async (source?: string) => (await reach(name, source)).items.map((w) => w.id);
      expect(await ids('tenant')).toEqual([direct, both]);
      expect(await ids('allEmbedUsers')).toEqual(expect.arrayContaining([forAll]));
      expect(await ids('allEmbedUsers')).not.toContain(direct);
      expect(await ids('folder')).toEqual([inherited, both]);
      const union = await ids();
      expect(union).toEqual(expect.arrayContaining([direct, forAll, inherited, both]));
      expect(union).not.toContain(theirs);
      expect(union).not.toContain(nowhere);
      expect(new Set(union).size).toBe(union.length);
      // The other tenant reaches its own share and what all embed users reach, not this tenant's folder.
      const theirIds = (await reach(otherTenant)).items.map((w) => w.id);
      expect(theirIds).toEqual(expect.arrayContaining([theirs, forAll]));
      expect(theirIds).not.toContain(inherited);
    });

    it('follows folders shared with all embed users, and moves: access is computed when read', async () => {
      const name = await embedTenant();
      const shared = await items.folder(`all-folder-${seq}`);
      const plain = await items.folder(`plain-folder-${seq}`);
      const workbookId = await items.workbook(`moving-${seq}`, plain);
      await put(folderUrl(shared), { allEmbedUsers: true, action: 'read' });
      expect((await reach(name, 'folder')).items.map((w) => w.id)).not.toContain(workbookId);
      const moved = await t.request({
        method: 'POST',
        url: `/api/v1/deployments/${deploymentId}/workspace/move`,
        body: { type: 'WORKBOOK', id: workbookId, folderId: shared },
      });
      expect([200, 204], moved.body).toContain(moved.statusCode);
      expect((await reach(name, 'folder')).items.map((w) => w.id)).toContain(workbookId);
      await put(folderUrl(shared), { allEmbedUsers: true, action: 'none' });
      expect((await reach(name, 'folder')).items.map((w) => w.id)).not.toContain(workbookId);
    });

    it('pages by workbook id', async () => {
      const name = await embedTenant();
      const made = [];
      for (let i = 0; i < 3; i++) {
        const id = await items.workbook(`paged-${seq}-${i}`);
        await put(workbookUrl(id), { embedTenantName: name, action: 'read' });
        made.push(id);
      }
      const first = await reach(name, 'tenant', 'first=2');
      expect(first.items.map((w) => w.id)).toEqual(made.slice(0, 2));
      const rest = await reach(name, 'tenant', `first=2&after=${first.pageInfo.endCursor}`);
      expect(rest.items.map((w) => w.id)).toEqual(made.slice(2));
    });

    it('deleting the workbook, the folder or the embed tenant removes their shares', async () => {
      const name = await embedTenant();
      const folder = await items.folder(`doomed-${seq}`);
      const workbookId = await items.workbook(`doomed-wb-${seq}`);
      await put(folderUrl(folder), { embedTenantName: name, action: 'read' });
      await put(workbookUrl(workbookId), { embedTenantName: name, action: 'read' });
      const count = async () =>
        Number(
          (
            await t.store.db
              .selectFrom('embed_shares')
              .select((eb) => eb.fn.countAll<number>().as('n'))
              .where((eb) => eb.or([eb('workbook_id', '=', workbookId), eb('folder_id', '=', folder)]))
              .executeTakeFirstOrThrow()
          ).n,
        );
      expect(await count()).toBe(2);
      expect((await t.request({ method: 'DELETE', url: `/api/v1/embed-tenants/${name}` })).statusCode).toBe(204);
      expect(await count()).toBe(0);
      const again = await embedTenant();
      await put(workbookUrl(workbookId), { embedTenantName: again, action: 'read' });
      await put(folderUrl(folder), { embedTenantName: again, action: 'read' });
      const deleted = await t.request({
        method: 'POST',
        url: `/api/v1/deployments/${deploymentId}/workspace/bulk-delete`,
        body: {
          items: [
            { type: 'WORKBOOK', id: workbookId },
            { type: 'FOLDER', id: folder },
          ],
        },
      });
      expect(deleted.json().failed, deleted.body).toEqual([]);
      expect(await count()).toBe(0);
    });

    it('is admin only (403), 404 for an unknown tenant or another account', async () => {
      const name = await embedTenant();
      problem(await t.request({ url: `/api/v1/deployments/${deploymentId}/embed-tenants/${name}/workbooks`, key: explorer.key }), 403, 'FORBIDDEN');
      problem(await t.request({ url: `/api/v1/deployments/${deploymentId}/embed-tenants/${uniqueTenant()}/workbooks` }), 404, 'EMBED_TENANT_NOT_FOUND');
      problem(
        await t.request({
          url: `/api/v1/deployments/${deploymentId}/embed-tenants/${name}/workbooks`,
          key: other.admin.key,
          host: 'embed-access-other.example.test',
        }),
        404,
        'DEPLOYMENT_NOT_FOUND',
      );
      problem(await t.request({ url: `/api/v1/deployments/${deploymentId}/embed-tenants/${name}/workbooks?accessSource=everyone` }), 400, 'VALIDATION_FAILED');
    });
  });
});
