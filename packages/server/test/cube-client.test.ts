import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import cube, { type CubeApi, type Query } from '@cubejs-client/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, TestApp } from './harness.js';
import { CUSTOMERS, ORDERS, writeShopSqlite } from './query-fixtures.js';
import { FAST_RUNTIME, runtimeProbe } from './runtime-support.js';

/*
 * Issue 32, "The REST protocol": the data API of a deployment driven by Cube's own client,
 * `@cubejs-client/core`, pointed at `<deploymentUrl>/data-api/v1` with a data-API token, as a
 * front-end built for Cube would be: load (one query, compared date ranges, total), meta, sql and
 * dryRun, as an unrestricted caller and as one whose rows an access policy narrows by the
 * security context their token carries. Expected answers are computed from the fixture's rows.
 */

type Json = Record<string, any>;

// The shop, with an access policy: analysts see every order, anyone else the orders of the region
// their token's security context names.
const MODEL = `cubes:
  - name: customers
    sql_table: customers
    dimensions:
      - { name: id, sql: id, type: number, primary_key: true }
      - { name: name, sql: name, type: string }
      - { name: region, sql: region, type: string }
    measures:
      - { name: count, type: count }

  - name: orders
    sql_table: orders
    joins:
      - { name: customers, relationship: many_to_one, sql: "{CUBE}.customer_id = {customers.id}" }
    dimensions:
      - { name: id, sql: id, type: number, primary_key: true }
      - { name: status, sql: status, type: string }
      - { name: amount, sql: amount, type: number }
      - { name: created_at, sql: created_at, type: time }
    measures:
      - { name: count, type: count, drill_members: [id, status] }
      - { name: total_amount, sql: amount, type: sum, format: currency }
    access_policy:
      - group: analysts
      - group: "*"
        row_level:
          filters:
            - { member: customers.region, operator: equals, values: ["{ securityContext.region }"] }
`;

interface Order {
  id: number;
  customer: number | null;
  status: string;
  amount: number;
  createdAt: string;
}
const orders: Order[] = ORDERS.map(([id, customer, status, amount, createdAt]) => ({ id, customer, status, amount, createdAt }) as Order);
const regionOf = (customer: number | null) => (CUSTOMERS.find(([id]) => id === customer)?.[2] as string | undefined) ?? null;
const countWhere = (keep: (o: Order) => boolean) => orders.filter(keep).length;

for (const dialect of DIALECTS) {
  describe(`Cube's client against the data API (${dialect})`, () => {
    let t: TestApp;
    let dataSources: string;
    let id: number;
    let origin: string;
    let admin: CubeApi;
    let restricted: CubeApi;
    const apiUrl = () => `${origin}/deployments/${id}/data-api/v1`;

    beforeAll(async () => {
      dataSources = fs.mkdtempSync(path.join(os.tmpdir(), 'mapi-datasources-'));
      writeShopSqlite(dataSources);
      t = await TestApp.create(dialect, { runtime: { ...FAST_RUNTIME, dataSourcesDir: dataSources } });
      const r = runtimeProbe(t);
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
        (await t.request({ method: 'PUT', url: `${build}/data-model/files`, body: { files: [{ path: 'model/cubes/shop.yml', content: MODEL }] } })).statusCode,
      ).toBe(200);
      expect((await t.request({ method: 'POST', url: `${build}/commit`, body: { message: 'The shop', exitDevMode: true } })).statusCode).toBe(200);
      await r.replaced(id, first.name);
      // The shop beside the starter model's cube and view.
      await r.logsWith(id, '3 cubes and 1 view');
      // The admin is an analyst; a developer's token carries the EU region.
      const group = (await t.request({ method: 'POST', url: '/api/v1/groups', body: { name: 'analysts' } })).json() as Json;
      expect((await t.request({ method: 'POST', url: `/api/v1/groups/${group.id}/members`, body: { userIds: [t.admin.userId] } })).statusCode).toBeLessThan(
        300,
      );
      const developer = await t.user('DEVELOPER');
      await t.grant({ type: 'USER', id: developer.userId }, { type: 'DEPLOYMENT', id }, 'EDIT');
      const mint = async (key: string, securityContext: Json) => {
        const res = await t.request({
          method: 'POST',
          url: `/api/v1/deployments/${id}/environments/production/tokens`,
          key,
          body: { security_context: securityContext, scopes: ['meta', 'sql-runner'] },
        });
        expect(res.statusCode, res.body).toBe(200);
        return (res.json() as Json).data.token as string;
      };
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      const address = t.app.server.address() as { port: number };
      origin = `http://127.0.0.1:${address.port}`;
      admin = cube(await mint(t.admin.key, {}), { apiUrl: apiUrl() });
      restricted = cube(await mint(developer.key, { region: 'EU' }), { apiUrl: apiUrl() });
    });
    afterAll(async () => {
      await t?.close();
      fs.rmSync(dataSources, { recursive: true, force: true });
    });

    it('meta(): cubes with Cube’s member shapes: measures typed number with their aggType, primary keys hidden, titles as Cube writes them', async () => {
      const meta = await admin.meta();
      const orders = meta.meta.cubes.find((c) => c.name === 'orders')!;
      expect(orders).toMatchObject({ type: 'cube', title: 'Orders', public: true, isVisible: true });
      const count = orders.measures.find((m) => m.name === 'orders.count')!;
      expect(count).toMatchObject({
        type: 'number',
        aggType: 'count',
        title: 'Orders Count',
        shortTitle: 'Count',
        drillMembers: ['orders.id', 'orders.status'],
        isVisible: true,
      });
      expect(orders.measures.find((m) => m.name === 'orders.total_amount')).toMatchObject({
        type: 'number',
        aggType: 'sum',
        title: 'Orders Total Amount',
        format: 'currency',
      });
      expect(orders.dimensions.map((d) => d.name)).toEqual(['orders.status', 'orders.amount', 'orders.created_at']);
      expect(meta.resolveMember('orders.created_at', 'dimensions')).toMatchObject({ type: 'time', title: 'Orders Created at' });
    });

    it('load(): the client’s multi query answers a ResultSet whose pivots hold the rows; the restricted token sees its region only', async () => {
      const query: Query = { measures: ['orders.count', 'orders.total_amount'], dimensions: ['customers.region'], order: { 'customers.region': 'asc' } };
      const byRegion = (rows: Json[]) =>
        Object.fromEntries(rows.map((row) => [String(row['customers.region']), [Number(row['orders.count']), Number(row['orders.total_amount'])]]));
      const expected = (keep: (o: Order) => boolean) => {
        const out: Record<string, [number, number]> = {};
        for (const o of orders.filter(keep)) {
          const key = String(regionOf(o.customer));
          const [n, sum] = out[key] ?? [0, 0];
          out[key] = [n + 1, sum + o.amount];
        }
        return out;
      };
      const all = await admin.load(query);
      expect(byRegion(all.tablePivot())).toEqual(expected(() => true));
      expect(all.rawData().map((row) => row['customers.region'])).toEqual(['EU', 'US', null]);
      const eu = await restricted.load(query);
      expect(byRegion(eu.tablePivot())).toEqual(expected((o) => regionOf(o.customer) === 'EU'));
      // What the client read: Cube's envelope and result.
      const response = all.serialize().loadResponse as Json;
      expect(response.queryType).toBe('regularQuery');
      expect(response.results[0]).toMatchObject({ dataSource: 'default', dbType: 'sqlite', external: false, slowQuery: false });
      expect(response.results[0].query).toMatchObject({ limit: 10_000, rowLimit: 10_000, timezone: 'UTC', order: [{ id: 'customers.region', desc: false }] });
      expect(response.results[0].annotation.measures['orders.count']).toMatchObject({ type: 'number', drillMembers: ['orders.id', 'orders.status'] });
      expect(response.pivotQuery).toMatchObject({ queryType: 'regularQuery', measures: query.measures });
    });

    it('Cube’s filter operators with values, and/or groups, and time dimensions by granularity, count what the rows hold', async () => {
      const count = async (query: Query) => Number((await admin.load({ measures: ['orders.count'], ...query })).tablePivot()[0]?.['orders.count'] ?? 0);
      const at = (o: Order) => Date.parse(o.createdAt);
      expect(await count({ filters: [{ member: 'orders.status', operator: 'notEquals', values: ['completed'] }] })).toBe(
        countWhere((o) => o.status !== 'completed'),
      );
      expect(await count({ filters: [{ member: 'orders.status', operator: 'equals', values: ['completed', 'cancelled'] }] })).toBe(
        countWhere((o) => o.status === 'completed' || o.status === 'cancelled'),
      );
      expect(await count({ filters: [{ member: 'orders.status', operator: 'contains', values: ['CESS'] }] })).toBe(
        countWhere((o) => o.status.includes('cess')),
      );
      expect(await count({ filters: [{ member: 'orders.status', operator: 'startsWith', values: ['comp', 'canc'] }] })).toBe(
        countWhere((o) => o.status.startsWith('comp') || o.status.startsWith('canc')),
      );
      expect(await count({ filters: [{ member: 'orders.amount', operator: 'gt', values: ['50'] }] })).toBe(countWhere((o) => o.amount > 50));
      expect(await count({ filters: [{ member: 'orders.amount', operator: 'lte', values: ['50'] }] })).toBe(countWhere((o) => o.amount <= 50));
      expect(await count({ filters: [{ member: 'customers.region', operator: 'notSet' }] })).toBe(countWhere((o) => regionOf(o.customer) === null));
      expect(await count({ filters: [{ member: 'customers.region', operator: 'set' }] })).toBe(countWhere((o) => regionOf(o.customer) !== null));
      expect(await count({ filters: [{ member: 'orders.created_at', operator: 'inDateRange', values: ['2026-01-01', '2026-01-31'] }] })).toBe(
        countWhere((o) => o.createdAt.startsWith('2026-01')),
      );
      expect(await count({ filters: [{ member: 'orders.created_at', operator: 'notInDateRange', values: ['2026-01-01', '2026-01-31'] }] })).toBe(
        countWhere((o) => !o.createdAt.startsWith('2026-01')),
      );
      // A date-only value of afterDate is the start of that day (Cube's reading).
      expect(await count({ filters: [{ member: 'orders.created_at', operator: 'afterDate', values: ['2026-01-15'] }] })).toBe(
        countWhere((o) => at(o) > Date.parse('2026-01-15T00:00:00Z')),
      );
      expect(await count({ filters: [{ member: 'orders.created_at', operator: 'beforeDate', values: ['2026-01-15'] }] })).toBe(
        countWhere((o) => at(o) < Date.parse('2026-01-15T00:00:00Z')),
      );
      expect(
        await count({
          filters: [
            {
              or: [
                { member: 'orders.status', operator: 'equals', values: ['cancelled'] },
                {
                  and: [
                    { member: 'orders.amount', operator: 'gte', values: ['70'] },
                    { member: 'customers.region', operator: 'equals', values: ['US'] },
                  ],
                },
              ],
            },
          ],
        }),
      ).toBe(countWhere((o) => o.status === 'cancelled' || (o.amount >= 70 && regionOf(o.customer) === 'US')));
      const months = await admin.load({
        measures: ['orders.count'],
        timeDimensions: [{ dimension: 'orders.created_at', granularity: 'month', dateRange: ['2026-01-01', '2026-02-28'] }],
      });
      // The series the client builds from Cube's time format: one point per month, filled.
      expect(months.chartPivot().map((p) => [p.x, p['orders.count']])).toEqual([
        ['2026-01-01T00:00:00.000', countWhere((o) => o.createdAt.startsWith('2026-01'))],
        ['2026-02-01T00:00:00.000', countWhere((o) => o.createdAt.startsWith('2026-02'))],
      ]);
    });

    it('compareDateRange: one result per range, the client’s pivot series per range; total counts the rows past the limit', async () => {
      const compared = await admin.load({
        measures: ['orders.count'],
        timeDimensions: [
          {
            dimension: 'orders.created_at',
            granularity: 'month',
            compareDateRange: [
              ['2026-01-01', '2026-01-31'],
              ['2026-02-01', '2026-02-28'],
            ],
          },
        ],
      });
      const response = compared.serialize().loadResponse as Json;
      expect(response.queryType).toBe('compareDateRangeQuery');
      expect(response.results.map((r: Json) => r.query.timeDimensions[0].dateRange)).toEqual([
        ['2026-01-01T00:00:00.000', '2026-01-31T23:59:59.999'],
        ['2026-02-01T00:00:00.000', '2026-02-28T23:59:59.999'],
      ]);
      expect(compared.decompose().map((part) => part.tablePivot().map((row) => Number(row['orders.count'])))).toEqual([
        [countWhere((o) => o.createdAt.startsWith('2026-01'))],
        [countWhere((o) => o.createdAt.startsWith('2026-02'))],
      ]);
      expect(compared.series().length).toBe(2);
      const limited = await admin.load({ measures: ['orders.count'], dimensions: ['orders.status'], limit: 1, total: true });
      expect(limited.tablePivot()).toHaveLength(1);
      expect(limited.totalRows()).toBe(new Set(orders.map((o) => o.status)).size);
    });

    it('sql() answers the statement a query compiles to with its parameters; dryRun() the normalised query and the pivot query, nothing run', async () => {
      const sql = await admin.sql({ measures: ['orders.count'], filters: [{ member: 'orders.status', operator: 'equals', values: ['completed'] }] });
      expect(sql.sql()).toMatch(/^SELECT /);
      expect(sql.rawQuery().sql[1]).toContain('completed');
      const dry = await admin.dryRun({ measures: ['orders.count'], dimensions: ['orders.status'] });
      expect(dry.queryType).toBe('regularQuery');
      expect(dry.normalizedQueries[0]).toMatchObject({ measures: ['orders.count'], dimensions: ['orders.status'], limit: 10_000 });
      expect(dry.pivotQuery).toMatchObject({ queryType: 'regularQuery' });
      expect(dry.queryOrder).toEqual([{ 'orders.count': 'desc' }]);
    });

    it('refusals reach the client as Cube’s errors: an unknown member names it, a bad token says why, an array without multi is refused as Cube refuses it', async () => {
      await expect(admin.load({ measures: ['orders.nope'] })).rejects.toThrow(/no member "nope"/);
      await expect(cube('not-a-token', { apiUrl: apiUrl() }).meta()).rejects.toThrow(/token/i);
      const raw = await fetch(
        `${apiUrl()}/load?query=${encodeURIComponent(JSON.stringify([{ measures: ['orders.count'] }, { measures: ['customers.count'] }]))}`,
        { headers: { authorization: (await t.request({ method: 'POST', url: `/api/v1/deployments/${id}/token` })).json<Json>().platformApiToken } },
      );
      expect(raw.status).toBe(400);
      expect(await raw.json()).toEqual({ type: 'UserError', error: "'blendingQuery' query type is not supported by the client.Please update the client." });
    });
  });
}
