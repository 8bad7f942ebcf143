import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, TestApp, problem, type Caller } from './harness.js';
import { WorkspaceFixtures } from './workspace-fixtures.js';

/*
 * Workbook promotion across deployments (reference 9, names only; the shapes and rules beyond the
 * names are this product's: docs/api/workbook-promotion.md, docs/decisions/workbook-promotion.md).
 */

interface Widget {
  id: string;
  type: string;
  config?: Record<string, unknown> | null;
}
interface Promotion {
  id: number;
  sourceDeploymentId: number;
  sourceWorkbookId: number;
  targetDeploymentId: number;
  targetWorkbookId: number;
  outcome: 'CREATED' | 'UPDATED';
  reports: Array<{ sourceReportId: number; targetReportId: number; outcome: 'CREATED' | 'UPDATED' }>;
  dashboardPublished: boolean;
  idempotencyKey: string | null;
  createdBy: number | null;
  createdAt: string;
}

const position = { x: 0, y: 0, w: 6, h: 4 };
const chart = (id: string, reportId: number) => ({ id, type: 'CHART', position, config: { reportId } });

/** A compiled model with the cube `orders`: the members given, by kind. */
function artifact(members: { measures?: string[]; dimensions?: string[]; times?: string[]; segments?: string[] }) {
  const described = (name: string) => ({ name, public: true });
  return {
    cubes: [
      {
        name: 'orders',
        file: 'model/cubes/orders.yml',
        public: true,
        sql_table: 'orders',
        data_source: 'default',
        measures: (members.measures ?? []).map((n) => ({ ...described(n), type: 'count', sql: null })),
        dimensions: [
          ...(members.dimensions ?? []).map((n) => ({ ...described(n), type: 'string', sql: n, primary_key: false })),
          ...(members.times ?? []).map((n) => ({ ...described(n), type: 'time', sql: n, primary_key: false })),
        ],
        segments: (members.segments ?? []).map((n) => ({ ...described(n), sql: 'true' })),
        joins: [],
        pre_aggregations: [],
      },
    ],
    views: [],
  };
}

const FULL = { measures: ['count'], dimensions: ['status', 'region'], times: ['created_at'], segments: ['big'] };

describe.each(DIALECTS)('workbook promotion (%s)', (dialect) => {
  let t: TestApp;
  let source: number;
  let target: number;
  let ws: WorkspaceFixtures;
  let wsTarget: WorkspaceFixtures;
  let seq = 0;

  beforeAll(async () => {
    t = await TestApp.create(dialect);
    source = await t.deployment('promotion-source');
    target = await t.deployment('promotion-target');
    ws = new WorkspaceFixtures(t, source);
    wsTarget = new WorkspaceFixtures(t, target);
    await build(target, FULL);
  });
  afterAll(async () => t?.close());

  /** A successful production build of `deploymentId` whose model has `members`. */
  async function build(deploymentId: number, members: Parameters<typeof artifact>[0]) {
    const at = new Date().toISOString();
    await t.store.db
      .insertInto('builds')
      .values({
        tenant_id: t.tenantId,
        deployment_id: deploymentId,
        branch_name: 'main',
        mode: 'production',
        commit_sha: '0'.repeat(40),
        files_hash: null,
        status: 'success',
        error_text: null,
        cubes_count: 1,
        artifact: JSON.stringify(artifact(members)),
        job_id: null,
        cause: 'test',
        created_at: at,
        started_at: at,
        finished_at: at,
        updated_at: at,
      })
      .execute();
  }

  const url = (path: string, d = source) => `/api/v1/deployments/${d}${path}`;
  const as = (key?: string) => (key ? { key } : {});
  const preview = (wb: number, body: unknown, key?: string, d = source) =>
    t.request({ method: 'POST', url: url(`/workbooks/${wb}/promotion-previews`, d), body, ...as(key) });
  const promote = (wb: number, body: unknown, options: { key?: string; idempotencyKey?: string; d?: number } = {}) =>
    t.request({
      method: 'POST',
      url: url(`/workbooks/${wb}/promotions`, options.d ?? source),
      body,
      ...as(options.key),
      headers: options.idempotencyKey ? { 'idempotency-key': options.idempotencyKey } : {},
    });
  const promoted = async (wb: number, body: unknown = { targetDeploymentId: target }, options: { key?: string; idempotencyKey?: string } = {}) => {
    const res = await promote(wb, body, options);
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as Promotion;
  };
  const getIn = (d: number, path: string, key?: string) => t.request({ url: url(path, d), ...as(key) });
  const counts = async (d: number) => ({
    workbooks: (await t.store.db.selectFrom('workbooks').select('id').where('deployment_id', '=', d).execute()).length,
    reports: (await t.store.db.selectFrom('reports').select('id').where('deployment_id', '=', d).execute()).length,
    dashboards: (await t.store.db.selectFrom('dashboards').select('id').where('deployment_id', '=', d).execute()).length,
    promotions: (await t.store.db.selectFrom('workbook_promotions').select('id').where('tenant_id', '=', t.tenantId).execute()).length,
    links: (await t.store.db.selectFrom('workbook_promotion_links').select('id').where('tenant_id', '=', t.tenantId).execute()).length,
  });

  /** A report of the source whose semantic query is `query`. */
  async function report(name: string, query: Record<string, unknown>, d = source): Promise<number> {
    const id = await (d === source ? ws : wsTarget).report(`${name} ${++seq}`);
    await t.store.db
      .updateTable('reports')
      .set({ spec: JSON.stringify({ query }), title: name })
      .where('id', '=', id)
      .execute();
    return id;
  }

  /** A source workbook whose draft shows `draftReports` and whose published dashboard shows `publishedReports`. */
  async function workbook(draftReports: number[], publishedReports: number[] = []): Promise<number> {
    const wb = await ws.workbook(`Sales ${++seq}`);
    if (publishedReports.length > 0) {
      const res = await t.request({
        method: 'POST',
        url: url(`/workbooks/${wb}/publish`),
        body: { workbookId: wb, title: 'Published', config: { title: 'Published', widgets: publishedReports.map((r, i) => chart(`p${i}`, r)) } },
      });
      expect(res.statusCode, res.body).toBe(200);
    }
    const res = await t.request({
      method: 'PUT',
      url: url(`/workbooks/${wb}/dashboard`),
      body: { dashboardDraft: { title: 'Draft', widgets: draftReports.map((r, i) => chart(`d${i}`, r)) } },
    });
    expect(res.statusCode, res.body).toBe(200);
    return wb;
  }

  const complete = { measures: ['orders.count'], dimensions: ['orders.status'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'month' }] };

  describe('preview', () => {
    it('extension, promotion preview: lists the members the target model lacks, with the reports using each, and writes nothing', async () => {
      const r1 = await report('Uses missing', {
        measures: ['orders.count', 'orders.revenue'],
        dimensions: ['orders.status', 'orders.created_at.month', 'customers.name'],
        segments: ['orders.big', 'orders.small'],
        timeDimensions: [{ dimension: 'orders.status' }],
        filters: [
          {
            or: [
              { member: 'orders.region', operator: 'equals', values: ['x'] },
              { member: 'orders.channel', operator: 'set' },
            ],
          },
        ],
      });
      const r2 = await report('Also missing', { measures: ['orders.revenue'] });
      const wb = await workbook([r1], [r2]);
      const before = await counts(target);
      const res = await preview(wb, { targetDeploymentId: target });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({
        sourceDeploymentId: source,
        sourceWorkbookId: wb,
        targetDeploymentId: target,
        targetWorkbookId: null,
        outcome: 'CREATED',
        targetBuildId: expect.any(Number),
        ready: false,
      });
      expect(res.json().reportIds.sort()).toEqual([r1, r2].sort());
      expect(res.json().missingMembers).toEqual([
        { member: 'customers.name', use: 'dimension', reportIds: [r1] },
        { member: 'orders.channel', use: 'member', reportIds: [r1] },
        { member: 'orders.revenue', use: 'measure', reportIds: [r1, r2].sort((a, b) => a - b) },
        { member: 'orders.small', use: 'segment', reportIds: [r1] },
        // A string dimension is no time dimension.
        { member: 'orders.status', use: 'timeDimension', reportIds: [r1] },
      ]);
      expect(await counts(target)).toEqual(before);
    });

    it('extension, promotion preview: ready with nothing missing; a target never built lacks every member', async () => {
      const wb = await workbook([await report('Complete', complete)]);
      const ready = (await preview(wb, { targetDeploymentId: target })).json();
      expect(ready).toMatchObject({ missingMembers: [], ready: true, outcome: 'CREATED' });
      const unbuilt = await t.deployment('never-built');
      const none = (await preview(wb, { targetDeploymentId: unbuilt })).json();
      expect(none).toMatchObject({ targetBuildId: null, ready: false });
      expect(none.missingMembers.map((m: { member: string }) => m.member)).toEqual(['orders.count', 'orders.created_at', 'orders.status']);
    });

    it('extension, promotion preview: the workbook’s own deployment is 400; an unknown target is 404', async () => {
      const wb = await workbook([]);
      problem(await preview(wb, { targetDeploymentId: source }), 400, 'INVALID_OPERATION');
      problem(await preview(wb, { targetDeploymentId: 999_999 }), 404, 'DEPLOYMENT_NOT_FOUND');
      problem(await preview(999_999, { targetDeploymentId: target }), 404, 'WORKBOOK_NOT_FOUND');
    });
  });

  describe('promote', () => {
    it('extension, promotion: refused with 422 listing the missing members, nothing written', async () => {
      const wb = await workbook([await report('Missing', { measures: ['orders.revenue'] })]);
      const before = await counts(target);
      const res = await promote(wb, { targetDeploymentId: target });
      const body = problem(res, 422, 'PROMOTION_MEMBERS_MISSING');
      expect(res.json().missingMembers).toEqual([{ member: 'orders.revenue', use: 'measure', reportIds: [expect.any(Number)] }]);
      expect(body.detail).toContain('orders.revenue');
      expect(await counts(target)).toEqual(before);
    });

    it('extension, promotion: copies the workbook, its reports and its published and draft dashboard, re-pointed at the copies; links each item', async () => {
      const folder = await wsTarget.folder(`Promoted ${++seq}`);
      const r1 = await report('Revenue', complete);
      const r2 = await report('Only published', { measures: ['orders.count'], segments: ['orders.big'] });
      const wb = await workbook([r1], [r1, r2]);
      await t.store.db.updateTable('workbooks').set({ meta: '{"owner":"finance"}' }).where('id', '=', wb).execute();
      const p = await promoted(wb, { targetDeploymentId: target, folderId: folder });
      expect(p).toMatchObject({
        sourceDeploymentId: source,
        sourceWorkbookId: wb,
        targetDeploymentId: target,
        outcome: 'CREATED',
        dashboardPublished: true,
        idempotencyKey: null,
        createdBy: t.admin.userId,
      });
      expect(p.reports.map((r) => [r.sourceReportId, r.outcome])).toEqual([
        [r1, 'CREATED'],
        [r2, 'CREATED'],
      ]);
      const copyOf = new Map(p.reports.map((r) => [r.sourceReportId, r.targetReportId]));
      const copy = (await getIn(target, `/workbooks/${p.targetWorkbookId}`)).json();
      const src = (await getIn(source, `/workbooks/${wb}`)).json();
      expect(copy).toMatchObject({ deploymentId: target, name: src.name, slug: src.slug, folderId: folder, meta: { owner: 'finance' } });
      expect(copy.dashboardDraft.widgets.map((w: Widget) => w.config?.reportId)).toEqual([copyOf.get(r1)]);
      expect(copy.publishedDashboard).toMatchObject({ deploymentId: target, workbookId: copy.id, versionNumber: 1, allowEmbed: false });
      expect(copy.publishedDashboard.publicId).not.toBe(src.publishedDashboard.publicId);
      expect(copy.publishedDashboard.config.widgets.map((w: Widget) => w.config?.reportId)).toEqual([copyOf.get(r1), copyOf.get(r2)]);
      for (const [from, to] of copyOf) {
        const row = await t.store.db.selectFrom('reports').selectAll().where('id', '=', to).executeTakeFirstOrThrow();
        const original = await t.store.db.selectFrom('reports').selectAll().where('id', '=', from).executeTakeFirstOrThrow();
        expect(row).toMatchObject({ deployment_id: target, folder_id: folder, name: original.name, spec: original.spec });
      }
      // The source is untouched.
      expect((await getIn(source, `/workbooks/${wb}`)).json()).toEqual(src);

      const links = (await getIn(source, `/workbooks/${wb}/promotion-links`)).json();
      expect(links.items.map((l: Record<string, unknown>) => [l.kind, l.sourceReportId, l.targetReportId, l.targetWorkbookId, l.lastPromotionId])).toEqual([
        ['WORKBOOK', null, null, p.targetWorkbookId, p.id],
        ['REPORT', r1, copyOf.get(r1), p.targetWorkbookId, p.id],
        ['REPORT', r2, copyOf.get(r2), p.targetWorkbookId, p.id],
      ]);
      // The copy sees the same links, and the promotion, from its side.
      expect((await getIn(target, `/workbooks/${p.targetWorkbookId}/promotion-links`)).json().items).toEqual(links.items);
      expect((await getIn(source, `/workbooks/${wb}/promotion`)).json()).toEqual(p);
      expect((await getIn(target, `/workbooks/${p.targetWorkbookId}/promotion`)).json()).toEqual(p);
    });

    it('extension, promotion: promoting again updates the earlier copy through the links, never a second copy', async () => {
      const r1 = await report('Kept', complete);
      const wb = await workbook([r1], [r1]);
      const first = await promoted(wb);
      const before = await counts(target);
      // The source changes: a report's query and name, a new report on the draft, a new publication.
      await t.store.db
        .updateTable('reports')
        .set({ name: 'Renamed', spec: JSON.stringify({ query: { measures: ['orders.count'] } }) })
        .where('id', '=', r1)
        .execute();
      const r2 = await report('Added', { dimensions: ['orders.region'] });
      await t.request({ method: 'PUT', url: url(`/workbooks/${wb}/dashboard`), body: { dashboardDraft: { widgets: [chart('a', r1), chart('b', r2)] } } });
      await t.request({ method: 'POST', url: url(`/workbooks/${wb}/publish`), body: { workbookId: wb } });
      const again = (await preview(wb, { targetDeploymentId: target })).json();
      expect(again).toMatchObject({ outcome: 'UPDATED', targetWorkbookId: first.targetWorkbookId, ready: true });

      const second = await promoted(wb);
      expect(second).toMatchObject({ outcome: 'UPDATED', targetWorkbookId: first.targetWorkbookId });
      expect(second.id).toBeGreaterThan(first.id);
      const firstCopy = first.reports[0]!.targetReportId;
      expect(second.reports).toEqual([
        { sourceReportId: r1, targetReportId: firstCopy, outcome: 'UPDATED' },
        { sourceReportId: r2, targetReportId: expect.any(Number), outcome: 'CREATED' },
      ]);
      const after = await counts(target);
      expect(after).toMatchObject({ workbooks: before.workbooks, dashboards: before.dashboards, reports: before.reports + 1 });
      expect(await t.store.db.selectFrom('reports').selectAll().where('id', '=', firstCopy).executeTakeFirstOrThrow()).toMatchObject({
        name: 'Renamed',
        spec: JSON.stringify({ query: { measures: ['orders.count'] } }),
      });
      const copy = (await getIn(target, `/workbooks/${first.targetWorkbookId}`)).json();
      expect(copy.publishedDashboard.versionNumber).toBe(2);
      expect(copy.dashboardDraft.widgets.map((w: Widget) => w.config?.reportId)).toEqual([firstCopy, second.reports[1]!.targetReportId]);

      // History, newest first, by cursor; the current promotion is the newest.
      const page1 = (await getIn(source, `/workbooks/${wb}/promotions?first=1`)).json();
      expect(page1.items.map((p: Promotion) => p.id)).toEqual([second.id]);
      expect(page1.pageInfo.hasNextPage).toBe(true);
      const page2 = (await getIn(source, `/workbooks/${wb}/promotions?first=1&after=${page1.pageInfo.endCursor}`)).json();
      expect(page2.items.map((p: Promotion) => p.id)).toEqual([first.id]);
      expect(page2.pageInfo.hasNextPage).toBe(false);
      expect((await getIn(source, `/workbooks/${wb}/promotion`)).json().id).toBe(second.id);
    });

    it('extension, promotion: a deleted copy is made afresh by the next promotion', async () => {
      const wb = await workbook([await report('Fresh', complete)]);
      const first = await promoted(wb);
      await t.store.db.deleteFrom('workbooks').where('id', '=', first.targetWorkbookId).execute();
      const second = await promoted(wb);
      expect(second.outcome).toBe('CREATED');
      expect(second.targetWorkbookId).not.toBe(first.targetWorkbookId);
    });

    it('extension, promotion: a report deleted since the publication is promoted from its snapshot, and updated, not copied again, next time', async () => {
      const r = await report('Deleted later', complete);
      const wb = await workbook([], [r]);
      await t.store.db.deleteFrom('reports').where('id', '=', r).execute();
      const first = await promoted(wb);
      expect(first.reports).toEqual([{ sourceReportId: r, targetReportId: expect.any(Number), outcome: 'CREATED' }]);
      const second = await promoted(wb);
      expect(second.reports).toEqual([{ sourceReportId: r, targetReportId: first.reports[0]!.targetReportId, outcome: 'UPDATED' }]);
    });

    it('extension, promotion: a workbook never promoted has no promotion (404) and empty lists', async () => {
      const wb = await workbook([]);
      problem(await getIn(source, `/workbooks/${wb}/promotion`), 404, 'PROMOTION_NOT_FOUND');
      expect((await getIn(source, `/workbooks/${wb}/promotions`)).json().items).toEqual([]);
      expect((await getIn(source, `/workbooks/${wb}/promotion-links`)).json().items).toEqual([]);
      problem(await getIn(source, `/workbooks/${wb}/promotions?after=nonsense`), 400, 'INVALID_CURSOR');
    });

    it('extension, promotion: records an audit event', async () => {
      expect((await t.request({ method: 'PUT', url: '/api/v1/tenant/settings', body: { auditLogEnabled: true } })).statusCode).toBe(200);
      try {
        const wb = await workbook([await report('Audited', complete)]);
        const p = await promoted(wb);
        const event = await t.store.db
          .selectFrom('audit_events')
          .selectAll()
          .where('tenant_id', '=', t.tenantId)
          .where('action', '=', 'workbook.promoted')
          .orderBy('id', 'desc')
          .executeTakeFirstOrThrow();
        expect(event).toMatchObject({ actor_user_id: t.admin.userId });
        expect(JSON.stringify(event)).toContain(`${p.id}`);
      } finally {
        await t.request({ method: 'PUT', url: '/api/v1/tenant/settings', body: { auditLogEnabled: false } });
      }
    });
  });

  describe('idempotency', () => {
    it('extension, promotion idempotency: the same key and body answer the same promotion and write nothing', async () => {
      const wb = await workbook([await report('Once', complete)]);
      const first = await promote(wb, { targetDeploymentId: target }, { idempotencyKey: `key-${seq}` });
      expect(first.statusCode, first.body).toBe(201);
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      const before = await counts(target);
      const again = await promote(wb, { targetDeploymentId: target, folderId: null }, { idempotencyKey: `key-${seq}` });
      expect(again.statusCode, again.body).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.json()).toEqual(first.json());
      expect(first.json().idempotencyKey).toBe(`key-${seq}`);
      expect(await counts(target)).toEqual(before);
    });

    it('extension, promotion idempotency: the same key with another body is 422 IDEMPOTENCY_KEY_REUSED; without a key every call promotes', async () => {
      const wb = await workbook([await report('Twice', complete)]);
      const key = `reused-${seq}`;
      await promoted(wb, { targetDeploymentId: target }, { idempotencyKey: key });
      const folder = await wsTarget.folder(`Elsewhere ${++seq}`);
      const before = await counts(target);
      problem(await promote(wb, { targetDeploymentId: target, folderId: folder }, { idempotencyKey: key }), 422, 'IDEMPOTENCY_KEY_REUSED');
      expect(await counts(target)).toEqual(before);
      // The key belongs to its workbook: another workbook may use it.
      const other = await workbook([await report('Other', complete)]);
      await promoted(other, { targetDeploymentId: target }, { idempotencyKey: key });
      const a = await promoted(wb);
      const b = await promoted(wb);
      expect(b.id).not.toBe(a.id);
      problem(await promote(wb, { targetDeploymentId: target }, { idempotencyKey: 'has space' }), 400, 'VALIDATION_FAILED');
    });
  });

  describe('access', () => {
    let explorer: Caller;
    beforeAll(async () => {
      explorer = await t.user('EXPLORER');
    });

    it('extension, promotion access: needs VIEW on the source (403 without)', async () => {
      const wb = await workbook([await report('Hidden', complete)]);
      problem(await preview(wb, { targetDeploymentId: target }, explorer.key), 403, 'FORBIDDEN');
      problem(await promote(wb, { targetDeploymentId: target }, { key: explorer.key }), 403, 'FORBIDDEN');
      problem(await getIn(source, `/workbooks/${wb}/promotions`, explorer.key), 403, 'FORBIDDEN');
    });

    it('extension, promotion access: a first promotion follows the workbooks’ create rules in the target; an update needs EDIT on the copy', async () => {
      const user = await t.user('EXPLORER');
      const r = await report('Shared', complete);
      const wb = await workbook([r]);
      await t.grant({ type: 'USER', id: user.userId }, { type: 'WORKBOOK', id: wb }, 'VIEW');
      await t.grant({ type: 'USER', id: user.userId }, { type: 'REPORT', id: r }, 'VIEW');
      // Readable source, but no EDIT on the target's root.
      const refused = problem(await promote(wb, { targetDeploymentId: target }, { key: user.key }), 403, 'FORBIDDEN');
      expect(refused.detail).toContain(`deployment ${target}`);
      problem(await preview(wb, { targetDeploymentId: target }, user.key), 403, 'FORBIDDEN');
      const folder = await wsTarget.folder(`Granted ${++seq}`);
      await t.grant({ type: 'USER', id: user.userId }, { type: 'FOLDER', id: folder }, 'EDIT');
      const p = (await promote(wb, { targetDeploymentId: target, folderId: folder }, { key: user.key })).json() as Promotion;
      expect(p).toMatchObject({ outcome: 'CREATED', createdBy: user.userId });
      // The admin's copy: this user may read the source but not edit the copy an admin made.
      const other = await t.user('EXPLORER');
      await t.grant({ type: 'USER', id: other.userId }, { type: 'WORKBOOK', id: wb }, 'VIEW');
      await t.grant({ type: 'USER', id: other.userId }, { type: 'REPORT', id: r }, 'VIEW');
      await t.grant({ type: 'USER', id: other.userId }, { type: 'DEPLOYMENT', id: target }, 'VIEW');
      problem(await promote(wb, { targetDeploymentId: target }, { key: other.key }), 403, 'FORBIDDEN');
    });

    it('extension, promotion access: viewers cannot make a copy; a key scoped to the source only cannot write to the target', async () => {
      const wb = await workbook([await report('Scoped', complete)]);
      const viewer = await t.user('VIEWER');
      await t.grant({ type: 'USER', id: viewer.userId }, { type: 'DEPLOYMENT', id: source }, 'VIEW');
      await t.grant({ type: 'USER', id: viewer.userId }, { type: 'DEPLOYMENT', id: target }, 'EDIT');
      problem(await promote(wb, { targetDeploymentId: target }, { key: viewer.key }), 403, 'FORBIDDEN');
      const scoped = await t.key(t.admin.userId, { deploymentIds: [source] });
      problem(await promote(wb, { targetDeploymentId: target }, { key: scoped }), 403, 'KEY_SCOPE_FORBIDDEN');
      problem(await preview(wb, { targetDeploymentId: target }, scoped), 403, 'KEY_SCOPE_FORBIDDEN');
    });

    it('extension, promotion: another tenant’s deployments and workbooks are 404, as source or as target', async () => {
      const wb = await workbook([await report('Tenant', complete)]);
      const p = await promoted(wb);
      const slug = `promo-${dialect}-${++seq}`;
      const host = `${slug}.example.com`;
      const other = await t.tenant(slug, [host]);
      const theirs = await t.deployment('theirs', { tenantId: other.tenantId });
      const theirRequest = (method: 'GET' | 'POST', path: string, body?: unknown, d = source) =>
        t.request({ method, url: url(path, d), key: other.admin.key, host, ...(body === undefined ? {} : { body }) });
      // Our deployments, from the other tenant: not there.
      problem(await theirRequest('POST', `/workbooks/${wb}/promotions`, { targetDeploymentId: theirs }), 404, 'DEPLOYMENT_NOT_FOUND');
      problem(await theirRequest('POST', `/workbooks/${wb}/promotion-previews`, { targetDeploymentId: theirs }), 404, 'DEPLOYMENT_NOT_FOUND');
      problem(await theirRequest('GET', `/workbooks/${wb}/promotion`), 404, 'DEPLOYMENT_NOT_FOUND');
      problem(await theirRequest('GET', `/workbooks/${wb}/promotions`), 404, 'DEPLOYMENT_NOT_FOUND');
      problem(await theirRequest('GET', `/workbooks/${p.targetWorkbookId}/promotion-links`, undefined, target), 404, 'DEPLOYMENT_NOT_FOUND');
      // Their deployment as our target, and our workbook id in their deployment: not there either.
      problem(await promote(wb, { targetDeploymentId: theirs }), 404, 'DEPLOYMENT_NOT_FOUND');
      problem(await preview(wb, { targetDeploymentId: theirs }), 404, 'DEPLOYMENT_NOT_FOUND');
      problem(await theirRequest('GET', `/workbooks/${wb}/promotion`, undefined, theirs), 404, 'WORKBOOK_NOT_FOUND');
    });
  });
});
