import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_INDEPENDENT } from '../../server/test/harness.js';
import { ApiError, unwrap, type MapiClient, type WorkbookPromotion, type WorkbookPromotionLink } from '../src/node.js';
import { createDeployment, startTestServer, uniqueName, Workspace, type TestServer } from './support.js';

/** workbooks.previewPromotion / promote / promotion / promotions / promotionLinks (extensions). */
describe.each(STORE_INDEPENDENT)('workbook promotion helpers (%s)', (dialect) => {
  let server: TestServer;
  let client: MapiClient;
  let ws: Workspace;
  let target: number;
  const position = { x: 0, y: 0, w: 4, h: 4 };

  beforeAll(async () => {
    server = await startTestServer(dialect);
    client = server.client();
    ws = await Workspace.create(client);
    target = await createDeployment(client);
  });
  afterAll(async () => server?.close());

  it('previews, promotes with a key (the same key answers the same promotion), promotes again as an update, lists history and links', async () => {
    const d = ws.deploymentId;
    const wb = await ws.workbook();
    const report = await ws.report();
    await client.workbooks.saveDraft(d, wb, { widgets: [{ id: 'c', type: 'CHART', position, config: { reportId: report } }] });

    const preview = await client.workbooks.previewPromotion(d, wb, { targetDeploymentId: target });
    expect(preview).toMatchObject({ outcome: 'CREATED', targetWorkbookId: null, reportIds: [report], missingMembers: [], ready: true });

    const first = await client.workbooks.promote(d, wb, { targetDeploymentId: target }, { idempotencyKey: 'client-key-1' });
    expect(first).toMatchObject({ outcome: 'CREATED', targetDeploymentId: target, idempotencyKey: 'client-key-1' });
    expect(await client.workbooks.promote(d, wb, { targetDeploymentId: target }, { idempotencyKey: 'client-key-1' })).toEqual(first);
    // Without a key of the caller's, each call gets a fresh one: a second promotion, which updates the copy.
    const second = await client.workbooks.promote(d, wb, { targetDeploymentId: target });
    expect(second).toMatchObject({ outcome: 'UPDATED', targetWorkbookId: first.targetWorkbookId, idempotencyKey: expect.any(String) });

    expect(await client.workbooks.promotion(d, wb)).toEqual(second);
    const history: WorkbookPromotion[] = [];
    for await (const p of client.workbooks.promotions(d, wb)) history.push(p);
    expect(history.map((p) => p.id)).toEqual([second.id, first.id]);
    const links: WorkbookPromotionLink[] = [];
    for await (const l of client.workbooks.promotionLinks(d, wb)) links.push(l);
    expect(links.map((l) => [l.kind, l.sourceReportId])).toEqual([
      ['WORKBOOK', null],
      ['REPORT', report],
    ]);
  });

  it('missing members are an ApiError 422 with the list; the same key with another body is 422; never promoted is 404', async () => {
    const d = ws.deploymentId;
    const wb = await ws.workbook();
    const publicId = uniqueName('semantic');
    const report = unwrap(
      await client.PUT('/api/v1/deployments/{deploymentId}/reports/by-public-id/{publicId}', {
        params: { path: { deploymentId: d, publicId } },
        body: { name: publicId, spec: { query: { measures: ['orders.count'] } } },
      }),
    ).id;
    await client.workbooks.saveDraft(d, wb, { widgets: [{ id: 'c', type: 'CHART', position, config: { reportId: report } }] });
    const refused = await client.workbooks.promote(d, wb, { targetDeploymentId: target }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({ status: 422, code: 'PROMOTION_MEMBERS_MISSING' });
    expect((refused as ApiError).problem).toMatchObject({ missingMembers: [{ member: 'orders.count', use: 'measure', reportIds: [report] }] });
    await expect(client.workbooks.promotion(d, wb)).rejects.toMatchObject({ status: 404, code: 'PROMOTION_NOT_FOUND' });

    const plain = await ws.workbook();
    await client.workbooks.promote(d, plain, { targetDeploymentId: target }, { idempotencyKey: 'client-key-2' });
    const folder = unwrap(
      await client.POST('/api/v1/deployments/{deploymentId}/folders', { params: { path: { deploymentId: target } }, body: { name: uniqueName('f') } }),
    ).id;
    await expect(
      client.workbooks.promote(d, plain, { targetDeploymentId: target, folderId: folder }, { idempotencyKey: 'client-key-2' }),
    ).rejects.toMatchObject({
      status: 422,
      code: 'IDEMPOTENCY_KEY_REUSED',
    });
  });
});
