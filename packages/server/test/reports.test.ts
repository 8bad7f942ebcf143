import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, TestApp, problem, type Caller } from './harness.js';
import { WorkspaceFixtures } from './workspace-fixtures.js';

interface Report {
  id: number;
  deploymentId: number;
  type: 'REPORT';
  name: string;
  publicId: string;
  kind: string | null;
  title: string | null;
  description: string | null;
  sqlQuery: string | null;
  pythonCode: string | null;
  spec: unknown;
  meta: Record<string, unknown> | null;
  preferences: Record<string, unknown> | null;
  periodComparisons: unknown[] | null;
  fillMissingRows: Record<string, unknown> | null;
  folderId: number | null;
  folderPath: Array<{ id: number; name: string }>;
  createdAt: string;
  updatedAt: string;
  createdBy: number | null;
  user: { id: number; email: string } | null;
  isFavorite: boolean;
  lastViewedAt: string | null;
}
interface PageInfo {
  startCursor: string | null;
  endCursor: string | null;
  hasNextPage: boolean;
  hasPreviousPage: boolean;
}
interface ReportPage {
  items: Report[];
  pageInfo: PageInfo;
  data: Report[];
  count: number;
  totalCount: number;
  pagination: { total: number; offset: number; limit: number };
}

const fullContent = {
  kind: 'sankey',
  title: 'Flows',
  description: 'Where orders go',
  sqlQuery: 'select 1',
  pythonCode: 'print(1)',
  spec: { mark: 'bar', encoding: { x: { field: 'a' } } },
  meta: { source: 'sql', tags: ['a'] },
  preferences: { columnFormats: { total: { type: 'currency', decimalPlaces: 2 }, share: { type: 'percent', decimalPlaces: null } } },
  periodComparisons: [{ measure: 'orders.total', timeDimension: 'orders.created_at', offset: { amount: 1, unit: 'year' }, outputs: ['delta'] }],
  fillMissingRows: { member: 'orders.created_at', excludedDimensions: ['orders.status'] },
};

let seq = 0;
const pid = (prefix = 'r') => `${prefix}_${process.pid}-${++seq}`;

describe.each(DIALECTS)('reports (%s)', (dialect) => {
  let t: TestApp;
  let deploymentId: number;
  let otherDeploymentId: number;
  let ws: WorkspaceFixtures;
  let viewer: Caller;

  beforeAll(async () => {
    t = await TestApp.create(dialect);
    deploymentId = await t.deployment('reports');
    otherDeploymentId = await t.deployment('elsewhere');
    ws = new WorkspaceFixtures(t, deploymentId);
    viewer = await t.user('VIEWER');
  });
  afterAll(async () => t?.close());

  const url = (path: string, d = deploymentId) => `/api/v1/deployments/${d}${path}`;
  const put = (publicId: string, body: unknown, key?: string, d = deploymentId) =>
    t.request({ method: 'PUT', url: url(`/reports/by-public-id/${publicId}`, d), body, ...(key ? { key } : {}) });
  const get = (id: number, key?: string, d = deploymentId) => t.request({ url: url(`/reports/${id}`, d), ...(key ? { key } : {}) });
  const list = (query: Record<string, string | number>, key?: string, d = deploymentId) =>
    t.request({
      url: url(`/reports?${new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)])).toString()}`, d),
      ...(key ? { key } : {}),
    });
  const page = async (query: Record<string, string | number>, key?: string, d = deploymentId) => {
    const res = await list(query, key, d);
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as ReportPage;
  };
  const storedRow = (id: number) => t.store.db.selectFrom('reports').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  /** Every page of a cursor-paginated listing, following endCursor. */
  async function allPages(query: Record<string, string | number>, d: number): Promise<{ pages: ReportPage[]; ids: number[] }> {
    const pages: ReportPage[] = [];
    let after: string | null = null;
    do {
      const p = await page({ ...query, ...(after ? { after } : {}) }, undefined, d);
      pages.push(p);
      after = p.pageInfo.hasNextPage ? p.pageInfo.endCursor : null;
    } while (after !== null && pages.length < 50);
    return { pages, ids: pages.flatMap((p) => p.items.map((r) => r.id)) };
  }

  describe('upsert by public id', () => {
    it('spec: Other operations, upsert by public id: 201 when created, every field round-trips (sankey, columnFormats, period comparisons)', async () => {
      const folderId = await ws.folder(`R ${pid()}`);
      const publicId = pid();
      const res = await put(publicId, { name: 'Revenue', folderId, ...fullContent });
      expect(res.statusCode, res.body).toBe(201);
      const report = res.json() as Report;
      expect(report).toEqual({
        id: expect.any(Number),
        deploymentId,
        type: 'REPORT',
        name: 'Revenue',
        publicId,
        version: 1,
        ...fullContent,
        folderId,
        folderPath: [{ id: folderId, name: expect.any(String) }],
        createdAt: report.createdAt,
        updatedAt: report.createdAt,
        createdBy: t.admin.userId,
        user: { id: t.admin.userId, email: t.admin.email, firstName: null, picture: null },
        isFavorite: false,
        lastViewedAt: null,
        externalWorkbookPlacements: [],
        currentQueryChecksum: expect.stringMatching(/^[0-9a-f]{64}$/),
      });
      const read = (await get(report.id)).json() as Report;
      expect({ ...read, lastViewedAt: null }).toEqual(report);
    });

    it('spec: Other operations, upsert by public id: 200 on update; left-out fields kept, null clears, a string spec kept as a string', async () => {
      const publicId = pid();
      const created = (await put(publicId, { name: 'A', ...fullContent })).json() as Report;
      const res = await put(publicId, { name: 'B', title: null, spec: 'raw vega text', kind: 'table' });
      expect(res.statusCode, res.body).toBe(200);
      const updated = res.json() as Report;
      expect(updated).toMatchObject({
        id: created.id,
        name: 'B',
        title: null,
        spec: 'raw vega text',
        kind: 'table',
        sqlQuery: 'select 1',
        preferences: fullContent.preferences,
      });
      expect((await put(publicId, { name: 'B' })).json()).toEqual(updated);
    });

    it('upsert: content fields are null on create when left out', async () => {
      const report = (await put(pid(), { name: 'Bare' })).json() as Report;
      for (const field of Object.keys(fullContent)) expect(report[field as keyof Report]).toBeNull();
      expect(report).toMatchObject({ folderId: null, folderPath: [] });
    });

    it('spec: ReportSnapshot types, invalid content refused with a pointer per fault, nothing stored', async () => {
      const publicId = pid();
      const res = await put(publicId, {
        name: 'Bad',
        kind: 'pie',
        preferences: { columnFormats: { total: { type: 'money' } } },
        periodComparisons: [{ measure: 'm', timeDimension: 't', offset: { amount: 1.5, unit: 'day' } }],
        fillMissingRows: { excludedDimensions: null },
        spec: 42,
      });
      const pointers = problem(res, 400, 'VALIDATION_FAILED').errors!.map((e) => e.pointer);
      expect(pointers).toEqual(
        expect.arrayContaining([
          '/body/kind',
          '/body/preferences/columnFormats/total/type',
          '/body/periodComparisons/0/offset/amount',
          '/body/fillMissingRows/member',
          '/body/spec',
        ]),
      );
      expect(await t.store.db.selectFrom('reports').select('id').where('public_id', '=', publicId).executeTakeFirst()).toBeUndefined();
    });

    it('public id format: letters, digits, _ and -, 1 to 64 characters, else 400', async () => {
      for (const bad of ['has.dot', 'x'.repeat(65), 'sp%20ace']) {
        expect(problem(await put(bad, { name: 'x' }), 400, 'VALIDATION_FAILED').errors!.map((e) => e.pointer)).toContain('/path/publicId');
      }
      expect((await put(`Ab_-${'9'.repeat(60)}`, { name: 'ok' })).statusCode).toBe(201);
    });

    it('public ids are unique per deployment and case-sensitive', async () => {
      const publicId = pid('Case');
      const a = (await put(publicId, { name: 'a' })).json() as Report;
      const lower = (await put(publicId.toLowerCase(), { name: 'b' })).json() as Report;
      const elsewhere = (await put(publicId, { name: 'c' }, undefined, otherDeploymentId)).json() as Report;
      expect(new Set([a.id, lower.id, elsewhere.id]).size).toBe(3);
    });
  });

  describe('access (DESIGN.md: Roles and access, Moves)', () => {
    it('Roles: a VIEWER cannot create a report, even with EDIT granted', async () => {
      const d = await t.deployment('viewer');
      await t.grant({ type: 'USER', id: viewer.userId }, { type: 'DEPLOYMENT', id: d }, 'EDIT');
      expect(problem(await put(pid(), { name: 'x' }, viewer.key, d), 403, 'FORBIDDEN').detail).toMatch(/Viewers cannot create reports/);
    });

    it('Creating needs EDIT on the folder, or on the deployment at the root; the creator gets MANAGE', async () => {
      const d = await t.deployment('create');
      const f = new WorkspaceFixtures(t, d);
      const folder = await f.folder('team');
      const user = await t.user('EXPLORER');
      await t.grant({ type: 'USER', id: user.userId }, { type: 'FOLDER', id: folder }, 'EDIT');
      problem(await put(pid(), { name: 'root' }, user.key, d), 403, 'FORBIDDEN');
      const publicId = pid();
      const created = await put(publicId, { name: 'mine', folderId: folder }, user.key, d);
      expect(created.statusCode, created.body).toBe(201);
      // The grant goes; the creator still updates and deletes it (MANAGE on what they created).
      await t.store.db.deleteFrom('policies').where('principal_id', '=', user.userId).execute();
      expect((await put(publicId, { name: 'still mine' }, user.key, d)).statusCode).toBe(200);
      const id = (created.json() as Report).id;
      const removed = await t.request({ method: 'POST', url: url('/workspace/bulk-delete', d), key: user.key, body: { items: [{ type: 'REPORT', id }] } });
      expect(removed.json()).toMatchObject({ deleted: [{ type: 'REPORT', id }], failed: [] });
    });

    it('Updating needs EDIT on the report: VIEW is 403 and nothing changes', async () => {
      const d = await t.deployment('update');
      const user = await t.user('EXPLORER');
      await t.grant({ type: 'USER', id: user.userId }, { type: 'DEPLOYMENT', id: d }, 'VIEW');
      const publicId = pid();
      const report = (await put(publicId, { name: 'before', title: 't' }, undefined, d)).json() as Report;
      expect(problem(await put(publicId, { name: 'after' }, user.key, d), 403).detail).toBe(
        `You need EDIT access to update report ${report.id} "before"; you have VIEW access.`,
      );
      expect(await storedRow(report.id)).toMatchObject({ name: 'before', title: 't' });
    });

    it('Moves: a changed folderId is a move (EDIT on a report and on the destination), errors as the single move gives them', async () => {
      const d = await t.deployment('move');
      const f = new WorkspaceFixtures(t, d);
      const from = await f.folder('from');
      const to = await f.folder('to');
      const locked = await f.folder('locked');
      const user = await t.user('EXPLORER');
      for (const folder of [from, to]) await t.grant({ type: 'USER', id: user.userId }, { type: 'FOLDER', id: folder }, 'EDIT');
      await t.grant({ type: 'USER', id: user.userId }, { type: 'FOLDER', id: locked }, 'VIEW');
      const publicId = pid();
      const report = (await put(publicId, { name: 'r', folderId: from }, undefined, d)).json() as Report;
      const viaUpsert = problem(await put(publicId, { name: 'r', folderId: locked }, user.key, d), 403);
      const viaMove = problem(
        await t.request({ method: 'POST', url: url('/workspace/move', d), key: user.key, body: { type: 'REPORT', id: report.id, folderId: locked } }),
        403,
      );
      expect(viaUpsert.detail).toBe(viaMove.detail);
      problem(await put(publicId, { name: 'r', folderId: 999_999 }, user.key, d), 404, 'DESTINATION_NOT_FOUND');
      const moved = await put(publicId, { name: 'moved', folderId: to }, user.key, d);
      expect(moved.statusCode, moved.body).toBe(200);
      expect(moved.json()).toMatchObject({ name: 'moved', folderId: to, folderPath: [{ id: to, name: 'to' }] });
    });

    it('GET needs VIEW (403 without, and no view recorded); another deployment’s id is 404', async () => {
      const report = (await put(pid(), { name: 'hidden' })).json() as Report;
      const stranger = await t.user('EXPLORER');
      problem(await get(report.id, stranger.key), 403, 'FORBIDDEN');
      expect((await storedRow(report.id)).last_viewed_at).toBeNull();
      problem(await get(report.id, undefined, otherDeploymentId), 404, 'REPORT_NOT_FOUND');
      problem(await get(999_999), 404, 'REPORT_NOT_FOUND');
    });

    it('GET records lastViewedAt', async () => {
      const report = (await put(pid(), { name: 'seen' })).json() as Report;
      const first = (await get(report.id)).json() as Report;
      expect(first.lastViewedAt).not.toBeNull();
      expect(first.lastViewedAt! >= report.createdAt).toBe(true);
      expect(first.updatedAt).toBe(report.updatedAt);
      const second = (await get(report.id)).json() as Report;
      expect(second.lastViewedAt! >= first.lastViewedAt!).toBe(true);
    });
  });

  describe('list', () => {
    let d: number;
    let f: WorkspaceFixtures;
    let team: number;
    let sub: number;
    let other: number;
    let author: Caller;
    const ids: Record<string, number> = {};

    beforeAll(async () => {
      d = await t.deployment('listing');
      f = new WorkspaceFixtures(t, d);
      team = await f.folder('team');
      sub = await f.folder('sub', team);
      other = await f.folder('other');
      author = await t.user('EXPLORER');
      await t.grant({ type: 'USER', id: author.userId }, { type: 'DEPLOYMENT', id: d }, 'EDIT');
      const make = async (name: string, body: Record<string, unknown>, key?: string) => {
        const res = await put(pid(), { name, ...body }, key, d);
        expect(res.statusCode, res.body).toBe(201);
        ids[name] = (res.json() as Report).id;
      };
      await make('alpha revenue', { kind: 'table', folderId: team });
      await make('Bravo Revenue', { kind: 'vega', folderId: sub });
      await make('charlie costs', { kind: 'table' });
      await make('delta 100%_done', { kind: 'kpi', folderId: other }, author.key);
      await make('echo costs', { kind: 'sankey', folderId: team }, author.key);
      await make('foxtrot', { kind: 'table' });
      await make('golf revenue', { kind: 'map', folderId: other });
    });

    const names = (p: ReportPage) => p.items.map((r) => r.name);

    it('spec: Other operations, reports list: filters by folder, root, kind, creator and name search (case-insensitive, literal)', async () => {
      expect(names(await page({ folderId: team, sortBy: 'name' }, undefined, d))).toEqual(['alpha revenue', 'echo costs']);
      expect(names(await page({ folderId: 'root', sortBy: 'name' }, undefined, d))).toEqual(['charlie costs', 'foxtrot']);
      expect(names(await page({ kind: 'table', sortBy: 'name' }, undefined, d))).toEqual(['alpha revenue', 'charlie costs', 'foxtrot']);
      expect(names(await page({ createdBy: author.userId, sortBy: 'name' }, undefined, d))).toEqual(['delta 100%_done', 'echo costs']);
      expect(names(await page({ search: 'REVENUE', sortBy: 'name' }, undefined, d)).map((n) => n.toLowerCase())).toEqual([
        'alpha revenue',
        'bravo revenue',
        'golf revenue',
      ]);
      expect(names(await page({ search: '%_', sortBy: 'name' }, undefined, d))).toEqual(['delta 100%_done']);
      expect(names(await page({ search: 'costs', kind: 'sankey' }, undefined, d))).toEqual(['echo costs']);
      problem(await list({ kind: 'pie' }, undefined, d), 400, 'VALIDATION_FAILED');
    });

    it('each page carries the deprecated data, count (the total), totalCount and pagination {total, offset, limit} beside items and pageInfo', async () => {
      const whole = await page({ first: 200, sortBy: 'name' }, undefined, d);
      const total = whole.items.length;
      expect(total).toBeGreaterThan(4);
      const p = await page({ first: 2, sortBy: 'name' }, undefined, d);
      expect(p.data).toEqual(p.items);
      expect(p.count).toBe(total);
      expect(p.totalCount).toBe(total);
      expect(p.pagination).toEqual({ total, offset: 0, limit: 2 });
      expect(p.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false, startCursor: expect.any(String), endCursor: expect.any(String) });
      // A cursor page's offset is how many items come before it.
      const next = await page({ first: 2, sortBy: 'name', after: p.pageInfo.endCursor! }, undefined, d);
      expect(next.pagination).toEqual({ total, offset: 2, limit: 2 });
      expect(next.items.map((r) => r.id)).toEqual(whole.items.slice(2, 4).map((r) => r.id));
      const third = await page({ first: 2, sortBy: 'name', after: next.pageInfo.endCursor! }, undefined, d);
      expect(third.pagination).toEqual({ total, offset: 4, limit: 2 });
      expect(third.count).toBe(total);
      expect(next.pageInfo.hasPreviousPage).toBe(true);
      // Filters narrow the total; paging does not.
      const tables = await page({ first: 1, kind: 'table' }, undefined, d);
      expect([tables.count, tables.totalCount, tables.pagination.total]).toEqual([3, 3, 3]);
    });

    it.each([
      ['createdAt', 'asc'],
      ['createdAt', 'desc'],
      ['updatedAt', 'asc'],
      ['updatedAt', 'desc'],
      ['name', 'asc'],
      ['name', 'desc'],
    ])('Pagination: sortBy %s %s, cursor pages of 2 cover the list once, in the one-page order', async (sortBy, sortOrder) => {
      const whole = await page({ sortBy, sortOrder, first: 200 }, undefined, d);
      expect(whole.items).toHaveLength(7);
      const { pages, ids: paged } = await allPages({ sortBy, sortOrder, first: 2 }, d);
      expect(pages).toHaveLength(4);
      expect(paged).toEqual(whole.items.map((r) => r.id));
      expect(pages.at(-1)!.pageInfo.hasNextPage).toBe(false);
    });

    it('Pagination: ordering by name asc is alphabetical, desc reverses it, ties broken by id', async () => {
      const asc = names(await page({ sortBy: 'name', sortOrder: 'asc', kind: 'table' }, undefined, d));
      expect(asc).toEqual(['alpha revenue', 'charlie costs', 'foxtrot']);
      expect(names(await page({ sortBy: 'name', sortOrder: 'desc', kind: 'table' }, undefined, d))).toEqual([...asc].reverse());
      // Default: newest first.
      const byDefault = await page({}, undefined, d);
      const created = byDefault.items.map((r) => r.createdAt);
      expect(created).toEqual([...created].sort().reverse());
    });

    it('Pagination: a row created between pages causes no repeats or gaps', async () => {
      const e = await t.deployment('stable');
      for (const n of ['a', 'b', 'c', 'd']) await put(pid(), { name: n }, undefined, e);
      const first = await page({ sortBy: 'createdAt', sortOrder: 'asc', first: 2 }, undefined, e);
      await put(pid(), { name: 'e' }, undefined, e);
      const rest = await allPages({ sortBy: 'createdAt', sortOrder: 'asc', first: 2, after: first.pageInfo.endCursor! }, e);
      expect([...names(first), ...rest.pages.flatMap(names)]).toEqual(['a', 'b', 'c', 'd', 'e']);
    });

    it('Pagination: a cursor issued for another ordering, or garbage, is 400 INVALID_CURSOR', async () => {
      const p = await page({ sortBy: 'name', first: 1 }, undefined, d);
      problem(await list({ sortBy: 'createdAt', after: p.pageInfo.endCursor! }, undefined, d), 400, 'INVALID_CURSOR');
      problem(await list({ sortBy: 'name', sortOrder: 'desc', after: p.pageInfo.endCursor! }, undefined, d), 400, 'INVALID_CURSOR');
      problem(await list({ after: 'not-a-cursor' }, undefined, d), 400, 'INVALID_CURSOR');
    });

    it('spec: Other operations, cursor pagination is unavailable sorted by lastViewedAt: 400 CURSOR_UNAVAILABLE', async () => {
      const p = await page({ first: 1 }, undefined, d);
      const body = problem(await list({ sortBy: 'lastViewedAt', after: p.pageInfo.endCursor! }, undefined, d), 400, 'CURSOR_UNAVAILABLE');
      expect(body.detail).toMatch(/offset/);
      expect(body.errors).toEqual([{ pointer: '/query/after', message: expect.any(String) }]);
    });

    it('lastViewedAt: offset paging, most recently viewed first, never viewed last, no cursors', async () => {
      for (const name of ['foxtrot', 'alpha revenue', 'golf revenue']) {
        expect((await get(ids[name]!, undefined, d)).statusCode).toBe(200);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      const whole = await page({ sortBy: 'lastViewedAt', first: 200 }, undefined, d);
      expect(names(whole).slice(0, 3)).toEqual(['golf revenue', 'alpha revenue', 'foxtrot']);
      expect(whole.items.slice(3).every((r) => r.lastViewedAt === null)).toBe(true);
      const asc = await page({ sortBy: 'lastViewedAt', sortOrder: 'asc', first: 200 }, undefined, d);
      expect(names(asc).slice(0, 3)).toEqual(['foxtrot', 'alpha revenue', 'golf revenue']);
      expect(asc.items.slice(3).every((r) => r.lastViewedAt === null)).toBe(true);

      const paged: number[] = [];
      for (let offset = 0; ; offset += 3) {
        const p = await page({ sortBy: 'lastViewedAt', first: 3, offset }, undefined, d);
        expect(p.pageInfo.startCursor).toBeNull();
        expect(p.pageInfo.endCursor).toBeNull();
        expect(p.pageInfo.hasPreviousPage).toBe(offset > 0);
        expect(p.pagination).toEqual({ total: whole.items.length, offset, limit: 3 });
        paged.push(...p.items.map((r) => r.id));
        if (!p.pageInfo.hasNextPage) break;
      }
      expect(paged).toEqual(whole.items.map((r) => r.id));
    });

    it('offset paging also works for the other orderings, but not combined with after', async () => {
      const whole = await page({ sortBy: 'name', first: 200 }, undefined, d);
      const second = await page({ sortBy: 'name', first: 2, offset: 2 }, undefined, d);
      expect(second.items.map((r) => r.id)).toEqual(whole.items.slice(2, 4).map((r) => r.id));
      problem(await list({ sortBy: 'name', offset: 2, after: second.pageInfo.endCursor! }, undefined, d), 400, 'VALIDATION_FAILED');
    });

    it('Visibility: only reports the caller may see are listed (own, granted, below a granted folder)', async () => {
      const reader = await t.user('EXPLORER');
      await t.grant({ type: 'USER', id: reader.userId }, { type: 'FOLDER', id: team }, 'VIEW');
      await t.grant({ type: 'USER', id: reader.userId }, { type: 'REPORT', id: ids['foxtrot']! }, 'VIEW');
      await put(pid(), { name: 'reader own', folderId: null }, undefined, d).then(async (r) => {
        await t.store.db
          .updateTable('reports')
          .set({ created_by: reader.userId })
          .where('id', '=', (r.json() as Report).id)
          .execute();
      });
      const seen = await page({ sortBy: 'name' }, reader.key, d);
      expect(names(seen)).toEqual(['alpha revenue', 'Bravo Revenue', 'echo costs', 'foxtrot', 'reader own']);
      // Cursor pages hold only visible rows and stay full.
      const pages: string[] = [];
      let after: string | undefined;
      do {
        const p = await page({ sortBy: 'name', first: 2, ...(after ? { after } : {}) }, reader.key, d);
        pages.push(...names(p));
        after = p.pageInfo.hasNextPage ? p.pageInfo.endCursor! : undefined;
      } while (after);
      expect(pages).toEqual(names(seen));
      // A VIEWER without grants sees nothing; the admin sees everything.
      expect((await page({}, viewer.key, d)).items).toEqual([]);
      expect((await page({ first: 200 }, undefined, d)).count).toBe(8);
    });

    it('another deployment’s reports are not listed, and an unknown deployment is 404', async () => {
      const p = await page({ first: 200 }, undefined, otherDeploymentId);
      expect(p.items.every((r) => r.deploymentId === otherDeploymentId)).toBe(true);
      expect(p.items.map((r) => r.id)).not.toContain(ids['foxtrot']);
      problem(await list({}, undefined, 999_999), 404, 'DEPLOYMENT_NOT_FOUND');
    });
  });
});
