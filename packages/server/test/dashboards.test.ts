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
  const versions = (workbookId: number, query = '', key?: string) =>
    t.request({ url: url(`/workbooks/${workbookId}/dashboard/versions${query}`), ...(key ? { key } : {}) });
  const getWorkbook = (workbookId: number) => t.request({ url: url(`/workbooks/${workbookId}`) });
  const patchEmbed = (publicId: string, body: unknown, key?: string) =>
    t.request({ method: 'PATCH', url: `/api/v1/embed/dashboard/${publicId}`, body, ...(key ? { key } : {}) });
  const workbook = (name = `wb-${++seq}`, folderId: number | null = null) => ws.workbook(name, folderId);
  const report = async (name: string, sql = 'select 1') => {
    const id = await ws.report(name);
    await t.store.db
      .updateTable('reports')
      .set({ sql_query: sql, title: `${name} title` })
      .where('id', '=', id)
      .execute();
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
      expect(d).toMatchObject({
        deploymentId,
        workbookId: wb,
        status: 'published',
        allowEmbed: false,
        versionNumber: 1,
        title: 'Sales',
        createdBy: t.admin.userId,
        config,
      });
      expect(d.publicId).toMatch(/^[A-Za-z0-9_-]{22}$/);
      expect(d.reportSnapshots.map((s) => s.reportId)).toEqual([r1, r2]);
      expect(d.reportSnapshots[0]).toMatchObject({
        reportId: r1,
        versionNumber: 1,
        name: 'Revenue',
        title: 'Revenue title',
        sqlQuery: 'select sum(amount) from orders',
      });
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
      expect(problem(await publish(wb, { config: { widgets: [text('a'), text()] } }), 400, 'VALIDATION_FAILED').errors).toEqual([
        { pointer: '/body/config/widgets/1/id', message: 'is required to publish' },
      ]);
      problem(await publish(wb, { config: { widgets: [text('y'.repeat(129))] } }), 400, 'VALIDATION_FAILED');
      problem(await publish(wb, { config: { widgets: [text('a'), text('a')] } }), 400, 'VALIDATION_FAILED');
      expect((await published(wb, { config: { widgets: [text('y'.repeat(128))] } })).versionNumber).toBe(1);
    });

    it('a widget’s chart settings are checked: `missingValues` is `gap` or `zero`, anything else is a 400 that publishes and saves nothing', async () => {
      const wb = await workbook();
      const setting = (missingValues: unknown) => ({ widgets: [{ ...text('t'), config: { text: 'hello', chart: { missingValues } } }] });
      const refused = problem(await publish(wb, { config: setting('sideways') }), 400, 'VALIDATION_FAILED');
      expect(refused.errors?.map((e) => e.pointer)).toEqual(['/body/config/widgets/0/config/chart/missingValues']);
      problem(await saveDraft(wb, setting(0)), 400, 'VALIDATION_FAILED');
      problem(await publish(wb, { config: { widgets: [{ ...text('t'), config: { chart: 'zero' } }] } }), 400, 'VALIDATION_FAILED');
      const after = (await getWorkbook(wb)).json();
      expect([after.publishedDashboard, after.dashboardDraft]).toEqual([null, null]);
      // Valid values are kept as sent, beside the config's other fields; null means the default.
      for (const value of ['zero', 'gap', null]) {
        const dashboard = await published(wb, { config: setting(value) });
        expect(dashboard.config.widgets?.[0]?.config).toEqual({ text: 'hello', chart: { missingValues: value } });
      }
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
      expect(problem(await publish(wb, { config: { widgets: [chart('w9', elsewhere)] } }), 400, 'VALIDATION_FAILED').detail).toMatch(
        /Widget "w9" shows report \d+, which does not exist/,
      );
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

  describe('GET …/workbooks/{id}/dashboard/versions (extension)', () => {
    it('pages newest first with first/after; empty before the first publication; a foreign cursor is 400', async () => {
      const wb = await workbook();
      expect((await versions(wb)).json()).toEqual({ items: [], pageInfo: { startCursor: null, endCursor: null, hasNextPage: false, hasPreviousPage: false } });
      for (const id of ['a', 'b', 'c', 'd', 'e']) await published(wb, { config: { widgets: [text(id)] } });
      const seen: number[] = [];
      let after: string | null = null;
      let pages = 0;
      do {
        const page = (await versions(wb, `?first=2${after ? `&after=${after}` : ''}`)).json() as {
          items: Dashboard[];
          pageInfo: { endCursor: string | null; hasNextPage: boolean; hasPreviousPage: boolean };
        };
        expect(page.pageInfo.hasPreviousPage).toBe(after !== null);
        seen.push(...page.items.map((v) => v.versionNumber));
        after = page.pageInfo.hasNextPage ? page.pageInfo.endCursor : null;
        pages++;
      } while (after);
      expect(seen).toEqual([5, 4, 3, 2, 1]);
      expect(pages).toBe(3);
      problem(await versions(wb, '?after=bm90LWEtY3Vyc29y'), 400, 'INVALID_CURSOR');
      problem(await versions(wb, '?first=0'), 400, 'VALIDATION_FAILED');
      problem(await versions(999_999), 404, 'WORKBOOK_NOT_FOUND');
    });
  });

  describe('POST …/workbooks/{id}/dashboard/ai-widget-thread (reference 8.G.4)', () => {
    const aiWidget = (id: string) => ({ id, type: 'AI', position, config: { prompt: 'Summarise' } });
    const storeThread = (workbookId: number, body: unknown, key?: string) =>
      t.request({ method: 'POST', url: url(`/workbooks/${workbookId}/dashboard/ai-widget-thread`), body, ...(key ? { key } : {}) });

    it('a read-only viewer (VIEW on the workbook, role VIEWER) stores a thread: only the thread id and the checksum, shown on the Dashboard and the workbook', async () => {
      const wb = await workbook();
      const dashboard = await published(wb, { config: { widgets: [aiWidget('ai-1'), text('t')] } });
      const reader = await t.user('VIEWER');
      await t.grant({ type: 'USER', id: reader.userId }, { type: 'WORKBOOK', id: wb }, 'VIEW');
      const res = await storeThread(wb, { widgetId: 'ai-1', threadId: 'thread-a', checksum: 'c1', summary: 'never stored' }, reader.key);
      problem(res, 400, 'VALIDATION_FAILED');
      const ok = await storeThread(wb, { widgetId: 'ai-1', threadId: 'thread-a', checksum: 'c1' }, reader.key);
      expect(ok.statusCode, ok.body).toBe(200);
      expect(ok.json()).toMatchObject({
        id: dashboard.id,
        versionId: dashboard.versionId,
        status: 'published',
        aiWidgetThreads: { 'ai-1': { threadId: 'thread-a', checksum: 'c1' } },
      });
      // A second store replaces the widget's thread; checksum may be null or left out.
      const again = await storeThread(wb, { widgetId: 'ai-1', threadId: 'thread-b', checksum: null }, reader.key);
      expect(again.json().aiWidgetThreads).toEqual({ 'ai-1': { threadId: 'thread-b', checksum: null } });
      expect((await versions(wb)).json().items[0].aiWidgetThreads).toEqual({ 'ai-1': { threadId: 'thread-b', checksum: null } });
      expect((await getWorkbook(wb)).json().publishedDashboard.aiWidgetThreads).toEqual({ 'ai-1': { threadId: 'thread-b', checksum: null } });
      // Nothing but the ids and the checksum is stored.
      const row = await t.store.db.selectFrom('dashboards').select('ai_widget_threads').where('id', '=', dashboard.id).executeTakeFirstOrThrow();
      expect(JSON.parse(row.ai_widget_threads as string)).toEqual({ 'ai-1': { threadId: 'thread-b', checksum: null } });
    });

    it('404 for a widget id not in the published config, and for a workbook never published; no access is 403', async () => {
      const wb = await workbook();
      await published(wb, { config: { widgets: [aiWidget('ai-1')] } });
      problem(await storeThread(wb, { widgetId: 'nope', threadId: 'x' }), 404, 'WIDGET_NOT_FOUND');
      const draftOnly = await workbook();
      expect((await saveDraft(draftOnly, { widgets: [aiWidget('ai-1')] })).statusCode).toBe(200);
      problem(await storeThread(draftOnly, { widgetId: 'ai-1', threadId: 'x' }), 404, 'DASHBOARD_NOT_FOUND');
      const outsider = await t.user('VIEWER');
      problem(await storeThread(wb, { widgetId: 'ai-1', threadId: 'x' }, outsider.key), 403, 'FORBIDDEN');
      problem(await storeThread(wb, { widgetId: 'ai-1' }), 400, 'VALIDATION_FAILED');
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

    it('accepts `Authorization: Api-Key <key>` as well as Bearer (reference 0.1); other REST routes keep Bearer only', async () => {
      const wb = await workbook();
      const d = await published(wb, { config: { widgets: [] } });
      const res = await t.request({
        method: 'PATCH',
        url: `/api/v1/embed/dashboard/${d.publicId}`,
        body: { allowEmbed: true },
        headers: { authorization: `Api-Key ${t.admin.key}` },
      });
      expect(res.statusCode, res.body).toBe(200);
      problem(await t.request({ url: url(`/workbooks/${wb}`), headers: { authorization: `Api-Key ${t.admin.key}` } }), 401, 'UNAUTHENTICATED');
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

  describe('POST …/workbooks/{id}/duplicate (reference 8.G.1)', () => {
    const duplicate = (workbookId: number, body?: unknown, key?: string) =>
      t.request({ method: 'POST', url: url(`/workbooks/${workbookId}/duplicate`), ...(body === undefined ? {} : { body }), ...(key ? { key } : {}) });
    const reportRow = (id: number) => t.store.db.selectFrom('reports').selectAll().where('id', '=', id).executeTakeFirst();
    const counts = async () => ({
      workbooks: (await t.store.db.selectFrom('workbooks').select('id').where('deployment_id', '=', deploymentId).execute()).length,
      reports: (await t.store.db.selectFrom('reports').select('id').where('deployment_id', '=', deploymentId).execute()).length,
      dashboards: (await t.store.db.selectFrom('dashboards').select('id').where('deployment_id', '=', deploymentId).execute()).length,
    });

    it('copies "Copy of <name>", its reports and its published dashboard, re-pointed at the report copies, allowEmbed off, the source untouched', async () => {
      const folder = await ws.folder(`dup-${++seq}`);
      const wb = await workbook('Quarterly', folder);
      const r1 = await report('Revenue', 'select 1');
      const r2 = await report('Only published', 'select 2');
      const source = await published(wb, { config: { title: 'Pub', widgets: [chart('a', r1), chart('b', r2), text('t')] }, allowEmbed: true });
      await saveDraft(wb, { widgets: [chart('a', r1), text('t'), { id: 'f', type: 'FIELD', position }] });
      // Edited after publishing: the published copy keeps what was frozen, the report copy is the report now.
      await t.store.db.updateTable('reports').set({ sql_query: 'select 10' }).where('id', '=', r1).execute();
      const res = await duplicate(wb, { shared: false });
      expect(res.statusCode, res.body).toBe(200);
      const copy = res.json();
      expect(copy).toMatchObject({ name: 'Copy of Quarterly', folderId: folder, createdBy: t.admin.userId });
      const pub = copy.publishedDashboard as Dashboard;
      expect(pub).toMatchObject({ workbookId: copy.id, versionNumber: 1, status: 'published', allowEmbed: false, title: 'Pub' });
      expect(pub.publicId).not.toBe(source.publicId);
      expect(pub.id).not.toBe(source.id);
      const widgets = pub.config.widgets!;
      const [c1, c2] = [widgets[0]!.config!.reportId as number, widgets[1]!.config!.reportId as number];
      expect([c1, c2]).not.toContain(r1);
      expect([c1, c2]).not.toContain(r2);
      expect(pub.reportSnapshots.map((s) => s.reportId)).toEqual([c1, c2]);
      expect(pub.reportSnapshots.map((s) => s.sqlQuery)).toEqual(['select 1', 'select 2']);
      expect(copy.dashboardPublished).toEqual(pub.config);
      // The draft is re-pointed too, FIELD widgets and all.
      expect(copy.dashboardDraft.widgets.map((w: Widget) => [w.id, w.type, w.config?.reportId])).toEqual([
        ['a', 'CHART', c1],
        ['t', 'TEXT', undefined],
        ['f', 'FIELD', undefined],
      ]);
      // The report copies sit beside the copy, owned by the caller, as the reports are now.
      expect(await reportRow(c1)).toMatchObject({ name: 'Revenue', sql_query: 'select 10', folder_id: folder, created_by: t.admin.userId });
      expect(await reportRow(c2)).toMatchObject({ name: 'Only published', folder_id: folder });
      // The source is as it was.
      const after = (await getWorkbook(wb)).json();
      expect(after.publishedDashboard).toEqual({ ...source, allowEmbed: true });
      expect(after.dashboardDraft.widgets[0].config.reportId).toBe(r1);
      expect((await findByWorkbook(t.store.db, t.tenantId, copy.id))?.allowEmbed).toBe(false);
    });

    it('a workbook never published is copied without a dashboard; a report deleted since publishing is copied from its snapshot', async () => {
      const plain = await workbook('Plain');
      expect((await duplicate(plain)).json()).toMatchObject({
        name: 'Copy of Plain',
        publishedDashboard: null,
        dashboardPublished: null,
        dashboardDraft: null,
      });
      const wb = await workbook('Orphaned');
      const r = await report('Deleted later', 'select 3');
      await published(wb, { config: { widgets: [chart('c', r)] } });
      await t.store.db.deleteFrom('reports').where('id', '=', r).execute();
      const copy = (await duplicate(wb)).json();
      const snapshot = (copy.publishedDashboard as Dashboard).reportSnapshots[0]!;
      expect(snapshot.reportId).not.toBe(r);
      expect(await reportRow(snapshot.reportId)).toMatchObject({ name: 'Deleted later', sql_query: 'select 3' });
    });

    it('shared: true is 403 (no creator mode) and copies nothing', async () => {
      const wb = await workbook('Shared');
      await published(wb, { config: { widgets: [] } });
      const before = await counts();
      expect(problem(await duplicate(wb, { shared: true }), 403, 'FORBIDDEN').detail).toMatch(/creator-mode/);
      expect(await counts()).toEqual(before);
      expect((await duplicate(wb, { shared: null })).statusCode).toBe(200);
    });

    it('placement: beside the source with EDIT on its folder, otherwise the root; the given folderId is still accepted', async () => {
      const readable = await ws.folder(`readable-${++seq}`);
      const writable = await ws.folder(`writable-${++seq}`);
      const inReadable = await workbook('In readable', readable);
      const inWritable = await workbook('In writable', writable);
      const user = await t.user('EXPLORER');
      await t.grant({ type: 'USER', id: user.userId }, { type: 'FOLDER', id: readable }, 'VIEW');
      await t.grant({ type: 'USER', id: user.userId }, { type: 'FOLDER', id: writable }, 'EDIT');
      // No EDIT on the root yet: the fallback is refused, and nothing is created.
      expect(problem(await duplicate(inReadable, undefined, user.key), 403, 'FORBIDDEN').detail).toMatch(
        new RegExp(`beside the source with EDIT on folder ${readable}, otherwise to the workspace root`),
      );
      expect((await duplicate(inWritable, undefined, user.key)).json()).toMatchObject({ folderId: writable, name: 'Copy of In writable' });
      expect((await duplicate(inReadable, { folderId: writable }, user.key)).json()).toMatchObject({ folderId: writable });
      // A source at the root: its copy goes to the root, which needs EDIT on the deployment.
      const atRoot = await workbook('At root');
      await t.grant({ type: 'USER', id: user.userId }, { type: 'WORKBOOK', id: atRoot }, 'VIEW');
      expect(problem(await duplicate(atRoot, undefined, user.key), 403, 'FORBIDDEN').detail).toMatch(/EDIT access on deployment \d+ \(the workspace root\)/);
      const d = await t.grant({ type: 'USER', id: user.userId }, { type: 'DEPLOYMENT', id: deploymentId }, 'EDIT');
      expect((await duplicate(atRoot, undefined, user.key)).json()).toMatchObject({ folderId: null, folderPath: [], name: 'Copy of At root' });
      await t.store.db.deleteFrom('policies').where('id', '=', d).execute();
    });

    it('needs read access and the EXPLORER role; needs VIEW on the reports it copies; sharing is not copied', async () => {
      const folder = await ws.folder(`rights-${++seq}`);
      const wb = await workbook('Guarded', folder);
      const secret = await report('Secret report');
      await published(wb, { config: { widgets: [chart('s', secret)] } });
      const user = await t.user('EXPLORER');
      const reader = await t.user('EXPLORER');
      const before = await counts();
      // No access to the workbook at all.
      problem(await duplicate(wb, undefined, user.key), 403, 'FORBIDDEN');
      await t.grant({ type: 'USER', id: user.userId }, { type: 'FOLDER', id: folder }, 'EDIT');
      await t.grant({ type: 'USER', id: reader.userId }, { type: 'WORKBOOK', id: wb }, 'VIEW');
      // The report its dashboard shows is not the user's to read.
      expect(problem(await duplicate(wb, undefined, user.key), 403, 'FORBIDDEN').detail).toMatch(new RegExp(`report ${secret}`));
      // A VIEWER may not duplicate, even with access everywhere.
      await t.grant({ type: 'USER', id: viewer.userId }, { type: 'FOLDER', id: folder }, 'MANAGE');
      expect(problem(await duplicate(wb, undefined, viewer.key), 403, 'FORBIDDEN').detail).toMatch(/Viewers cannot create/);
      expect(await counts()).toEqual(before);
      await t.grant({ type: 'USER', id: user.userId }, { type: 'REPORT', id: secret }, 'VIEW');
      const copy = (await duplicate(wb, undefined, user.key)).json();
      expect(copy).toMatchObject({ folderId: folder, createdBy: user.userId });
      // The reader was granted the source, not the copy.
      problem(await t.request({ url: url(`/workbooks/${copy.id}`), key: reader.key }), 403, 'FORBIDDEN');
      expect((await getWorkbook(wb)).statusCode).toBe(200);
    });
  });

  describe('readers for embedding (published.ts)', () => {
    it('findPublishedByPublicId gives the current version with its snapshots, workbook and deployment; findByWorkbook and setAllowEmbed', async () => {
      const wb = await workbook();
      expect(await findByWorkbook(t.store.db, t.tenantId, wb)).toBeUndefined();
      expect(await setAllowEmbed(t.store.db, t.tenantId, wb, true, new Date().toISOString())).toBeUndefined();
      const r = await report('Embedded');
      await published(wb, { config: { widgets: [chart('c', r)] } });
      const v2 = await published(wb, { config: { widgets: [chart('c2', r)] } });
      const found = await findPublishedByPublicId(t.store.db, t.tenantId, v2.publicId);
      expect(found).toEqual(v2);
      expect(await findPublishedByPublicId(t.store.db, t.tenantId + 1000, v2.publicId)).toBeUndefined();
      expect(await findPublishedByPublicId(t.store.db, t.tenantId, 'nope')).toBeUndefined();
      expect(await findByWorkbook(t.store.db, t.tenantId, wb)).toEqual({
        id: v2.id,
        publicId: v2.publicId,
        tenantId: t.tenantId,
        deploymentId,
        workbookId: wb,
        allowEmbed: false,
      });
      expect(await setAllowEmbed(t.store.db, t.tenantId, wb, true, new Date().toISOString())).toMatchObject({ publicId: v2.publicId, allowEmbed: true });
      expect((await findPublishedByPublicId(t.store.db, t.tenantId, v2.publicId))?.allowEmbed).toBe(true);
      expect((await getWorkbook(wb)).json().publishedDashboard.allowEmbed).toBe(true);
    });
  });
});
