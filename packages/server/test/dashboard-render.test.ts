import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PNG } from 'pngjs';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { chartSvg } from '../src/render/charts.js';
import { applyControls } from '../src/render/controls.js';
import { bandSvg, cleanBreaks, headerHeight, pageLayout } from '../src/render/page.js';
import { printSlices, svgToPdf } from '../src/render/outputs.js';
import { loadFonts } from '../src/render/fonts.js';
import type { Renderer, RenderInput } from '../src/render/index.js';
import { DIALECTS } from './harness.js';
import { DASHBOARD_TITLE, renderShop, type RenderShop } from './render-fixtures.js';
import { axis, lineSegments, parseSvg, widgetNode } from './svg-reader.js';

/*
 * Issue 18, "Rendering is real": a published dashboard rendered for a viewer, each report's rows
 * from the deployment's runtime with that viewer's row-level security, charts drawn with
 * Vega-Lite, the page laid out as the config says; the files are opened as a user would: the
 * PDF's text extracted, the PNG decoded.
 */

async function pdfText(bytes: Buffer): Promise<string> {
  const doc = await getDocument({ data: new Uint8Array(bytes), useSystemFonts: false, isEvalSupported: false }).promise;
  const parts: string[] = [];
  for (let i = 1; i <= doc.numPages; i++) {
    const content = await (await doc.getPage(i)).getTextContent();
    parts.push(content.items.map((item) => ('str' in item ? item.str : '')).join(' '));
  }
  await doc.destroy();
  return parts.join('\n');
}

/** Distinct colours in the PNG: a blank page has one. */
function colours(png: PNG): number {
  const seen = new Set<number>();
  for (let i = 0; i < png.data.length; i += 4 * 7) seen.add(png.data.readUInt32BE(i));
  return seen.size;
}

describe('print layout: A4 pages split between widget rows', () => {
  const layout = pageLayout({});
  const top = headerHeight(null);
  const widget = (id: string, y: number, h: number, x = 0, w = 6) => ({ id, position: { x, y, w, h }, content: { kind: 'empty' } as never });

  it('a page may end above a row no widget crosses, never through a widget', () => {
    // Rows 0-3: a tall widget beside two short ones; row 4 starts clean; rows 6-7 another.
    const breaks = cleanBreaks(layout, top, [widget('tall', 0, 4), widget('a', 0, 2, 6), widget('b', 2, 2, 6), widget('c', 4, 2), widget('d', 6, 2)]);
    const rowTop = (y: number) => top + layout.padding[1] + y * (layout.rowHeight + layout.margin[1]) - layout.margin[1] / 2;
    expect(breaks).toEqual([rowTop(4), rowTop(6)]);
  });

  it('each printed page holds as much as fits and ends at the last clean break inside it; a widget taller than a page is cut', () => {
    expect(printSlices(1000, 400, [150, 350, 380, 700])).toEqual([
      [0, 380],
      [380, 700],
      [700, 1000],
    ]);
    expect(printSlices(1000, 400, [])).toEqual([
      [0, 400],
      [400, 800],
      [800, 1000],
    ]);
    expect(printSlices(300, 400, [100])).toEqual([[0, 300]]);
  });

  it('the PDF has A4 pages, each showing its own slice of the page', async () => {
    const pieces = [
      { top: 0, bottom: 200, markup: '<text x="24" y="100" font-size="24">First slice</text>' },
      { top: 1400, bottom: 1600, markup: '<text x="24" y="1500" font-size="24">Second slice</text>' },
    ];
    const bytes = await svgToPdf(bandSvg(pieces, 1200, 0, 2000), { width: 1200, height: 2000 }, loadFonts(), 'Tall', { breaks: [1000], pieces });
    const doc = await getDocument({ data: new Uint8Array(bytes), useSystemFonts: false, isEvalSupported: false }).promise;
    const pages: string[] = [];
    for (let i = 1; i <= doc.numPages; i++) {
      const page = await doc.getPage(i);
      expect([Math.round(page.getViewport({ scale: 1 }).width), Math.round(page.getViewport({ scale: 1 }).height)]).toEqual([595, 842]);
      pages.push((await page.getTextContent()).items.map((item) => ('str' in item ? item.str : '')).join(' '));
    }
    await doc.destroy();
    expect(pages).toHaveLength(2);
    expect(pages[0]).toContain('First slice');
    // Each page carries only its own slice: nothing hidden under the clip.
    expect(pages[0]).not.toContain('Second slice');
    expect(pages[1]).toContain('Second slice');
    expect(pages[1]).not.toContain('First slice');
  });
});

for (const dialect of DIALECTS) {
  describe(`dashboard rendering (${dialect})`, () => {
    let shop: RenderShop;
    let renderer: Renderer;
    const input = (userId: number, format: 'png' | 'pdf', extra: Partial<RenderInput> = {}): RenderInput => ({
      tenant: { id: shop.t.tenantId, slug: 'default' },
      deploymentId: shop.deploymentId,
      workbookId: shop.workbookId,
      viewer: { userId },
      format,
      ...extra,
    });
    const rowsOf = (data: Awaited<ReturnType<Renderer['renderDashboard']>>['data'], widgetId: string) => data.find((d) => d.widgetId === widgetId)?.rows;

    beforeAll(async () => {
      shop = await renderShop(dialect);
      renderer = shop.t.app.services.renderer;
    });
    afterAll(async () => shop?.close());

    it('a PDF whose extracted text holds the dashboard’s title and values of the viewer’s rows', async () => {
      const pdf = await renderer.renderDashboard(input(shop.eu.userId, 'pdf'));
      expect(pdf.contentType).toBe('application/pdf');
      expect(pdf.bytes.subarray(0, 5).toString()).toBe('%PDF-');
      const text = await pdfText(pdf.bytes);
      expect(text).toContain(DASHBOARD_TITLE);
      // The EU analyst's revenue (orders 1, 2 and 4) and customers; not the US customer.
      expect(text).toContain('180');
      expect(text).toContain('Ada');
      expect(text).toContain('Orders by status');
      expect(text).not.toContain('Bo ');
      expect(pdf.svg).toContain(`<title>${DASHBOARD_TITLE}</title>`);
    });

    it('a PNG that decodes to the layout’s size (1200 wide, every grid row tall) and is not blank', async () => {
      const png = await renderer.renderDashboard(input(shop.eu.userId, 'png'));
      expect(png.contentType).toBe('image/png');
      const image = PNG.sync.read(png.bytes);
      // 10 grid rows of 60 px with 16 px between them, 24 px of padding above and below, under the title band.
      const height = headerHeight(null) + 2 * 24 + 10 * 60 + 9 * 16;
      expect([image.width, image.height]).toEqual([1200, height]);
      expect([png.width, png.height]).toEqual([1200, height]);
      expect(colours(image)).toBeGreaterThan(20);
      // The intermediate SVG holds the title, each widget in its cell, and a drawn chart.
      expect(png.svg).toContain(DASHBOARD_TITLE);
      for (const id of ['intro', 'revenue', 'status-filter', 'by-customer', 'by-status', 'over-time']) expect(png.svg).toContain(`data-widget="${id}"`);
      expect(png.svg).toMatch(/class="mark-rect role-mark/);
      expect(png.svg).toMatch(/class="mark-line role-mark/);
    });

    it('two viewers with different row-level security get different values in their renders', async () => {
      const eu = await renderer.renderDashboard(input(shop.eu.userId, 'pdf'));
      const us = await renderer.renderDashboard(input(shop.us.userId, 'pdf'));
      expect(rowsOf(eu.data, 'revenue')).toEqual([{ 'orders.total_amount': 180 }]);
      expect(rowsOf(us.data, 'revenue')).toEqual([{ 'orders.total_amount': 70 }]);
      expect(rowsOf(us.data, 'by-customer')).toEqual([{ 'customers.name': 'Bo', 'orders.count': 1 }]);
      const usText = await pdfText(us.bytes);
      expect(usText).toContain('Bo');
      expect(usText).toContain('70');
      expect(usText).not.toContain('Ada');
      expect(usText).not.toContain('180');
    });

    it('filters, time grains and member switchers apply to every report that reads their source', async () => {
      const filtered = await renderer.renderDashboard(
        input(shop.eu.userId, 'png', {
          filters: [{ member: 'orders.status', operator: 'equals', value: ['completed'] }],
          timeGrains: [{ member: 'orders.created_at', grain: 'year' }],
          memberSwitchers: [{ member: 'orders.status', selected: 'size' }],
        }),
      );
      // Only order 1 of the EU orders is completed (100).
      expect(rowsOf(filtered.data, 'revenue')).toEqual([{ 'orders.total_amount': 100 }]);
      expect(rowsOf(filtered.data, 'by-status')).toEqual([{ 'orders.size': 'large', 'orders.count': 1, 'orders.total_amount': 100 }]);
      expect(rowsOf(filtered.data, 'over-time')).toHaveLength(1);
      // The filter widget shows what was applied.
      expect(filtered.svg).toContain('orders.status equals completed');
    });

    it('a widget’s `chart.missingValues` decides how a month without rows is drawn: a gap by default, zero when it says so', async () => {
      const base = `/api/v1/deployments/${shop.deploymentId}`;
      const ok = async (res: { statusCode: number; body: string }) => {
        expect(res.statusCode, res.body).toBeLessThan(300);
        return JSON.parse(res.body) as Record<string, any>;
      };
      // The EU analyst's orders fall in January and February 2026; the range starts in December 2025.
      const report = await ok(
        await shop.t.request({
          method: 'PUT',
          url: `${base}/reports/by-public-id/months-from-december`,
          body: {
            name: 'months-from-december',
            title: 'Orders per month',
            kind: 'vega',
            spec: {
              query: {
                measures: ['orders.count'],
                timeDimensions: [{ dimension: 'orders.created_at', granularity: 'month', dateRange: ['2025-12-01', '2026-02-28'] }],
                order: { 'orders.created_at': 'asc' },
              },
            },
          },
        }),
      );
      const workbookId = (await ok(await shop.t.request({ method: 'PUT', url: `${base}/workbooks/by-slug/missing-months`, body: { name: 'Missing months' } })))
        .id as number;
      const widget = (id: string, x: number, config: Record<string, unknown>) => ({ id, type: 'CHART', position: { x, y: 0, w: 6, h: 4 }, config });
      const config = {
        title: 'Missing months',
        widgets: [widget('as-gap', 0, { reportId: report.id }), widget('as-zero', 6, { reportId: report.id, chart: { missingValues: 'zero' } })],
      };
      const published = await ok(await shop.t.request({ method: 'POST', url: `${base}/workbooks/${workbookId}/publish`, body: { workbookId, config } }));
      expect(published.config.widgets[1].config.chart).toEqual({ missingValues: 'zero' });
      await shop.t.grant({ type: 'USER', id: shop.eu.userId }, { type: 'WORKBOOK', id: workbookId }, 'VIEW');

      const page = await renderer.renderPage({ ...input(shop.eu.userId, 'png'), workbookId });
      const tree = parseSvg(page.svg);
      const gap = widgetNode(tree, 'as-gap');
      const zero = widgetNode(tree, 'as-zero');
      // December is on both axes; the gap chart draws nothing there, the zero chart draws 0.
      expect(axis(gap, 'X').labels.map((l) => l.text)).toEqual(['Dec 2025', 'Jan 2026', 'Feb 2026']);
      expect(lineSegments(gap)[0]!.map((segment) => segment.length)).toEqual([2]);
      const [points] = lineSegments(zero)[0]!;
      expect(points).toHaveLength(3);
      const y = axis(zero, 'Y');
      expect(points![0]!.y).toBeCloseTo(y.ticks[y.labels.findIndex((l) => l.text === '0')]!.y, 0);
      // Counts: whole-number ticks on both.
      for (const node of [gap, zero]) for (const label of axis(node, 'Y').labels) expect(label.text).toMatch(/^\d+$/);
      // The rows the export carries are the runtime's, without the added month.
      expect(rowsOf(page.data, 'as-zero')).toHaveLength(2);
    });

    it('a report the viewer may not read is shown as such in its widget; the rest still renders', async () => {
      const res = await renderer.renderDashboard(input(shop.eu.userId, 'png', { memberSwitchers: [{ member: 'orders.status', selected: 'nope' }] }));
      expect(res.svg).toContain('Not shown:');
      expect(rowsOf(res.data, 'revenue')).toEqual([{ 'orders.total_amount': 180 }]);
    });
  });
}

describe('dashboard controls on a report’s query', () => {
  it('leaves reports of other sources alone, and never changes the stored query', () => {
    const query = {
      measures: ['orders.count'],
      dimensions: ['orders.status'],
      order: [['orders.status', 'asc']],
      timeDimensions: [{ dimension: 'orders.created_at', granularity: 'day' }],
    };
    const copy = structuredClone(query);
    const out = applyControls(query, {
      filters: [
        { member: 'customers.region', operator: 'equals', value: ['EU'] },
        { member: 'orders.status', operator: 'is_not_null' },
      ],
      timeGrains: [{ member: 'orders.created_at', grain: 'week' }],
      memberSwitchers: [{ member: 'orders.status', selected: 'size' }],
    });
    expect(out).toEqual({
      measures: ['orders.count'],
      dimensions: ['orders.size'],
      order: [['orders.size', 'asc']],
      timeDimensions: [{ dimension: 'orders.created_at', granularity: 'week' }],
      filters: [{ member: 'orders.status', operator: 'is_not_null' }],
    });
    expect(query).toEqual(copy);
  });
});

describe('a report’s own Vega-Lite spec', () => {
  it('is drawn over the report’s rows; URLs it names (data, images) are never fetched, a lookup of other data is refused', async () => {
    let requests = 0;
    const server = http.createServer((_req, res) => {
      requests++;
      res.end('[]');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const spec = {
        vegaLite: {
          data: { url: `${url}/data.json` },
          layer: [
            { mark: 'bar', encoding: { x: { field: 'region', type: 'nominal' }, y: { field: 'count', type: 'quantitative' } } },
            { mark: { type: 'image', width: 10, height: 10 }, encoding: { x: { field: 'region', type: 'nominal' }, url: { value: `${url}/logo.png` } } },
          ],
        },
      };
      const chart = await chartSvg(
        {
          rows: [
            { region: 'EU', count: 3 },
            { region: 'US', count: 1 },
          ],
          annotation: {},
        },
        spec,
        300,
        200,
      );
      expect(chart?.svg).toContain('EU');
      expect(chart?.svg).toMatch(/class="mark-rect role-mark/);
      const lookup = {
        vegaLite: { ...spec.vegaLite, transform: [{ lookup: 'region', from: { data: { url: `${url}/lookup.json` }, key: 'region', fields: ['name'] } }] },
      };
      await expect(chartSvg({ rows: [{ region: 'EU', count: 3 }], annotation: {} }, lookup, 300, 200)).rejects.toThrow(/may not name other data/);
      expect(requests).toBe(0);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
