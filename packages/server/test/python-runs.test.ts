import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, problem, TestApp } from './harness.js';
import { SECURED_MODEL, writeShopSqlite } from './query-fixtures.js';
import { FAST_RUNTIME, runtimeProbe } from './runtime-support.js';
import { WorkspaceFixtures } from './workspace-fixtures.js';

type Json = Record<string, any>;

const SQL = 'SELECT name, count FROM customers GROUP BY 1 ORDER BY 1';
const CODE = 'print("rows:", len(rows))\noutput = {"names": [r["name"] for r in rows], "orders": sum(r["count"] for r in rows)}';

// Each run loads a Python worker: seconds on a busy machine.
describe.each(DIALECTS)('POST /api/v1/embed/dashboard/{publicId}/python-run (reference 3.7) (%s)', { timeout: 180_000 }, (dialect) => {
  let t: TestApp;
  let dataSources: string;
  let deploymentId: number;
  let publicId: string;
  let workbookId: number;
  let reportId: number;
  let failingReportId: number;
  let loopingReportId: number;
  let escapeReportId: number;
  let hostDir: string;
  let snapshots: Map<number, number>;
  let eu: string;
  let us: string;

  async function embedToken(body: Json): Promise<string> {
    const generated = await t.request({ method: 'POST', url: '/api/v1/embed/generate-session', body: { deploymentId, ...body } });
    expect(generated.statusCode, generated.body).toBe(200);
    const exchanged = await t.request({ method: 'POST', url: '/api/v1/embed/session/token', key: null, body: generated.json() });
    expect(exchanged.statusCode, exchanged.body).toBe(200);
    return (exchanged.json() as { token: string }).token;
  }
  const run = (token: string | null, body: Json, id = publicId) =>
    t.request({
      method: 'POST',
      url: `/api/v1/embed/dashboard/${id}/python-run`,
      ...(token === null ? {} : { key: null, headers: { authorization: `Bearer ${token}` } }),
      body,
    });
  const python = async (enabled: boolean) =>
    expect((await t.request({ method: 'PUT', url: '/api/v1/tenant/embed-settings', body: { pythonAnalysisEnabled: enabled } })).statusCode).toBe(200);
  const input = (report = reportId, sqlQuery = SQL) => ({ reportId: report, reportVersionId: snapshots.get(report)!, sqlQuery });

  beforeAll(async () => {
    dataSources = fs.mkdtempSync(path.join(os.tmpdir(), 'mapi-datasources-'));
    writeShopSqlite(dataSources);
    t = await TestApp.create(dialect, {
      runtime: { ...FAST_RUNTIME, dataSourcesDir: dataSources },
      python: { poolSize: 2, concurrency: 2, timeoutMs: 3_000, memoryMb: 128, cacheMs: 60_000 },
    });
    const r = runtimeProbe(t);
    deploymentId = await r.create('python shop');
    const first = await r.running(deploymentId);
    const build = `/build/api/v1/deployments/${deploymentId}`;
    expect(
      (
        await t.request({
          method: 'PUT',
          url: `/api/v1/deployments/${deploymentId}/env-vars`,
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
    await r.replaced(deploymentId, first.name);
    await r.logsWith(deploymentId, '4 cubes and 2 views');
    expect((await t.request({ method: 'POST', url: '/api/v1/user-attributes', body: { name: 'region', type: 'string' } })).statusCode).toBe(201);

    // A published dashboard with two reports that have Python analysis, shared with two embed tenants.
    const ws = new WorkspaceFixtures(t, deploymentId);
    workbookId = await ws.workbook('analysed');
    reportId = await ws.report('Customers');
    failingReportId = await ws.report('Failing');
    loopingReportId = await ws.report('Looping');
    escapeReportId = await ws.report('Escape');
    // The escape reported in the issue, aimed at a directory of this machine holding a secret.
    hostDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mapi-python-host-'));
    fs.writeFileSync(path.join(hostDir, 'secret.key'), 'sekret-key');
    const escape = [
      'import sys, os',
      "M = sys.modules['pyodide_js._api'].public_api._module",
      "M.FS.root.mount.opts.root = '/'",
      'M.FS.root.contents.tmp.node_ops = M.NODEFS.node_ops',
      `output = {'ls': os.listdir(${JSON.stringify(hostDir)}), 'key': open(${JSON.stringify(path.join(hostDir, 'secret.key'))}).read()[:6]}`,
    ].join('\n');
    await t.store.db.updateTable('reports').set({ sql_query: SQL, python_code: escape }).where('id', '=', escapeReportId).execute();
    await t.store.db
      .updateTable('reports')
      .set({ sql_query: SQL, python_code: 'print("started")\nwhile True:\n    pass' })
      .where('id', '=', loopingReportId)
      .execute();
    await t.store.db.updateTable('reports').set({ sql_query: SQL, python_code: CODE }).where('id', '=', reportId).execute();
    await t.store.db.updateTable('reports').set({ sql_query: SQL, python_code: 'raise ValueError("no good")' }).where('id', '=', failingReportId).execute();
    const chart = (id: string, report: number, x: number) => ({ id, type: 'CHART', position: { x, y: 0, w: 6, h: 4 }, config: { reportId: report } });
    const published = await t.request({
      method: 'POST',
      url: `/api/v1/deployments/${deploymentId}/workbooks/${workbookId}/publish`,
      body: {
        config: {
          widgets: [
            chart('customers', reportId, 0),
            chart('failing', failingReportId, 6),
            chart('looping', loopingReportId, 12),
            chart('escape', escapeReportId, 18),
          ],
        },
        allowEmbed: true,
      },
    });
    expect(published.statusCode, published.body).toBe(200);
    publicId = (published.json() as Json).publicId as string;
    snapshots = new Map(((published.json() as Json).reportSnapshots as Json[]).map((s) => [s.reportId as number, s.id as number]));
    // Sessions create their embed tenants; the workbook is shared with them next.
    eu = await embedToken({ externalId: 'anna', embedTenantName: 'tenant-eu', userAttributes: [{ name: 'region', value: 'EU' }] });
    us = await embedToken({ externalId: 'bob', embedTenantName: 'tenant-us', userAttributes: [{ name: 'region', value: 'US' }] });
    for (const embedTenantName of ['tenant-eu', 'tenant-us']) {
      const shared = await t.request({
        method: 'PUT',
        url: `/api/v1/deployments/${deploymentId}/workbooks/${workbookId}/embed-access`,
        body: { embedTenantName, action: 'read' },
      });
      expect(shared.statusCode, shared.body).toBe(200);
    }
    await python(true);
  });
  afterAll(async () => {
    await t?.close();
    if (dataSources) fs.rmSync(dataSources, { recursive: true, force: true });
    if (hostDir) fs.rmSync(hostDir, { recursive: true, force: true });
  });

  it('runs the published code over the rows each embed user may see: two tenants, two answers', async () => {
    // The code changed after publishing: the snapshot's runs, not the report's.
    await t.store.db.updateTable('reports').set({ python_code: 'output = "unpublished"' }).where('id', '=', reportId).execute();
    const [euRun, usRun] = await Promise.all([run(eu, input()), run(us, input())]);
    expect(euRun.statusCode, euRun.body).toBe(200);
    expect(usRun.statusCode, usRun.body).toBe(200);
    expect(euRun.json()).toEqual({
      at: expect.any(String),
      stdout: 'rows: 2\n',
      stderr: '',
      inputRowCount: 2,
      executionError: null,
      outputData: { names: ['Ada', 'Cy'], orders: 2 },
    });
    expect(usRun.json()).toEqual({
      at: expect.any(String),
      stdout: 'rows: 1\n',
      stderr: '',
      inputRowCount: 1,
      executionError: null,
      outputData: { names: ['Bo'], orders: 1 },
    });
    expect(new Date((euRun.json() as Json).at as string).toISOString()).toBe((euRun.json() as Json).at);
    // The caller cannot send code.
    problem(await run(eu, { ...input(), pythonCode: 'output = 1' }), 400, 'VALIDATION_FAILED');
  });

  it('a success is cached per report, code, SQL and viewer; a failure is not', async () => {
    const first = (await run(eu, input())).json() as Json;
    const again = (await run(eu, input())).json() as Json;
    expect(again).toEqual(first);
    // Another SQL is another run.
    const other = await run(eu, input(reportId, "SELECT name, count FROM customers WHERE name = 'Ada' GROUP BY 1"));
    expect(other.json()).toMatchObject({ inputRowCount: 1, outputData: { names: ['Ada'] } });
    expect((other.json() as Json).at).not.toBe(first.at);

    const failed = (await run(eu, input(failingReportId))).json() as Json;
    expect(failed).toMatchObject({ inputRowCount: 2, outputData: null, stdout: '' });
    expect(failed.executionError).toContain('ValueError: no good');
    const failedAgain = (await run(eu, input(failingReportId))).json() as Json;
    expect(failedAgain.executionError).toContain('ValueError: no good');
    expect(failedAgain.at).not.toBe(failed.at);
  });

  it('code that runs past the time limit is stopped and reported in executionError', async () => {
    const res = await run(us, input(loopingReportId));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ inputRowCount: 1, executionError: 'The analysis ran longer than 3 s and was stopped.', outputData: null });
  });

  it('the pyodide_js._api escape through the API (the runtime’s module through sys.modules, the host file system mounted by assignment) reaches nothing of the host', async () => {
    const res = await run(eu, input(escapeReportId));
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json() as Json;
    expect(body).toMatchObject({ outputData: null, stdout: '' });
    expect(body.executionError).toContain("AttributeError: 'NoneType' object has no attribute 'public_api'");
    expect(res.body).not.toContain('sekret');
    expect(res.body).not.toContain('secret.key');
  });

  it('403 while Python analysis is off for the account', async () => {
    await python(false);
    try {
      const body = problem(await run(eu, input()), 403, 'PYTHON_ANALYSIS_DISABLED');
      expect(body.detail).toContain('pythonAnalysisEnabled');
    } finally {
      await python(true);
    }
  });

  it('404 for a dashboard the session cannot see; 403 for a version that is not the dashboard’s or not the report’s', async () => {
    const stranger = await embedToken({ externalId: 'cleo', embedTenantName: 'tenant-other', userAttributes: [{ name: 'region', value: 'EU' }] });
    problem(await run(stranger, input()), 404, 'DASHBOARD_NOT_FOUND');
    problem(await run(eu, input(), 'no-such-dashboard'), 404, 'DASHBOARD_NOT_FOUND');
    problem(await run(eu, { ...input(), reportVersionId: snapshots.get(failingReportId)! }), 403, 'FORBIDDEN');
    problem(await run(eu, { ...input(), reportVersionId: 999_999 }), 403, 'FORBIDDEN');
  });

  it('takes an embed token only: an API key is refused, and no credential is 401', async () => {
    problem(await run(null, input()), 403, 'FORBIDDEN');
    problem(await t.request({ method: 'POST', url: `/api/v1/embed/dashboard/${publicId}/python-run`, key: null, body: input() }), 401, 'UNAUTHENTICATED');
  });

  it('a query the runtime refuses is its 400, and no code runs', async () => {
    problem(await run(eu, input(reportId, 'SELECT nothing FROM nowhere')), 400, 'QUERY_REFUSED');
  });

  // Last: it closes the app.
  it('closing the server (SIGTERM) ends a busy run at once: its request answers 503 UNAVAILABLE with Retry-After, not after the run’s time limit, and no worker is left', async () => {
    const pending = run(us, input(loopingReportId));
    const deadline = Date.now() + 60_000;
    while (t.app.python.busy() === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(t.app.python.busy()).toBe(1);
    await t.app.close();
    const res = await pending;
    problem(res, 503, 'UNAVAILABLE');
    expect(res.headers['retry-after']).toBeDefined();
    expect(res.json()).toMatchObject({ detail: expect.stringContaining('The server is stopping') });
    expect(t.app.python.pids()).toEqual([]);
  });
});
