import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_INDEPENDENT } from '../../server/test/harness.js';
import { ApiError, type MapiClient, type ReportDelivery, type ReportDeliveryFormat, type ReportDeliveryRun } from '../src/node.js';
import { createDeployment, startTestServer, uniqueName, type TestServer } from './support.js';

/** client.reportDeliveries against a real server. */
describe.each(STORE_INDEPENDENT)('report delivery helpers (%s)', (dialect) => {
  let server: TestServer;
  let client: MapiClient;
  let d: number;
  let reportId: number;

  beforeAll(async () => {
    server = await startTestServer(dialect);
    client = server.client();
    d = await createDeployment(client);
    const publicId = uniqueName('report');
    const { data } = await client.PUT('/api/v1/deployments/{deploymentId}/reports/by-public-id/{publicId}', {
      params: { path: { deploymentId: d, publicId } },
      body: { name: publicId, kind: 'table', spec: { query: { measures: ['orders.count'] } } },
    });
    reportId = data!.id;
  });
  afterAll(async () => server?.close());

  it('creates, reads, lists, updates, pauses, resumes, runs and deletes deliveries; a bad cron or format is a 400', async () => {
    const delivery = await client.reportDeliveries.create(d, {
      reportId,
      name: 'Weekly',
      cron: '0 9 * * 1',
      recipients: [{ type: 'USER', email: 'admin@localhost' }],
    });
    expect(delivery).toMatchObject({ reportId, name: 'Weekly', format: 'csv', paused: false, recipients: [{ type: 'USER', email: 'admin@localhost' }] });
    expect(await client.reportDeliveries.get(d, delivery.id)).toEqual(delivery);
    const listed: ReportDelivery[] = [];
    for await (const item of client.reportDeliveries.list(d, { reportId })) listed.push(item);
    expect(listed.map((x) => x.id)).toEqual([delivery.id]);
    expect(await client.reportDeliveries.update(d, delivery.id, { name: 'Monday' })).toMatchObject({ name: 'Monday', cron: '0 9 * * 1' });
    const format: ReportDeliveryFormat = 'xlsx';
    expect(await client.reportDeliveries.update(d, delivery.id, { format })).toMatchObject({ name: 'Monday', format: 'xlsx' });

    const paused = await client.reportDeliveries.pause(d, delivery.id);
    expect(paused).toMatchObject({ paused: true, nextRunAt: null });
    expect(await client.reportDeliveries.pause(d, delivery.id)).toEqual(paused);
    expect(await client.reportDeliveries.resume(d, delivery.id)).toMatchObject({ paused: false });

    const run = await client.reportDeliveries.run(d, delivery.id);
    expect(run).toMatchObject({ deliveryId: delivery.id, trigger: 'manual', status: 'queued', jobId: expect.any(Number) });
    const runs: ReportDeliveryRun[] = [];
    for await (const r of client.reportDeliveries.runs(d, delivery.id)) runs.push(r);
    expect(runs.map((r) => r.id)).toEqual([run.id]);

    const bad = await client.reportDeliveries
      .create(d, { reportId, cron: '*/5 * * * *', recipients: [{ type: 'USER', email: 'admin@localhost' }] })
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(ApiError);
    expect(bad).toMatchObject({ status: 400, code: 'VALIDATION_FAILED' });
    const badFormat = await client.reportDeliveries.update(d, delivery.id, { format: 'ods' as ReportDeliveryFormat }).catch((e: unknown) => e);
    expect(badFormat).toMatchObject({ status: 400, code: 'VALIDATION_FAILED' });
    expect(await client.reportDeliveries.get(d, delivery.id)).toMatchObject({ format: 'xlsx' });
    await client.reportDeliveries.delete(d, delivery.id);
    await expect(client.reportDeliveries.get(d, delivery.id)).rejects.toMatchObject({ status: 404, code: 'REPORT_DELIVERY_NOT_FOUND' });
  });
});
