import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { PNG } from 'pngjs';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { loadConfig } from '../src/config.js';
import type { Renderer } from '../src/render/index.js';
import { DIALECTS, problem } from './harness.js';
import { DASHBOARD_TITLE, renderShop, type RenderShop } from './render-fixtures.js';

/*
 * Issue 18, "Dashboard exports (section 8.A)": start, status and download exactly as the
 * reference gives them, rendered by the dashboard renderer as jobs: manage access to the
 * workbook, the caller's own row-level context or `renderAs` (admin), the 5-minute expiry,
 * visibility to the submitter only, 409 while rendering, 422 after a failure, 429 past the
 * per-identity limit, 403 while `restrictDataDownload` is on.
 */

type Json = Record<string, any>;

async function pdfText(bytes: Buffer): Promise<string> {
  const doc = await getDocument({ data: new Uint8Array(bytes), useSystemFonts: false, isEvalSupported: false }).promise;
  const content = await (await doc.getPage(1)).getTextContent();
  const text = content.items.map((item) => ('str' in item ? item.str : '')).join(' ');
  await doc.destroy();
  return text;
}

/** Holds every render until released: the exports stay `processing` meanwhile. */
function holdRenders(renderer: Renderer) {
  const original = renderer.renderDashboard;
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  renderer.renderDashboard = async (input) => {
    await gate;
    return original(input);
  };
  return () => {
    renderer.renderDashboard = original;
    release();
  };
}

for (const dialect of DIALECTS) {
  describe(`dashboard exports (${dialect})`, () => {
    let shop: RenderShop;
    let clock = Date.now();
    const base = () => `/api/v1/deployments/${shop.deploymentId}/dashboard-exports`;
    const start = (body: Json, key?: string) => shop.t.request({ method: 'POST', url: base(), body, ...(key ? { key } : {}) });
    const status = (jobId: string, key?: string) => shop.t.request({ url: `${base()}/${jobId}`, ...(key ? { key } : {}) });
    const download = (jobId: string, key?: string, query = '') => shop.t.request({ url: `${base()}/${jobId}/download${query}`, ...(key ? { key } : {}) });
    const started = async (body: Json, key?: string): Promise<string> => {
      const res = await start(body, key);
      expect(res.statusCode, res.body).toBe(200);
      return (res.json() as Json).jobId as string;
    };
    const statusWhere = (jobId: string, key: string | undefined, expected: Json) =>
      vi.waitFor(
        async () => {
          const res = await status(jobId, key);
          expect(res.statusCode, res.body).toBe(200);
          expect(res.json()).toMatchObject(expected);
          return res.json() as Json;
        },
        { timeout: 30_000, interval: 50 },
      );
    const completed = async (jobId: string, key?: string) => {
      await statusWhere(jobId, key, { status: 'completed' });
      const res = await download(jobId, key);
      expect(res.statusCode, res.body).toBe(200);
      return res.rawPayload;
    };

    beforeAll(async () => {
      shop = await renderShop(dialect, { now: () => new Date(clock) });
    });
    afterAll(async () => shop?.close());

    it('POST answers {jobId, expiresAt} 5 minutes on; the PNG is rendered with the caller’s own rows and downloads as an attachment', async () => {
      const res = await start({ format: 'png', dashboardId: shop.dashboardId }, shop.eu.key);
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json() as Json;
      expect(Object.keys(body).sort()).toEqual(['expiresAt', 'jobId']);
      expect(Date.parse(body.expiresAt as string)).toBe(clock + 5 * 60_000);
      expect(await statusWhere(body.jobId as string, shop.eu.key, { status: 'completed' })).toEqual({
        status: 'completed',
        progress: 100,
        contentType: 'image/png',
      });
      const file = await download(body.jobId as string, shop.eu.key);
      expect(file.headers['content-type']).toBe('image/png');
      expect(file.headers['content-disposition']).toMatch(/^attachment; filename="dashboard\.png"/);
      const image = PNG.sync.read(file.rawPayload);
      expect(image.width).toBe(1200);
      const named = await download(body.jobId as string, shop.eu.key, '?filename=weekly%20sales');
      expect(named.headers['content-disposition']).toMatch(/^attachment; filename="weekly sales\.png"/);
    });

    it('a PDF by public id: its text holds the title and the caller’s values; another analyst gets their own', async () => {
      const eu = await pdfText(await completed(await started({ format: 'pdf', dashboardPublicId: shop.publicId }, shop.eu.key), shop.eu.key));
      expect(eu).toContain(DASHBOARD_TITLE);
      expect(eu).toContain('180');
      expect(eu).toContain('Ada');
      const us = await pdfText(
        await completed(
          await started(
            { format: 'pdf', dashboardPublicId: shop.publicId, filters: [{ member: 'orders.status', operator: 'equals', value: ['completed'] }] },
            shop.us.key,
          ),
          shop.us.key,
        ),
      );
      expect(us).toContain('Bo');
      expect(us).not.toContain('Ada');
      expect(us).toContain('orders.status equals completed');
    });

    it('renderAs (admin): another user’s rows, found by id or by email whatever its case; unknown or deactivated users are 404', async () => {
      const asUs = await pdfText(
        await completed(await started({ format: 'pdf', dashboardId: shop.dashboardId, renderAs: { type: 'USER', email: shop.us.email.toUpperCase() } })),
      );
      expect(asUs).toContain('Bo');
      expect(asUs).not.toContain('Ada');
      const asEu = await pdfText(
        await completed(await started({ format: 'pdf', dashboardId: shop.dashboardId, renderAs: { type: 'USER', userId: shop.eu.userId } })),
      );
      expect(asEu).toContain('Ada');
      problem(await start({ format: 'pdf', dashboardId: shop.dashboardId, renderAs: { type: 'USER', userId: shop.us.userId } }, shop.eu.key), 403, 'FORBIDDEN');
      problem(await start({ format: 'pdf', dashboardId: shop.dashboardId, renderAs: { type: 'USER', userId: 987_654 } }), 404, 'USER_NOT_FOUND');
      problem(await start({ format: 'pdf', dashboardId: shop.dashboardId, renderAs: { type: 'USER', email: 'nobody@example.com' } }), 404, 'USER_NOT_FOUND');
      const gone = await shop.t.user('EXPLORER');
      await shop.t.store.db.updateTable('users').set({ deactivated_at: new Date().toISOString() }).where('id', '=', gone.userId).execute();
      problem(await start({ format: 'pdf', dashboardId: shop.dashboardId, renderAs: { type: 'USER', userId: gone.userId } }), 404, 'USER_NOT_FOUND');
      problem(await start({ format: 'pdf', dashboardId: shop.dashboardId, renderAs: { type: 'USER' } }), 400, 'VALIDATION_FAILED');
    });

    it('renderAs an embed user: 403 while the workbook is not shared with their embed tenant; 400 without an externalId', async () => {
      const subject = { type: 'EMBED_USER', embedTenantName: 'acme', externalId: 'u-1', userAttributes: [{ name: 'region', value: 'US' }] };
      problem(await start({ format: 'png', dashboardId: shop.dashboardId, renderAs: subject }), 403, 'FORBIDDEN');
      problem(
        await start({ format: 'png', dashboardId: shop.dashboardId, renderAs: { type: 'EMBED_USER', embedTenantName: 'acme' } }),
        400,
        'VALIDATION_FAILED',
      );
    });

    it('renderAs userAttributes follow the rules of every write of attribute values: a repeated name, an unknown one or a wrong type is 400', async () => {
      const subject = (userAttributes: unknown) => ({ type: 'EMBED_USER', embedTenantName: 'acme', externalId: 'u-1', userAttributes });
      const body = (userAttributes: unknown) => ({ format: 'png', dashboardId: shop.dashboardId, renderAs: subject(userAttributes) });
      const twice = problem(
        await start(
          body([
            { name: 'region', value: 'US' },
            { name: 'REGION', value: 'EU' },
          ]),
        ),
        400,
        'VALIDATION_FAILED',
      );
      expect(twice.errors).toEqual([{ pointer: '/body/renderAs/userAttributes/1/name', message: 'is repeated' }]);
      const unknown = problem(await start(body([{ name: 'shoeSize', value: 42 }])), 400, 'USER_ATTRIBUTES_NOT_FOUND');
      expect(unknown.errors).toEqual([{ pointer: '/body/renderAs/userAttributes/0/name', message: 'is not a user attribute' }]);
      const wrong = problem(await start(body([{ name: 'region', value: 3 }])), 400, 'VALIDATION_FAILED');
      expect(wrong.errors).toEqual([{ pointer: '/body/renderAs/userAttributes/0/value', message: 'must be a string' }]);
    });

    it('renderAs an embed user of a tenant the workbook is shared with: the render uses the attributes sent, for this render only', async () => {
      const provision = await shop.t.request({ method: 'POST', url: '/api/v1/embed-tenants/globex/user', body: { externalId: 'seed' } });
      expect(provision.statusCode, provision.body).toBe(200);
      const share = await shop.t.request({
        method: 'PUT',
        url: `/api/v1/deployments/${shop.deploymentId}/workbooks/${shop.workbookId}/embed-access`,
        body: { embedTenantName: 'globex', action: 'read' },
      });
      expect(share.statusCode, share.body).toBe(200);
      const subject = (region: string) => ({
        type: 'EMBED_USER',
        embedTenantName: 'Globex',
        externalId: 'viewer-1',
        userAttributes: [{ name: 'region', value: region }],
      });
      const us = await pdfText(await completed(await started({ format: 'pdf', dashboardId: shop.dashboardId, renderAs: subject('US') })));
      expect(us).toContain('Bo');
      expect(us).not.toContain('Ada');
      const eu = await pdfText(await completed(await started({ format: 'pdf', dashboardId: shop.dashboardId, renderAs: subject('EU') })));
      expect(eu).toContain('Ada');
      // Nothing about the subject was stored: no embed user of that external id.
      expect(await shop.t.store.db.selectFrom('embed_users').select('id').where('external_id', '=', 'viewer-1').execute()).toEqual([]);
    });

    it('layout print (the reference’s later revision): A4 portrait pages holding the same text; print with png is 400', async () => {
      const bytes = await completed(await started({ format: 'pdf', dashboardId: shop.dashboardId, layout: 'print' }, shop.eu.key), shop.eu.key);
      const doc = await getDocument({ data: new Uint8Array(bytes), useSystemFonts: false, isEvalSupported: false }).promise;
      const viewport = (await doc.getPage(1)).getViewport({ scale: 1 });
      await doc.destroy();
      expect([Math.round(viewport.width), Math.round(viewport.height)]).toEqual([595, 842]);
      const text = await pdfText(bytes);
      expect(text).toContain(DASHBOARD_TITLE);
      expect(text).toContain('180');
      const body = problem(await start({ format: 'png', dashboardId: shop.dashboardId, layout: 'print' }), 400, 'VALIDATION_FAILED');
      expect(body.errors?.map((e: { pointer: string }) => e.pointer)).toEqual(['/body/layout']);
      problem(await start({ format: 'pdf', dashboardId: shop.dashboardId, layout: 'poster' }), 400, 'VALIDATION_FAILED');
    });

    it('needs MANAGE on the workbook; exactly one dashboard id; a dashboard not in this deployment is 404; bad bodies are 400', async () => {
      const reader = await shop.t.user('EXPLORER');
      await shop.t.grant({ type: 'USER', id: reader.userId }, { type: 'WORKBOOK', id: shop.workbookId }, 'EDIT');
      expect(problem(await start({ format: 'png', dashboardId: shop.dashboardId }, reader.key), 403, 'FORBIDDEN').detail).toMatch(/MANAGE/);
      problem(await start({ format: 'png' }), 400, 'VALIDATION_FAILED');
      problem(await start({ format: 'png', dashboardId: shop.dashboardId, dashboardPublicId: shop.publicId }), 400, 'VALIDATION_FAILED');
      problem(await start({ format: 'jpeg', dashboardId: shop.dashboardId }), 400, 'VALIDATION_FAILED');
      problem(
        await start({ format: 'png', dashboardId: shop.dashboardId, filters: [{ member: 'status', operator: 'equals', value: 'x' }] }),
        400,
        'VALIDATION_FAILED',
      );
      problem(await start({ format: 'png', dashboardId: 987_654 }), 404, 'DASHBOARD_NOT_FOUND');
      problem(await start({ format: 'png', dashboardPublicId: 'no-such-dashboard' }), 404, 'DASHBOARD_NOT_FOUND');
      const other = await shop.t.deployment('other');
      problem(
        await shop.t.request({ method: 'POST', url: `/api/v1/deployments/${other}/dashboard-exports`, body: { format: 'png', dashboardId: shop.dashboardId } }),
        404,
        'DASHBOARD_NOT_FOUND',
      );
      problem(
        await shop.t.request({ method: 'POST', url: '/api/v1/deployments/987654/dashboard-exports', body: { format: 'png', dashboardId: shop.dashboardId } }),
        404,
        'DEPLOYMENT_NOT_FOUND',
      );
    });

    it('a job is visible to its submitter only: anyone else, an admin included, gets 404 on its status and download', async () => {
      const jobId = await started({ format: 'png', dashboardId: shop.dashboardId }, shop.eu.key);
      await statusWhere(jobId, shop.eu.key, { status: 'completed' });
      for (const key of [shop.us.key, undefined]) {
        problem(await status(jobId, key), 404, 'DASHBOARD_EXPORT_NOT_FOUND');
        problem(await download(jobId, key), 404, 'DASHBOARD_EXPORT_NOT_FOUND');
      }
      problem(await status('no-such-job', shop.eu.key), 404, 'DASHBOARD_EXPORT_NOT_FOUND');
    });

    it('409 while the render runs (status pending or processing), then the file', async () => {
      const release = holdRenders(shop.t.app.services.renderer);
      let jobId: string;
      try {
        jobId = await started({ format: 'pdf', dashboardId: shop.dashboardId }, shop.eu.key);
        const polled = await statusWhere(jobId, shop.eu.key, { status: 'processing' });
        expect(polled.contentType ?? null).toBeNull();
        const res = problem(await download(jobId, shop.eu.key), 409, 'DASHBOARD_EXPORT_RENDERING');
        expect(res.detail).toMatch(/processing/);
      } finally {
        release();
      }
      expect((await completed(jobId, shop.eu.key)).subarray(0, 5).toString()).toBe('%PDF-');
    });

    it('422 after a failed render, terminal; the status carries the error', async () => {
      const renderer = shop.t.app.services.renderer;
      const original = renderer.renderDashboard;
      renderer.renderDashboard = () => Promise.reject(new Error('The production runtime stopped answering.'));
      try {
        const jobId = await started({ format: 'png', dashboardId: shop.dashboardId }, shop.eu.key);
        expect(await statusWhere(jobId, shop.eu.key, { status: 'failed' })).toEqual({
          status: 'failed',
          progress: null,
          error: 'The production runtime stopped answering.',
        });
        expect(problem(await download(jobId, shop.eu.key), 422, 'DASHBOARD_EXPORT_FAILED').detail).toContain('stopped answering');
      } finally {
        renderer.renderDashboard = original;
      }
    });

    it('429 past 3 exports rendering at once for the identity rendered as; other identities go on; a place frees when one finishes', async () => {
      const release = holdRenders(shop.t.app.services.renderer);
      const jobs: string[] = [];
      try {
        for (let i = 0; i < 3; i++) jobs.push(await started({ format: 'png', dashboardId: shop.dashboardId }, shop.eu.key));
        const refused = await start({ format: 'png', dashboardId: shop.dashboardId }, shop.eu.key);
        problem(refused, 429, 'DASHBOARD_EXPORT_LIMIT');
        expect(refused.headers['retry-after']).toBeDefined();
        // The limit counts whom the render is as: an admin rendering as the EU analyst is refused too.
        problem(
          await start({ format: 'png', dashboardId: shop.dashboardId, renderAs: { type: 'USER', userId: shop.eu.userId } }),
          429,
          'DASHBOARD_EXPORT_LIMIT',
        );
        jobs.push(await started({ format: 'png', dashboardId: shop.dashboardId }, shop.us.key));
      } finally {
        release();
      }
      for (const jobId of jobs.slice(0, 3)) await statusWhere(jobId, shop.eu.key, { status: 'completed' });
      await completed(await started({ format: 'png', dashboardId: shop.dashboardId }, shop.eu.key), shop.eu.key);
      expect(loadConfig({ DASHBOARD_EXPORTS_PER_IDENTITY: '5' }).render.exportsPerIdentity).toBe(5);
      expect(loadConfig({}).render.exportsPerIdentity).toBe(3);
      expect(() => loadConfig({ DASHBOARD_EXPORTS_PER_IDENTITY: '0' })).toThrow(/DASHBOARD_EXPORTS_PER_IDENTITY/);
    });

    it('the job and its file are dropped 5 minutes after submission: 404 on status and download', async () => {
      const jobId = await started({ format: 'png', dashboardId: shop.dashboardId }, shop.eu.key);
      await completed(jobId, shop.eu.key);
      clock += 5 * 60_000 - 1_000;
      expect((await status(jobId, shop.eu.key)).statusCode).toBe(200);
      clock += 1_000;
      problem(await status(jobId, shop.eu.key), 404, 'DASHBOARD_EXPORT_NOT_FOUND');
      problem(await download(jobId, shop.eu.key), 404, 'DASHBOARD_EXPORT_NOT_FOUND');
      expect(await shop.t.store.db.selectFrom('dashboard_exports').select('id').where('public_id', '=', jobId).execute()).toEqual([]);
    });

    it('403 while restrictDataDownload is on (set by admins on PUT /api/v1/tenant/app-config), for renders as others too', async () => {
      problem(
        await shop.t.request({ method: 'PUT', url: '/api/v1/tenant/app-config', key: shop.eu.key, body: { restrictDataDownload: true } }),
        403,
        'FORBIDDEN',
      );
      problem(await shop.t.request({ method: 'PUT', url: '/api/v1/tenant/app-config', body: { restrictDataDownload: 'yes' } }), 400, 'VALIDATION_FAILED');
      const on = await shop.t.request({ method: 'PUT', url: '/api/v1/tenant/app-config', body: { restrictDataDownload: true } });
      expect(on.statusCode, on.body).toBe(200);
      expect((on.json() as Json).restrictDataDownload).toBe(true);
      expect(((await shop.t.request({ url: '/api/v1/app-config', key: shop.eu.key })).json() as Json).restrictDataDownload).toBe(true);
      try {
        problem(await start({ format: 'png', dashboardId: shop.dashboardId }, shop.eu.key), 403, 'DATA_DOWNLOAD_RESTRICTED');
        problem(
          await start({ format: 'pdf', dashboardId: shop.dashboardId, renderAs: { type: 'USER', userId: shop.us.userId } }),
          403,
          'DATA_DOWNLOAD_RESTRICTED',
        );
      } finally {
        const off = await shop.t.request({ method: 'PUT', url: '/api/v1/tenant/app-config', body: { restrictDataDownload: null } });
        expect((off.json() as Json).restrictDataDownload).toBe(false);
      }
      expect((await start({ format: 'png', dashboardId: shop.dashboardId }, shop.eu.key)).statusCode).toBe(200);
    });
  });
}
