import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, problem, TestApp } from './harness.js';
import { WorkspaceFixtures } from './workspace-fixtures.js';

type Json = Record<string, any>;

const position = { x: 0, y: 0, w: 6, h: 4 };
const chart = (id: string, reportId: number) => ({ id, type: 'CHART', position, config: { reportId } });

/** The claims an embed token carries (its payload; the signature is the embed-sessions test's business). */
function claimsOf(token: string): Json {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as Json;
}

describe.each(DIALECTS)('creator mode (reference 4.15, 5.3, 8.F, 8.G.1) [%s]', (dialect) => {
  let t: TestApp;
  let deploymentId: number;
  let otherDeploymentId: number;
  let ws: WorkspaceFixtures;

  beforeAll(async () => {
    t = await TestApp.create(dialect, { embedExchangePerIpPerMinute: 0 });
    deploymentId = await t.deployment('creator');
    otherDeploymentId = await t.deployment('elsewhere');
    ws = new WorkspaceFixtures(t, deploymentId);
    await setFlag(true);
  });
  afterAll(async () => t?.close());

  async function setFlag(on: boolean | null): Promise<void> {
    const res = await t.request({ method: 'PUT', url: '/api/v1/tenant/embed-settings', body: { useCreatorMode: on } });
    expect(res.statusCode, res.body).toBe(200);
  }
  const generate = (body: Json) => t.request({ method: 'POST', url: '/api/v1/embed/generate-session', body: { deploymentId, ...body } });
  async function token(body: Json): Promise<string> {
    const generated = await generate(body);
    expect(generated.statusCode, generated.body).toBe(200);
    const exchanged = await t.request({ method: 'POST', url: '/api/v1/embed/session/token', key: null, body: generated.json() });
    expect(exchanged.statusCode, exchanged.body).toBe(200);
    return (exchanged.json() as { token: string }).token;
  }
  const creator = (externalId: string, embedTenantName = 'acme', extra: Json = {}) => token({ externalId, embedTenantName, creatorMode: true, ...extra });
  const asEmbed = (jwt: string, request: { method?: 'GET' | 'POST'; url: string; body?: unknown }) =>
    t.request({ ...request, key: null, headers: { authorization: `Bearer ${jwt}` } });
  const tenantGroups = async (name: string) => {
    const res = await t.request({ url: `/api/v1/embed-tenants/${name}/groups` });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { items: Json[] }).items;
  };
  const tenantUsers = async (name: string) => {
    const res = await t.request({ url: `/api/v1/embed-tenants/${name}/users` });
    return res.statusCode === 200 ? ((res.json() as { items: Json[] }).items.map((u) => u.externalId) as string[]) : [];
  };

  describe('generate-session (reference 4.15)', () => {
    it('reference 4.15: creatorMode needs the tenant feature flag useCreatorMode, an admin setting that is off by default', async () => {
      await setFlag(null);
      expect(((await t.request({ url: '/api/v1/tenant/embed-settings' })).json() as Json).useCreatorMode).toBe(false);
      problem(await generate({ externalId: 'gated', embedTenantName: 'acme', creatorMode: true }), 403, 'CREATOR_MODE_DISABLED');
      expect(await tenantUsers('acme')).not.toContain('gated');
      await setFlag(true);
      const jwt = await creator('gated');
      expect(claimsOf(jwt)).toMatchObject({ creator_mode: true, embed_tenant: 'acme' });
      // A session that does not ask for it is no creator-mode session.
      expect(claimsOf(await token({ externalId: 'gated', embedTenantName: 'acme' })).creator_mode).toBeUndefined();
    });

    it('reference 4.15: tenantGroups and tenantGroupDefinitions need creatorMode and embedTenantName; creator mode is for external users', async () => {
      problem(await generate({ externalId: 'u', embedTenantName: 'acme', tenantGroups: [] }), 400, 'CREATOR_MODE_REQUIRED');
      problem(await generate({ externalId: 'u', creatorMode: true, tenantGroups: [] }), 400, 'VALIDATION_FAILED');
      problem(await generate({ externalId: 'u', creatorMode: true, tenantGroupDefinitions: [{ name: 'x' }] }), 400, 'VALIDATION_FAILED');
      const admin = await t.user('ADMIN');
      problem(await generate({ internalId: admin.email, creatorMode: true }), 400, 'VALIDATION_FAILED');
    });

    it('reference 4.15: tenantGroupDefinitions create or update tenant groups before tenantGroups assigns them', async () => {
      const jwt = await creator('grouped', 'acme', {
        tenantGroupDefinitions: [{ name: 'Editors', description: 'Can edit' }],
        tenantGroups: ['Editors'],
      });
      expect(claimsOf(jwt).tenant_groups).toEqual(['system:tenant:acme', 'system:tenant:acme:group:Editors']);
      expect((await tenantGroups('acme')).find((g) => g.name === 'Editors')).toMatchObject({ description: 'Can edit', userCount: 1 });
      // Again: idempotent, the description updated, no second group.
      await creator('grouped', 'acme', { tenantGroupDefinitions: [{ name: 'editors', description: 'Edits dashboards' }], tenantGroups: ['editors'] });
      const editors = (await tenantGroups('acme')).filter((g) => g.name.toLowerCase() === 'editors');
      expect(editors).toEqual([expect.objectContaining({ name: 'Editors', description: 'Edits dashboards' })]);
      // A reserved or repeated name is refused.
      problem(
        await generate({ externalId: 'grouped', embedTenantName: 'acme', creatorMode: true, tenantGroupDefinitions: [{ name: 'system:x' }] }),
        400,
        'VALIDATION_FAILED',
      );
      problem(
        await generate({ externalId: 'grouped', embedTenantName: 'acme', creatorMode: true, tenantGroupDefinitions: [{ name: 'a' }, { name: 'A' }] }),
        400,
        'VALIDATION_FAILED',
      );
      problem(
        await generate({ externalId: 'grouped', embedTenantName: 'acme', creatorMode: true, tenantGroups: ['nobody-made-this'] }),
        400,
        'GROUPS_NOT_FOUND',
      );
    });

    it('reference 4.15: userAttributeDefinitions upsert the embed tenant’s own catalog, and userAttributes resolve against it in creator mode', async () => {
      const jwt = await creator('attributed', 'acme', {
        userAttributeDefinitions: [
          { name: 'region', type: 'string', displayName: 'Region' },
          { name: 'quota', type: 'number', defaultValue: 5 },
          { name: 'teams', type: 'string_array' },
        ],
        userAttributes: [
          { name: 'region', value: 'emea' },
          { name: 'teams', value: ['a', 'b'] },
        ],
      });
      expect(claimsOf(jwt).user_attributes).toMatchObject({ region: 'emea', quota: 5, teams: ['a', 'b'] });
      // Values persist; a later call overwrites only the names it gives.
      const later = await creator('attributed', 'acme', { userAttributes: [{ name: 'quota', value: 9 }] });
      expect(claimsOf(later).user_attributes).toMatchObject({ region: 'emea', quota: 9, teams: ['a', 'b'] });
      // The catalog is the embed tenant's: another tenant does not have it.
      problem(
        await generate({ externalId: 'x', embedTenantName: 'globex', creatorMode: true, userAttributes: [{ name: 'region', value: 'us' }] }),
        400,
        'USER_ATTRIBUTES_NOT_FOUND',
      );
      problem(
        await generate({ externalId: 'attributed', embedTenantName: 'acme', creatorMode: true, userAttributes: [{ name: 'quota', value: 'many' }] }),
        400,
        'VALIDATION_FAILED',
      );
      problem(
        await generate({
          externalId: 'attributed',
          embedTenantName: 'acme',
          creatorMode: true,
          userAttributeDefinitions: [
            { name: 'dup', type: 'string' },
            { name: 'DUP', type: 'string' },
          ],
        }),
        400,
        'VALIDATION_FAILED',
      );
      problem(
        await generate({
          externalId: 'attributed',
          embedTenantName: 'acme',
          creatorMode: true,
          userAttributeDefinitions: [{ name: 'bad', type: 'number', defaultValue: 'x' }],
        }),
        400,
        'VALIDATION_FAILED',
      );
    });

    it('reference 4.15: an attribute definition’s type is never changed: the whole request fails and writes nothing', async () => {
      await creator('typed', 'typed-co', { userAttributeDefinitions: [{ name: 'tier', type: 'string', description: 'first' }] });
      const res = await generate({
        externalId: 'newcomer',
        embedTenantName: 'typed-co',
        creatorMode: true,
        tenantGroupDefinitions: [{ name: 'Latecomers' }],
        tenantGroups: ['Latecomers'],
        userAttributeDefinitions: [
          { name: 'plan', type: 'string' },
          { name: 'tier', type: 'number', description: 'changed' },
        ],
        userAttributes: [{ name: 'plan', value: 'gold' }],
      });
      expect(problem(res, 400, 'VALIDATION_FAILED').detail).toContain('cannot change type');
      // Nothing was written: no user, no group, no new attribute, the old one as it was.
      expect(await tenantUsers('typed-co')).toEqual(['typed']);
      expect((await tenantGroups('typed-co')).map((g) => g.name)).toEqual([]);
      problem(
        await generate({ externalId: 'typed', embedTenantName: 'typed-co', creatorMode: true, userAttributes: [{ name: 'plan', value: 'x' }] }),
        400,
        'USER_ATTRIBUTES_NOT_FOUND',
      );
      const row = await t.store.db.selectFrom('embed_attribute_definitions').selectAll().where('name', '=', 'tier').executeTakeFirstOrThrow();
      expect(row).toMatchObject({ type: 'string', description: 'first' });
      // The same type again is an upsert.
      await creator('typed', 'typed-co', { userAttributeDefinitions: [{ name: 'tier', type: 'string', description: 'second' }] });
      expect(await t.store.db.selectFrom('embed_attribute_definitions').select('description').where('name', '=', 'tier').executeTakeFirst()).toEqual({
        description: 'second',
      });
    });
    it('reference 4.15: sessions defining the same new group and attribute at once all succeed, and each is made once', async () => {
      const answers = await Promise.all(
        [1, 2, 3, 4, 5].map((n) =>
          generate({
            externalId: `racer-${n}`,
            embedTenantName: 'racing',
            creatorMode: true,
            tenantGroupDefinitions: [{ name: 'Racers' }],
            tenantGroups: ['Racers'],
            userAttributeDefinitions: [{ name: 'lane', type: 'number' }],
            userAttributes: [{ name: 'lane', value: n }],
          }),
        ),
      );
      for (const answer of answers) expect(answer.statusCode, answer.body).toBe(200);
      expect((await tenantGroups('racing')).map((g) => [g.name, g.userCount])).toEqual([['Racers', 5]]);
      expect(await t.store.db.selectFrom('embed_attribute_definitions').select('id').where('name', '=', 'lane').execute()).toHaveLength(1);
    });
  });

  describe('GET /api/v1/app-config (reference 5.3 CreatorMode)', () => {
    it('reference 5.3: creatorMode answers the CreatorMode shape to a creator-mode session, null to everyone else', async () => {
      const set = await t.request({
        method: 'PUT',
        url: '/api/v1/tenant/app-config',
        body: { creatorMode: { workspaceTitle: 'Acme analytics', showGeneratedSql: true, localizedTitles: [{ locale: 'de-DE', value: 'Analysen' }] } },
      });
      expect(set.statusCode, set.body).toBe(200);
      expect((set.json() as Json).creatorMode).toBeNull();
      const read = async (jwt: string) => ((await asEmbed(jwt, { url: '/api/v1/app-config' })).json() as Json).creatorMode;
      expect(await read(await creator('configured'))).toEqual({
        workspaceTitle: 'Acme analytics',
        showGeneratedSql: true,
        showSemanticSql: null,
        showWorkspaceTitle: null,
        localizedTitles: [{ locale: 'de-DE', value: 'Analysen' }],
      });
      expect(await read(await token({ externalId: 'configured', embedTenantName: 'acme' }))).toBeNull();
      expect(((await t.request({ url: '/api/v1/app-config' })).json() as Json).creatorMode).toBeNull();
      problem(await t.request({ method: 'PUT', url: '/api/v1/tenant/app-config', body: { creatorMode: { workspaceTitle: 5 } } }), 400, 'VALIDATION_FAILED');
      expect((await t.request({ method: 'PUT', url: '/api/v1/tenant/app-config', body: { creatorMode: null } })).statusCode).toBe(200);
      expect(await read(await creator('configured'))).toEqual({
        workspaceTitle: null,
        showGeneratedSql: null,
        showSemanticSql: null,
        showWorkspaceTitle: null,
        localizedTitles: null,
      });
    });
  });

  describe('the shared workspace (reference 8.F) and copies from it (8.G.1 shared: true)', () => {
    type Seeded = 'A' | 'B' | 'B2' | 'wb1' | 'r1' | 'wbA' | 'C' | 'wbC' | 'D' | 'wbD' | 'wbRoot' | 'wbGlobex';
    const ids = {} as Record<Seeded, number>;
    const list = (jwt: string, query = '', d = deploymentId) => asEmbed(jwt, { url: `/api/v1/deployments/${d}/shared-workspace${query}` });
    const names = async (jwt: string, query = '') => {
      const res = await list(jwt, query);
      expect(res.statusCode, res.body).toBe(200);
      return (res.json() as { items: Json[] }).items.map((i) => `${i.type}:${i.name}`);
    };
    const share = async (kind: 'workbooks' | 'folders', id: number, target: Json) => {
      const res = await t.request({
        method: 'PUT',
        url: `/api/v1/deployments/${deploymentId}/${kind}/${id}/embed-access`,
        body: { ...target, action: 'read' },
      });
      expect(res.statusCode, res.body).toBe(200);
    };
    const duplicate = (jwt: string | null, workbookId: number, body: unknown) =>
      jwt === null
        ? t.request({ method: 'POST', url: `/api/v1/deployments/${deploymentId}/workbooks/${workbookId}/duplicate`, body })
        : asEmbed(jwt, { method: 'POST', url: `/api/v1/deployments/${deploymentId}/workbooks/${workbookId}/duplicate`, body });
    let ann: string;

    beforeAll(async () => {
      ann = await creator('ann', 'acme');
      await creator('gus', 'globex');
      // Root: A (unshared) > B (shared with acme) > B2, wb1, r1; A > wbA (unshared);
      // C (unshared) > wbC (shared with all embed users); D (nothing shared); wbRoot (unshared); wbGlobex (globex only).
      ids.A = await ws.folder('A');
      ids.B = await ws.folder('B', ids.A);
      ids.B2 = await ws.folder('B2', ids.B);
      ids.wb1 = await ws.workbook('wb1', ids.B, t.admin.userId);
      ids.r1 = await ws.report('r1', ids.B, t.admin.userId);
      ids.wbA = await ws.workbook('wbA', ids.A);
      ids.C = await ws.folder('C');
      ids.wbC = await ws.workbook('wbC', ids.C);
      ids.D = await ws.folder('D');
      ids.wbD = await ws.workbook('wbD', ids.D);
      ids.wbRoot = await ws.workbook('wbRoot');
      ids.wbGlobex = await ws.workbook('wbGlobex');
      await share('folders', ids.B, { embedTenantName: 'acme' });
      await share('workbooks', ids.wbC, { allEmbedUsers: true });
      await share('workbooks', ids.wbGlobex, { embedTenantName: 'globex' });
    });

    it('reference 8.F: lists what is shared with the tenant or all embed users, and the folders above it to navigate down, nothing beside', async () => {
      expect(await names(ann)).toEqual(['FOLDER:A', 'FOLDER:C']);
      expect(await names(ann, `?folderId=${ids.A}`)).toEqual(['FOLDER:B']);
      expect(await names(ann, `?folderId=${ids.B}`)).toEqual(['FOLDER:B2', 'REPORT:r1', 'WORKBOOK:wb1']);
      expect(await names(ann, `?folderId=${ids.C}`)).toEqual(['WORKBOOK:wbC']);
      problem(await list(ann, `?folderId=${ids.D}`), 404, 'FOLDER_NOT_FOUND');
      // Another tenant sees its own share and what all embed users share, never acme's.
      const gus = await creator('gus', 'globex');
      expect(await names(gus)).toEqual(['FOLDER:C', 'WORKBOOK:wbGlobex']);
    });

    it('reference 8.F: not per user (every user of the tenant sees the same), and owner identities are blanked', async () => {
      const bea = await creator('bea', 'acme', { tenantGroupDefinitions: [{ name: 'Other' }], tenantGroups: ['Other'] });
      expect(await names(bea, `?folderId=${ids.B}`)).toEqual(await names(ann, `?folderId=${ids.B}`));
      const items = ((await list(ann, `?folderId=${ids.B}`)).json() as { items: Json[] }).items;
      for (const item of items) expect(item).toMatchObject({ createdBy: null, user: null, isFavorite: false });
      expect(items.find((i) => i.name === 'wb1')).toMatchObject({
        folderId: ids.B,
        folderPath: [
          { id: ids.A, name: 'A' },
          { id: ids.B, name: 'B' },
        ],
      });
    });

    it('reference 8.F: the workspace list’s query: types, search, orderByField and orderByDirection, first and after', async () => {
      expect(await names(ann, `?folderId=${ids.B}&types=WORKBOOK&types=REPORT`)).toEqual(['REPORT:r1', 'WORKBOOK:wb1']);
      expect(await names(ann, `?folderId=${ids.B}&types=FOLDER,WORKBOOK`)).toEqual(['FOLDER:B2', 'WORKBOOK:wb1']);
      expect(await names(ann, `?folderId=${ids.B}&orderByField=name&orderByDirection=DESC`)).toEqual(['FOLDER:B2', 'WORKBOOK:wb1', 'REPORT:r1']);
      expect(await names(ann, `?orderByField=viewer_last_viewed_at`)).toHaveLength(2);
      // Search covers the whole shared workspace, and nothing else.
      expect(await names(ann, '?search=wb')).toEqual(['WORKBOOK:wb1', 'WORKBOOK:wbC']);
      const first = await list(ann, `?folderId=${ids.B}&first=2`);
      const page = first.json() as { items: Json[]; pageInfo: Json };
      expect(page.items.map((i) => i.name)).toEqual(['B2', 'r1']);
      expect(page.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
      const next = (await list(ann, `?folderId=${ids.B}&first=2&after=${encodeURIComponent(page.pageInfo.endCursor)}`)).json() as {
        items: Json[];
        pageInfo: Json;
      };
      expect(next.items.map((i) => i.name)).toEqual(['wb1']);
      expect(next.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
      problem(await list(ann, `?first=2&after=${encodeURIComponent(page.pageInfo.endCursor)}`), 400, 'INVALID_CURSOR');
      problem(await list(ann, '?orderByField=owner'), 400, 'VALIDATION_FAILED');
    });

    it('reference 8.F: an embed session in creator mode on this deployment only; a view-only session, another deployment or an API key is 403', async () => {
      problem(await list(await token({ externalId: 'ann', embedTenantName: 'acme' })), 403, 'FORBIDDEN');
      problem(await list(ann, '', otherDeploymentId), 403, 'FORBIDDEN');
      problem(await t.request({ url: `/api/v1/deployments/${deploymentId}/shared-workspace` }), 403, 'FORBIDDEN');
    });

    it('reference 8.G.1: shared: true is 403 for a caller not in creator mode, 404 for a workbook outside the shared workspace, 400 without a published dashboard', async () => {
      problem(await duplicate(null, ids.wb1, { shared: true }), 403, 'FORBIDDEN');
      problem(await duplicate(await token({ externalId: 'ann', embedTenantName: 'acme' }), ids.wb1, { shared: true }), 403, 'FORBIDDEN');
      // An embed session copies only from the shared workspace.
      problem(await duplicate(ann, ids.wb1, {}), 403, 'FORBIDDEN');
      problem(await duplicate(ann, ids.wbA, { shared: true }), 404, 'WORKBOOK_NOT_FOUND');
      problem(await duplicate(ann, ids.wbGlobex, { shared: true }), 404, 'WORKBOOK_NOT_FOUND');
      problem(await duplicate(ann, 999_999, { shared: true }), 404, 'WORKBOOK_NOT_FOUND');
      problem(await duplicate(ann, ids.wb1, { shared: true }), 400, 'INVALID_OPERATION');
      problem(await duplicate(ann, ids.wb1, { shared: true, folderId: ids.B }), 400, 'VALIDATION_FAILED');
    });

    it('reference 8.G.1: a creator-mode copy is built from the published dashboard’s report snapshots and lands at the root, owned by the embed user', async () => {
      const published = await t.request({
        method: 'POST',
        url: `/api/v1/deployments/${deploymentId}/workbooks/${ids.wb1}/publish`,
        body: { config: { title: 'Board', widgets: [chart('c', ids.r1)] }, allowEmbed: true },
      });
      expect(published.statusCode, published.body).toBe(200);
      // Changed after publishing: the copy is made from the snapshot, and the draft stays the source's.
      await t.store.db.updateTable('reports').set({ sql_query: 'select 2' }).where('id', '=', ids.r1).execute();
      await t.request({
        method: 'PUT',
        url: `/api/v1/deployments/${deploymentId}/workbooks/${ids.wb1}/dashboard`,
        body: { dashboardDraft: { widgets: [] } },
      });
      const snapshotSql = ((published.json() as Json).reportSnapshots as Json[])[0]!.sqlQuery;
      const res = await duplicate(ann, ids.wb1, { shared: true });
      expect(res.statusCode, res.body).toBe(200);
      const copy = res.json() as Json;
      expect(copy).toMatchObject({ name: 'Copy of wb1', folderId: null, userId: null, user: null });
      const pub = copy.publishedDashboard as Json;
      expect(pub).toMatchObject({ allowEmbed: false, title: 'Board', versionNumber: 1 });
      const reportId = pub.config.widgets[0].config.reportId as number;
      expect(reportId).not.toBe(ids.r1);
      expect(pub.reportSnapshots.map((s: Json) => s.reportId)).toEqual([reportId]);
      expect(copy.dashboardDraft.widgets.map((w: Json) => w.config?.reportId)).toEqual([reportId]);
      const report = await t.store.db.selectFrom('reports').selectAll().where('id', '=', reportId).executeTakeFirstOrThrow();
      expect(report).toMatchObject({ name: 'r1', folder_id: null, created_by: null, sql_query: snapshotSql });
      const row = await t.store.db.selectFrom('workbooks').selectAll().where('id', '=', copy.id).executeTakeFirstOrThrow();
      expect(Number(row.embed_owner_id)).toBe(claimsOf(ann).embed_user.id);
      // Sharing is not copied: the copy is not in the shared workspace.
      expect(await names(ann)).toEqual(['FOLDER:A', 'FOLDER:C']);
    });

    it('reference 4.2: deleting the embed tenant deletes its users’ copies', async () => {
      const temp = await creator('tim', 'tempco');
      await share('workbooks', ids.wbRoot, { embedTenantName: 'tempco' });
      const source = await ws.report('temp report', null, t.admin.userId);
      const published = await t.request({
        method: 'POST',
        url: `/api/v1/deployments/${deploymentId}/workbooks/${ids.wbRoot}/publish`,
        body: { config: { widgets: [chart('c', source)] } },
      });
      expect(published.statusCode, published.body).toBe(200);
      const copy = (await duplicate(temp, ids.wbRoot, { shared: true })).json() as Json;
      expect(await t.store.db.selectFrom('reports').select('id').where('embed_owner_id', '=', claimsOf(temp).embed_user.id).execute()).toHaveLength(1);
      expect((await t.request({ url: `/api/v1/deployments/${deploymentId}/workbooks/${copy.id}` })).statusCode).toBe(200);
      const reader = await t.user('VIEWER');
      await t.grant({ type: 'USER', id: reader.userId }, { type: 'WORKBOOK', id: copy.id }, 'VIEW');
      expect((await t.request({ method: 'DELETE', url: '/api/v1/embed-tenants/tempco' })).statusCode).toBe(204);
      problem(await t.request({ url: `/api/v1/deployments/${deploymentId}/workbooks/${copy.id}` }), 404, 'WORKBOOK_NOT_FOUND');
      // No grant outlives the copy, and its reports went with it.
      const grants = await t.store.db.selectFrom('policies').select('id').where('resource_type', '=', 'WORKBOOK').where('resource_id', '=', copy.id).execute();
      expect(grants).toEqual([]);
      expect(await t.store.db.selectFrom('reports').select('id').where('embed_owner_id', '=', claimsOf(temp).embed_user.id).execute()).toEqual([]);
      // The session outlives its user: copying again is refused, not a server error.
      problem(await duplicate(temp, ids.wbRoot, { shared: true }), 403, 'FORBIDDEN');
    });
  });
});
