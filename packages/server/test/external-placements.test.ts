import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, TestApp, problem, type Caller } from './harness.js';

/*
 * Extension named in reference section 9: GET /api/v1/external-documents/{externalWorkbookId}/placements,
 * the report placements (reference 3.0-3.3) in one external document across the tenant's
 * deployments. Placements the caller cannot read are listed with `access: DENIED` and
 * `reportName: null`; past 500 placed reports or 2000 placements the answer is 422.
 */

type Json = Record<string, any>;
interface Entry {
  deploymentId: number;
  reportId: number;
  reportName: string | null;
  access: 'GRANTED' | 'DENIED';
  placement: Json;
}
let seq = 0;

describe.each(DIALECTS)('external-document placements (%s)', (dialect) => {
  let t: TestApp;
  let d1: number;
  let d2: number;
  let viewer: Caller;

  beforeAll(async () => {
    t = await TestApp.create(dialect);
    d1 = await t.deployment('placed-one');
    d2 = await t.deployment('placed-two');
    viewer = await t.user('VIEWER');
    // The viewer reads every report of the first deployment, none of the second.
    await t.grant({ type: 'USER', id: viewer.userId }, { type: 'DEPLOYMENT', id: d1 }, 'VIEW');
  });
  afterAll(async () => t?.close());

  const report = async (deploymentId: number, name = `Placed ${++seq}`) => {
    const res = await t.request({
      method: 'PUT',
      url: `/api/v1/deployments/${deploymentId}/reports/by-public-id/ext-${++seq}`,
      body: { name, sqlQuery: 'SELECT 1' },
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { id: number; name: string };
  };
  const place = async (deploymentId: number, reportId: number, externalWorkbookId: string, cell: string) => {
    const res = await t.request({
      method: 'PUT',
      url: `/api/v1/deployments/${deploymentId}/reports/${reportId}/connect-workbook`,
      body: { externalWorkbookId, resultLocation: `Sheet1!${cell}`, sheetName: 'Sheet1', anchorCell: cell, host: 'GOOGLE_SHEETS' },
    });
    expect(res.statusCode, res.body).toBe(200);
  };
  const list = (documentId: string, key?: string) =>
    t.request({ url: `/api/v1/external-documents/${encodeURIComponent(documentId)}/placements`, ...(key ? { key } : {}) });
  const items = async (documentId: string, key?: string) => {
    const res = await list(documentId, key);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json() as { externalWorkbookId: string; items: Entry[] };
    expect(body.externalWorkbookId).toBe(documentId);
    return body.items;
  };

  /** `count` reports of `deploymentId`, each holding `perReport` placements in `documentId`, written straight to the store. */
  const seedPlaced = async (deploymentId: number, documentId: string, count: number, perReport: number) => {
    const at = new Date().toISOString();
    const placements = (r: number) =>
      JSON.stringify(
        Array.from({ length: perReport }, (_, i) => ({
          id: `seed-${r}-${i}`,
          workbookId: documentId,
          resultLocation: `S!A${i + 1}`,
          host: null,
          sheetId: null,
          sheetName: 'S',
          anchorCell: `A${i + 1}`,
          endResultCell: null,
          workbookName: null,
          placedAt: at,
          refreshedAt: null,
          placedByUserId: null,
          refreshedByUserId: null,
          queryChecksum: null,
          resultChecksum: null,
        })),
      );
    const rows = Array.from({ length: count }, (_, r) => ({
      tenant_id: t.tenantId,
      deployment_id: deploymentId,
      folder_id: null,
      name: `Bulk ${documentId} ${r}`,
      public_id: `bulk-${++seq}`,
      kind: 'table',
      title: null,
      description: null,
      sql_query: 'SELECT 1',
      python_code: null,
      spec: null,
      meta: null,
      preferences: null,
      period_comparisons: null,
      fill_missing_rows: null,
      placements: placements(r),
      last_viewed_at: null,
      created_by: null,
      created_at: at,
      updated_at: at,
    }));
    for (let i = 0; i < rows.length; i += 100)
      await t.store.db
        .insertInto('reports')
        .values(rows.slice(i, i + 100))
        .execute();
  };

  it('extension (reference 9, external-document placements): lists the placements in the document across deployments, and nothing of other documents', async () => {
    const doc = `doc-${++seq}`;
    const a = await report(d1);
    const b = await report(d2);
    await place(d1, a.id, doc, 'A1');
    await place(d1, a.id, doc, 'C5');
    await place(d2, b.id, doc, 'B2');
    await place(d2, b.id, `other-${seq}`, 'B2');
    const found = await items(doc);
    expect(found.map((e) => [e.deploymentId, e.reportId, e.placement.anchorCell, e.access, e.reportName])).toEqual([
      [d1, a.id, 'A1', 'GRANTED', a.name],
      [d1, a.id, 'C5', 'GRANTED', a.name],
      [d2, b.id, 'B2', 'GRANTED', b.name],
    ]);
    expect(found.every((e) => e.placement.workbookId === doc)).toBe(true);
    expect(found[0]!.placement).toMatchObject({ host: 'GOOGLE_SHEETS', sheetName: 'Sheet1', syncStatus: 'UP_TO_DATE' });
  });

  it('extension (reference 9, external-document placements): a document nothing is placed in lists nothing', async () => {
    expect(await items(`empty-${++seq}`)).toEqual([]);
  });

  it('extension (reference 9, external-document placements): placements the caller cannot read are included with access DENIED and reportName null', async () => {
    const doc = `doc-${++seq}`;
    const readable = await report(d1);
    const hidden = await report(d2);
    await place(d1, readable.id, doc, 'A1');
    await place(d2, hidden.id, doc, 'A1');
    const found = await items(doc, viewer.key);
    expect(found).toHaveLength(2);
    expect(found[0]).toMatchObject({ deploymentId: d1, reportId: readable.id, access: 'GRANTED', reportName: readable.name });
    expect(found[1]).toMatchObject({ deploymentId: d2, reportId: hidden.id, access: 'DENIED', reportName: null });
    // What comes from the report itself is withheld; the address in the caller's document is kept.
    expect(found[1]!.placement).toMatchObject({ workbookId: doc, sheetName: 'Sheet1', anchorCell: 'A1', queryChecksum: null, syncStatus: null });
    expect(JSON.stringify(found[1])).not.toContain(hidden.name);
  });

  it('extension (reference 9, external-document placements): a report granted alone (not its deployment) is GRANTED', async () => {
    const doc = `doc-${++seq}`;
    const shared = await report(d2);
    await place(d2, shared.id, doc, 'A1');
    const reader = await t.user('VIEWER');
    await t.grant({ type: 'USER', id: reader.userId }, { type: 'REPORT', id: shared.id }, 'VIEW');
    expect((await items(doc, reader.key)).map((e) => e.access)).toEqual(['GRANTED']);
    const other = await t.user('VIEWER');
    expect((await items(doc, other.key)).map((e) => [e.access, e.reportName])).toEqual([['DENIED', null]]);
  });

  it('extension (reference 9, external-document placements): a key scoped to other deployments sees their placements as DENIED, even an admin’s', async () => {
    const doc = `doc-${++seq}`;
    const a = await report(d1);
    const b = await report(d2);
    await place(d1, a.id, doc, 'A1');
    await place(d2, b.id, doc, 'A1');
    const scoped = await t.key(t.admin.userId, { deploymentIds: [d1] });
    expect((await items(doc, scoped)).map((e) => [e.deploymentId, e.access])).toEqual([
      [d1, 'GRANTED'],
      [d2, 'DENIED'],
    ]);
  });

  it('extension (reference 9, external-document placements): the document id is matched exactly, `%` and `_` included, and case matters', async () => {
    const a = await report(d1);
    await place(d1, a.id, 'Doc_%1', 'A1');
    await place(d1, a.id, 'DocX1', 'A2');
    await place(d1, a.id, 'doc_%1', 'A3');
    expect((await items('Doc_%1')).map((e) => e.placement.anchorCell)).toEqual(['A1']);
    expect((await items('Doc%')).map((e) => e.placement.anchorCell)).toEqual([]);
  });

  it("extension (reference 9, external-document placements): another tenant's placements in a document of the same id are not listed", async () => {
    const doc = `doc-${++seq}`;
    const a = await report(d1);
    await place(d1, a.id, doc, 'A1');
    const other = await t.tenant(`ext-other-${seq}`, [`ext-other-${seq}.example.com`]);
    const res = await t.request({ url: `/api/v1/external-documents/${doc}/placements`, key: other.admin.key, host: `ext-other-${seq}.example.com` });
    expect(res.statusCode, res.body).toBe(200);
    expect((res.json() as { items: Entry[] }).items).toEqual([]);
  });

  it('extension (reference 9, external-document placements): 500 placed reports are listed; 501 is 422 PLACEMENTS_TOO_MANY', async () => {
    const doc = `many-reports-${++seq}`;
    await seedPlaced(d1, doc, 500, 1);
    expect(await items(doc)).toHaveLength(500);
    await seedPlaced(d2, doc, 1, 1);
    const body = problem(await list(doc), 422, 'PLACEMENTS_TOO_MANY');
    expect(body.detail).toContain('500');
    // Placed reports the caller cannot read count too: the document holds them whoever asks.
    problem(await list(doc, viewer.key), 422, 'PLACEMENTS_TOO_MANY');
  });

  it('extension (reference 9, external-document placements): 2000 placements are listed; 2001 is 422 PLACEMENTS_TOO_MANY', async () => {
    const doc = `many-placements-${++seq}`;
    await seedPlaced(d1, doc, 4, 500);
    expect(await items(doc)).toHaveLength(2000);
    await seedPlaced(d1, doc, 1, 1);
    const body = problem(await list(doc), 422, 'PLACEMENTS_TOO_MANY');
    expect(body.detail).toContain('2000');
  });

  it('extension (reference 9, external-document placements): without a credential, 401', async () => {
    problem(await t.request({ url: `/api/v1/external-documents/x/placements`, key: null }), 401, 'UNAUTHENTICATED');
  });
});
