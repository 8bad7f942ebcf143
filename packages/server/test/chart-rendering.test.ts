import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PNG } from 'pngjs';
import { chartSvg } from '../src/render/charts.js';
import { loadFonts } from '../src/render/fonts.js';
import { svgToPng } from '../src/render/outputs.js';
import { pageLayout, pageSvg, type WidgetContent } from '../src/render/page.js';
import type { ReportData } from '../src/render/types.js';
import { axis, lineSegments, parseSvg } from './svg-reader.js';

/*
 * What a chart in a PNG, a PDF or a notification's attachment shows, read from the SVG the
 * renderer draws (in this process, as the renderer does): tick labels of counts are whole
 * numbers, category labels lie flat when they fit and turn only when they would collide, and a
 * month with no rows is a break in the line (or a zero, when the widget says so). Every chart kind
 * is also written as a PNG to packages/server/test-results/charts/ for people to look at; nothing
 * here compares pixels.
 */

const PICTURES = path.resolve(import.meta.dirname, '../test-results/charts');

const drawn = async (data: ReportData, spec: unknown, width: number, height: number, missingValues?: 'gap' | 'zero') => {
  const chart = await chartSvg(data, spec, width, height, missingValues);
  expect(chart).not.toBeNull();
  return { svg: chart!.svg, tree: parseSvg(chart!.svg) };
};

const WHOLE = /^-?\d{1,3}(,\d{3})*$/;

// ---- Rows as the runtime answers them ----

const byCategory = (name: string, counts: Array<[string, number]>, measure = 'orders.count'): ReportData => ({
  rows: counts.map(([category, count]) => ({ [name]: category, [measure]: count })),
  annotation: {
    measures: { [measure]: { title: 'Orders Count', shortTitle: 'Count', type: 'number' } },
    dimensions: { [name]: { title: 'Region', shortTitle: 'Region', type: 'string' } },
  },
});

/** Orders per month as the runtime answers a month grain: the grain's key and the bare one, local times without a zone. */
const byMonth = (counts: Array<[string, number]>): ReportData => ({
  rows: counts.map(([month, count]) => ({
    'orders.created_at.month': `${month}-01T00:00:00.000`,
    'orders.created_at': `${month}-01T00:00:00.000`,
    'orders.count': count,
  })),
  annotation: {
    measures: { 'orders.count': { title: 'Orders Count', shortTitle: 'Count', type: 'number' } },
    dimensions: {},
    timeDimensions: {
      'orders.created_at.month': { title: 'Orders Created at', shortTitle: 'Created at', type: 'time', granularity: { name: 'month', title: 'Month' } },
      'orders.created_at': { title: 'Orders Created at', shortTitle: 'Created at', type: 'time' },
    },
  },
});

const monthQuery = (dateRange?: [string, string]) => ({
  query: {
    measures: ['orders.count'],
    timeDimensions: [{ dimension: 'orders.created_at', granularity: 'month', ...(dateRange ? { dateRange } : {}) }],
  },
});

describe('integer ticks for integer-valued measures', () => {
  it('a count on a tall chart has whole-number ticks only (0, 1, 2, 3), never 0.5', async () => {
    const { tree } = await drawn(
      byCategory('customers.region', [
        ['EU', 3],
        ['US', 1],
        ['APAC', 2],
      ]),
      null,
      400,
      400,
    );
    const texts = axis(tree, 'Y').labels.map((l) => l.text);
    expect(texts).toEqual(['0', '1', '2', '3']);
  });

  it('a measure with fractions keeps fractional ticks on the same chart, so whole ticks follow the values', async () => {
    const { tree } = await drawn(
      byCategory(
        'customers.region',
        [
          ['EU', 2.5],
          ['US', 1.25],
        ],
        'orders.average',
      ),
      null,
      400,
      400,
    );
    const texts = axis(tree, 'Y').labels.map((l) => l.text);
    expect(texts.some((t) => !WHOLE.test(t))).toBe(true);
  });

  it('large counts are whole numbers with thousands separators; a report’s own spec counting rows gets whole ticks too', async () => {
    const big = await drawn(
      byCategory('customers.region', [
        ['EU', 12_000],
        ['US', 3],
      ]),
      null,
      300,
      300,
    );
    const bigTexts = axis(big.tree, 'Y').labels.map((l) => l.text);
    expect(bigTexts.length).toBeGreaterThan(2);
    for (const text of bigTexts) expect(text).toMatch(WHOLE);
    expect(bigTexts).toContain('12,000');

    const own = { vegaLite: { mark: 'bar', encoding: { x: { field: 'region', type: 'nominal' }, y: { aggregate: 'count', type: 'quantitative' } } } };
    const counted = await drawn(
      {
        rows: [
          { region: 'EU', amount: 1.5 },
          { region: 'EU', amount: 2.5 },
          { region: 'US', amount: 3.5 },
        ],
        annotation: {},
      },
      own,
      300,
      400,
    );
    expect(axis(counted.tree, 'Y').labels.map((l) => l.text)).toEqual(['0', '1', '2']);
  });
});

describe('category labels rotated only when they collide', () => {
  it('short labels that fit their bands lie flat: no rotation in their transform', async () => {
    const { tree } = await drawn(
      byCategory('customers.region', [
        ['EU', 3],
        ['US', 1],
        ['APAC', 2],
      ]),
      null,
      400,
      250,
    );
    const labels = axis(tree, 'X').labels;
    expect(labels.map((l) => l.text)).toEqual(['EU', 'US', 'APAC']);
    for (const label of labels) expect(label.transform).not.toMatch(/rotate\(/);
  });

  it('labels wider than their bands are rotated', async () => {
    const names = Array.from({ length: 12 }, (_, i) => `Customer with a long name ${i + 1}`);
    const { tree } = await drawn(
      byCategory(
        'customers.name',
        names.map((n, i) => [n, i + 1]),
      ),
      null,
      400,
      300,
    );
    const labels = axis(tree, 'X').labels;
    expect(labels).toHaveLength(12);
    // Vega writes the angle normalised: -45° is 315°.
    for (const label of labels) expect(label.transform).toMatch(/rotate\(315\)/);
  });

  it('the same labels lie flat on a chart wide enough for them, and an angle the report’s spec sets is kept', async () => {
    const rows = byCategory('customers.name', [
      ['Ada Lovelace', 2],
      ['Bo Diddley', 1],
    ]);
    const wide = await drawn(rows, null, 600, 250);
    for (const label of axis(wide.tree, 'X').labels) expect(label.transform).not.toMatch(/rotate\(/);
    const narrow = await drawn(rows, null, 120, 250);
    for (const label of axis(narrow.tree, 'X').labels) expect(label.transform).toMatch(/rotate\(/);
    const own = {
      vegaLite: {
        mark: 'bar',
        encoding: { x: { field: 'customers\\.name', type: 'nominal', axis: { labelAngle: -90 } }, y: { field: 'orders\\.count', type: 'quantitative' } },
      },
    };
    for (const label of axis((await drawn(rows, own, 600, 250)).tree, 'X').labels) expect(label.transform).toMatch(/rotate\(270\)/);
  });
});

describe('missing periods of a time series', () => {
  const janFebApr = byMonth([
    ['2026-01', 3],
    ['2026-02', 2],
    ['2026-04', 1],
  ]);

  it('a missing month is a break in the line: Jan–Feb is one segment, Apr starts another, and no segment joins Feb to Apr', async () => {
    const { tree } = await drawn(janFebApr, monthQuery(), 400, 200);
    const paths = lineSegments(tree);
    expect(paths).toHaveLength(1);
    expect(paths[0]!.map((segment) => segment.length)).toEqual([2, 1]);
    // Every month is still on the axis, March included.
    expect(axis(tree, 'X').labels.map((l) => l.text)).toEqual(['Jan 2026', 'Feb 2026', 'Mar 2026', 'Apr 2026']);
  });

  it('with the widget’s `missingValues: "zero"` the line runs unbroken through 0 at March', async () => {
    const { tree } = await drawn(janFebApr, monthQuery(), 400, 200, 'zero');
    const [path] = lineSegments(tree);
    expect(path).toHaveLength(1);
    const points = path![0]!;
    expect(points).toHaveLength(4);
    const y = axis(tree, 'Y');
    const zero = y.ticks[y.labels.findIndex((l) => l.text === '0')]!;
    expect(points[2]!.y).toBeCloseTo(zero.y, 0);
    expect(points.filter((p) => Math.abs(p.y - zero.y) < 0.5)).toHaveLength(1);
  });

  it('periods are filled over the query’s date range when it names two dates: Jan to Jun is six points, zeros after April', async () => {
    const { tree } = await drawn(janFebApr, monthQuery(['2026-01-01', '2026-06-30']), 400, 200, 'zero');
    const [path] = lineSegments(tree);
    expect(path!.map((segment) => segment.length)).toEqual([6]);
    expect(
      axis(tree, 'X')
        .labels.map((l) => l.text)
        .at(-1),
    ).toBe('Jun 2026');
  });

  it('a series with no missing period is drawn as one segment through its own points', async () => {
    const { tree } = await drawn(
      byMonth([
        ['2026-01', 3],
        ['2026-02', 2],
        ['2026-03', 1],
      ]),
      monthQuery(),
      400,
      200,
    );
    expect(lineSegments(tree)[0]!.map((segment) => segment.length)).toEqual([3]);
  });
});

describe('a picture of each chart kind', () => {
  it('writes bar (flat and rotated labels), line (gap and zero), area, pie, table and KPI widgets as PNGs to test-results/charts/', async () => {
    const fonts = loadFonts();
    const regions = byCategory('customers.region', [
      ['EU', 3],
      ['US', 1],
      ['APAC', 2],
    ]);
    const months = byMonth([
      ['2026-01', 3],
      ['2026-02', 2],
      ['2026-04', 1],
      ['2026-05', 4],
    ]);
    const area = {
      vegaLite: {
        mark: 'area',
        encoding: {
          x: { field: 'orders\\.created_at\\.month', type: 'temporal', timeUnit: 'yearmonth', title: 'Created at' },
          y: { field: 'orders\\.count', type: 'quantitative', title: 'Count' },
        },
      },
    };
    const pie = {
      vegaLite: {
        mark: 'arc',
        encoding: { theta: { field: 'orders\\.count', type: 'quantitative' }, color: { field: 'customers\\.region', type: 'nominal' } },
      },
    };
    const chart = async (title: string, data: ReportData, spec: unknown, missingValues?: 'gap' | 'zero'): Promise<WidgetContent> => ({
      kind: 'chart',
      title,
      svg: (await chartSvg(data, spec, 540, 260, missingValues))!.svg,
    });
    const kinds: Record<string, WidgetContent> = {
      bar: await chart('Orders by region', regions, null),
      'bar-long-labels': await chart(
        'Orders by customer (labels that do not fit)',
        byCategory(
          'customers.name',
          Array.from({ length: 10 }, (_, i): [string, number] => [`Customer with a long name ${i + 1}`, (i % 4) + 1]),
        ),
        null,
      ),
      'line-gap': await chart('Orders per month (gap)', months, monthQuery()),
      'line-zero': await chart('Orders per month (zero)', months, monthQuery(), 'zero'),
      area: await chart('Orders per month (area)', months, area, 'zero'),
      pie: await chart('Orders by region (pie)', regions, pie),
      table: {
        kind: 'table',
        title: 'Orders by region (table)',
        columns: ['Region', 'Count'],
        rows: regions.rows.map((r) => [String(r['customers.region']), String(r['orders.count'])]),
      },
      kpi: { kind: 'kpi', title: 'Orders', value: '6', label: 'Count' },
    };
    fs.mkdirSync(PICTURES, { recursive: true });
    for (const [kind, content] of Object.entries(kinds)) {
      const { svg } = pageSvg(kind, null, pageLayout({}), [{ id: kind, position: { x: 0, y: 0, w: 6, h: 4 }, content }]);
      const file = path.join(PICTURES, `${kind}.png`);
      fs.writeFileSync(file, await svgToPng(svg, fonts));
      // The file opens as a picture of the page; what it looks like is for people to see.
      expect(PNG.sync.read(fs.readFileSync(file)).width).toBe(1200);
    }
    expect(fs.readdirSync(PICTURES).filter((f) => f.endsWith('.png'))).toEqual(
      expect.arrayContaining(['bar.png', 'bar-long-labels.png', 'line-gap.png', 'line-zero.png', 'area.png', 'pie.png', 'table.png', 'kpi.png']),
    );
  });
});
