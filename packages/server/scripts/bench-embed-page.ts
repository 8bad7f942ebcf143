/**
 * `npm run bench:embed-page`: the embedded dashboard page (packages/embed) in Debian's Chromium,
 * against a warm server over the render benchmark's shop (test/render-fixtures.ts: a text, a
 * KPI, a bar chart, a table, a line over time and a filter, with row-level security), beside
 * the floor measured in the same run:
 *
 * - floor: what the page must wait for, made from Node with no browser: the session exchange,
 *   then the dashboard (and the app configuration, at once), then its four report queries at once
 *   through the data API, as the viewer;
 * - page, first widget: from navigation to the first report widget showing data;
 * - page, all widgets: to every report widget showing data (the charts drawn).
 *
 * Each page view is a new tab of one browser profile, so the page's fingerprinted files come from
 * its cache after the first (as for a returning viewer); the first view is timed on its own.
 * BENCH_RUNS (default 10) of each, medians and p90 in ms. CHROMIUM_PATH picks the browser.
 */
import { performance } from 'node:perf_hooks';
import { snapshotQuery } from '../src/render/controls.js';
import { renderShop } from '../test/render-fixtures.js';
import { launchChromium } from '../test/chromium.js';

type Json = Record<string, any>;

const RUNS = Number(process.env.BENCH_RUNS ?? 10);
const REPORT_WIDGETS = ['revenue', 'by-customer', 'by-status', 'over-time'];

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
};

const shop = await renderShop('sqlite');
const browser = await launchChromium();
try {
  const address = await shop.t.app.listen({ port: 0, host: '127.0.0.1' });
  const origin = address;
  const allow = await shop.t.request({ method: 'PATCH', url: `/api/v1/embed/dashboard/${shop.publicId}`, body: { allowEmbed: true } });
  if (allow.statusCode !== 200) throw new Error(allow.body);
  const session = async () => {
    const res = await shop.t.request({
      method: 'POST',
      url: '/api/v1/embed/generate-session',
      body: { deploymentId: shop.deploymentId, internalId: shop.eu.email },
    });
    return (res.json() as { sessionId: string }).sessionId;
  };

  async function floor(): Promise<number> {
    const sessionId = await session();
    const started = performance.now();
    const post = async (path: string, body: unknown, token?: string) =>
      (await fetch(`${origin}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: JSON.stringify(body),
      }).then((r) => r.json())) as Json;
    const { token } = (await post('/api/v1/embed/session/token', { sessionId })) as { token: string };
    const get = (path: string) => fetch(`${origin}${path}`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.json() as Promise<Json>);
    const [dashboard] = await Promise.all([get(`/api/v1/embed/dashboard/${shop.publicId}`), get('/api/v1/app-config')]);
    const queries = (dashboard.reportSnapshots as Json[]).flatMap((s) => {
      const q = snapshotQuery(s, {});
      return q && 'query' in q ? [q.query] : [];
    });
    const answers = await Promise.all(queries.map((query) => post(`/deployments/${shop.deploymentId}/data-api/v1/load`, { query }, token)));
    if (answers.some((a) => !Array.isArray(a.data))) throw new Error(`A query failed: ${JSON.stringify(answers)}`);
    return performance.now() - started;
  }

  const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
  async function view(): Promise<{ first: number; all: number }> {
    const sessionId = await session();
    const page = await context.newPage();
    const started = performance.now();
    await page.goto(`${origin}/embed/dashboard/${shop.publicId}?session=${sessionId}`, { waitUntil: 'commit' });
    await page.waitForSelector('.widget-body[data-state="data"]');
    const first = performance.now() - started;
    await Promise.all(REPORT_WIDGETS.map((id) => page.waitForSelector(`[data-widget-id="${id}"] .widget-body[data-state="data"]`)));
    await Promise.all(['by-customer', 'over-time'].map((id) => page.waitForSelector(`[data-widget-id="${id}"] .chart svg`)));
    const all = performance.now() - started;
    await page.close();
    return { first, all };
  }

  const cold = await view();
  await floor();
  const floors: number[] = [];
  const firsts: number[] = [];
  const alls: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    floors.push(await floor());
    const v = await view();
    firsts.push(v.first);
    alls.push(v.all);
  }
  const row = (label: string, values: number[]) =>
    console.log(`  ${label.padEnd(44)} p50 ${quantile(values, 0.5).toFixed(0).padStart(5)} ms   p90 ${quantile(values, 0.9).toFixed(0).padStart(5)} ms`);
  console.log(`Embedded dashboard page, ${RUNS} views (first view of the browser: first widget ${cold.first.toFixed(0)} ms, all ${cold.all.toFixed(0)} ms)`);
  row('floor: exchange, dashboard, 4 queries (Node)', floors);
  row('page: first widget with data (Chromium)', firsts);
  row('page: all 4 report widgets, charts drawn', alls);
} finally {
  await browser.close();
  await shop.close();
}
