import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, TestApp, problem } from './harness.js';
import { SHOP_MODEL, writeShopSqlite } from './query-fixtures.js';
import { FAST_RUNTIME, runtimeProbe } from './runtime-support.js';

/*
 * Issue 15, "Queries", through the deployment's data API: the shop model committed to a
 * deployment, its SQLite data source named by DB_TYPE and DB_URL, then /v1/load by POST and by
 * GET ?query=, and /v1/sql, with a REST credential and with environment tokens (`sql-runner` runs queries,
 * `meta` alone does not).
 */

type Json = Record<string, any>;

for (const dialect of DIALECTS) {
  describe(`queries through the data API (${dialect})`, () => {
    let t: TestApp;
    let r: ReturnType<typeof runtimeProbe>;
    let dataSources: string;
    let id: number;
    const base = () => `/deployments/${id}/data-api/v1`;

    beforeAll(async () => {
      dataSources = fs.mkdtempSync(path.join(os.tmpdir(), 'mapi-datasources-'));
      writeShopSqlite(dataSources);
      t = await TestApp.create(dialect, { runtime: { ...FAST_RUNTIME, dataSourcesDir: dataSources } });
      r = runtimeProbe(t);
      id = await r.create('shop');
      const first = await r.running(id);
      const build = `/build/api/v1/deployments/${id}`;
      expect((await t.request({ method: 'PUT', url: `/api/v1/deployments/${id}/env-vars`, body: { env_variables: [{ name: 'DB_TYPE', value: 'sqlite' }, { name: 'DB_URL', value: 'shop.sqlite' }] } })).statusCode).toBe(200);
      expect((await t.request({ method: 'POST', url: `${build}/dev-mode` })).statusCode).toBe(200);
      expect((await t.request({ method: 'PUT', url: `${build}/data-model/files`, body: { files: [{ path: 'model/cubes/shop.yml', content: SHOP_MODEL }] } })).statusCode).toBe(200);
      expect((await t.request({ method: 'POST', url: `${build}/commit`, body: { message: 'The shop', exitDevMode: true } })).statusCode).toBe(200);
      await r.replaced(id, first.name);
      await r.logsWith(id, 'Data source: SQLite, the file DB_URL names in the data-sources directory');
      // The pod that runs the shop model (its build lands after the variables).
      await r.logsWith(id, '8 cubes and 2 views');
    });
    afterAll(async () => {
      await t.close();
      fs.rmSync(dataSources, { recursive: true, force: true });
    });

    const query = { measures: ['orders.count', 'orders.total_amount'], dimensions: ['customers.region'], order: { 'orders.count': 'desc', 'customers.region': 'asc' } };

    it('POST /v1/load answers {query, data, annotation}: rows keyed by member name, the normalised query, titles and types', async () => {
      const res = await t.request({ method: 'POST', url: `${base()}/load`, body: { query } });
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json() as Json;
      expect(body.data).toEqual([
        { 'customers.region': 'EU', 'orders.count': 3, 'orders.total_amount': 180 },
        { 'customers.region': 'US', 'orders.count': 1, 'orders.total_amount': 70 },
        { 'customers.region': null, 'orders.count': 1, 'orders.total_amount': 20 },
      ]);
      expect(body.query).toMatchObject({ measures: query.measures, dimensions: query.dimensions, limit: 10_000, offset: 0, timezone: 'UTC', filters: [], order: [['orders.count', 'desc'], ['customers.region', 'asc']] });
      expect(body.annotation.measures['orders.count']).toEqual({ title: 'Orders Count', shortTitle: 'Count', type: 'count' });
      expect(body.annotation.dimensions['customers.region']).toMatchObject({ shortTitle: 'Region', type: 'string' });
    });

    it('GET /v1/load?query= answers the same; a bad query is a 400 naming what is wrong', async () => {
      const res = await t.request({ url: `${base()}/load?query=${encodeURIComponent(JSON.stringify(query))}` });
      expect(res.statusCode, res.body).toBe(200);
      expect(((res.json() as Json).data as Json[]).map((row) => row['orders.count'])).toEqual([3, 1, 1]);
      const bad = await t.request({ method: 'POST', url: `${base()}/load`, body: { query: { measures: ['orders.nope'] } } });
      expect(bad.statusCode).toBe(400);
      expect((bad.json() as Json).error).toContain('cube orders has no member "nope"');
      expect((await t.request({ url: `${base()}/load` })).statusCode).toBe(400);
    });

    it('POST /v1/sql answers rows keyed by the SELECT’s columns; SQL outside the subset is a 400 naming the clause', async () => {
      const res = await t.request({ method: 'POST', url: `${base()}/sql`, body: { query: 'SELECT status, count FROM orders GROUP BY 1 ORDER BY 2 DESC' } });
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json() as Json;
      expect(body.data[0]).toEqual({ status: 'completed', count: 3 });
      expect((body.data as Json[]).map((row) => Object.keys(row))).toEqual([['status', 'count'], ['status', 'count'], ['status', 'count']]);
      expect(body.annotation.columns.count).toEqual({ member: 'orders.count', kind: 'measure', title: 'Orders Count', shortTitle: 'Count', type: 'count' });
      const join = await t.request({ method: 'POST', url: `${base()}/sql`, body: { query: 'SELECT region, count FROM orders JOIN customers ON orders.customer_id = customers.id GROUP BY 1' } });
      expect(join.statusCode).toBe(400);
      expect((join.json() as Json).error).toBe('JOIN is not supported: query a view that joins the cubes.');
      const view = await t.request({ method: 'POST', url: `${base()}/sql`, body: { query: 'SELECT region, count FROM sales GROUP BY 1 ORDER BY 2 DESC, 1' } });
      expect((view.json() as Json).data).toEqual([{ region: 'EU', count: 3 }, { region: 'US', count: 1 }, { region: null, count: 1 }]);
      expect((await t.request({ method: 'POST', url: `${base()}/sql`, body: { query: { measures: ['orders.count'] } } })).statusCode).toBe(400);
    });

    it('environment tokens: `sql-runner` runs queries, a `meta`-only token gets 403; a viewer’s token carries no sql-runner', async () => {
      const mint = async (scopes: string[], key?: string) =>
        ((await t.request({ method: 'POST', url: `/api/v1/deployments/${id}/environments/production/tokens`, body: { security_context: {}, scopes }, ...(key ? { key } : {}) })).json() as Json).data as Json;
      const runner = await mint(['sql-runner']);
      const ok = await t.request({ method: 'POST', url: `${base()}/load`, key: null, headers: { authorization: runner.token }, body: { query } });
      expect(ok.statusCode, ok.body).toBe(200);
      const sql = await t.request({ method: 'POST', url: `${base()}/sql`, key: null, headers: { authorization: runner.token }, body: { query: 'SELECT count FROM orders' } });
      expect(sql.json(), sql.body).toMatchObject({ data: [{ count: 5 }] });
      const metaOnly = await mint(['meta']);
      problem(await t.request({ method: 'POST', url: `${base()}/load`, key: null, headers: { authorization: `Bearer ${metaOnly.token}` }, body: { query } }), 403, 'FORBIDDEN');
      problem(await t.request({ method: 'POST', url: `${base()}/sql`, key: null, headers: { authorization: `Bearer ${metaOnly.token}` }, body: { query: 'SELECT count FROM orders' } }), 403, 'FORBIDDEN');
      const viewer = await t.user('VIEWER');
      await t.request({ method: 'POST', url: '/api/v1/policies', body: { principal: { type: 'USER', id: viewer.userId }, resource: { type: 'DEPLOYMENT', id }, access: 'VIEW' } });
      const viewerToken = await mint(['sql-runner', 'meta'], viewer.key);
      expect(viewerToken.scopes).toEqual(['meta']);
      problem(await t.request({ method: 'POST', url: `${base()}/load`, key: null, headers: { authorization: viewerToken.token }, body: { query } }), 403, 'FORBIDDEN');
    });
  });
}
