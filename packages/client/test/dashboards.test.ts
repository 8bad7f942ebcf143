import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_INDEPENDENT } from '../../server/test/harness.js';
import { ApiError, type Dashboard, type MapiClient } from '../src/node.js';
import { startTestServer, Workspace, type TestServer } from './support.js';

/** workbooks.saveDraft / publish / dashboardVersions / duplicate and dashboards.setAllowEmbed (reference 8.G.1-8.G.3, 3.6). */
describe.each(STORE_INDEPENDENT)('dashboard helpers (%s)', (dialect) => {
  let server: TestServer;
  let client: MapiClient;
  let ws: Workspace;
  const position = { x: 0, y: 0, w: 4, h: 4 };

  beforeAll(async () => {
    server = await startTestServer(dialect);
    client = server.client();
    ws = await Workspace.create(client);
  });
  afterAll(async () => server?.close());

  it('saves a draft, publishes it and a config, lists the versions newest first, switches embedding, duplicates', async () => {
    const d = ws.deploymentId;
    const wb = await ws.workbook();
    const report = await ws.report();
    const saved = await client.workbooks.saveDraft(d, wb, { title: 'Draft', widgets: [{ type: 'CHART', position, config: { reportId: report } }] });
    expect(saved.dashboardDraft?.widgets?.[0]?.id).toEqual(expect.any(String));
    expect(saved.dashboardPublished).toBeNull();
    const v1 = await client.workbooks.publish(d, wb);
    expect(v1).toMatchObject({ versionNumber: 1, status: 'published', allowEmbed: false, title: 'Draft' });
    expect(v1.reportSnapshots.map((s) => s.reportId)).toEqual([report]);
    const v2 = await client.workbooks.publish(d, wb, { config: { widgets: [{ id: 'text', type: 'TEXT', position }] }, allowEmbed: true });
    expect(v2).toMatchObject({ versionNumber: 2, publicId: v1.publicId, allowEmbed: true });
    const versions: Dashboard[] = [];
    for await (const version of client.workbooks.dashboardVersions(d, wb)) versions.push(version);
    expect(versions.map((v) => [v.versionNumber, v.status])).toEqual([
      [2, 'published'],
      [1, 'archived'],
    ]);
    expect(await client.dashboards.setAllowEmbed(v1.publicId, false)).toEqual({ publicId: v1.publicId, allowEmbed: false });
    const copy = await client.workbooks.duplicate(d, wb);
    expect(copy).toMatchObject({ name: expect.stringMatching(/^Copy of /), publishedDashboard: { versionNumber: 1, allowEmbed: false } });
  });

  it('a FIELD widget in a publish is an ApiError naming it; an unknown public id is 404', async () => {
    const wb = await ws.workbook();
    const refused = await client.workbooks
      .publish(ws.deploymentId, wb, { config: { widgets: [{ id: 'field-1', type: 'FIELD', position }] } })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({ status: 400, code: 'VALIDATION_FAILED', detail: expect.stringContaining('"field-1"') });
    await expect(client.dashboards.setAllowEmbed('no-such-dashboard', true)).rejects.toMatchObject({ status: 404, code: 'DASHBOARD_NOT_FOUND' });
  });
});
