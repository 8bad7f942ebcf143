import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPENAPI_FILE } from '../scripts/write-openapi.js';
import { DIALECTS, problem, TestApp } from './harness.js';
import { SECURED_MODEL, writeShopSqlite } from './query-fixtures.js';
import { FAST_RUNTIME, runtimeProbe } from './runtime-support.js';

type Json = Record<string, any>;

const doc = JSON.parse(fs.readFileSync(OPENAPI_FILE, 'utf8')) as { paths: Record<string, Record<string, { operationId: string; security?: unknown[] }>> };
const operations = Object.entries(doc.paths).flatMap(([route, methods]) =>
  Object.entries(methods).map(([method, op]) => ({ method: method.toUpperCase(), route, op })),
);
/** What an embed token may open (reference 4.16-4.18, 8.C, and in creator mode 8.F and 8.G.1): the routes below (the agent thread routes' own tests are in agent-answers-embed.test.ts, the comments' in dashboard-comments.test.ts, the chart compile's in charts-compile.test.ts, the shared workspace's and shared copies' in creator-mode.test.ts), and the data API of its deployment (tested further down). */
const EMBED_OPENS = new Set([
  'getEmbedDashboard',
  'runEmbedPythonAnalysis',
  'summarizeEmbedDashboardAiWidget',
  'getAppConfig',
  'askAgent',
  'continueAgentThread',
  'listAgentThreads',
  'getAgentThread',
  'listDashboardComments',
  'createDashboardComment',
  'listMentionableUsers',
  'updateDashboardComment',
  'deleteDashboardComment',
  'resolveDashboardThread',
  'compileChart',
  'listSharedWorkspace',
  'duplicateWorkbook',
]);

async function embedToken(t: TestApp, body: Json): Promise<string> {
  const generated = await t.request({ method: 'POST', url: '/api/v1/embed/generate-session', body });
  expect(generated.statusCode, generated.body).toBe(200);
  const exchanged = await t.request({ method: 'POST', url: '/api/v1/embed/session/token', key: null, body: generated.json() });
  expect(exchanged.statusCode, exchanged.body).toBe(200);
  return (exchanged.json() as { token: string }).token;
}

describe.each(DIALECTS)('an embed token opens nothing else (%s)', (dialect) => {
  let t: TestApp;
  let token: string;
  let deploymentId: number;
  beforeAll(async () => {
    t = await TestApp.create(dialect);
    deploymentId = await t.deployment('embedded');
    token = await embedToken(t, { deploymentId, externalId: 'walker' });
  });
  afterAll(async () => t?.close());

  // Public operations (no credential) answer whoever calls; everything else must refuse the token.
  const guarded = operations.filter(({ op }) => !(Array.isArray(op.security) && op.security.length === 0) && !EMBED_OPENS.has(op.operationId));
  it.each(guarded.map((o) => [`${o.method} ${o.route}`, o] as const))('%s with an embed token: 401', async (_label, { method, route }) => {
    const url = route.replace(/\{(\w+)\}/g, (_m, name: string) => (name === 'deploymentId' ? String(deploymentId) : '1'));
    for (const scheme of ['Bearer', 'Api-Key']) {
      const res = await t.request({ method: method as never, url, key: null, headers: { authorization: `${scheme} ${token}` } });
      expect(res.statusCode, `${scheme}: ${res.body}`).toBe(401);
    }
  });

  it('GET /api/v1/app-config answers an embed token, with the switches its session pinned over the account’s', async () => {
    expect((await t.request({ method: 'PUT', url: '/api/v1/tenant/embed-settings', body: { allowAi: true, locale: 'en-US' } })).statusCode).toBe(200);
    const pinned = await embedToken(t, { deploymentId, externalId: 'configured', settings: { allowAi: false, showDashboardChat: null } });
    const res = await t.request({ url: '/api/v1/app-config', key: null, headers: { authorization: `Bearer ${pinned}` } });
    expect(res.statusCode, res.body).toBe(200);
    expect((res.json() as Json).embedding).toMatchObject({ allowAi: false, locale: 'en-US', showDashboardChat: null });
    // An API key still reads the account's own.
    expect(((await t.request({ url: '/api/v1/app-config' })).json() as Json).embedding).toMatchObject({ allowAi: true });
  });

  it('the refusal says what an embed token opens', async () => {
    const body = problem(await t.request({ url: '/api/v1/deployments', key: null, headers: { authorization: `Bearer ${token}` } }), 401, 'UNAUTHENTICATED');
    expect(body.detail).toContain('An embed token opens only');
  });

  describe('GET /api/v1/embed/dashboard/{publicId} (reference 4.18)', () => {
    const text = { id: 'greeting', type: 'TEXT', position: { x: 0, y: 0, w: 6, h: 4 }, config: { text: 'hello' } };
    const workbookIds = new Map<string, number>();
    async function publishedDashboard(d: number, name: string, allowEmbed: boolean): Promise<string> {
      const workbook = await t.request({ method: 'PUT', url: `/api/v1/deployments/${d}/workbooks/by-slug/${name}`, body: { name } });
      expect(workbook.statusCode, workbook.body).toBe(201);
      workbookIds.set(name, (workbook.json() as Json).id as number);
      const published = await t.request({
        method: 'POST',
        url: `/api/v1/deployments/${d}/workbooks/${(workbook.json() as Json).id}/publish`,
        body: { config: { widgets: [text] }, allowEmbed },
      });
      expect(published.statusCode, published.body).toBe(200);
      return (published.json() as Json).publicId as string;
    }
    const open = (jwt: string, publicId: string) =>
      t.request({ url: `/api/v1/embed/dashboard/${publicId}`, key: null, headers: { authorization: `Bearer ${jwt}` } });

    it('a session for a user who may read the workbook gets the published dashboard; one who may not, 404', async () => {
      const publicId = await publishedDashboard(deploymentId, 'embedded-board', true);
      const reader = await t.user('VIEWER');
      await t.grant({ type: 'USER', id: reader.userId }, { type: 'DEPLOYMENT', id: deploymentId }, 'VIEW');
      const res = await open(await embedToken(t, { deploymentId, internalId: reader.email }), publicId);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ publicId, allowEmbed: true, status: 'published', config: { widgets: [{ id: 'greeting', type: 'TEXT' }] } });
      const stranger = await t.user('VIEWER');
      problem(await open(await embedToken(t, { deploymentId, internalId: stranger.email }), publicId), 404, 'DASHBOARD_NOT_FOUND');
      // An external user reaches a dashboard only by sharing with their embed tenant or all embed users.
      problem(await open(token, publicId), 404, 'DASHBOARD_NOT_FOUND');
      problem(await open(token, 'no-such-dashboard'), 404, 'DASHBOARD_NOT_FOUND');
      // An API key is not an embed session.
      problem(await t.request({ url: `/api/v1/embed/dashboard/${publicId}` }), 403, 'FORBIDDEN');
    });

    it('an external user reaches a dashboard shared with their embed tenant (directly or through a folder) or with all embed users; allowEmbed off is 403, except for all embed users (3.6)', async () => {
      const publicId = await publishedDashboard(deploymentId, 'shared-board', true);
      const board = { id: workbookIds.get('shared-board')! };
      const access = (body: Json) => t.request({ method: 'PUT', url: `/api/v1/deployments/${deploymentId}/workbooks/${board.id}/embed-access`, body });
      const acme = await embedToken(t, { deploymentId, externalId: 'ann', embedTenantName: 'acme' });
      const globex = await embedToken(t, { deploymentId, externalId: 'bob', embedTenantName: 'globex' });
      problem(await open(acme, publicId), 404, 'DASHBOARD_NOT_FOUND');
      const granted = await access({ embedTenantName: 'acme', action: 'read' });
      expect(granted.statusCode, granted.body).toBe(200);
      expect((await open(acme, publicId)).statusCode).toBe(200);
      problem(await open(globex, publicId), 404, 'DASHBOARD_NOT_FOUND');
      // Off for the dashboard: refused to the tenant it is shared with.
      expect((await access({ allowEmbed: false })).statusCode).toBe(200);
      problem(await open(acme, publicId), 403, 'FORBIDDEN');
      // Shared with all embed users: every embed tenant's users open it, whatever allowEmbed says.
      expect((await access({ allEmbedUsers: true, action: 'read' })).statusCode).toBe(200);
      expect((await open(globex, publicId)).statusCode).toBe(200);
      expect((await open(acme, publicId)).statusCode).toBe(200);
      // Through a folder above the workbook, shared with the embed tenant.
      const folder = await t.request({ method: 'POST', url: `/api/v1/deployments/${deploymentId}/folders`, body: { name: 'shared with globex' } });
      expect(folder.statusCode, folder.body).toBe(201);
      const inner = await publishedDashboard(deploymentId, 'inner-board', true);
      const innerBoard = { id: workbookIds.get('inner-board')! };
      const moved = await t.request({
        method: 'POST',
        url: `/api/v1/deployments/${deploymentId}/workspace/move`,
        body: { type: 'WORKBOOK', id: innerBoard.id, folderId: (folder.json() as Json).id },
      });
      expect(moved.statusCode, moved.body).toBeLessThan(300);
      problem(await open(globex, inner), 404, 'DASHBOARD_NOT_FOUND');
      const shared = await t.request({
        method: 'PUT',
        url: `/api/v1/deployments/${deploymentId}/folders/${(folder.json() as Json).id}/embed-access`,
        body: { embedTenantName: 'globex', action: 'read' },
      });
      expect(shared.statusCode, shared.body).toBe(200);
      expect((await open(globex, inner)).statusCode).toBe(200);
      problem(await open(acme, inner), 404, 'DASHBOARD_NOT_FOUND');
    });

    it('403 when signed embedding is off for the dashboard; 404 for a dashboard of another deployment than the session’s', async () => {
      const off = await publishedDashboard(deploymentId, 'embedding-off', false);
      const owner = await embedToken(t, { deploymentId, internalId: t.admin.email });
      problem(await open(owner, off), 403, 'FORBIDDEN');
      const elsewhere = await t.deployment('another-deployment');
      const theirs = await publishedDashboard(elsewhere, 'elsewhere-board', true);
      problem(await open(owner, theirs), 404, 'DASHBOARD_NOT_FOUND');
    });
  });

  it('the data API of another deployment, or of a branch the session did not name, refuses it', async () => {
    const other = await t.deployment('other');
    problem(
      await t.request({ url: `/deployments/${other}/data-api/v1/meta`, key: null, headers: { authorization: `Bearer ${token}` } }),
      401,
      'UNAUTHENTICATED',
    );
    const at = new Date().toISOString();
    await t.store.db
      .insertInto('branches')
      .values({
        tenant_id: t.tenantId,
        deployment_id: deploymentId,
        name: 'feature',
        parent_name: 'main',
        owner_key_id: null,
        staging_enabled: 1,
        created_at: at,
      })
      .execute();
    problem(
      await t.request({ url: `/deployments/${deploymentId}/dev-mode/feature/data-api/v1/meta`, key: null, headers: { authorization: `Bearer ${token}` } }),
      401,
      'UNAUTHENTICATED',
    );
  });
});

describe.each(DIALECTS)('embed users query the data API with their own rows (%s)', (dialect) => {
  let t: TestApp;
  let dataSources: string;
  let id: number;
  const post = (token: string, route: 'load' | 'sql', body: Json) =>
    t.request({ method: 'POST', url: `/deployments/${id}/data-api/v1/${route}`, key: null, headers: { authorization: `Bearer ${token}` }, body });

  beforeAll(async () => {
    dataSources = fs.mkdtempSync(path.join(os.tmpdir(), 'mapi-datasources-'));
    writeShopSqlite(dataSources);
    t = await TestApp.create(dialect, { runtime: { ...FAST_RUNTIME, dataSourcesDir: dataSources } });
    const r = runtimeProbe(t);
    id = await r.create('embedded shop');
    const first = await r.running(id);
    const build = `/build/api/v1/deployments/${id}`;
    expect(
      (
        await t.request({
          method: 'PUT',
          url: `/api/v1/deployments/${id}/env-vars`,
          body: {
            env_variables: [
              { name: 'DB_TYPE', value: 'sqlite' },
              { name: 'DB_URL', value: 'shop.sqlite' },
            ],
          },
        })
      ).statusCode,
    ).toBe(200);
    expect((await t.request({ method: 'POST', url: `${build}/dev-mode` })).statusCode).toBe(200);
    expect(
      (await t.request({ method: 'PUT', url: `${build}/data-model/files`, body: { files: [{ path: 'model/cubes/shop.yml', content: SECURED_MODEL }] } }))
        .statusCode,
    ).toBe(200);
    expect((await t.request({ method: 'POST', url: `${build}/commit`, body: { message: 'The secured shop', exitDevMode: true } })).statusCode).toBe(200);
    await r.replaced(id, first.name);
    await r.logsWith(id, '4 cubes and 2 views');
    expect((await t.request({ method: 'POST', url: '/api/v1/user-attributes', body: { name: 'region', type: 'string' } })).statusCode).toBe(201);
    expect((await t.request({ method: 'POST', url: '/api/v1/groups', body: { name: 'finance' } })).statusCode).toBe(201);
  });
  afterAll(async () => {
    await t?.close();
    if (dataSources) fs.rmSync(dataSources, { recursive: true, force: true });
  });

  it('two embed users of different embed tenants, with different attributes, get only their rows from /v1/load and /v1/sql', async () => {
    const eu = await embedToken(t, { deploymentId: id, externalId: 'anna', embedTenantName: 'tenant-eu', userAttributes: [{ name: 'region', value: 'EU' }] });
    const us = await embedToken(t, { deploymentId: id, externalId: 'bob', embedTenantName: 'tenant-us', userAttributes: [{ name: 'region', value: 'US' }] });
    const query = { measures: ['orders.count'], dimensions: ['customers.name'], order: { 'customers.name': 'asc' } };
    const euRows = await post(eu, 'load', { query });
    expect(euRows.statusCode, euRows.body).toBe(200);
    expect((euRows.json() as Json).data).toEqual([
      { 'customers.name': 'Ada', 'orders.count': 2 },
      { 'customers.name': 'Cy', 'orders.count': 1 },
    ]);
    expect(((await post(us, 'load', { query })).json() as Json).data).toEqual([{ 'customers.name': 'Bo', 'orders.count': 1 }]);
    const sql = { query: 'SELECT name, count FROM customers GROUP BY 1 ORDER BY 1' };
    const euSql = await post(eu, 'sql', sql);
    expect(euSql.statusCode, euSql.body).toBe(200);
    expect((euSql.json() as Json).data).toEqual([
      { name: 'Ada', count: 1 },
      { name: 'Cy', count: 1 },
    ]);
    expect(((await post(us, 'sql', sql)).json() as Json).data).toEqual([{ name: 'Bo', count: 1 }]);
    // A member the policy excludes is refused whoever asks.
    expect((await post(eu, 'load', { query: { measures: ['orders.total_amount'] } })).statusCode).toBe(403);
  });

  it('two embed users in the same global group with different security contexts get only their rows; the body cannot set one', async () => {
    const usContext = await embedToken(t, {
      deploymentId: id,
      externalId: 'carl',
      embedTenantName: 'tenant-one',
      groups: ['finance'],
      securityContext: { region: 'US' },
    });
    const euContext = await embedToken(t, {
      deploymentId: id,
      externalId: 'dora',
      embedTenantName: 'tenant-two',
      groups: ['finance'],
      securityContext: { region: 'EU' },
    });
    const count = async (token: string, route: 'load' | 'sql') => {
      const res = await post(token, route, route === 'load' ? { query: { measures: ['orders.count'] } } : { query: 'SELECT count FROM orders' });
      expect(res.statusCode, res.body).toBe(200);
      const row = ((res.json() as Json).data as Json[])[0]!;
      return row['orders.count'] ?? row.count;
    };
    // The finance policy: the context's region, or cancelled orders (US: order 3, and 4 cancelled; EU: 1, 2 and 4).
    expect(await count(usContext, 'load')).toBe(2);
    expect(await count(usContext, 'sql')).toBe(2);
    expect(await count(euContext, 'load')).toBe(3);
    expect(await count(euContext, 'sql')).toBe(3);
    const smuggled = await post(usContext, 'load', { query: { measures: ['orders.count'], securityContext: { region: 'EU' } } });
    expect(smuggled.statusCode).toBe(400);
  });

  it('an internalId session queries with that user’s own attributes', async () => {
    const user = await t.user('EXPLORER');
    expect((await t.request({ method: 'POST', url: `/api/v1/user-attribute-values/${user.userId}`, body: { values: { region: 'US' } } })).statusCode).toBe(200);
    const token = await embedToken(t, { deploymentId: id, internalId: user.email });
    const res = await post(token, 'load', { query: { measures: ['orders.count'], dimensions: ['customers.name'] } });
    expect(res.statusCode, res.body).toBe(200);
    expect((res.json() as Json).data).toEqual([{ 'customers.name': 'Bo', 'orders.count': 1 }]);
  });
});
