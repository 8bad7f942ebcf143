import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, TestApp, problem, type Caller } from './harness.js';

/*
 * Reference 3.0-3.3: report placements in external spreadsheets. connect-workbook (PUT) upserts one
 * placement, DELETE removes one, refresh records one; read access to the report is enough. The
 * refresh's run on a runtime is tested in runtime-queries.test.ts; here, everything up to it.
 */

type Json = Record<string, any>;
interface Placement {
  id: string | null;
  workbookId: string;
  resultLocation: string;
  host: string | null;
  sheetId: string | null;
  sheetName: string | null;
  anchorCell: string | null;
  endResultCell: string | null;
  workbookName: string | null;
  placedAt: string | null;
  refreshedAt: string | null;
  placedByUserId: number | null;
  refreshedByUserId: number | null;
  queryChecksum: string | null;
  syncStatus: string | null;
  resultChecksum: Json | null;
}
interface Report {
  id: number;
  name: string;
  sqlQuery: string | null;
  updatedAt: string;
  externalWorkbookPlacements: Placement[];
  currentQueryChecksum: string;
}

const checksum = {
  v: 1,
  chunks: [
    { from: 0, hash: 'a1b2c3' },
    { from: 100, hash: 'd4e5f6', to: null },
  ],
  payload: 'client-state',
};
let seq = 0;

describe.each(DIALECTS)('report placements (%s)', (dialect) => {
  let t: TestApp;
  let d: number;
  let viewer: Caller;
  let stranger: Caller;

  beforeAll(async () => {
    t = await TestApp.create(dialect);
    d = await t.deployment('placements');
    viewer = await t.user('VIEWER');
    stranger = await t.user('EXPLORER');
    // The viewer can read every report of the deployment; the stranger none.
    await t.grant({ type: 'USER', id: viewer.userId }, { type: 'DEPLOYMENT', id: d }, 'VIEW');
  });
  afterAll(async () => t?.close());

  const base = (reportId: number, deploymentId = d) => `/api/v1/deployments/${deploymentId}/reports/${reportId}`;
  const report = async (body: Json = {}) => {
    const res = await t.request({
      method: 'PUT',
      url: `/api/v1/deployments/${d}/reports/by-public-id/placed-${++seq}`,
      body: { name: `Placed ${seq}`, sqlQuery: 'SELECT count FROM orders', ...body },
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as Report;
  };
  const connect = (reportId: number, body: unknown, key?: string) =>
    t.request({ method: 'PUT', url: `${base(reportId)}/connect-workbook`, body, ...(key ? { key } : {}) });
  const disconnect = (reportId: number, body: unknown, key?: string) =>
    t.request({ method: 'DELETE', url: `${base(reportId)}/connect-workbook`, body, ...(key ? { key } : {}) });
  const refresh = (reportId: number, body: unknown, key?: string) =>
    t.request({ method: 'PUT', url: `${base(reportId)}/refresh`, body, ...(key ? { key } : {}) });
  const ok = async (res: Awaited<ReturnType<typeof connect>>) => {
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as Report;
  };
  const placementsOf = async (reportId: number) => ((await t.request({ url: base(reportId) })).json() as Report).externalWorkbookPlacements;
  /** A placement recorded before placements had ids: no id, no sheet name or anchor of its own, no checksum. */
  const legacy = async (reportId: number, fields: Partial<Placement> = {}) => {
    const stored = {
      id: null,
      workbookId: 'doc-legacy',
      resultLocation: "'Q1 ''24'!$B$2:D9",
      host: 'EXCEL',
      sheetId: null,
      sheetName: null,
      anchorCell: null,
      endResultCell: null,
      workbookName: null,
      placedAt: null,
      refreshedAt: null,
      placedByUserId: null,
      refreshedByUserId: null,
      queryChecksum: null,
      resultChecksum: null,
      ...fields,
    };
    const row = await t.store.db.selectFrom('reports').select('placements').where('id', '=', reportId).executeTakeFirstOrThrow();
    const placements = row.placements === null ? [] : (JSON.parse(row.placements) as unknown[]);
    await t.store.db
      .updateTable('reports')
      .set({ placements: JSON.stringify([...placements, stored]) })
      .where('id', '=', reportId)
      .execute();
  };
  const rowOf = (reportId: number) => t.store.db.selectFrom('reports').selectAll().where('id', '=', reportId).executeTakeFirstOrThrow();

  describe('connect-workbook (3.1)', () => {
    it('without a placementId the server assigns one; the placement records who placed it, the query checksum and the fingerprint; the report itself is unchanged', async () => {
      const r = await report();
      const placed = await ok(
        await connect(
          r.id,
          {
            externalWorkbookId: 'doc-1',
            resultLocation: 'Sales!B2:F40',
            sheetId: '0',
            sheetName: 'Sales',
            anchorCell: 'B2',
            endResultCell: 'F40',
            workbookName: 'Q1 plan',
            host: 'GOOGLE_SHEETS',
            resultChecksum: checksum,
          },
          viewer.key,
        ),
      );
      expect(placed.currentQueryChecksum).toBe(r.currentQueryChecksum);
      expect(placed.externalWorkbookPlacements).toEqual([
        {
          id: expect.stringMatching(/^[0-9a-f-]{36}$/),
          workbookId: 'doc-1',
          resultLocation: 'Sales!B2:F40',
          host: 'GOOGLE_SHEETS',
          sheetId: '0',
          sheetName: 'Sales',
          anchorCell: 'B2',
          endResultCell: 'F40',
          workbookName: 'Q1 plan',
          placedAt: expect.any(String),
          refreshedAt: null,
          placedByUserId: viewer.userId,
          refreshedByUserId: null,
          queryChecksum: r.currentQueryChecksum,
          syncStatus: 'UP_TO_DATE',
          resultChecksum: checksum,
        },
      ]);
      // Placing never changes the report: a viewer may place what they cannot edit.
      expect({ ...placed, externalWorkbookPlacements: [] }).toMatchObject({ name: r.name, sqlQuery: r.sqlQuery, updatedAt: r.updatedAt });
      // The same call again is the same placement (idempotent per placement), and GET shows it.
      const body = {
        externalWorkbookId: 'doc-1',
        resultLocation: 'Sales!B2:F40',
        sheetId: '0',
        sheetName: 'Sales',
        anchorCell: 'B2',
        endResultCell: 'F40',
        workbookName: 'Q1 plan',
        host: 'GOOGLE_SHEETS',
        resultChecksum: checksum,
      };
      const again = await ok(await connect(r.id, body, viewer.key));
      expect(again).toEqual(placed);
      expect(await placementsOf(r.id)).toEqual(placed.externalWorkbookPlacements);
      // Fewer fields is a new address for the same placement: it keeps its id.
      const trimmed = await ok(await connect(r.id, { externalWorkbookId: 'doc-1', resultLocation: 'Sales!B2:F40', sheetId: '0' }, viewer.key));
      expect(trimmed.externalWorkbookPlacements).toHaveLength(1);
      expect(trimmed.externalWorkbookPlacements[0]).toMatchObject({
        id: placed.externalWorkbookPlacements[0]!.id,
        sheetName: null,
        anchorCell: null,
        resultChecksum: null,
      });
    });

    it('a sent placementId becomes the placement’s id and names it on later calls; other placements of the report are untouched', async () => {
      const r = await report();
      await ok(await connect(r.id, { placementId: 'p-1', externalWorkbookId: 'doc-1', resultLocation: 'Sales!A1' }));
      await ok(await connect(r.id, { placementId: 'p-2', externalWorkbookId: 'doc-2', resultLocation: 'Sheet1!C3' }));
      // By id, the placement moves to another sheet: still one placement p-1, with its new address.
      const moved = await ok(await connect(r.id, { placementId: 'p-1', externalWorkbookId: 'doc-1', resultLocation: 'Costs!D4', resultChecksum: checksum }));
      expect(moved.externalWorkbookPlacements.map((p) => [p.id, p.workbookId, p.resultLocation, p.resultChecksum])).toEqual([
        ['p-1', 'doc-1', 'Costs!D4', checksum],
        ['p-2', 'doc-2', 'Sheet1!C3', null],
      ]);
      // Without an id, the same document, sheet and anchor name the placement that is there.
      const byAddress = await ok(await connect(r.id, { externalWorkbookId: 'doc-2', resultLocation: "'Sheet1'!$c$3:E9" }));
      expect(byAddress.externalWorkbookPlacements.map((p) => [p.id, p.resultLocation])).toEqual([
        ['p-1', 'Costs!D4'],
        ['p-2', "'Sheet1'!$c$3:E9"],
      ]);
    });

    it('a new placementId at the address of a placement without an id takes that placement over', async () => {
      const r = await report();
      await legacy(r.id);
      const adopted = await ok(
        await connect(r.id, {
          placementId: 'adopted',
          externalWorkbookId: 'doc-legacy',
          resultLocation: "'Q1 ''24'!B2:D9",
          sheetName: "Q1 '24",
          anchorCell: 'B2',
        }),
      );
      expect(adopted.externalWorkbookPlacements).toHaveLength(1);
      expect(adopted.externalWorkbookPlacements[0]).toMatchObject({ id: 'adopted', sheetName: "Q1 '24", syncStatus: 'UP_TO_DATE' });
    });

    it('addressOnly corrects the address (a renamed tab) and keeps the fingerprint, the checksums and who placed it; it needs a placement to correct', async () => {
      const r = await report();
      const first = (
        await ok(
          await connect(
            r.id,
            { placementId: 'tab', externalWorkbookId: 'doc-1', resultLocation: 'Old!A1', sheetName: 'Old', anchorCell: 'A1', resultChecksum: checksum },
            viewer.key,
          ),
        )
      ).externalWorkbookPlacements[0]!;
      // The report's query changes meanwhile: the placement's cells hold the older query.
      await t.request({
        method: 'PUT',
        url: `/api/v1/deployments/${d}/reports/by-public-id/placed-${seq}`,
        body: { name: r.name, sqlQuery: 'SELECT status FROM orders' },
      });
      const renamed = (
        await ok(
          await connect(r.id, {
            placementId: 'tab',
            externalWorkbookId: 'doc-1',
            resultLocation: 'New!A1',
            sheetName: 'New',
            anchorCell: 'A1',
            addressOnly: true,
          }),
        )
      ).externalWorkbookPlacements[0]!;
      expect(renamed).toEqual({ ...first, resultLocation: 'New!A1', sheetName: 'New', syncStatus: 'CHANGED' });
      problem(
        await connect(r.id, { placementId: 'nowhere', externalWorkbookId: 'doc-1', resultLocation: 'X!A1', addressOnly: true }),
        404,
        'PLACEMENT_NOT_FOUND',
      );
      const both = problem(
        await connect(r.id, { placementId: 'tab', externalWorkbookId: 'doc-1', resultLocation: 'New!A1', addressOnly: true, resultChecksum: checksum }),
        400,
        'VALIDATION_FAILED',
      );
      expect(both.errors).toEqual([{ pointer: '/body/resultChecksum', message: 'cannot be combined with addressOnly' }]);
      expect(await placementsOf(r.id)).toEqual([renamed]);
    });
  });

  describe('checksums', () => {
    it('currentQueryChecksum is the SHA-256 of the normalised sqlQuery and spec; syncStatus compares each placement with it (UNKNOWN without one)', async () => {
      const a = await report({ sqlQuery: 'SELECT count FROM orders', spec: { query: { measures: ['orders.count'] }, mark: 'bar' } });
      expect(a.currentQueryChecksum).toMatch(/^[0-9a-f]{64}$/);
      const expected = createHash('sha256')
        .update('{"spec":{"mark":"bar","query":{"measures":["orders.count"]}},"sqlQuery":"SELECT count FROM orders"}')
        .digest('hex');
      expect(a.currentQueryChecksum).toBe(expected);
      // Key order and surrounding blank space do not change the query; its text does.
      const same = await report({ sqlQuery: '  SELECT count FROM orders\r\n', spec: { mark: 'bar', query: { measures: ['orders.count'] } } });
      expect(same.currentQueryChecksum).toBe(a.currentQueryChecksum);
      const other = await report({ sqlQuery: 'SELECT count FROM orders', spec: { mark: 'line', query: { measures: ['orders.count'] } } });
      expect(other.currentQueryChecksum).not.toBe(a.currentQueryChecksum);

      await ok(await connect(a.id, { placementId: 'p', externalWorkbookId: 'doc', resultLocation: 'S!A1' }));
      await legacy(a.id);
      expect((await placementsOf(a.id)).map((p) => p.syncStatus)).toEqual(['UP_TO_DATE', 'UNKNOWN']);
      await t.request({
        method: 'PUT',
        url: `/api/v1/deployments/${d}/reports/by-public-id/placed-${seq - 2}`,
        body: { name: 'Changed', sqlQuery: 'SELECT status FROM orders' },
      });
      const changed = (await t.request({ url: base(a.id) })).json() as Report;
      expect(changed.currentQueryChecksum).not.toBe(a.currentQueryChecksum);
      expect(changed.externalWorkbookPlacements.map((p) => [p.syncStatus, p.queryChecksum])).toEqual([
        ['CHANGED', a.currentQueryChecksum],
        ['UNKNOWN', null],
      ]);
      // Lists carry them too.
      const listed = (await t.request({ url: `/api/v1/deployments/${d}/reports?first=200` })).json() as { items: Report[] };
      expect(listed.items.find((x) => x.id === a.id)?.externalWorkbookPlacements).toEqual(changed.externalWorkbookPlacements);
    });
  });

  describe('addressing one placement (3.2, 3.3)', () => {
    it('by placementId', async () => {
      const r = await report();
      await ok(await connect(r.id, { placementId: 'keep', externalWorkbookId: 'doc', resultLocation: 'S!A1' }));
      await ok(await connect(r.id, { placementId: 'drop', externalWorkbookId: 'doc', resultLocation: 'S!A20' }));
      const after = await ok(await disconnect(r.id, { placementId: 'drop' }, viewer.key));
      expect(after.externalWorkbookPlacements.map((p) => p.id)).toEqual(['keep']);
    });

    it('a placement without an id: by externalWorkbookId with both sheetName and anchorCell, or a resultLocation naming both; missing either matches nothing', async () => {
      const r = await report();
      await legacy(r.id);
      await legacy(r.id, { workbookId: 'doc-other' });
      // Missing the anchor, missing the sheet, another document: nothing matches, nothing changes (200).
      for (const body of [
        { externalWorkbookId: 'doc-legacy', sheetName: "Q1 '24" },
        { externalWorkbookId: 'doc-legacy', anchorCell: 'B2' },
        { externalWorkbookId: 'doc-legacy', resultLocation: 'B2:D9' },
        { externalWorkbookId: 'doc-nope', sheetName: "Q1 '24", anchorCell: 'B2' },
      ]) {
        expect((await ok(await disconnect(r.id, body))).externalWorkbookPlacements, JSON.stringify(body)).toHaveLength(2);
      }
      // Sheet and anchor sent: the stored result location names them ($B$2 and b2 are B2).
      const bySheet = await ok(await disconnect(r.id, { externalWorkbookId: 'doc-legacy', sheetName: "Q1 '24", anchorCell: 'b2' }));
      expect(bySheet.externalWorkbookPlacements.map((p) => p.workbookId)).toEqual(['doc-other']);
      // A result location that names both.
      const byLocation = await ok(await disconnect(r.id, { externalWorkbookId: 'doc-other', resultLocation: "'Q1 ''24'!B2" }));
      expect(byLocation.externalWorkbookPlacements).toEqual([]);
    });

    it('sheetId only narrows: a placement stored under another sheet id (or none) is not matched, even by its id', async () => {
      const r = await report();
      await ok(await connect(r.id, { placementId: 'p', externalWorkbookId: 'doc', resultLocation: 'Sales!A1', sheetId: '111' }));
      await legacy(r.id);
      expect(
        (await ok(await disconnect(r.id, { externalWorkbookId: 'doc', sheetName: 'Sales', anchorCell: 'A1', sheetId: '222' }))).externalWorkbookPlacements,
      ).toHaveLength(2);
      expect((await ok(await disconnect(r.id, { placementId: 'p', sheetId: '222' }))).externalWorkbookPlacements).toHaveLength(2);
      // The legacy placement has no sheet id: a sheetId excludes it.
      expect(
        (await ok(await disconnect(r.id, { externalWorkbookId: 'doc-legacy', resultLocation: "'Q1 ''24'!B2", sheetId: '0' }))).externalWorkbookPlacements,
      ).toHaveLength(2);
      const right = await ok(await disconnect(r.id, { externalWorkbookId: 'doc', sheetName: 'Sales', anchorCell: 'A1', sheetId: '111' }));
      expect(right.externalWorkbookPlacements.map((p) => p.id)).toEqual([null]);
    });

    it('delete is idempotent: the same call again succeeds and changes nothing', async () => {
      const r = await report();
      await ok(await connect(r.id, { placementId: 'once', externalWorkbookId: 'doc', resultLocation: 'S!A1' }));
      expect((await ok(await disconnect(r.id, { placementId: 'once' }))).externalWorkbookPlacements).toEqual([]);
      const before = await rowOf(r.id);
      expect((await ok(await disconnect(r.id, { placementId: 'once' }))).externalWorkbookPlacements).toEqual([]);
      expect(await rowOf(r.id)).toEqual(before);
    });

    it('refresh names a placement the same way; one that matches nothing is 404, and a report without a query to run records nothing', async () => {
      const r = await report({ sqlQuery: null, spec: { chart: 'bar' } });
      await ok(await connect(r.id, { placementId: 'p', externalWorkbookId: 'doc', resultLocation: 'S!A1' }));
      await legacy(r.id);
      const before = await rowOf(r.id);
      problem(await refresh(r.id, { placementId: 'missing' }), 404, 'PLACEMENT_NOT_FOUND');
      problem(await refresh(r.id, { externalWorkbookId: 'doc-legacy', sheetName: "Q1 '24" }), 404, 'PLACEMENT_NOT_FOUND');
      expect(problem(await refresh(r.id, { placementId: 'p', resultChecksum: checksum }), 400, 'QUERY_REFUSED').detail).toContain(
        'neither an sqlQuery nor a spec with a query',
      );
      expect(problem(await refresh(r.id, { externalWorkbookId: 'doc-legacy', resultLocation: "'Q1 ''24'!B2" }), 400, 'QUERY_REFUSED').detail).toContain(
        'neither an sqlQuery',
      );
      expect(await rowOf(r.id)).toEqual({ ...before, last_viewed_at: before.last_viewed_at });
    });
  });

  describe('access', () => {
    it('read access suffices: a viewer places, refreshes and removes placements of a report they cannot edit', async () => {
      const r = await report();
      problem(
        await t.request({ method: 'PUT', url: `/api/v1/deployments/${d}/reports/by-public-id/placed-${seq}`, body: { name: 'Renamed' }, key: viewer.key }),
        403,
        'FORBIDDEN',
      );
      await ok(await connect(r.id, { placementId: 'mine', externalWorkbookId: 'doc', resultLocation: 'S!A1' }, viewer.key));
      expect((await ok(await disconnect(r.id, { placementId: 'mine' }, viewer.key))).externalWorkbookPlacements).toEqual([]);
    });

    it('without access: 403 and nothing changes; another deployment 404; another tenant 404; a key scoped elsewhere 403; no credential 401', async () => {
      const r = await report();
      await ok(await connect(r.id, { placementId: 'p', externalWorkbookId: 'doc', resultLocation: 'S!A1' }));
      const before = await rowOf(r.id);
      const body = { placementId: 'q', externalWorkbookId: 'doc', resultLocation: 'S!B1' };
      problem(await connect(r.id, body, stranger.key), 403, 'FORBIDDEN');
      problem(await disconnect(r.id, { placementId: 'p' }, stranger.key), 403, 'FORBIDDEN');
      problem(await refresh(r.id, { placementId: 'p' }, stranger.key), 403, 'FORBIDDEN');
      const elsewhere = await t.deployment('placements elsewhere');
      problem(await t.request({ method: 'PUT', url: `${base(r.id, elsewhere)}/connect-workbook`, body }), 404, 'REPORT_NOT_FOUND');
      problem(await t.request({ method: 'DELETE', url: `${base(r.id, elsewhere)}/connect-workbook`, body: { placementId: 'p' } }), 404, 'REPORT_NOT_FOUND');
      const tenant = await t.tenant(`placements-other-${dialect}`);
      const theirs = await t.deployment('theirs', { tenantId: tenant.tenantId });
      problem(await t.request({ method: 'PUT', url: `${base(r.id, theirs)}/connect-workbook`, body }), 404, 'DEPLOYMENT_NOT_FOUND');
      const scoped = await t.key(t.admin.userId, { deploymentIds: [elsewhere] });
      problem(await connect(r.id, body, scoped), 403, 'KEY_SCOPE_FORBIDDEN');
      problem(await refresh(r.id, { placementId: 'p' }, scoped), 403, 'KEY_SCOPE_FORBIDDEN');
      problem(await t.request({ method: 'PUT', url: `${base(r.id)}/connect-workbook`, body, key: null }), 401, 'UNAUTHENTICATED');
      const inScope = await t.key(t.admin.userId, { deploymentIds: [d] });
      expect(await rowOf(r.id)).toEqual(before);
      await ok(await connect(r.id, body, inScope));
    });
  });

  describe('bad input: 400 problem details naming the field, nothing changed', () => {
    it('connect without its required fields, with bad checksums or unknown fields; delete and refresh naming no placement', async () => {
      const r = await report();
      await ok(await connect(r.id, { placementId: 'p', externalWorkbookId: 'doc', resultLocation: 'S!A1', resultChecksum: checksum }));
      const before = await rowOf(r.id);
      const cases: Array<[unknown, string]> = [
        [{ resultLocation: 'S!A1' }, '/body/externalWorkbookId'],
        [{ externalWorkbookId: 'doc' }, '/body/resultLocation'],
        [{ externalWorkbookId: '', resultLocation: 'S!A1' }, '/body/externalWorkbookId'],
        [{ externalWorkbookId: 'doc', resultLocation: 'S!A1', host: 'NUMBERS' }, '/body/host'],
        [{ externalWorkbookId: 'doc', resultLocation: 'S!A1', resultChecksum: { v: 0, chunks: [] } }, '/body/resultChecksum/v'],
        [
          { externalWorkbookId: 'doc', resultLocation: 'S!A1', resultChecksum: { v: 1, chunks: [{ from: 0, hash: 'x'.repeat(65) }] } },
          '/body/resultChecksum/chunks/0/hash',
        ],
        [
          {
            externalWorkbookId: 'doc',
            resultLocation: 'S!A1',
            resultChecksum: { v: 1, chunks: Array.from({ length: 2001 }, (_, i) => ({ from: i, hash: 'h' })) },
          },
          '/body/resultChecksum/chunks',
        ],
        [{ externalWorkbookId: 'doc', resultLocation: 'S!A1', resultChecksum: { v: 1, chunks: [], payload: '' } }, '/body/resultChecksum/payload'],
        [{ externalWorkbookId: 'doc', resultLocation: 'S!A1', sheet: 'S' }, '/body/sheet'],
      ];
      for (const [body, pointer] of cases) {
        const res = problem(await connect(r.id, body), 400, 'VALIDATION_FAILED');
        expect(
          res.errors?.map((e) => e.pointer),
          JSON.stringify(body),
        ).toContain(pointer);
      }
      for (const call of [disconnect, refresh]) {
        const res = problem(await call(r.id, {}), 400, 'VALIDATION_FAILED');
        expect(res.detail).toContain('Name the placement');
        problem(await call(r.id, { placementId: 'p', extra: true }), 400, 'VALIDATION_FAILED');
      }
      expect(await rowOf(r.id)).toEqual(before);
    });

    it('a report holds at most 500 placements: the next new one is 409, updates of existing ones still apply', async () => {
      const r = await report();
      const many = Array.from({ length: 500 }, (_, i) => ({
        id: `p${i}`,
        workbookId: 'doc',
        resultLocation: `S!A${i + 1}`,
        host: null,
        sheetId: null,
        sheetName: null,
        anchorCell: null,
        endResultCell: null,
        workbookName: null,
        placedAt: null,
        refreshedAt: null,
        placedByUserId: null,
        refreshedByUserId: null,
        queryChecksum: null,
        resultChecksum: null,
      }));
      await t.store.db
        .updateTable('reports')
        .set({ placements: JSON.stringify(many) })
        .where('id', '=', r.id)
        .execute();
      problem(await connect(r.id, { externalWorkbookId: 'doc', resultLocation: 'S!Z1' }), 409, 'PLACEMENT_LIMIT_REACHED');
      const updated = await ok(await connect(r.id, { placementId: 'p7', externalWorkbookId: 'doc', resultLocation: 'S!A8' }));
      expect(updated.externalWorkbookPlacements).toHaveLength(500);
      expect(updated.externalWorkbookPlacements[7]).toMatchObject({ id: 'p7', syncStatus: 'UP_TO_DATE' });
    });
  });

  it('concurrent connects of different placements of one report all land', async () => {
    const r = await report();
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => connect(r.id, { placementId: `c${i}`, externalWorkbookId: `doc-${i}`, resultLocation: 'S!A1' })),
    );
    for (const res of results) expect(res.statusCode, res.body).toBe(200);
    expect((await placementsOf(r.id)).map((p) => p.id).sort()).toEqual(Array.from({ length: 8 }, (_, i) => `c${i}`));
  });
});
