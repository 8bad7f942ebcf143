/**
 * `npm run bench:render`: a 6-widget dashboard (test/render-fixtures.ts: a text, a KPI, a bar
 * chart, a table, a line over time and a filter, over the shop with row-level security) rendered
 * to PNG and to PDF in this process, each figure beside floors measured in the same run:
 *
 * - data: the dashboard's four report queries alone, as the renderer sends them (concurrently,
 *   as the viewer, through the deployment's runtime), with nothing drawn;
 * - page: data plus the charts (Vega-Lite → SVG) and the page laid out as one SVG;
 * - PNG and PDF end to end (`renderDashboard`), and the conversion of a ready page alone
 *   (resvg-wasm to PNG, pdfkit + svg-to-pdfkit to PDF).
 *
 * The first render of the process is timed on its own (module and WebAssembly start-up), then
 * BENCH_RENDERS (default 20) of each, medians and p90 in ms. SQLite store, process runtime.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { findPublishedInDeployment } from '../src/areas/dashboards/published.js';
import { snapshotQuery, reportIdOf } from '../src/render/widgets.js';
import type { DashboardWidget } from '../src/areas/workspace/content.schemas.js';
import { renderShop } from '../test/render-fixtures.js';

const RENDERS = Number(process.env.BENCH_RENDERS ?? 20);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
};

async function timed(label: string, fn: () => Promise<unknown>): Promise<{ label: string; p50: number; p90: number }> {
  const samples: number[] = [];
  for (let i = 0; i < RENDERS; i++) {
    const started = performance.now();
    await fn();
    samples.push(performance.now() - started);
  }
  return { label, p50: quantile(samples, 0.5), p90: quantile(samples, 0.9) };
}

const shop = await renderShop('sqlite');
try {
  const { renderer, dataApi } = shop.t.app.services;
  const tenant = { id: shop.t.tenantId, slug: 'default' };
  const input = { tenant, deploymentId: shop.deploymentId, workbookId: shop.workbookId, viewer: { userId: shop.eu.userId } };
  const dashboard = (await findPublishedInDeployment(shop.t.store.db, tenant.id, shop.deploymentId, { workbookId: shop.workbookId }))!;
  const widgets = (dashboard.config.widgets ?? []) as DashboardWidget[];
  const queries = widgets.flatMap((w) => {
    const snapshot = dashboard.reportSnapshots.find((s) => s.reportId === reportIdOf(w));
    const query = snapshot && snapshotQuery(snapshot, {});
    return query ? [query] : [];
  });
  const grant = { scopes: null, userId: shop.eu.userId, securityContext: {} };

  let started = performance.now();
  const cold = await renderer.renderDashboard({ ...input, format: 'png' });
  const coldPng = performance.now() - started;
  started = performance.now();
  await renderer.renderDashboard({ ...input, format: 'pdf' });
  const coldPdf = performance.now() - started;

  const page = await renderer.renderPage(input);
  const rows = [
    await timed(`data: ${queries.length} report queries, concurrently`, () =>
      Promise.all(queries.map((q) => dataApi.runAs(tenant, shop.deploymentId, grant, q))),
    ),
    await timed('page: data + charts + layout (SVG)', () => renderer.renderPage(input)),
    await timed('PNG end to end', () => renderer.renderDashboard({ ...input, format: 'png' })),
    await timed('PDF end to end', () => renderer.renderDashboard({ ...input, format: 'pdf' })),
    await timed('SVG → PNG alone (resvg-wasm)', () => renderer.convert(page, 'png')),
    await timed('SVG → PDF alone (pdfkit)', () => renderer.convert(page, 'pdf')),
  ];

  const cpu = execFileSync('sh', ['-c', "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2; nproc"]).toString().trim().split('\n');
  const size = (dir: string) =>
    execFileSync('du', ['-sk', path.join(root, 'node_modules', dir)])
      .toString()
      .split('\t')[0];
  console.log(
    `Dashboard "${page.title}": ${widgets.length} widgets, page ${cold.width}×${cold.height}; ${RENDERS} renders each; Node ${process.version}; ${cpu[0]?.trim()} (${cpu[1]} cores)`,
  );
  console.log(`first render of the process: PNG ${coldPng.toFixed(0)} ms, then PDF ${coldPdf.toFixed(0)} ms`);
  console.log('');
  console.log(`${'stage'.padEnd(46)}${'p50 ms'.padStart(10)}${'p90 ms'.padStart(10)}`);
  for (const row of rows) console.log(`${row.label.padEnd(46)}${row.p50.toFixed(1).padStart(10)}${row.p90.toFixed(1).padStart(10)}`);
  console.log('');
  console.log(
    `installed size of the pipeline (kB): vega ${size('vega')}, vega-lite ${size('vega-lite')}, @resvg/resvg-wasm ${size('@resvg/resvg-wasm')}, pdfkit ${size('pdfkit')}, svg-to-pdfkit ${size('svg-to-pdfkit')}`,
  );
} finally {
  await shop.close();
}
