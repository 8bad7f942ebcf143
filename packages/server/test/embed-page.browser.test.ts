import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createRequire } from 'node:module';
import type { Browser, Frame, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Masked } from '../src/mail/index.js';
import { startModelProvider, type ModelProvider } from './fixtures/model-provider.js';
import { STORE_INDEPENDENT } from './harness.js';
import { renderShop, type RenderShop } from './render-fixtures.js';
import { launchChromium } from './chromium.js';

/**
 * The embedded dashboard page (packages/embed, served at /embed/dashboard/{publicId}) in a real
 * Chromium (Debian's, /usr/bin/chromium), framed by a customer's page on another origin: the host
 * page is served from 127.0.0.1 on a port of its own, the server from localhost. The host's
 * "backend" generates sessions with the admin's key and answers the page's renewal requests.
 * One browser for the file. A screenshot lands in packages/server/test-results/embed-dashboard.png.
 */

type Json = Record<string, any>;

// Functions run in the page (evaluate, waitForFunction) reach its globals as `(globalThis as any)`:
// the tests' types have no DOM library, and strings are no way out (the page's CSP refuses eval).

const SCREENSHOT = path.resolve(import.meta.dirname, '../test-results/embed-dashboard.png');
const AXE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
/** Short tokens, so that renewal happens within the test: the page renews a tenth of the lifetime before `exp`. */
const TOKEN_LIFETIME_MS = 10_000;

/** Session options per viewer: EU and US analysts (their own region attribute), and a themed EU session. */
type Viewer = 'eu' | 'us' | 'themed' | 'revoked' | 'chat' | 'ann' | 'bob';
/** External users of one embed tenant: the comments routes act as them (reference 8.C). */
const EXTERNAL: Partial<Record<Viewer, Json>> = {
  ann: { externalId: 'ann', embedTenantName: 'acme', email: 'ann@acme.example', userProfile: { displayName: 'Ann' } },
  bob: { externalId: 'bob', embedTenantName: 'acme', email: 'bob@acme.example', userProfile: { displayName: 'Bob' } },
};

describe.each(STORE_INDEPENDENT)('the embedded dashboard page in Chromium (%s)', (dialect) => {
  let shop: RenderShop;
  let provider: ModelProvider;
  let agentId: number;
  let browser: Browser;
  let appOrigin: string;
  let host: http.Server;
  let hostPort: number;
  /** Session ids issued per viewer, in order: revoking needs them. */
  const issued = new Map<Viewer, string[]>();
  const refused = new Set<Viewer>();

  async function generate(viewer: Viewer): Promise<string> {
    const email = viewer === 'us' ? shop.us.email : shop.eu.email;
    const body: Json = { deploymentId: shop.deploymentId, ...(EXTERNAL[viewer] ?? { internalId: email }) };
    if (viewer === 'chat') body.settings = { allowAi: true, showDashboardChat: true };
    if (viewer === 'themed') {
      body.embedTheme = { font: 'DejaVu Serif', primaryColor: 'rgb(200, 0, 100)' };
      body.settings = { locale: 'de-DE', showMemberNames: true };
    }
    const res = await shop.t.request({ method: 'POST', url: '/api/v1/embed/generate-session', body });
    if (res.statusCode !== 200) throw new Error(res.body);
    const { sessionId } = res.json() as { sessionId: string };
    issued.set(viewer, [...(issued.get(viewer) ?? []), sessionId]);
    return sessionId;
  }

  /** The customer's page: an iframe of the dashboard, and the answer to the page's renewal requests through its own backend. */
  function hostPage(iframeSrc: string, viewer: Viewer): string {
    return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Host</title></head><body>
<h1>Customer app</h1>
<iframe id="dashboard" title="Dashboard" src="${iframeSrc}" width="1200" height="900"></iframe>
<script>
window.renewRequests = 0;
const frame = document.getElementById('dashboard');
window.addEventListener('message', async (event) => {
  if (event.origin !== ${JSON.stringify(appOrigin)} || event.source !== frame.contentWindow) return;
  if (!event.data || event.data.type !== 'mapi:session-request') return;
  window.renewRequests += 1;
  const res = await fetch('/session?viewer=${viewer}');
  if (!res.ok) return;
  const { sessionId } = await res.json();
  frame.contentWindow.postMessage({ type: 'mapi:session', sessionId }, ${JSON.stringify(appOrigin)});
});
</script></body></html>`;
  }

  beforeAll(async () => {
    provider = await startModelProvider();
    const aiProvider = { baseUrl: provider.baseUrl, model: 'embed-model', apiKey: new Masked('sk-embed') };
    const [built, launched] = await Promise.all([renderShop(dialect, { embedTokenLifetimeMs: TOKEN_LIFETIME_MS, aiProvider }), launchChromium()]);
    shop = built;
    browser = launched;
    const address = await shop.t.app.listen({ port: 0, host: '127.0.0.1' });
    appOrigin = `http://localhost:${new URL(address).port}`;

    host = http.createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://host');
      const viewer = (url.searchParams.get('viewer') ?? 'eu') as Viewer;
      void (async () => {
        if (url.pathname === '/session') {
          if (refused.has(viewer)) return res.writeHead(403).end();
          const sessionId = await generate(viewer);
          return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ sessionId }));
        }
        if (url.pathname === '/host') {
          const query = new URLSearchParams({ session: await generate(viewer) });
          for (const name of ['locale', 'timezone', 'agentId']) if (url.searchParams.has(name)) query.set(name, url.searchParams.get(name)!);
          const src = `${appOrigin}/embed/dashboard/${url.searchParams.get('board') ?? shop.publicId}?${query}`;
          return res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(hostPage(src, viewer));
        }
        res.writeHead(404).end();
      })().catch((error: unknown) => res.writeHead(500).end(String(error)));
    });
    await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
    hostPort = (host.address() as AddressInfo).port;

    // The customer's site may frame the page; signed embedding is on for the dashboard.
    const settings = await shop.t.request({ method: 'PUT', url: '/api/v1/tenant/embed-settings', body: { allowedOrigins: [`http://127.0.0.1:${hostPort}`] } });
    expect(settings.statusCode, settings.body).toBe(200);
    const allow = await shop.t.request({ method: 'PATCH', url: `/api/v1/embed/dashboard/${shop.publicId}`, body: { allowEmbed: true } });
    expect(allow.statusCode, allow.body).toBe(200);
    // An agent for the chat entry, answering through the stand-in model provider.
    expect((await shop.t.request({ method: 'PUT', url: '/api/v1/ai/settings', body: { enabled: true } })).statusCode).toBe(200);
    const agent = await shop.t.request({ method: 'POST', url: `/api/v1/deployments/${shop.deploymentId}/agents`, body: { name: 'Shop analyst' } });
    expect(agent.statusCode, agent.body).toBe(200);
    agentId = (agent.json() as Json).id as number;
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    // A setup that failed early leaves no host page server; waiting on it would hide the failure behind a hook timeout.
    if (host) await new Promise((resolve) => host.close(resolve));
    await shop?.close();
    await provider?.close();
  });

  /** Opens the host page for a viewer; answers the page and its frame once the dashboard's title shows. */
  async function open(viewer: Viewer, params = ''): Promise<{ page: Page; frame: Frame; violations: string[] }> {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    const violations: string[] = [];
    page.on('console', (message) => {
      if (message.text().includes('Content Security Policy')) violations.push(message.text());
    });
    await page.goto(`http://127.0.0.1:${hostPort}/host?viewer=${viewer}${params}`);
    const handle = await page.waitForSelector('iframe#dashboard');
    const frame = (await handle.contentFrame())!;
    await frame.waitForSelector('h1');
    return { page, frame, violations };
  }

  const cell = (frame: Frame, id: string) => frame.locator(`[data-widget-id="${id}"]`);
  const loaded = (frame: Frame, id: string) => frame.waitForSelector(`[data-widget-id="${id}"] .widget-body[data-state="data"]`);

  it('serves the page with its policy: no inline script, framed only by the allowed origins; assets immutable', async () => {
    const res = await fetch(`${appOrigin}/embed/dashboard/${shop.publicId}?session=0123`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-cache');
    const policy = res.headers.get('content-security-policy')!;
    expect(policy).toContain("default-src 'self'");
    expect(policy).toContain("script-src 'self'");
    expect(policy).not.toContain('unsafe');
    expect(policy).toContain(`frame-ancestors http://127.0.0.1:${hostPort}`);
    const html = await res.text();
    const script = /src="(\/embed\/assets\/[^"]+\.js)"/.exec(html)![1]!;
    const asset = await fetch(`${appOrigin}${script}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect((await fetch(`${appOrigin}/embed/assets/nothing-here.js`)).status).toBe(404);
  });

  it('a viewer sees the dashboard laid out with their own rows; the session id leaves the URL; no CSP violation; a screenshot is written', async () => {
    const { page, frame, violations } = await open('eu', '&locale=en-US&timezone=Europe/Berlin');
    expect(await frame.locator('h1').textContent()).toBe('Regional sales');
    expect(frame.url()).not.toContain('session=');
    expect(frame.url()).toContain('locale=en-US');
    await Promise.all(['revenue', 'by-customer', 'by-status', 'over-time'].map((id) => loaded(frame, id)));
    expect(await cell(frame, 'revenue').locator('.kpi-value').textContent()).toBe('180');
    // The chart is drawn (SVG by Vega) and labelled, with its rows as a table beside it.
    await frame.waitForSelector('[data-widget-id="by-customer"] .chart svg');
    expect(await cell(frame, 'by-customer').locator('.chart-frame').getAttribute('aria-label')).toBe('Chart: Orders by customer');
    expect(await cell(frame, 'by-customer').locator('table td').allTextContents()).toEqual(['Ada', '2', 'Cy', '1']);
    expect(await cell(frame, 'intro').locator('strong').textContent()).toBe('your');
    // Grid positions from the config.
    expect(await cell(frame, 'by-customer').evaluate((e) => (globalThis as any).getComputedStyle(e).gridColumnStart)).toBe('4');
    fs.mkdirSync(path.dirname(SCREENSHOT), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    expect(violations).toEqual([]);
    await page.close();
  });

  it('two viewers of the same dashboard see different numbers', async () => {
    const [eu, us] = await Promise.all([open('eu'), open('us')]);
    await Promise.all([loaded(eu.frame, 'revenue'), loaded(us.frame, 'revenue'), loaded(eu.frame, 'by-customer'), loaded(us.frame, 'by-customer')]);
    expect(await cell(eu.frame, 'revenue').locator('.kpi-value').textContent()).toBe('180');
    expect(await cell(us.frame, 'revenue').locator('.kpi-value').textContent()).toBe('70');
    expect(await cell(us.frame, 'by-customer').locator('table td').allTextContents()).toEqual(['Bo', '1']);
    await Promise.all([eu.page.close(), us.page.close()]);
  });

  it('a filter re-queries its widgets', async () => {
    const { page, frame } = await open('eu');
    await loaded(frame, 'by-status');
    expect(await cell(frame, 'by-status').locator('tbody tr').count()).toBe(3);
    const select = cell(frame, 'status-filter').locator('select');
    await frame.waitForSelector('[data-widget-id="status-filter"] select:not([disabled]) option[value="completed"]', { state: 'attached' });
    await select.selectOption('completed');
    await frame.waitForFunction(() => (globalThis as any).document.querySelectorAll('[data-widget-id="by-status"] tbody tr').length === 1);
    expect(await cell(frame, 'by-status').locator('tbody td').first().textContent()).toBe('completed');
    expect(await cell(frame, 'revenue').locator('.kpi-value').textContent()).toBe('100');
    await page.close();
  });

  it('renews the token through the host page before it expires, and keeps showing data', async () => {
    const { page, frame } = await open('eu');
    await loaded(frame, 'revenue');
    expect(await frame.evaluate(() => (globalThis as any).document.body.dataset.renewals)).toBe('0');
    // The page asks the host for a new session id before the first token lapses, and exchanges it.
    await frame.waitForFunction(() => (globalThis as any).document.body.dataset.renewals === '1', undefined, { timeout: TOKEN_LIFETIME_MS * 2 });
    expect(await page.evaluate(() => (globalThis as any).renewRequests)).toBeGreaterThanOrEqual(1);
    // Past the first token's lifetime, a control change queries with the renewed one.
    const select = cell(frame, 'status-filter').locator('select');
    await frame.waitForSelector('[data-widget-id="status-filter"] select:not([disabled])');
    await select.selectOption('cancelled');
    await frame.waitForFunction(() => (globalThis as any).document.querySelector('[data-widget-id="revenue"] .kpi-value')?.textContent === '30');
    expect(await frame.evaluate(() => (globalThis as any).document.body.dataset.session)).toBe('open');
    expect(await frame.locator('.status-ended').count()).toBe(0);
    await page.close();
  });

  it('a revoked session shows that it has ended and stops querying', async () => {
    const { page, frame } = await open('revoked');
    await loaded(frame, 'revenue');
    refused.add('revoked');
    for (const sessionId of issued.get('revoked') ?? []) {
      const res = await shop.t.request({ method: 'POST', url: '/api/v1/embed/session/revoke', body: { sessionId } });
      expect(res.statusCode).toBe(204);
    }
    await frame.waitForSelector('[data-widget-id="status-filter"] select:not([disabled])');
    const answered: number[] = [];
    page.on('response', (response) => {
      if (response.url().includes('/data-api/')) answered.push(response.status());
    });
    await cell(frame, 'status-filter').locator('select').selectOption('completed');
    await frame.waitForSelector('.status-ended');
    expect(await frame.locator('.status-ended').textContent()).toBe('This session has ended');
    expect(await frame.evaluate(() => (globalThis as any).document.body.dataset.session)).toBe('ended');
    // The re-query of the report widgets was refused, and nothing was retried: the widgets are gone.
    expect(answered.every((status) => status === 401)).toBe(true);
    expect(answered.length).toBeLessThanOrEqual(4);
    expect(await frame.locator('[data-widget-id]').count()).toBe(0);
    await page.close();
  });

  it('applies the session’s theme (colour, font), locale and member names', async () => {
    const { page, frame } = await open('themed');
    await loaded(frame, 'by-status');
    const h1 = frame.locator('h1');
    expect(await h1.evaluate((e) => (globalThis as any).getComputedStyle(e).color)).toBe('rgb(200, 0, 100)');
    expect(await h1.evaluate((e) => (globalThis as any).getComputedStyle(e).fontFamily)).toContain('DejaVu Serif');
    expect(await frame.evaluate(() => (globalThis as any).document.documentElement.lang)).toBe('de-DE');
    expect(await cell(frame, 'by-status').locator('th').allTextContents()).toEqual(['orders.status', 'orders.count', 'orders.total_amount']);
    await page.close();
  });

  it('axe-core finds no serious or critical violation; the controls are reachable by keyboard', async () => {
    const { page, frame } = await open('eu');
    await Promise.all(['revenue', 'by-customer', 'by-status', 'over-time'].map((id) => loaded(frame, id)));
    await frame.waitForSelector('[data-widget-id="by-customer"] .chart svg');
    await frame.evaluate(AXE);
    const results = (await frame.evaluate(() => (globalThis as any).axe.run())) as {
      violations: Array<{ id: string; impact: string; nodes: unknown[] }>;
    };
    const serious = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    expect(serious.map((v) => `${v.id} (${v.impact})`)).toEqual([]);
    // Tab from the frame's start reaches the filter.
    await frame.locator('body').focus();
    const reached: string[] = [];
    for (let i = 0; i < 12 && !reached.includes('SELECT'); i++) {
      await page.keyboard.press('Tab');
      reached.push(String(await frame.evaluate(() => (globalThis as any).document.activeElement?.tagName ?? '')));
    }
    expect(reached).toContain('SELECT');
    await page.close();
  });

  it('containers and tabs hold their widgets, a time grain re-queries, dividers and spacers take their cells, and text is sanitised', async () => {
    const base = `/api/v1/deployments/${shop.deploymentId}`;
    const reportId = async (publicId: string, body: Json) => {
      const res = await shop.t.request({ method: 'PUT', url: `${base}/reports/by-public-id/${publicId}`, body: { name: publicId, ...body } });
      expect(res.statusCode, res.body).toBeLessThan(300);
      return (res.json() as Json).id as number;
    };
    const revenue = await reportId('revenue', { title: 'Revenue', kind: 'kpi', spec: { query: { measures: ['orders.total_amount'] } } });
    const overTime = await reportId('over-time', {
      title: 'Orders over time',
      kind: 'vega',
      spec: {
        query: {
          measures: ['orders.count'],
          timeDimensions: [{ dimension: 'orders.created_at', granularity: 'month' }],
          order: { 'orders.created_at': 'asc' },
        },
      },
    });
    // Hostile specs are held to the server's rules in the browser too.
    const counted = { measures: ['orders.count'] };
    const unbounded = await reportId('unbounded', {
      title: 'Unbounded',
      kind: 'vega',
      spec: {
        query: counted,
        vegaLite: {
          mark: 'text',
          transform: [{ calculate: 'length(sequence(0, 1e9))', as: 'n' }],
          encoding: { text: { field: 'n', type: 'quantitative', format: 'd' } },
        },
      },
    });
    const elsewhere = await reportId('elsewhere', {
      title: 'Elsewhere',
      kind: 'vega',
      spec: { query: counted, vegaLite: { layer: [{ data: { url: 'https://example.com/rows.json' }, mark: 'point' }] } },
    });
    const workbook = await shop.t.request({ method: 'PUT', url: `${base}/workbooks/by-slug/layout-board`, body: { name: 'Layout board' } });
    const workbookId = (workbook.json() as Json).id as number;
    const w = (id: string, type: string, position: Json, config: Json = {}) => ({ id, type, position, config });
    const config = {
      title: 'Layout board',
      widgets: [
        w('grain', 'TIME_GRAIN', { x: 0, y: 0, w: 4, h: 2 }, { member: 'orders.created_at', title: 'Grain' }),
        w('gap', 'SPACER', { x: 4, y: 0, w: 8, h: 2 }),
        w('line', 'DIVIDER', { x: 0, y: 2, w: 12, h: 1 }),
        w('over-time', 'CHART', { x: 0, y: 3, w: 6, h: 5 }, { reportId: overTime }),
        w(
          'tabs',
          'CONTAINER',
          { x: 6, y: 3, w: 6, h: 5 },
          {
            layout: 'tabs',
            title: 'More',
            tabs: [
              { title: 'Revenue', widgets: ['t-revenue'] },
              { title: 'Notes', widgets: ['t-notes'] },
            ],
          },
        ),
        w('t-revenue', 'CHART', { x: 0, y: 0, w: 12, h: 2 }, { reportId: revenue }),
        w('unbounded', 'CHART', { x: 0, y: 8, w: 6, h: 3 }, { reportId: unbounded }),
        w('elsewhere', 'CHART', { x: 6, y: 8, w: 6, h: 3 }, { reportId: elsewhere }),
        w(
          't-notes',
          'TEXT',
          { x: 0, y: 0, w: 12, h: 2 },
          {
            text: 'See [the guide](https://example.com/guide). [Or this](javascript:window.pwned=3)<script>window.pwned = 1</script><img src="x" onerror="window.pwned = 2">',
          },
        ),
      ],
    };
    const published = await shop.t.request({ method: 'POST', url: `${base}/workbooks/${workbookId}/publish`, body: { workbookId, config, allowEmbed: true } });
    expect(published.statusCode, published.body).toBe(200);
    await shop.t.grant({ type: 'USER', id: shop.eu.userId }, { type: 'WORKBOOK', id: workbookId }, 'VIEW');

    const board = (published.json() as Json).publicId as string;
    const { page, frame, violations } = await open('eu', `&board=${board}&timezone=UTC`);
    await loaded(frame, 'over-time');
    await loaded(frame, 't-revenue');
    // Months: January and February.
    expect(await cell(frame, 'over-time').locator('tbody tr').count()).toBe(2);
    await cell(frame, 'grain').locator('select').selectOption('day');
    await frame.waitForFunction(() => (globalThis as any).document.querySelectorAll('[data-widget-id="over-time"] tbody tr').length === 3);
    // The container holds its tabs' widgets, one tab at a time, not the page's grid.
    expect(await frame.locator('.dashboard > .grid > [data-widget-id="t-revenue"]').count()).toBe(0);
    expect(await cell(frame, 'tabs').locator('[role="tab"]').allTextContents()).toEqual(['Revenue', 'Notes']);
    expect(await cell(frame, 't-revenue').isVisible()).toBe(true);
    expect(await cell(frame, 't-notes').isVisible()).toBe(false);
    await cell(frame, 'tabs').getByRole('tab', { name: 'Notes' }).click();
    expect(await cell(frame, 't-notes').isVisible()).toBe(true);
    expect(await cell(frame, 't-revenue').isVisible()).toBe(false);
    // Sanitised: the link stays (opening outside the frame), the script and the handler do not.
    expect(await cell(frame, 't-notes').locator('a').first().getAttribute('target')).toBe('_blank');
    expect(await cell(frame, 't-notes').locator('script').count()).toBe(0);
    expect(await cell(frame, 't-notes').locator('img').count()).toBe(0);
    expect(await cell(frame, 't-notes').locator('a[href]').count()).toBe(1);
    expect(await cell(frame, 't-notes').locator('a[href^="javascript"]').count()).toBe(0);
    expect(await frame.evaluate(() => (globalThis as any).pwned)).toBeUndefined();
    expect(await cell(frame, 'line').locator('hr').count()).toBe(1);
    expect(await cell(frame, 'gap').getAttribute('aria-hidden')).toBe('true');
    await frame.waitForSelector('[data-widget-id="unbounded"] .chart svg');
    expect(await cell(frame, 'unbounded').locator('svg').innerHTML()).not.toContain('1000000000');
    await frame.waitForSelector('[data-widget-id="elsewhere"] .widget-body[data-state="error"]');
    expect(await cell(frame, 'elsewhere').textContent()).toContain('Chart not drawn: A chart draws its report’s rows');
    expect(violations).toEqual([]);
    await page.close();
    // In Berlin, the order of 23:30 UTC on 1 January falls on the 2nd: two days, not three.
    const berlin = await open('eu', `&board=${board}&timezone=Europe/Berlin`);
    await loaded(berlin.frame, 'over-time');
    await cell(berlin.frame, 'grain').locator('select').selectOption('day');
    await berlin.frame.waitForFunction(
      () => (globalThis as any).document.querySelector('[data-widget-id="over-time"] tbody td')?.textContent === 'Jan 2, 2026',
    );
    expect(await cell(berlin.frame, 'over-time').locator('tbody tr').count()).toBe(2);
    await berlin.page.close();
  });

  it('the chat entry shows where the session allows AI and dashboard chat, and streams the agent’s answer', async () => {
    const plain = await open('eu', `&agentId=${agentId}`);
    expect(await plain.frame.locator('[data-entry="chat"]').count()).toBe(0);
    await plain.page.close();
    const { page, frame } = await open('chat', `&agentId=${agentId}`);
    provider.answer({ text: 'Orders come from Ada and Cy.' });
    await frame.locator('[data-entry="chat"]').click();
    await frame.getByLabel('Ask about this dashboard').fill('Who ordered?');
    await frame.getByRole('button', { name: 'Ask', exact: true }).click();
    await frame.waitForSelector('.chat-answer:text("Orders come from Ada and Cy.")');
    expect(await frame.locator('.chat-question').textContent()).toBe('Who ordered?');
    await page.close();
  });

  it('the comments panel: a thread started, answered by another viewer of the embed tenant, resolved, shown again, edited; hidden with the switch off', async () => {
    const setting = async (value: boolean | null) => {
      const res = await shop.t.request({ method: 'PUT', url: '/api/v1/tenant/embed-settings', body: { enableDashboardComments: value } });
      expect(res.statusCode, res.body).toBe(200);
    };
    // The stored state, read as Ann through the API with a token of her own.
    const generated = await shop.t.request({
      method: 'POST',
      url: '/api/v1/embed/generate-session',
      body: { deploymentId: shop.deploymentId, ...EXTERNAL.ann },
    });
    const exchanged = await shop.t.request({ method: 'POST', url: '/api/v1/embed/session/token', key: null, body: generated.json() });
    expect(exchanged.statusCode, exchanged.body).toBe(200);
    const token = (exchanged.json() as { token: string }).token;
    // Ann's session made the embed tenant, and Bob is one of its users before he opens the page; the dashboard is shared with it.
    await generate('bob');
    const shared = await shop.t.request({
      method: 'PUT',
      url: `/api/v1/deployments/${shop.deploymentId}/workbooks/${shop.workbookId}/embed-access`,
      body: { embedTenantName: 'acme', action: 'read' },
    });
    expect(shared.statusCode, shared.body).toBe(200);
    const stored = async (query = '') => {
      const res = await shop.t.request({
        method: 'GET',
        url: `/api/v1/embed/dashboard/${shop.publicId}/comments${query}`,
        key: null,
        headers: { authorization: `Bearer ${token}` },
      });
      expect(res.statusCode, res.body).toBe(200);
      return (res.json() as Json).items as Json[];
    };
    const thread = (frame: Frame) => frame.locator('.comment-thread').first();

    try {
      await setting(true);
      const ann = await open('ann', '&locale=de-DE&timezone=Asia/Tokyo');
      await ann.frame.locator('[data-entry="comments"]').click();
      await ann.frame.waitForSelector('.comments-status:text("No open threads.")');
      // The mention helper offers the tenant's users for what follows '@'.
      const field = ann.frame.getByLabel('New comment');
      await field.fill('Revenue looks low, ');
      await field.pressSequentially('@b');
      await ann.frame.locator('.mention-suggestions button:text("Bob (@bob)")').click();
      expect(await field.inputValue()).toBe('Revenue looks low, @bob ');
      await ann.frame.getByRole('button', { name: 'Comment', exact: true }).click();
      await ann.frame.waitForSelector('.comment-thread .comment-body:text("Revenue looks low, @bob")');
      expect(await field.inputValue()).toBe('');
      let items = await stored();
      expect(items).toHaveLength(1);
      expect(items[0]!.root).toMatchObject({ body: 'Revenue looks low, @bob', isOwn: true, removedAt: null });
      const rootId = (items[0]!.root as Json).id as number;
      // Dates in the page's locale and time zone.
      const created = (items[0]!.root as Json).createdAt as string;
      const time = thread(ann.frame).locator('.comment-meta time').first();
      expect(await time.getAttribute('datetime')).toBe(created);
      expect(await time.textContent()).toBe(
        new Intl.DateTimeFormat('de-DE', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'Asia/Tokyo' }).format(new Date(created)),
      );
      expect(await thread(ann.frame).locator('.comment-author').textContent()).toBe('You');

      // Bob, of the same embed tenant, sees it and replies; he may not resolve Ann's thread.
      const bob = await open('bob');
      await bob.frame.locator('[data-entry="comments"]').click();
      await bob.frame.waitForSelector(`[data-thread-id="${rootId}"] .comment-body:text("Revenue looks low, @bob")`);
      expect(await thread(bob.frame).locator('.comment-author').first().textContent()).toBe('Ann');
      expect(await thread(bob.frame).locator('[data-action="resolve"]').count()).toBe(0);
      expect(await thread(bob.frame).locator('.comment > .comment-actions').count()).toBe(0);
      await thread(bob.frame).getByLabel('Reply').fill('Two orders were cancelled.');
      await thread(bob.frame).getByRole('button', { name: 'Reply', exact: true }).click();
      await bob.frame.waitForSelector('.comment-replies .comment-body:text("Two orders were cancelled.")');
      items = await stored();
      expect((items[0]!.replies as Json[]).map((r) => [r.body, r.isOwn])).toEqual([['Two orders were cancelled.', false]]);

      // A second reply, removed by its author in two steps: it stays listed as removed.
      await thread(bob.frame).getByLabel('Reply').fill('Or three?');
      await thread(bob.frame).getByRole('button', { name: 'Reply', exact: true }).click();
      const typo = bob.frame.locator('.comment-replies .comment').filter({ hasText: 'Or three?' });
      await typo.locator('[data-action="delete"]').click();
      await typo.getByRole('button', { name: 'Confirm delete' }).click();
      await bob.frame.waitForSelector('.comment-replies .comment-removed:text("Comment removed")');
      items = await stored();
      expect((items[0]!.replies as Json[]).map((r) => [r.body, r.removedAt === null])).toEqual([
        ['Two orders were cancelled.', true],
        ['', false],
      ]);

      // Ann reopens the panel (it reads the threads again), sees the reply, and resolves her thread.
      const entry = ann.frame.locator('[data-entry="comments"]');
      await entry.click();
      await entry.click();
      await ann.frame.waitForSelector('.comment-replies .comment-body:text("Two orders were cancelled.")');
      expect(await ann.frame.locator('.comment-replies .comment-author').allTextContents()).toEqual(['Bob', 'Bob']);
      expect(await ann.frame.locator('.comment-replies .comment-removed').count()).toBe(1);
      await thread(ann.frame).locator('[data-action="resolve"]').click();
      await ann.frame.waitForSelector('.comments-status:text("No open threads.")');
      expect(await ann.frame.locator('.comment-thread').count()).toBe(0);
      expect(await stored()).toEqual([]);
      const resolved = await stored('?resolvedOnly=true');
      expect(resolved).toHaveLength(1);
      expect(resolved[0]!.resolvedAt).not.toBeNull();
      // Shown again with "Show resolved", marked so, and reopenable by its starter.
      await ann.frame.getByLabel('Show resolved').check();
      await ann.frame.waitForSelector(`.comment-thread-resolved[data-thread-id="${rootId}"]`);
      expect(await thread(ann.frame).locator('[data-action="reopen"]').count()).toBe(1);

      // Ann edits her comment.
      await thread(ann.frame).locator('.comment').first().locator('[data-action="edit"]').click();
      const editor = ann.frame.getByLabel('Edit comment');
      expect(await editor.inputValue()).toBe('Revenue looks low, @bob');
      await editor.fill('Revenue looks low in January, @bob');
      await ann.frame.getByRole('button', { name: 'Save', exact: true }).click();
      await ann.frame.waitForSelector('.comment-body:text("Revenue looks low in January, @bob")');
      expect(await thread(ann.frame).locator('.comment-meta').first().textContent()).toContain('edited');
      const edited = (await stored('?includeResolved=true'))[0]!.root as Json;
      expect(edited.body).toBe('Revenue looks low in January, @bob');
      expect(edited.editedAt).not.toBeNull();

      // The server's refusal shows in the panel, and the text stays in the field.
      const tooLong = 'x'.repeat(10_001);
      // The field's maxlength holds typing back; past it (a pasted script, an old browser), the server refuses.
      await field.evaluate((e) => (e as any).removeAttribute('maxlength'));
      await field.fill(tooLong);
      await ann.frame.getByRole('button', { name: 'Comment', exact: true }).click();
      await ann.frame.waitForSelector('.comments-error[role="alert"]:not(:empty)');
      expect(await field.inputValue()).toBe(tooLong);
      expect(await stored('?includeResolved=true')).toHaveLength(1);
      await field.fill('');

      // The open panel passes axe-core, and its field is reachable by keyboard.
      await ann.frame.evaluate(AXE);
      const results = (await ann.frame.evaluate(() => (globalThis as any).axe.run('.panel'))) as {
        violations: Array<{ id: string; impact: string }>;
      };
      expect(results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id)).toEqual([]);
      await entry.focus();
      let reached = '';
      for (let i = 0; i < 30 && reached !== 'TEXTAREA'; i++) {
        await ann.page.keyboard.press('Tab');
        reached = String(await ann.frame.evaluate(() => (globalThis as any).document.activeElement?.tagName ?? ''));
      }
      expect(reached).toBe('TEXTAREA');
      expect(ann.violations).toEqual([]);
      expect(bob.violations).toEqual([]);
      await Promise.all([ann.page.close(), bob.page.close()]);
    } finally {
      await setting(false);
    }
    // With the switch off, the page offers no comments.
    const off = await open('ann');
    expect(await off.frame.locator('[data-entry="comments"]').count()).toBe(0);
    await off.page.close();
  });

  it('frame-ancestors keeps the page out of a site that is not allowed', async () => {
    const page = await browser.newPage();
    const refusals: string[] = [];
    page.on('console', (message) => {
      if (message.text().includes('frame-ancestors')) refusals.push(message.text());
    });
    // localhost:<host port> is another origin than the allowed 127.0.0.1:<host port>.
    const refused = page.waitForEvent('console', (message) => message.text().includes('frame-ancestors'));
    await page.goto(`http://localhost:${hostPort}/host?viewer=eu`);
    await refused;
    const frame = (await (await page.waitForSelector('iframe#dashboard')).contentFrame())!;
    expect(frame.url()).not.toContain('/embed/dashboard/');
    expect(await frame.getByText('Regional sales').count()).toBe(0);
    expect(refusals.length).toBeGreaterThan(0);
    await page.close();
  });
});
