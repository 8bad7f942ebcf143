import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PNG } from 'pngjs';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { chartSvg } from '../src/render/charts.js';
import { applyControls } from '../src/render/controls.js';
import { headerHeight } from '../src/render/page.js';
import type { Renderer, RenderInput } from '../src/render/index.js';
import { DIALECTS } from './harness.js';
import { DASHBOARD_TITLE, renderShop, type RenderShop } from './render-fixtures.js';

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

    it('a report the viewer may not read is shown as such in its widget; the rest still renders', async () => {
      const res = await renderer.renderDashboard(input(shop.eu.userId, 'png', { memberSwitchers: [{ member: 'orders.status', selected: 'nope' }] }));
      expect(res.svg).toContain('Not shown:');
      expect(rowsOf(res.data, 'revenue')).toEqual([{ 'orders.total_amount': 180 }]);
    });
  });
}

describe('dashboard controls on a report’s query', () => {
  it('leaves reports of other sources alone, and never changes the stored query', () => {
    const query = { measures: ['orders.count'], dimensions: ['orders.status'], order: [['orders.status', 'asc']], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'day' }] };
    const copy = structuredClone(query);
    const out = applyControls(query, {
      filters: [{ member: 'customers.region', operator: 'equals', value: ['EU'] }, { member: 'orders.status', operator: 'is_not_null' }],
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
  it('is drawn over the report’s rows; URLs it names (data, lookups, images) are never fetched', async () => {
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
          transform: [{ lookup: 'region', from: { data: { url: `${url}/lookup.json` }, key: 'region', fields: ['name'] } }],
          layer: [
            { mark: 'bar', encoding: { x: { field: 'region', type: 'nominal' }, y: { field: 'count', type: 'quantitative' } } },
            { mark: { type: 'image', width: 10, height: 10 }, encoding: { x: { field: 'region', type: 'nominal' }, url: { value: `${url}/logo.png` } } },
          ],
        },
      };
      const chart = await chartSvg({ rows: [{ region: 'EU', count: 3 }, { region: 'US', count: 1 }], annotation: {} }, spec, 300, 200);
      expect(chart?.svg).toContain('EU');
      expect(chart?.svg).toMatch(/class="mark-rect role-mark/);
      expect(requests).toBe(0);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
