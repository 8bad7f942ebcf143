import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_INDEPENDENT } from '../../server/test/harness.js';
import { ApiError, replaceAll, unwrap, type MapiClient } from '../src/node.js';
import { startTestServer, Workspace, type TestServer } from './support.js';

/** reportFiles, dashboardFiles, externalDocuments.placements and the report's expectedVersion (reference 9, extensions). */
describe.each(STORE_INDEPENDENT)('canonical text and external-document helpers (%s)', (dialect) => {
  let server: TestServer;
  let client: MapiClient;
  let ws: Workspace;

  beforeAll(async () => {
    server = await startTestServer(dialect);
    client = server.client();
    ws = await Workspace.create(client);
  });
  afterAll(async () => server?.close());

  it('reportFiles.get answers the text and hash; edit replaces exact text; a stale hash is an ApiError 409 FILE_HASH_MISMATCH', async () => {
    const d = ws.deploymentId;
    const report = await ws.report();
    const file = await client.reportFiles.get(d, report);
    expect(JSON.parse(file.content)).toMatchObject({ kind: 'table', title: null });
    const edited = await client.reportFiles.edit(d, report, { hash: file.hash, edits: [{ oldText: '"title": null', newText: '"title": "Revenue"' }] });
    expect(JSON.parse(edited.content)).toMatchObject({ title: 'Revenue' });
    const refused = await client.reportFiles.edit(d, report, { hash: file.hash, edits: [{ oldText: 'Revenue', newText: 'Costs' }] }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({ status: 409, code: 'FILE_HASH_MISMATCH' });
    expect((refused as ApiError).detail).toContain(edited.hash);
  });

  it('transform rewrites the whole text, and reapplies itself when another write came first', async () => {
    const d = ws.deploymentId;
    const report = await ws.report();
    let calls = 0;
    const saved = await client.reportFiles.transform(d, report, async (text) => {
      calls += 1;
      if (calls === 1) {
        // Someone else writes between this read and the save.
        const now = await client.reportFiles.get(d, report);
        await client.reportFiles.edit(d, report, replaceAll(now, now.content.replace('"description": null', '"description": "theirs"')));
      }
      return text.replace('"title": null', '"title": "mine"');
    });
    expect(calls).toBe(2);
    expect(JSON.parse(saved.content)).toMatchObject({ title: 'mine', description: 'theirs' });
    // Nothing to change: no write, the same text.
    expect(await client.reportFiles.transform(d, report, (text) => text)).toEqual(saved);
  });

  it('dashboardFiles edits a workbook’s draft; an invalid draft is an ApiError 400 pointing into the text', async () => {
    const d = ws.deploymentId;
    const workbook = await ws.workbook();
    const empty = await client.dashboardFiles.get(d, workbook);
    expect(empty.content).toBe('null\n');
    const saved = await client.dashboardFiles.edit(d, workbook, replaceAll(empty, JSON.stringify({ title: 'Board', widgets: [] })));
    expect(JSON.parse(saved.content)).toEqual({ title: 'Board', widgets: [] });
    const refused = await client.dashboardFiles.edit(d, workbook, replaceAll(saved, '{"widgets": [{"type": "PIE"}]}')).catch((e: unknown) => e);
    expect(refused).toMatchObject({ status: 400, code: 'VALIDATION_FAILED' });
    expect((refused as ApiError).errors?.map((e) => e.pointer)).toContain('/content/widgets/0/type');
  });

  it('externalDocuments.placements lists the placements in one document', async () => {
    const d = ws.deploymentId;
    const report = await ws.report();
    await client.reportPlacements.connect(d, report, { externalWorkbookId: 'client-doc', resultLocation: 'S!A1', sheetName: 'S', anchorCell: 'A1' });
    const listed = await client.externalDocuments.placements('client-doc');
    expect(listed.items.map((e) => [e.reportId, e.access, e.placement.anchorCell])).toEqual([[report, 'GRANTED', 'A1']]);
  });

  it('the report upsert takes expectedVersion: a mismatch is an ApiError 409 REPORT_VERSION_MISMATCH', async () => {
    const d = ws.deploymentId;
    const publicId = `versioned-${Date.now()}`;
    const put = (body: { name: string; title?: string; expectedVersion?: number }) =>
      client.PUT('/api/v1/deployments/{deploymentId}/reports/by-public-id/{publicId}', { params: { path: { deploymentId: d, publicId } }, body });
    const created = unwrap(await put({ name: publicId }));
    expect(created.version).toBe(1);
    expect(unwrap(await put({ name: publicId, title: 'x', expectedVersion: 1 })).version).toBe(2);
    const stale = await put({ name: publicId, title: 'y', expectedVersion: 1 });
    expect(stale.response.status).toBe(409);
    expect(stale.error).toMatchObject({ code: 'REPORT_VERSION_MISMATCH' });
  });
});
