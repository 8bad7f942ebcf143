import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, TestApp, problem } from './harness.js';
import { SECURED_MODEL, SHOP_MODEL, writeShopSqlite } from './query-fixtures.js';
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
        (await t.request({ method: 'PUT', url: `${build}/data-model/files`, body: { files: [{ path: 'model/cubes/shop.yml', content: SHOP_MODEL }] } }))
          .statusCode,
      ).toBe(200);
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

    const query = {
      measures: ['orders.count', 'orders.total_amount'],
      dimensions: ['customers.region'],
      order: { 'orders.count': 'desc', 'customers.region': 'asc' },
    };

    it('POST /v1/load answers {query, data, annotation}: rows keyed by member name, the normalised query, titles and types', async () => {
      const res = await t.request({ method: 'POST', url: `${base()}/load`, body: { query } });
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json() as Json;
      expect(body.data).toEqual([
        { 'customers.region': 'EU', 'orders.count': 3, 'orders.total_amount': 180 },
        { 'customers.region': 'US', 'orders.count': 1, 'orders.total_amount': 70 },
        { 'customers.region': null, 'orders.count': 1, 'orders.total_amount': 20 },
      ]);
      // Cube's normalised query: `rowLimit` beside `limit`, the order as [{id, desc}], no offset when none was given.
      expect(body.query).toEqual({
        measures: query.measures,
        dimensions: query.dimensions,
        timeDimensions: [],
        limit: 10_000,
        rowLimit: 10_000,
        timezone: 'UTC',
        filters: [],
        order: [
          { id: 'orders.count', desc: true },
          { id: 'customers.region', desc: false },
        ],
      });
      // Cube's annotation: the data type, the aggregation being meta's `aggType`.
      expect(body.annotation.measures['orders.count']).toEqual({
        title: 'Orders Count',
        shortTitle: 'Count',
        type: 'number',
        drillMembers: [],
        drillMembersGrouped: { measures: [], dimensions: [] },
      });
      expect(body).toMatchObject({ dataSource: 'default', dbType: 'sqlite', external: false, slowQuery: false });
      expect(Date.parse(body.lastRefreshTime)).toBeGreaterThan(Date.now() - 60_000);
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

    it('a report runs its spec query as the caller (extension: POST …/reports/{id}/run); one without a query is 400 QUERY_REFUSED', async () => {
      const put = async (publicId: string, body: Json) => {
        const res = await t.request({ method: 'PUT', url: `/api/v1/deployments/${id}/reports/by-public-id/${publicId}`, body: { name: publicId, ...body } });
        expect(res.statusCode, res.body).toBeLessThan(300);
        return (res.json() as Json).id as number;
      };
      const report = await put('by-region', { spec: { query } });
      const run = await t.request({ method: 'POST', url: `/api/v1/deployments/${id}/reports/${report}/run` });
      expect(run.statusCode, run.body).toBe(200);
      expect(((run.json() as Json).data as Json[]).map((row) => [row['customers.region'], row['orders.count']])).toEqual([
        ['EU', 3],
        ['US', 1],
        [null, 1],
      ]);
      const empty = await put('no-query', { spec: { chart: 'bar' } });
      expect(problem(await t.request({ method: 'POST', url: `/api/v1/deployments/${id}/reports/${empty}/run` }), 400, 'QUERY_REFUSED').detail).toContain(
        'neither an sqlQuery nor a spec with a query',
      );
      const broken = await put('broken', { spec: { query: { measures: ['orders.nope'] } } });
      expect(problem(await t.request({ method: 'POST', url: `/api/v1/deployments/${id}/reports/${broken}/run` }), 400, 'QUERY_REFUSED').detail).toContain(
        'cube orders has no member "nope"',
      );
    });

    it('POST /v1/sql answers rows keyed by the SELECT’s columns; SQL outside the subset is a 400 naming the clause', async () => {
      const res = await t.request({ method: 'POST', url: `${base()}/sql`, body: { query: 'SELECT status, count FROM orders GROUP BY 1 ORDER BY 2 DESC' } });
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json() as Json;
      expect(body.data[0]).toEqual({ status: 'completed', count: 3 });
      expect((body.data as Json[]).map((row) => Object.keys(row))).toEqual([
        ['status', 'count'],
        ['status', 'count'],
        ['status', 'count'],
      ]);
      expect(body.annotation.columns.count).toEqual({
        member: 'orders.count',
        kind: 'measure',
        title: 'Orders Count',
        shortTitle: 'Count',
        type: 'number',
        drillMembers: [],
        drillMembersGrouped: { measures: [], dimensions: [] },
      });
      const join = await t.request({
        method: 'POST',
        url: `${base()}/sql`,
        body: { query: 'SELECT region, count FROM orders JOIN customers ON orders.customer_id = customers.id GROUP BY 1' },
      });
      expect(join.statusCode).toBe(400);
      expect((join.json() as Json).error).toBe('JOIN is not supported: query a view that joins the cubes.');
      const view = await t.request({ method: 'POST', url: `${base()}/sql`, body: { query: 'SELECT region, count FROM sales GROUP BY 1 ORDER BY 2 DESC, 1' } });
      expect((view.json() as Json).data).toEqual([
        { region: 'EU', count: 3 },
        { region: 'US', count: 1 },
        { region: null, count: 1 },
      ]);
      // A JSON query instead of SQL text is Cube's /v1/sql: the statement it compiles to, nothing run.
      const compiled = await t.request({ method: 'POST', url: `${base()}/sql`, body: { query: { measures: ['orders.count'] } } });
      expect(compiled.statusCode, compiled.body).toBe(200);
      expect((compiled.json() as Json).sql.sql[0]).toMatch(/^SELECT .*count\(/);
    });

    it('environment tokens: `sql-runner` runs queries, a `meta`-only token gets 403; a viewer’s token carries no sql-runner', async () => {
      const mint = async (scopes: string[], key?: string) =>
        (
          (
            await t.request({
              method: 'POST',
              url: `/api/v1/deployments/${id}/environments/production/tokens`,
              body: { security_context: {}, scopes },
              ...(key ? { key } : {}),
            })
          ).json() as Json
        ).data as Json;
      const runner = await mint(['sql-runner']);
      const ok = await t.request({ method: 'POST', url: `${base()}/load`, key: null, headers: { authorization: runner.token }, body: { query } });
      expect(ok.statusCode, ok.body).toBe(200);
      const sql = await t.request({
        method: 'POST',
        url: `${base()}/sql`,
        key: null,
        headers: { authorization: runner.token },
        body: { query: 'SELECT count FROM orders' },
      });
      expect(sql.json(), sql.body).toMatchObject({ data: [{ count: 5 }] });
      const metaOnly = await mint(['meta']);
      problem(
        await t.request({ method: 'POST', url: `${base()}/load`, key: null, headers: { authorization: `Bearer ${metaOnly.token}` }, body: { query } }),
        403,
        'FORBIDDEN',
      );
      problem(
        await t.request({
          method: 'POST',
          url: `${base()}/sql`,
          key: null,
          headers: { authorization: `Bearer ${metaOnly.token}` },
          body: { query: 'SELECT count FROM orders' },
        }),
        403,
        'FORBIDDEN',
      );
      const viewer = await t.user('VIEWER');
      await t.request({
        method: 'POST',
        url: '/api/v1/policies',
        body: { principal: { type: 'USER', id: viewer.userId }, resource: { type: 'DEPLOYMENT', id }, access: 'VIEW' },
      });
      const viewerToken = await mint(['sql-runner', 'meta'], viewer.key);
      expect(viewerToken.scopes).toEqual(['meta']);
      problem(
        await t.request({ method: 'POST', url: `${base()}/load`, key: null, headers: { authorization: viewerToken.token }, body: { query } }),
        403,
        'FORBIDDEN',
      );
    });
  });

  describe(`row-level security through the data API (${dialect})`, () => {
    let t: TestApp;
    let r: ReturnType<typeof runtimeProbe>;
    let dataSources: string;
    let id: number;
    const load = (key: string | null, query: unknown, authorization?: string) =>
      t.request({ method: 'POST', url: `/deployments/${id}/data-api/v1/load`, key, ...(authorization ? { headers: { authorization } } : {}), body: { query } });

    beforeAll(async () => {
      dataSources = fs.mkdtempSync(path.join(os.tmpdir(), 'mapi-datasources-'));
      writeShopSqlite(dataSources);
      t = await TestApp.create(dialect, { runtime: { ...FAST_RUNTIME, dataSourcesDir: dataSources } });
      r = runtimeProbe(t);
      id = await r.create('secured shop');
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
    });
    afterAll(async () => {
      await t.close();
      fs.rmSync(dataSources, { recursive: true, force: true });
    });

    const analyst = async (region: string) => {
      const who = await t.user('EXPLORER');
      expect((await t.request({ method: 'POST', url: `/api/v1/user-attribute-values/${who.userId}`, body: { values: { region } } })).statusCode).toBe(200);
      await t.request({
        method: 'POST',
        url: '/api/v1/policies',
        body: { principal: { type: 'USER', id: who.userId }, resource: { type: 'DEPLOYMENT', id }, access: 'VIEW' },
      });
      return who;
    };

    it('two users with different region attributes run the same query with their own keys and each gets only their rows', async () => {
      const eu = await analyst('EU');
      const us = await analyst('US');
      const query = { measures: ['orders.count'], dimensions: ['customers.name'], order: { 'customers.name': 'asc' } };
      const euRows = await load(null, query, `Bearer ${eu.key}`);
      expect(euRows.statusCode, euRows.body).toBe(200);
      expect((euRows.json() as Json).data).toEqual([
        { 'customers.name': 'Ada', 'orders.count': 2 },
        { 'customers.name': 'Cy', 'orders.count': 1 },
      ]);
      expect(((await load(null, query, `Bearer ${us.key}`)).json() as Json).data).toEqual([{ 'customers.name': 'Bo', 'orders.count': 1 }]);
      // A member the policy excludes: 403 with its name.
      const refused = await load(null, { measures: ['orders.total_amount'] }, `Bearer ${eu.key}`);
      expect(refused.statusCode).toBe(403);
      expect((refused.json() as Json).error).toContain('orders.total_amount');
      // The metadata hides what the caller may not query.
      const meta = (await t.request({ url: `/deployments/${id}/data-api/v1/meta`, key: null, headers: { authorization: `Bearer ${eu.key}` } })).json() as Json;
      const names = (meta.cubes as Json[]).map((c) => c.name);
      expect(names).not.toContain('vault');
      expect((meta.cubes as Json[]).find((c) => c.name === 'orders')!.measures.map((m: Json) => m.name)).toEqual(['orders.count']);
    });

    it('refreshing a placement (reference 3.3) runs the report as the caller, with their row-level access, then records it; a query they may not run records nothing', async () => {
      const eu = await analyst('EU');
      const put = async (publicId: string, query: Json) => {
        const res = await t.request({
          method: 'PUT',
          url: `/api/v1/deployments/${id}/reports/by-public-id/${publicId}`,
          body: { name: publicId, spec: { query } },
        });
        expect(res.statusCode, res.body).toBe(201);
        return res.json() as Json;
      };
      const placements = (report: Json) => report.externalWorkbookPlacements as Json[];
      const counts = await put('refresh-counts', { measures: ['orders.count'], dimensions: ['customers.name'] });
      const amounts = await put('refresh-amounts', { measures: ['orders.total_amount'] });
      const place = (report: Json) =>
        t.request({
          method: 'PUT',
          url: `/api/v1/deployments/${id}/reports/${report.id}/connect-workbook`,
          key: eu.key,
          body: { placementId: 'sheet', externalWorkbookId: 'doc', resultLocation: 'Orders!A1' },
        });
      for (const report of [counts, amounts]) expect((await place(report)).statusCode).toBe(200);
      // The report changes after it was placed: the placement's cells hold the older query.
      const changedQuery = { measures: ['orders.count'], dimensions: ['customers.name'], order: { 'customers.name': 'asc' } };
      const current = (
        await t.request({
          method: 'PUT',
          url: `/api/v1/deployments/${id}/reports/by-public-id/refresh-counts`,
          body: { name: 'refresh-counts', spec: { query: changedQuery } },
        })
      ).json() as Json;
      expect((await t.request({ url: `/api/v1/deployments/${id}/reports/${counts.id}`, key: eu.key })).json()).toMatchObject({
        externalWorkbookPlacements: [{ id: 'sheet', syncStatus: 'CHANGED' }],
      });

      const fingerprint = { v: 1, chunks: [{ from: 0, hash: 'eu-rows' }] };
      const res = await t.request({
        method: 'PUT',
        url: `/api/v1/deployments/${id}/reports/${counts.id}/refresh`,
        key: eu.key,
        body: { placementId: 'sheet', resultChecksum: fingerprint },
      });
      expect(res.statusCode, res.body).toBe(200);
      const refreshed = placements(res.json() as Json)[0]!;
      expect(refreshed).toMatchObject({
        id: 'sheet',
        refreshedByUserId: eu.userId,
        queryChecksum: current.currentQueryChecksum,
        syncStatus: 'UP_TO_DATE',
        resultChecksum: fingerprint,
      });
      expect(Date.parse(refreshed.refreshedAt as string)).toBeGreaterThan(Date.parse(refreshed.placedAt as string) - 1);
      // By document, sheet and anchor as well.
      const byAddress = await t.request({
        method: 'PUT',
        url: `/api/v1/deployments/${id}/reports/${counts.id}/refresh`,
        key: eu.key,
        body: { externalWorkbookId: 'doc', resultLocation: 'Orders!$A$1:B3' },
      });
      expect(byAddress.statusCode, byAddress.body).toBe(200);
      expect(placements(byAddress.json() as Json)[0]).toMatchObject({ id: 'sheet', resultChecksum: null, syncStatus: 'UP_TO_DATE' });

      // orders.total_amount is excluded for everyone outside finance: the analyst's refresh is 403 and records nothing.
      const before = placements((await t.request({ url: `/api/v1/deployments/${id}/reports/${amounts.id}` })).json() as Json);
      const refused = await t.request({
        method: 'PUT',
        url: `/api/v1/deployments/${id}/reports/${amounts.id}/refresh`,
        key: eu.key,
        body: { placementId: 'sheet', resultChecksum: fingerprint },
      });
      expect(refused.statusCode, refused.body).toBe(403);
      expect(refused.body).toContain('orders.total_amount');
      expect(placements((await t.request({ url: `/api/v1/deployments/${id}/reports/${amounts.id}` })).json() as Json)).toEqual(before);
      expect(before[0]).toMatchObject({ refreshedAt: null, resultChecksum: null });
    });

    it('a data-API token carries the context it was minted with; the body cannot set one', async () => {
      const eu = await analyst('EU');
      const mint = async (securityContext: Json) =>
        (
          (
            await t.request({
              method: 'POST',
              url: `/api/v1/deployments/${id}/environments/production/tokens`,
              body: { security_context: securityContext, scopes: ['sql-runner'] },
            })
          ).json() as Json
        ).data as Json;
      const count = async (token: string) => {
        const res = await load(null, { measures: ['orders.count'] }, token);
        expect(res.statusCode, res.body).toBe(200);
        return ((res.json() as Json).data as Json[])[0]!['orders.count'];
      };
      const us = await mint({ region: 'US' });
      expect(us.security_context).toEqual({ region: 'US' });
      // The admin who minted it has no region attribute and is in no group: the "*" policy finds no region, so no rows.
      expect(await count(us.token)).toBe(0);
      // In the finance group, the finance policy reads the token's context: the US orders, and the cancelled ones.
      const group = (await t.request({ method: 'POST', url: '/api/v1/groups', body: { name: 'finance' } })).json() as Json;
      expect((await t.request({ method: 'POST', url: `/api/v1/groups/${group.id}/members`, body: { userIds: [t.admin.userId] } })).statusCode).toBeLessThan(
        300,
      );
      expect(await count(us.token)).toBe(2);
      expect(await count((await mint({ region: 'EU' })).token)).toBe(3);
      // A security context in the request is not the caller's: it is an unknown field of the query.
      const smuggled = await load(null, { measures: ['orders.count'], securityContext: { region: 'US' } }, `Bearer ${eu.key}`);
      expect(smuggled.statusCode).toBe(400);
    });

    it('a change of the caller’s attribute value, of an attribute’s default or of their groups applies to their very next query', async () => {
      // The caller's groups and attributes are kept between requests: each change must reach the next query.
      const who = await analyst('EU');
      const query = { measures: ['orders.count'] };
      const count = async () => {
        const res = await load(null, query, `Bearer ${who.key}`);
        expect(res.statusCode, res.body).toBe(200);
        return ((res.json() as Json).data as Json[])[0]!['orders.count'];
      };
      const setValue = async (region: string | null) =>
        expect((await t.request({ method: 'POST', url: `/api/v1/user-attribute-values/${who.userId}`, body: { values: { region } } })).statusCode).toBe(200);
      const attribute = ((await t.request({ url: '/api/v1/user-attributes' })).json() as Json).items.find((a: Json) => a.name === 'region') as Json;
      const setDefault = async (defaultValue: string | null) =>
        expect((await t.request({ method: 'PUT', url: `/api/v1/user-attributes/${attribute.id}`, body: { defaultValue } })).statusCode).toBe(200);
      expect(await count()).toBe(3);
      expect(await count()).toBe(3);
      await setValue('US');
      expect(await count()).toBe(1);
      // No value of their own: no region, no rows; then the attribute's new default is theirs.
      await setValue(null);
      expect(await count()).toBe(0);
      await setDefault('EU');
      try {
        expect(await count()).toBe(3);
        await setDefault('US');
        expect(await count()).toBe(1);
      } finally {
        await setDefault(null);
      }
      expect(await count()).toBe(0);
      // In the finance group: its policy adds the cancelled orders (their context names no region); out of it again, none.
      const finance = ((await t.request({ url: '/api/v1/groups' })).json() as Json).items?.find((g: Json) => g.name === 'finance') as Json | undefined;
      const group = finance ?? ((await t.request({ method: 'POST', url: '/api/v1/groups', body: { name: 'finance' } })).json() as Json);
      expect((await t.request({ method: 'POST', url: `/api/v1/groups/${group.id}/members`, body: { userIds: [who.userId] } })).statusCode).toBeLessThan(300);
      const cancelled = await count();
      expect(cancelled).toBeGreaterThan(0);
      expect((await t.request({ method: 'DELETE', url: `/api/v1/groups/${group.id}/members/${who.userId}` })).statusCode).toBeLessThan(300);
      expect(await count()).toBe(0);
    });
  });
}
