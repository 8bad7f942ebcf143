import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_INDEPENDENT } from '../../server/test/harness.js';
import { ApiError, dispositionFilename, unwrap, type DashboardExportStatus, type MapiClient } from '../src/node.js';
import { startTestServer, Workspace, type TestServer } from './support.js';

/** client.dashboardExports: start, status, waitFor, download and export against a real server (reference 8.A.1-8.A.3). */

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const position = { x: 0, y: 0, w: 6, h: 3 };

describe('Content-Disposition names', () => {
  it('the UTF-8 filename* wins over the plain one; either alone is read; none is null', () => {
    expect(dispositionFilename(`attachment; filename="weekly_.png"; filename*=UTF-8''weekly%C3%A9.png`)).toBe('weeklyé.png');
    expect(dispositionFilename('attachment; filename="dashboard.pdf"')).toBe('dashboard.pdf');
    expect(dispositionFilename('attachment')).toBeNull();
    expect(dispositionFilename(null)).toBeNull();
  });
});

describe.each(STORE_INDEPENDENT)('dashboard export helpers (%s)', (dialect) => {
  let server: TestServer;
  let client: MapiClient;
  let ws: Workspace;
  let dashboardId: number;
  let publicId: string;

  beforeAll(async () => {
    server = await startTestServer(dialect);
    client = server.client();
    ws = await Workspace.create(client);
    // Text only: it renders without a running runtime.
    const published = await client.workbooks.publish(ws.deploymentId, await ws.workbook(), {
      config: { title: 'Weekly numbers', widgets: [{ id: 'note', type: 'TEXT', position, config: { text: 'Sales are up.' } }] },
    });
    dashboardId = published.id;
    publicId = published.publicId;
  });
  afterAll(async () => server?.close());

  it('export renders a PNG by id and answers its bytes, type and name; start, waitFor and download give a PDF by public id', async () => {
    const started: string[] = [];
    const png = await client.dashboardExports.export(
      ws.deploymentId,
      { format: 'png', dashboardId },
      { filename: 'weekly numbers', onStart: (s) => started.push(s.jobId) },
    );
    expect(started).toEqual([png.jobId]);
    expect(png.contentType).toBe('image/png');
    expect(png.filename).toBe('weekly numbers.png');
    expect([...png.bytes.subarray(0, 8)]).toEqual(PNG_SIGNATURE);
    expect(await client.dashboardExports.status(ws.deploymentId, png.jobId)).toEqual({ status: 'completed', progress: 100, contentType: 'image/png' });

    const { jobId, expiresAt } = await client.dashboardExports.start(ws.deploymentId, { format: 'pdf', dashboardPublicId: publicId });
    expect(Date.parse(expiresAt)).toBeGreaterThan(Date.now());
    const seen: DashboardExportStatus[] = [];
    const final = await client.dashboardExports.waitFor(ws.deploymentId, jobId, { intervalMs: 20, onUpdate: (s) => seen.push(s) });
    expect(final).toEqual({ status: 'completed', progress: 100, contentType: 'application/pdf' });
    expect(seen.at(-1)).toEqual(final);
    expect(seen.slice(0, -1).every((s) => s.status === 'pending' || s.status === 'processing')).toBe(true);
    const pdf = await client.dashboardExports.download(ws.deploymentId, jobId);
    expect(pdf).toMatchObject({ contentType: 'application/pdf', filename: 'dashboard.pdf' });
    expect(new TextDecoder().decode(pdf.bytes.subarray(0, 5))).toBe('%PDF-');

    // An aborted wait stops before its next poll, with the signal's reason.
    const controller = new AbortController();
    controller.abort(new Error('stopped by the caller'));
    await expect(client.dashboardExports.waitFor(ws.deploymentId, jobId, { signal: controller.signal })).rejects.toThrow('stopped by the caller');
  });

  it('an unknown (or expired, or someone else’s) job is a 404 ApiError on status and download', async () => {
    const d = ws.deploymentId;
    await expect(client.dashboardExports.status(d, 'no-such-job')).rejects.toMatchObject({ status: 404, code: 'DASHBOARD_EXPORT_NOT_FOUND' });
    await expect(client.dashboardExports.download(d, 'no-such-job')).rejects.toMatchObject({ status: 404, code: 'DASHBOARD_EXPORT_NOT_FOUND' });
    await expect(client.dashboardExports.waitFor(d, 'no-such-job')).rejects.toBeInstanceOf(ApiError);
  });

  it('while the account restricts data downloads, start is a 403 DATA_DOWNLOAD_RESTRICTED ApiError', async () => {
    unwrap(await client.PUT('/api/v1/tenant/app-config', { body: { restrictDataDownload: true } }));
    try {
      await expect(client.dashboardExports.export(ws.deploymentId, { format: 'pdf', dashboardId })).rejects.toMatchObject({
        status: 403,
        code: 'DATA_DOWNLOAD_RESTRICTED',
      });
    } finally {
      unwrap(await client.PUT('/api/v1/tenant/app-config', { body: { restrictDataDownload: null } }));
    }
  });
});
