import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS } from '../../server/test/harness.js';
import { ApiError, createClient, exchangeEmbedSession, fetchTrusting, unwrap, type MapiClient } from '../src/node.js';
import { startTestServer, uniqueName, Workspace, type TestServer } from './support.js';

/**
 * From a dashboard file to a viewer: workbooks.publishFromFile, embedAccess.shareWorkbook and
 * embed.startSession, then the session's page and the dashboard it reads, as the page reads it.
 * On both stores: these helpers are several calls whose combined effect is the behaviour.
 */
describe.each(DIALECTS)('publishing and embedding a dashboard (%s)', (dialect) => {
  let server: TestServer;
  let admin: MapiClient;
  let ws: Workspace;
  let fetchWithCa: typeof globalThis.fetch;
  const position = { x: 0, y: 0, w: 6, h: 4 };

  beforeAll(async () => {
    server = await startTestServer(dialect);
    admin = server.client();
    ws = await Workspace.create(admin);
    fetchWithCa = fetchTrusting(server.ca);
    unwrap(await admin.POST('/api/v1/user-attributes', { body: { name: 'region', type: 'string' } }));
  });
  afterAll(async () => server?.close());

  /** What the embedded page does with the session in its URL: exchange it, then read the dashboard with the token. */
  async function openAsPage(url: string): Promise<{ status: number; body: unknown; claims: Record<string, unknown> }> {
    const page = await fetchWithCa(url);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    await page.text();
    const parsed = new URL(url);
    const token = await exchangeEmbedSession(server.url, parsed.searchParams.get('session') ?? '', { fetch: fetchWithCa });
    const viewer = createClient({ baseUrl: server.url, token, ca: server.ca, retry: false });
    const publicId = decodeURIComponent(parsed.pathname.split('/').at(-1) ?? '');
    const answer = await viewer.GET('/api/v1/embed/dashboard/{publicId}', { params: { path: { publicId } } });
    const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
    return { status: answer.response.status, body: answer.data ?? answer.error, claims };
  }

  it('publishes a file by slug, shares it with a tenant keeping other shares, and a session URL opens it for that tenant only', async () => {
    const d = ws.deploymentId;
    const report = await ws.report();
    const slug = uniqueName('sales');
    const file = JSON.stringify({
      title: 'Sales',
      widgets: [
        { type: 'TEXT', position, config: { text: '# Sales' } },
        { type: 'CHART', position: { ...position, x: 6 }, config: { reportId: report } },
      ],
    });

    const first = await admin.workbooks.publishFromFile(d, { slug, name: 'Sales' }, file);
    expect(first.created).toBe(true);
    expect(first.dashboard).toMatchObject({ workbookId: first.workbookId, versionNumber: 1, status: 'published', title: 'Sales', allowEmbed: false });
    expect(first.dashboard.publicId).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(first.dashboard.config.widgets?.map((w) => [w.type, typeof w.id])).toEqual([
      ['TEXT', 'string'],
      ['CHART', 'string'],
    ]);
    // The file became the draft too, so the draft and the publication agree.
    const draft = JSON.parse((await admin.dashboardFiles.get(d, first.workbookId)).content) as { widgets: { id: string }[] };
    expect(draft.widgets.map((w) => w.id)).toEqual(first.dashboard.config.widgets?.map((w) => w.id));

    // Publishing again by the same slug updates that workbook: the next version, the same public id.
    const again = await admin.workbooks.publishFromFile(d, { slug, name: 'Sales' }, { title: 'Sales v2', widgets: [{ type: 'TEXT', position }] });
    expect(again).toMatchObject({
      workbookId: first.workbookId,
      created: false,
      dashboard: { versionNumber: 2, publicId: first.dashboard.publicId, title: 'Sales v2' },
    });
    const publicId = again.dashboard.publicId;

    // Tenants exist once someone is provisioned in them; "partner" gets a share of its own first.
    await admin.embedTenants.provisionUser('partner', { externalId: 'p-1' });
    await admin.embedTenants.provisionUser('outsider', { externalId: 'o-1' });
    await admin.embedAccess.updateWorkbook(d, again.workbookId, { embedTenantName: 'partner', action: 'read' });

    // Before sharing: a session of acme's viewer gets a URL whose dashboard is not there for them.
    const early = await admin.embed.startSession(publicId, { deploymentId: d, embedTenantName: 'acme', externalId: 'viewer-1' });
    expect(early.url).toBe(`${server.url}/embed/dashboard/${publicId}?session=${early.sessionId}`);
    expect((await openAsPage(early.url)).status).toBe(404);

    const shared = await admin.embedAccess.shareWorkbook(d, again.workbookId, { embedTenantName: 'Acme' });
    expect(shared).toMatchObject({ changed: true, allowEmbedChanged: true, access: { allowEmbed: true } });
    expect(shared.access.tenants.map((t) => [t.embedTenantName, t.action]).sort()).toEqual([
      ['acme', 'read'],
      ['partner', 'read'],
    ]);
    // Again: nothing to change, and it says so.
    expect(await admin.embedAccess.shareWorkbook(d, again.workbookId, { embedTenantName: 'acme' })).toMatchObject({ changed: false, allowEmbedChanged: false });

    const session = await admin.embed.startSession(
      publicId,
      { deploymentId: d, embedTenantName: 'acme', externalId: 'viewer-1', userAttributes: [{ name: 'region', value: 'EU' }] },
      { locale: 'de-DE', timezone: 'Europe/Berlin' },
    );
    expect(session).toMatchObject({ publicId, deploymentId: d, sessionId: expect.stringMatching(/^[0-9a-f]{32}$/) });
    expect(new URL(session.url).searchParams.get('locale')).toBe('de-DE');
    const opened = await openAsPage(session.url);
    expect(opened.status).toBe(200);
    expect(opened.body).toMatchObject({ publicId, versionNumber: 2, config: { title: 'Sales v2' } });
    expect(opened.claims).toMatchObject({ embed_tenant: 'acme', embed_user: { external_id: 'viewer-1' }, user_attributes: { region: 'EU' } });

    // Another tenant's viewer still sees nothing; the partner's share was kept.
    const outsider = await admin.embed.startSession(publicId, { deploymentId: d, embedTenantName: 'outsider', externalId: 'o-1' });
    expect((await openAsPage(outsider.url)).status).toBe(404);
    const partner = await admin.embed.startSession(publicId, { deploymentId: d, embedTenantName: 'partner', externalId: 'p-1' });
    expect((await openAsPage(partner.url)).status).toBe(200);

    // Removing acme's share closes it to acme's viewers and leaves the switch and partner's share.
    const removed = await admin.embedAccess.shareWorkbook(d, again.workbookId, { embedTenantName: 'acme' }, { action: 'none' });
    expect(removed).toMatchObject({ changed: true, allowEmbedChanged: false, access: { allowEmbed: true } });
    expect(removed.access.tenants.map((t) => t.embedTenantName)).toEqual(['partner']);
    const after = await admin.embed.startSession(publicId, { deploymentId: d, embedTenantName: 'acme', externalId: 'viewer-1' });
    expect((await openAsPage(after.url)).status).toBe(404);
  });

  it('refuses a file that is not one dashboard object before any call; an unpublished workbook cannot be switched on, and nothing is shared', async () => {
    const d = ws.deploymentId;
    const before = await ws.tree();
    await expect(admin.workbooks.publishFromFile(d, { slug: uniqueName('bad'), name: 'Bad' }, '{"widgets": [')).rejects.toThrow(/not JSON/);
    await expect(admin.workbooks.publishFromFile(d, { slug: uniqueName('bad'), name: 'Bad' }, '[]')).rejects.toThrow(/one object/);
    expect(await ws.tree()).toEqual(before);

    const unpublished = await ws.workbook();
    await admin.embedTenants.provisionUser('acme', { externalId: 'viewer-2' });
    const refused = await admin.embedAccess.shareWorkbook(d, unpublished, { embedTenantName: 'acme' }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({ status: 400, code: 'INVALID_OPERATION' });
    expect((await admin.embedAccess.getWorkbook(d, unpublished)).tenants).toEqual([]);
    // Sharing without the switch works on an unpublished workbook.
    expect(await admin.embedAccess.shareWorkbook(d, unpublished, { embedTenantName: 'acme' }, { allowEmbed: false })).toMatchObject({
      changed: true,
      allowEmbedChanged: false,
    });
    await expect(admin.embedAccess.shareWorkbook(d, unpublished, { embedTenantName: 'no-such-tenant' }, { allowEmbed: false })).rejects.toMatchObject({
      status: 404,
      code: 'EMBED_TENANT_NOT_FOUND',
    });
  });
});
