import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Dialect } from '../src/db/database.js';
import type { Caller } from './harness.js';
import { TestApp } from './harness.js';
import { writeShopSqlite } from './query-fixtures.js';

/**
 * A deployment whose runtime serves the shop with row-level security by region, and a published
 * 6-widget dashboard over it ("Regional sales"): a text, a KPI, a bar chart, a table, a line over
 * time and a filter. Two analysts, EU and US, with full access to the workbook. No test runner
 * needed: the render benchmark builds the same shop.
 */

type Json = Record<string, any>;

/** The runtime timings of the runtime tests (runtime-support.ts, which needs the test runner). */
const FAST_RUNTIME = {
  driver: 'process' as const,
  tickMs: 200,
  leaseMs: 1_000,
  healthIntervalMs: 300,
  healthTimeoutMs: 500,
  backoffBaseMs: 200,
  logFlushMs: 20,
};

export const RENDER_MODEL = `cubes:
  - name: customers
    sql_table: customers
    dimensions:
      - { name: id, sql: id, type: number, primary_key: true, public: true }
      - { name: name, sql: name, type: string }
      - { name: region, sql: region, type: string }
    measures:
      - { name: count, type: count }
    access_policy:
      - group: "*"
        row_level:
          filters:
            - { member: region, operator: equals, values: ["{ userAttributes.region }"] }

  - name: orders
    sql_table: orders
    joins:
      - { name: customers, relationship: many_to_one, sql: "{CUBE}.customer_id = {customers.id}" }
    dimensions:
      - { name: id, sql: id, type: number, primary_key: true, public: true }
      - { name: status, sql: status, type: string }
      - { name: amount, sql: amount, type: number }
      - { name: created_at, sql: created_at, type: time }
      - name: size
        type: string
        case:
          when:
            - { sql: "{CUBE}.amount >= 70", label: large }
          else: { label: small }
    measures:
      - { name: count, type: count }
      - { name: total_amount, sql: amount, type: sum }
    access_policy:
      - group: "*"
        row_level:
          filters:
            - { member: customers.region, operator: equals, values: ["{ userAttributes.region }"] }
`;

export const DASHBOARD_TITLE = 'Regional sales';

export interface RenderShop {
  t: TestApp;
  deploymentId: number;
  workbookId: number;
  dashboardId: number;
  publicId: string;
  eu: Caller;
  us: Caller;
  close(): Promise<void>;
}

export async function renderShop(dialect: Dialect, options: Parameters<typeof TestApp.create>[1] = {}): Promise<RenderShop> {
  const dataSources = fs.mkdtempSync(path.join(os.tmpdir(), 'mapi-datasources-'));
  writeShopSqlite(dataSources);
  const t = await TestApp.create(dialect, { ...options, runtime: { ...FAST_RUNTIME, dataSourcesDir: dataSources } });
  const ok = async (res: { statusCode: number; body: string }) => {
    if (res.statusCode >= 300) throw new Error(`${res.statusCode}: ${res.body}`);
    return JSON.parse(res.body) as Json;
  };
  const pod = async (id: number) =>
    ((await ok(await t.request({ url: `/api/v1/deployments/${id}/pods` }))).items as Json[]).find((p) => p.type === 'production');
  const logs = async (id: number) =>
    ((await ok(await t.request({ url: `/api/v1/deployments/${id}/logs?first=200` }))).items as Json[]).map((l) => l.message as string);
  const deploymentId = (await ok(await t.request({ method: 'POST', url: '/build/api/v1/deployments', body: { name: 'render shop' } }))).id as number;
  const first = await until(async () => {
    const p = await pod(deploymentId);
    return p?.status === 'Running' && p.ready ? p : undefined;
  }, 'the first pod to run');
  const build = `/build/api/v1/deployments/${deploymentId}`;
  await ok(
    await t.request({
      method: 'PUT',
      url: `/api/v1/deployments/${deploymentId}/env-vars`,
      body: {
        env_variables: [
          { name: 'DB_TYPE', value: 'sqlite' },
          { name: 'DB_URL', value: 'shop.sqlite' },
        ],
      },
    }),
  );
  await ok(await t.request({ method: 'POST', url: `${build}/dev-mode` }));
  await ok(await t.request({ method: 'PUT', url: `${build}/data-model/files`, body: { files: [{ path: 'model/cubes/shop.yml', content: RENDER_MODEL }] } }));
  await ok(await t.request({ method: 'POST', url: `${build}/commit`, body: { message: 'The shop', exitDevMode: true } }));
  await until(async () => {
    const p = await pod(deploymentId);
    return p && p.name !== first.name && p.status === 'Running' && p.ready ? p : undefined;
  }, 'the shop’s pod to run');
  // The starter model's cube and view stay beside the shop's two cubes.
  await until(async () => ((await logs(deploymentId)).some((l) => l.includes('3 cubes and 1 view')) ? true : undefined), 'the shop’s build to be served');
  await ok(await t.request({ method: 'POST', url: '/api/v1/user-attributes', body: { name: 'region', type: 'string' } }));

  const base = `/api/v1/deployments/${deploymentId}`;
  const report = async (publicId: string, body: Json) =>
    (await ok(await t.request({ method: 'PUT', url: `${base}/reports/by-public-id/${publicId}`, body: { name: publicId, ...body } }))).id as number;
  const revenue = await report('revenue', { title: 'Revenue', kind: 'kpi', spec: { query: { measures: ['orders.total_amount'] } } });
  const byCustomer = await report('by-customer', {
    title: 'Orders by customer',
    kind: 'vega',
    spec: { query: { measures: ['orders.count'], dimensions: ['customers.name'], order: { 'customers.name': 'asc' } } },
  });
  const byStatus = await report('by-status', {
    title: 'Orders by status',
    kind: 'table',
    spec: { query: { measures: ['orders.count', 'orders.total_amount'], dimensions: ['orders.status'], order: { 'orders.status': 'asc' } } },
  });
  const overTime = await report('over-time', {
    title: 'Orders over time',
    kind: 'vega',
    spec: {
      query: { measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'month' }], order: { 'orders.created_at': 'asc' } },
    },
  });
  const workbookId = (await ok(await t.request({ method: 'PUT', url: `${base}/workbooks/by-slug/regional-sales`, body: { name: 'Regional sales' } })))
    .id as number;
  const widget = (id: string, type: string, position: Json, config: Json) => ({ id, type, position, config });
  const config = {
    title: DASHBOARD_TITLE,
    widgets: [
      widget('intro', 'TEXT', { x: 0, y: 0, w: 12, h: 1 }, { text: 'Orders and revenue of **your** region.' }),
      widget('revenue', 'CHART', { x: 0, y: 1, w: 3, h: 3 }, { reportId: revenue }),
      widget('status-filter', 'FILTER', { x: 0, y: 4, w: 3, h: 2 }, { member: 'orders.status', title: 'Status' }),
      widget('by-customer', 'CHART', { x: 3, y: 1, w: 9, h: 5 }, { reportId: byCustomer }),
      widget('by-status', 'CHART', { x: 0, y: 6, w: 6, h: 4 }, { reportId: byStatus }),
      widget('over-time', 'CHART', { x: 6, y: 6, w: 6, h: 4 }, { reportId: overTime }),
    ],
  };
  const dashboard = await ok(await t.request({ method: 'POST', url: `${base}/workbooks/${workbookId}/publish`, body: { workbookId, config } }));

  const analyst = async (region: string) => {
    const who = await t.user('EXPLORER');
    await ok(await t.request({ method: 'POST', url: `/api/v1/user-attribute-values/${who.userId}`, body: { values: { region } } }));
    await t.grant({ type: 'USER', id: who.userId }, { type: 'WORKBOOK', id: workbookId }, 'MANAGE');
    return who;
  };
  const eu = await analyst('EU');
  const us = await analyst('US');
  return {
    t,
    deploymentId,
    workbookId,
    dashboardId: dashboard.id as number,
    publicId: dashboard.publicId as string,
    eu,
    us,
    async close() {
      await t.close();
      fs.rmSync(dataSources, { recursive: true, force: true });
    },
  };
}

/** Polls `probe` until it answers something, for up to 60 seconds. */
async function until<T>(probe: () => Promise<T | undefined>, what: string): Promise<T> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`Waited 60 s for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
