import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PNG } from 'pngjs';
import { ChartRefused, chartSvg, MAX_GENERATED_VALUES } from '../src/render/charts.js';
import { MAX_CHART_VIEWS } from '../src/render/chart-spec.js';
import { svgToPdf, svgToPng } from '../src/render/outputs.js';
import { loadFonts } from '../src/render/fonts.js';
import { pageLayout, pageSvg } from '../src/render/page.js';

/*
 * docs/security.md, "Vega and Vega-Lite specs" and "PDF and PNG rendering": a report's spec is
 * authored by users and drawn in the server's own process, so what it can make Vega do is bounded
 * here: no data but the report's rows, no URL followed (links included), no unbounded generation,
 * no way out of the expression language, and no file the PDF writer would read for an image.
 */

const rows = {
  rows: [
    { region: 'EU', count: 3 },
    { region: 'US', count: 1 },
  ],
  annotation: {},
};

describe('a report’s Vega-Lite spec drawn on the server', () => {
  it('refuses data other than the report’s rows: a nested generator, URL or dataset never runs', async () => {
    for (const vegaLite of [
      { layer: [{ data: { sequence: { start: 0, stop: 1e9 } }, mark: 'point' }] },
      { layer: [{ data: { url: 'file:///etc/passwd', format: { type: 'csv' } }, mark: 'point' }] },
      { hconcat: [{ datasets: { x: [] }, mark: 'point' }] },
      { mark: 'line', transform: [{ density: 'count', steps: 1e8 }] },
      { mark: 'line', transform: [{ quantile: 'count', step: 1e-9 }] },
      { mark: 'line', encoding: { y: { field: 'count', type: 'quantitative', impute: { keyvals: { start: 0, stop: 1e9 } } } } },
    ]) {
      await expect(chartSvg(rows, { vegaLite }, 300, 200)).rejects.toBeInstanceOf(ChartRefused);
    }
  });

  it('refuses a spec that expands into more views than a chart has (a small repeat multiplies Vega-Lite’s work), before it compiles', async () => {
    const unit = { mark: 'point', encoding: { x: { field: 'region', type: 'nominal' } } };
    // About 1 KiB: 72,000 views, which once held the event loop for over 100 s.
    const vegaLite = { repeat: { row: Array(60).fill('count'), column: Array(60).fill('count'), layer: Array(20).fill('count') }, spec: { layer: [unit] } };
    const refused = await chartSvg(rows, { vegaLite }, 300, 200).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ChartRefused);
    expect((refused as Error).message).toContain(`at most ${MAX_CHART_VIEWS}`);
    // A few views draw as before.
    const few = await chartSvg(rows, { vegaLite: { repeat: ['count'], spec: unit } }, 300, 200);
    expect(few?.svg).toContain('<svg');
  });

  it('bounds the expression language’s sequence(): a billion values is an error of that expression, not an exhausted heap', async () => {
    const spec = {
      mark: 'text',
      transform: [{ calculate: 'length(sequence(0, 1e9))', as: 'n' }],
      encoding: { text: { field: 'n', type: 'quantitative', format: 'd' } },
    };
    const chart = await chartSvg(rows, spec, 300, 200);
    expect(chart?.svg).not.toContain('1000000000');
    const small = await chartSvg(rows, { ...spec, transform: [{ calculate: `length(sequence(0, ${MAX_GENERATED_VALUES}))`, as: 'n' }] }, 300, 200);
    expect(small?.svg).toContain(`>${MAX_GENERATED_VALUES}<`);
  });

  it('gives expressions no way to the global object: constructor and this are refused, globals stay untouched', async () => {
    const g = globalThis as { vegaPwned?: boolean };
    for (const expr of [
      "datum.constructor.constructor('globalThis.vegaPwned=true')()",
      "this.constructor.constructor('globalThis.vegaPwned=true')()",
      "scale(toString, 'x')",
    ]) {
      await chartSvg(
        rows,
        {
          mark: 'bar',
          transform: [{ calculate: expr, as: 'z' }],
          encoding: { x: { field: 'region', type: 'nominal' }, y: { field: 'count', type: 'quantitative' } },
        },
        300,
        200,
      ).catch(() => undefined);
    }
    expect(g.vegaPwned).toBeUndefined();
  });

  it('interprets expressions, never compiles them to JavaScript: no Function is made from a spec’s expression text, and the value is still computed', async () => {
    const made: string[] = [];
    const original = globalThis.Function;
    globalThis.Function = new Proxy(original, {
      construct(target, args: string[]) {
        made.push(args.join(' '));
        return Reflect.construct(target, args);
      },
      apply(target, self, args: string[]) {
        made.push(args.join(' '));
        return Reflect.apply(target, self, args);
      },
    });
    let svg: string | undefined;
    try {
      const spec = {
        mark: 'text',
        transform: [{ calculate: 'datum.count * 1000 + 4321', as: 'n' }],
        encoding: { text: { field: 'n', type: 'quantitative', format: 'd' } },
      };
      svg = (await chartSvg(rows, spec, 300, 200))?.svg;
    } finally {
      globalThis.Function = original;
    }
    expect(svg).toContain('7321');
    expect(made.filter((source) => source.includes('4321'))).toEqual([]);
  });

  it('draws a link (href) to a local file or address as no link, and the process lives on', async () => {
    const rejections: unknown[] = [];
    const onRejection = (reason: unknown) => rejections.push(reason);
    process.on('unhandledRejection', onRejection);
    try {
      const spec = {
        mark: 'bar',
        encoding: { x: { field: 'region', type: 'nominal' }, y: { field: 'count', type: 'quantitative' }, href: { value: 'file:///etc/passwd' } },
      };
      const chart = await chartSvg(rows, spec, 300, 200);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(chart?.svg).toMatch(/class="mark-rect role-mark/);
      expect(chart?.svg).not.toContain('/etc/passwd');
      expect(rejections).toEqual([]);
    } finally {
      process.off('unhandledRejection', onRejection);
    }
  });
});

describe('the page SVG turned into PDF and PNG', () => {
  it('draws every user string as text: a title, a text widget, a table cell or a KPI cannot add an element', () => {
    const hostile = '</text></svg><image href="/etc/passwd"/><script>alert(1)</script>\u0007&amp;';
    const at = { x: 0, y: 0, w: 6, h: 4 };
    const { svg } = pageSvg(hostile, hostile, pageLayout(undefined), [
      { id: hostile, position: at, content: { kind: 'text', text: hostile } },
      { id: 'b', position: { ...at, y: 4 }, content: { kind: 'table', title: hostile, columns: [hostile], rows: [[hostile]] } },
      { id: 'c', position: { ...at, y: 8 }, content: { kind: 'kpi', title: hostile, value: hostile, label: hostile } },
    ]);
    expect(svg).not.toMatch(/<image|<script/);
    expect(svg).not.toContain(String.fromCharCode(7));
    expect(svg).toContain('&lt;/text&gt;&lt;/svg&gt;&lt;image href=&quot;/etc/passwd&quot;/&gt;');
    expect(svg.match(/<\/svg>/g)).toHaveLength(1);
  });

  it('never reads a file named by an <image> in the page: the PDF has no image, the PNG shows none', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'render-image-'));
    try {
      const png = new PNG({ width: 4, height: 4 });
      png.data.fill(0); // opaque black would show; the pixel check below looks for it
      for (let i = 3; i < png.data.length; i += 4) png.data[i] = 255;
      const file = path.join(dir, 'secret.png');
      fs.writeFileSync(file, PNG.sync.write(png));
      const svg = `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="40" height="40"><image x="0" y="0" width="40" height="40" href="${file}"/><image x="0" y="0" width="40" height="40" xlink:href="file://${file}"/></svg>`;
      const fonts = loadFonts();
      const pdf = await svgToPdf(svg, { width: 40, height: 40 }, fonts, 'page');
      expect(pdf.toString('latin1')).not.toMatch(/\/Subtype\s*\/Image/);
      const out = PNG.sync.read(await svgToPng(svg, fonts));
      expect(Array.from(out.data.subarray(0, 3))).toEqual([255, 255, 255]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
