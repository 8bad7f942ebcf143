import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_INDEPENDENT } from '../../server/test/harness.js';
import { ApiError, type MapiClient } from '../src/node.js';
import { startTestServer, Workspace, type TestServer } from './support.js';

/** reportPlacements.connect / disconnect / refresh / find (reference 3.1-3.3). */
describe.each(STORE_INDEPENDENT)('report placement helpers (%s)', (dialect) => {
  let server: TestServer;
  let client: MapiClient;
  let ws: Workspace;

  beforeAll(async () => {
    server = await startTestServer(dialect);
    client = server.client();
    ws = await Workspace.create(client);
  });
  afterAll(async () => server?.close());

  it('places a report, finds the placement by id with its sync status, and removes it (twice: idempotent)', async () => {
    const d = ws.deploymentId;
    const report = await ws.report();
    const resultChecksum = { v: 1, chunks: [{ from: 0, hash: 'abc' }] };
    const placed = await client.reportPlacements.connect(d, report, {
      placementId: 'sheet-1',
      externalWorkbookId: 'doc',
      resultLocation: 'Sales!B2:F9',
      host: 'EXCEL',
      resultChecksum,
    });
    expect(client.reportPlacements.find(placed, 'sheet-1')).toMatchObject({
      workbookId: 'doc',
      host: 'EXCEL',
      queryChecksum: placed.currentQueryChecksum,
      syncStatus: 'UP_TO_DATE',
      resultChecksum,
    });
    expect(client.reportPlacements.find(placed, 'other')).toBeUndefined();
    const removed = await client.reportPlacements.disconnect(d, report, { externalWorkbookId: 'doc', sheetName: 'Sales', anchorCell: 'B2' });
    expect(removed.externalWorkbookPlacements).toEqual([]);
    expect((await client.reportPlacements.disconnect(d, report, { placementId: 'sheet-1' })).externalWorkbookPlacements).toEqual([]);
  });

  it('refreshing a placement that does not exist is an ApiError 404 PLACEMENT_NOT_FOUND', async () => {
    const refused = await client.reportPlacements.refresh(ws.deploymentId, await ws.report(), { placementId: 'none' }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({ status: 404, code: 'PLACEMENT_NOT_FOUND' });
  });
});
