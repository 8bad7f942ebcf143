import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findByWorkbook, findPublishedByPublicId, findPublishedByWorkbook, setAllowEmbed } from '../src/areas/dashboards/published.js';
import { DIALECTS, TestApp, problem, type Caller } from './harness.js';
import { WorkspaceFixtures } from './workspace-fixtures.js';

interface Widget {
  id: string;
  type: string;
  position: { x: number; y: number; w: number; h: number };
  config?: Record<string, unknown> | null;
}
interface Snapshot {
  id: number;
  reportId: number;
  versionNumber: number;
  name?: string | null;
  title?: string | null;
  sqlQuery?: string | null;
}
interface Dashboard {
  id: number;
  publicId: string;
  deploymentId: number;
  workbookId: number;
  status: string;
  allowEmbed: boolean;
  config: { title?: string | null; widgets?: Widget[] | null };
  versionNumber: number;
  versionId: number;
  reportSnapshots: Snapshot[];
  title?: string | null;
  createdBy?: number | null;
}

const position = { x: 0, y: 0, w: 6, h: 4 };
const chart = (id: string | undefined, reportId: number) => ({ ...(id === undefined ? {} : { id }), type: 'CHART', position, config: { reportId } });
const text = (id?: string) => ({ ...(id === undefined ? {} : { id }), type: 'TEXT', position, config: { text: 'hello' } });

describe.each(DIALECTS)('dashboards (%s)', (dialect) => {
  let t: TestApp;
  let deploymentId: number;
  let ws: WorkspaceFixtures;
  let editor: Caller;
  let viewer: Caller;
  let seq = 0;

  beforeAll(async () => {
    t = await TestApp.create(dialect);
    deploymentId = await t.deployment('dashboards');
    ws = new WorkspaceFixtures(t, deploymentId);
    editor = await t.user('EXPLORER');
    viewer = await t.user('VIEWER');
  });
  afterAll(async () => t?.close());

  const url = (path: string, d = deploymentId) => `/api/v1/deployments/${d}${path}`;
  const saveDraft = (workbookId: number, dashboardDraft: unknown, key?: string, d = deploymentId) =>
    t.request({ method: 'PUT', url: url(`/workbooks/${workbookId}/dashboard`, d), body: { dashboardDraft }, ...(key ? { key } : {}) });
  const publish = (workbookId: number, body?: unknown, key?: string, d = deploymentId) =>
    t.request({ method: 'POST', url: url(`/workbooks/${workbookId}/publish`, d), ...(body === undefined ? {} : { body }), ...(key ? { key } : {}) });
  const versions = (workbookId: number, query = '', key?: string) => t.request({ url: url(`/workbooks/${workbookId}/dashboard/versions${query}`), ...(key ? { key } : {}) });
  const getWorkbook = (workbookId: number) => t.request({ url: url(`/workbooks/${workbookId}`) });
  const patchEmbed = (publicId: string, body: unknown, key?: string) => t.request({ method: 'PATCH', url: `/api/v1/embed/dashboard/${publicId}`, body, ...(key ? { key } : {}) });
  const workbook = (name = `wb-${++seq}`, folderId: number | null = null) => ws.workbook(name, folderId);
  const report = async (name: string, sql = 'select 1') => {
    const id = await ws.report(name);
    await t.store.db.updateTable('reports').set({ sql_query: sql, title: `${name} title` }).where('id', '=', id).execute();
    return id;
  };
  const published = async (workbookId: number, body: unknown): Promise<Dashboard> => {
    const res = await publish(workbookId, body);
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as Dashboard;
  };

  describe('PUT …/workbooks/{id}/dashboard (reference 8.G.3)', () => {
    it('saves the draft, assigns ids to widgets without one, keeps given ids, accepts FIELD; answers {dashboardDraft, dashboardPublished}', async () => {
      const wb = await workbook();
      const res = await saveDraft(wb, { title: 'Draft', widgets: [text(), { type: 'FIELD', position }, text('mine')] });
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json() as { dashboardDraft: { title: string; widgets: Widget[] }; dashboardPublished: unknown };
      expect(body.dashboardPublished).toBeNull();
      const ids = body.dashboardDraft.widgets.map((w) => w.id);
      expect(ids[2]).toBe('mine');
      expect(ids[0]).toMatch(/^[0-9a-f-]{36}$/);
      expect(new Set(ids).size).toBe(3);
      expect(body.dashboardDraft.widgets[1]!.type).toBe('FIELD');
      // The workbook shows the same draft, and saving it again keeps the ids.
      expect((await getWorkbook(wb)).json().dashboardDraft).toEqual(body.dashboardDraft);
      const again = (await saveDraft(wb, body.dashboardDraft)).json();
      expect(again.dashboardDraft).toEqual(body.dashboardDraft);
    });

    it('null clears the draft; a legacy TABS_CONTAINER is stored as a tabs CONTAINER', async () => {
      const wb = await workbook();
      const saved = (await saveDraft(wb, { widgets: [{ id: 't', type: 'TABS_CONTAINER', position, config: { a: 1 } }] })).json();
      expect(saved.dashboardDraft.widgets[0]).toMatchObject({ id: 't', type: 'CONTAINER', config: { a: 1, layout: 'tabs' } });
      expect((await saveDraft(wb, null)).json()).toEqual({ dashboardDraft: null, dashboardPublished: null });
    });

    it('refuses duplicate widget ids, ids over 128 characters and unknown widget types, changing nothing', async () => {
      const wb = await workbook();
      expect(problem(await saveDraft(wb, { widgets: [text('a'), text('a')] }), 400, 'VALIDATION_FAILED').detail).toMatch(/"a" is used more than once/);
      problem(await saveDraft(wb, { widgets: [text('x'.repeat(129))] }), 400, 'VALIDATION_FAILED');
      problem(await saveDraft(wb, { widgets: [{ id: 'q', type: 'NOPE', position }] }), 400, 'VALIDATION_FAILED');
      expect((await getWorkbook(wb)).json().dashboardDraft).toBeNull();
    });
  });

  describe('POST …/workbooks/{id}/publish (reference 8.G.2)', () => {
    it('publishes a config as version 1 with frozen report snapshots; the workbook shows it as dashboardPublished and publishedDashboard', async () => {
      const wb = await workbook();
      const r1 = await report('Revenue', 'select sum(amount) from orders');
      const r2 = await report('Count');
      const config = { title: 'Sales', widgets: [chart('c1', r1), text('t1'), chart('c2', r2), chart('c3', r1)] };
      const d = await published(wb, { workbookId: wb, config });
      expect(d).toMatchObject({ deploymentId, workbookId: wb, status: 'published', allowEmbed: false, versionNumber: 1, title: 'Sales', createdBy: t.admin.userId, config });
      expect(d.publicId).toMatch(/^[A-Za-z0-9_-]{22}$/);
      expect(d.reportSnapshots.map((s) => s.reportId)).toEqual([r1, r2]);
      expect(d.reportSnapshots[0]).toMatchObject({ reportId: r1, versionNumber: 1, name: 'Revenue', title: 'Revenue title', sqlQuery: 'select sum(amount) from orders' });
      const shown = (await getWorkbook(wb)).json();
      expect(shown.dashboardPublished).toEqual(config);
      expect(shown.publishedDashboard).toEqual(d);
    });

    it('without a config publishes the saved draft; with neither it is 400', async () => {
      const wb = await workbook();
      expect(problem(await publish(wb), 400, 'VALIDATION_FAILED').detail).toMatch(/no saved draft/);
      const draft = (await saveDraft(wb, { title: 'From draft', widgets: [text()] })).json().dashboardDraft;
      const d = await published(wb, undefined);
      expect(d.config).toEqual(draft);
      expect(d.title).toBe('From draft');
      // The draft stays as it was.
      expect((await getWorkbook(wb)).json().dashboardDraft).toEqual(draft);
    });

    it('a config still holding FIELD widgets is a 400 naming every one of them, and publishes nothing', async () => {
      const wb = await workbook();
      const res = await publish(wb, { config: { widgets: [text('ok'), { id: 'f1', type: 'FIELD', position }, { id: 'f2', type: 'FIELD', position }] } });
      const body = problem(res, 400, 'VALIDATION_FAILED');
      expect(body.detail).toMatch(/FIELD widgets \("f1", "f2"\)/);
      expect(body.errors?.map((e) => e.pointer)).toEqual(['/body/config/widgets/1/type', '/body/config/widgets/2/type']);
      // The same from a saved draft.
      await saveDraft(wb, { widgets: [{ id: 'f3', type: 'FIELD', position }] });
      expect(problem(await publish(wb, {}), 400, 'VALIDATION_FAILED').detail).toMatch(/"f3"/);
      expect((await getWorkbook(wb)).json().publishedDashboard).toBeNull();
      expect(await findByWorkbook(t.store.db, t.tenantId, wb)).toBeUndefined();
    });

    it('widget ids are required (at most 128 characters, unique) in a published config', async () => {
      const wb = await workbook();
      expect(problem(await publish(wb, { config: { widgets: [text('a'), text()] } }), 400, 'VALIDATION_FAILED').errors).toEqual([{ pointer: '/body/config/widgets/1/id', message: 'is required to publish' }]);
      problem(await publish(wb, { config: { widgets: [text('y'.repeat(129))] } }), 400, 'VALIDATION_FAILED');
      problem(await publish(wb, { config: { widgets: [text('a'), text('a')] } }), 400, 'VALIDATION_FAILED');
      expect((await published(wb, { config: { widgets: [text('y'.repeat(128))] } })).versionNumber).toBe(1);
    });

    it('each publication is a new version: the previous one becomes archived, the publicId stays, versionIds differ', async () => {
      const wb = await workbook();
      const v1 = await published(wb, { config: { widgets: [text('a')] } });
      const v2 = await published(wb, { config: { widgets: [text('b')] }, dashboardId: v1.id });
      const v3 = await published(wb, { config: { widgets: [text('c')] } });
      expect([v1.versionNumber, v2.versionNumber, v3.versionNumber]).toEqual([1, 2, 3]);
      expect(new Set([v1.publicId, v2.publicId, v3.publicId]).size).toBe(1);
      expect(new Set([v1.id, v2.id, v3.id]).size).toBe(1);
      expect(new Set([v1.versionId, v2.versionId, v3.versionId]).size).toBe(3);
      const list = (await versions(wb)).json() as { items: Dashboard[] };
      expect(list.items.map((v) => [v.versionNumber, v.status])).toEqual([
        [3, 'published'],
        [2, 'archived'],
        [1, 'archived'],
      ]);
      expect((await getWorkbook(wb)).json().publishedDashboard).toMatchObject({ versionNumber: 3, status: 'published', config: { widgets: [text('c')] } });
    });

    it('allowEmbed belongs to the dashboard: set by one publication, kept by the next, the same on every version', async () => {
      const wb = await workbook();
      expect((await published(wb, { config: { widgets: [] } })).allowEmbed).toBe(false);
      expect((await published(wb, { config: { widgets: [] }, allowEmbed: true })).allowEmbed).toBe(true);
      expect((await published(wb, { config: { widgets: [] } })).allowEmbed).toBe(true);
      const list = (await versions(wb)).json() as { items: Dashboard[] };
      expect(list.items.map((v) => v.allowEmbed)).toEqual([true, true, true]);
      expect((await published(wb, { config: { widgets: [] }, allowEmbed: false })).allowEmbed).toBe(false);
      expect((await getWorkbook(wb)).json().publishedDashboard.allowEmbed).toBe(false);
    });

    it('snapshots are frozen: editing or deleting a report after publishing changes no published version', async () => {
      const wb = await workbook();
      const r = await report('Frozen', 'select 1');
      const v1 = await published(wb, { config: { widgets: [chart('c', r)] } });
      await t.store.db.updateTable('reports').set({ sql_query: 'select 2', name: 'Changed' }).where('id', '=', r).execute();
      const again = await findPublishedByWorkbook(t.store.db, t.tenantId, wb);
      expect(again?.reportSnapshots).toEqual(v1.reportSnapshots);
      expect((await getWorkbook(wb)).json().publishedDashboard.reportSnapshots).toEqual(v1.reportSnapshots);
      // The next publication freezes the report as it is then; the archived version keeps its copy.
      const v2 = await published(wb, { config: { widgets: [chart('c', r)] } });
      expect(v2.reportSnapshots[0]).toMatchObject({ reportId: r, name: 'Changed', sqlQuery: 'select 2', versionNumber: 2 });
      await t.store.db.deleteFrom('reports').where('id', '=', r).execute();
      const list = (await versions(wb)).json() as { items: Dashboard[] };
      expect(list.items.map((v) => v.reportSnapshots)).toEqual([v2.reportSnapshots, v1.reportSnapshots]);
    });

    it('a widget showing a report that does not exist in the deployment is a 400 naming the widget', async () => {
      const wb = await workbook();
      const elsewhere = await new WorkspaceFixtures(t, await t.deployment('other-reports')).report('Elsewhere');
      expect(problem(await publish(wb, { config: { widgets: [chart('w9', elsewhere)] } }), 400, 'VALIDATION_FAILED').detail).toMatch(/Widget "w9" shows report \d+, which does not exist/);
    });

    it('deleting a published workbook deletes its dashboard, versions and snapshots', async () => {
      const wb = await workbook();
      const d = await published(wb, { config: { widgets: [chart('c', await report('Gone with it'))] } });
      const res = await t.request({ method: 'POST', url: url('/workspace/bulk-delete'), body: { items: [{ type: 'WORKBOOK', id: wb }] } });
      expect(res.json().deleted, res.body).toEqual([{ type: 'WORKBOOK', id: wb }]);
      expect(await findPublishedByPublicId(t.store.db, t.tenantId, d.publicId)).toBeUndefined();
      expect(await t.store.db.selectFrom('dashboard_versions').select('id').where('dashboard_id', '=', d.id).execute()).toEqual([]);
      expect(await t.store.db.selectFrom('dashboard_report_snapshots').select('id').where('version_id', '=', d.versionId).execute()).toEqual([]);
    });

    it('a body naming another workbook or another dashboard is 400', async () => {
      const wb = await workbook();
      problem(await publish(wb, { workbookId: wb + 1000, config: { widgets: [] } }), 400, 'VALIDATION_FAILED');
      problem(await publish(wb, { dashboardId: 999_999, config: { widgets: [] } }), 400, 'VALIDATION_FAILED');
    });
  });

  describe('access', () => {
    it('draft and publish need EDIT on the workbook: a viewer or a user with VIEW only gets 403; reading reports needs VIEW', async () => {
      const wb = await workbook();
      await t.grant({ type: 'USER', id: viewer.userId }, { type: 'WORKBOOK', id: wb }, 'EDIT');
      await t.grant({ type: 'USER', id: editor.userId }, { type: 'WORKBOOK', id: wb }, 'VIEW');
      for (const caller of [viewer, editor]) {
        expect(problem(await saveDraft(wb, { widgets: [] }, caller.key), 403, 'FORBIDDEN').detail).toMatch(/EDIT access to update workbook/);
        problem(await publish(wb, { config: { widgets: [] } }, caller.key), 403, 'FORBIDDEN');
      }
      // VIEW is enough to list versions.
      expect((await versions(wb, '', editor.key)).statusCode).toBe(200);
      // With EDIT on the workbook but no access to a report it shows, publishing is refused.
      const mine = await workbook();
      await t.grant({ type: 'USER', id: editor.userId }, { type: 'WORKBOOK', id: mine }, 'EDIT');
      const secret = await report('Secret');
      expect(problem(await publish(mine, { config: { widgets: [chart('s', secret)] } }, editor.key), 403, 'FORBIDDEN').detail).toMatch(/VIEW access/);
      expect((await publish(mine, { config: { widgets: [text('ok')] } }, editor.key)).statusCode).toBe(200);
    });

    it('another deployment or tenant: 404; a key scoped to another deployment: 403', async () => {
      const wb = await workbook();
      const other = await t.deployment('dash-elsewhere');
      problem(await publish(wb, { config: { widgets: [] } }, undefined, other), 404, 'WORKBOOK_NOT_FOUND');
      problem(await saveDraft(wb, null, undefined, other), 404, 'WORKBOOK_NOT_FOUND');
      const tenant = await t.tenant(`dash-other-${dialect}`);
      const theirs = await t.deployment('theirs', { tenantId: tenant.tenantId });
      problem(await publish(wb, {}, undefined, theirs), 404, 'DEPLOYMENT_NOT_FOUND');
      const scoped = await t.key(t.admin.userId, { deploymentIds: [other] });
      problem(await publish(wb, { config: { widgets: [] } }, scoped), 403, 'KEY_SCOPE_FORBIDDEN');
      problem(await saveDraft(wb, null, scoped), 403, 'KEY_SCOPE_FORBIDDEN');
      problem(await versions(wb, '', scoped), 403, 'KEY_SCOPE_FORBIDDEN');
    });
  });

  describe('PATCH /api/v1/embed/dashboard/{publicId} (reference 3.6)', () => {
    it('an admin switches allowEmbed on and off; the answer, every version and the workbook agree', async () => {
      const wb = await workbook();
      const d = await published(wb, { config: { widgets: [text('a')] } });
      const res = await patchEmbed(d.publicId, { allowEmbed: true });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({ publicId: d.publicId, allowEmbed: true });
      expect((await getWorkbook(wb)).json().publishedDashboard.allowEmbed).toBe(true);
      // A later publication keeps it; switching off applies to the dashboard, whatever the version.
      expect((await published(wb, { config: { widgets: [text('b')] } })).allowEmbed).toBe(true);
      expect((await patchEmbed(d.publicId, { allowEmbed: false })).json()).toEqual({ publicId: d.publicId, allowEmbed: false });
      expect(((await versions(wb)).json() as { items: Dashboard[] }).items.map((v) => v.allowEmbed)).toEqual([false, false]);
      // Setting the value it has changes nothing and answers the same.
      expect((await patchEmbed(d.publicId, { allowEmbed: false })).json()).toEqual({ publicId: d.publicId, allowEmbed: false });
    });

    it('admins only (403 for others, even with MANAGE on the workbook); 404 for an unknown public id or another tenant’s; scoped keys only within their deployments; bad bodies 400', async () => {
      const wb = await workbook();
      const d = await published(wb, { config: { widgets: [] } });
      await t.grant({ type: 'USER', id: editor.userId }, { type: 'WORKBOOK', id: wb }, 'MANAGE');
      expect(problem(await patchEmbed(d.publicId, { allowEmbed: true }, editor.key), 403, 'FORBIDDEN').detail).toMatch(/Only an admin/);
      problem(await patchEmbed('no-such-dashboard', { allowEmbed: true }), 404, 'DASHBOARD_NOT_FOUND');
      const scopedElsewhere = await t.key(t.admin.userId, { deploymentIds: [await t.deployment('embed-scope')] });
      problem(await patchEmbed(d.publicId, { allowEmbed: true }, scopedElsewhere), 403, 'KEY_SCOPE_FORBIDDEN');
      const scopedHere = await t.key(t.admin.userId, { deploymentIds: [deploymentId] });
      expect((await patchEmbed(d.publicId, { allowEmbed: true }, scopedHere)).json()).toEqual({ publicId: d.publicId, allowEmbed: true });
      problem(await patchEmbed(d.publicId, {}), 400, 'VALIDATION_FAILED');
      problem(await patchEmbed(d.publicId, { allowEmbed: 'yes' }), 400, 'VALIDATION_FAILED');
      expect((await findPublishedByPublicId(t.store.db, t.tenantId, d.publicId))?.allowEmbed).toBe(true);
      // Another tenant's admin cannot see this dashboard, nor this admin theirs.
      const other = await t.tenant(`embed-other-${dialect}`, [`embed-other-${dialect}.example.com`]);
      const host = `embed-other-${dialect}.example.com`;
      const res = await t.request({ method: 'PATCH', url: `/api/v1/embed/dashboard/${d.publicId}`, body: { allowEmbed: false }, key: other.admin.key, host });
      problem(res, 404, 'DASHBOARD_NOT_FOUND');
      expect((await findPublishedByPublicId(t.store.db, t.tenantId, d.publicId))?.allowEmbed).toBe(true);
    });
  });

  describe('readers for embedding (published.ts)', () => {
    it('findPublishedByPublicId gives the current version with its snapshots, workbook and deployment; findByWorkbook and setAllowEmbed', async () => {
      const wb = await workbook();
      expect(await findByWorkbook(t.store.db, t.tenantId, wb)).toBeUndefined();
      expect(await setAllowEmbed(t.store.db, t.tenantId, wb, true)).toBeUndefined();
      const r = await report('Embedded');
      await published(wb, { config: { widgets: [chart('c', r)] } });
      const v2 = await published(wb, { config: { widgets: [chart('c2', r)] } });
      const found = await findPublishedByPublicId(t.store.db, t.tenantId, v2.publicId);
      expect(found).toEqual(v2);
      expect(await findPublishedByPublicId(t.store.db, t.tenantId + 1000, v2.publicId)).toBeUndefined();
      expect(await findPublishedByPublicId(t.store.db, t.tenantId, 'nope')).toBeUndefined();
      expect(await findByWorkbook(t.store.db, t.tenantId, wb)).toEqual({ id: v2.id, publicId: v2.publicId, tenantId: t.tenantId, deploymentId, workbookId: wb, allowEmbed: false });
      expect(await setAllowEmbed(t.store.db, t.tenantId, wb, true)).toMatchObject({ publicId: v2.publicId, allowEmbed: true });
      expect((await findPublishedByPublicId(t.store.db, t.tenantId, v2.publicId))?.allowEmbed).toBe(true);
      expect((await getWorkbook(wb)).json().publishedDashboard.allowEmbed).toBe(true);
    });
  });
});
