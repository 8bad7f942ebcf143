import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import { FONT_FAMILY } from './fonts.js';
import type { ReportData } from './types.js';

/**
 * A report's rows drawn as a chart: a Vega-Lite spec (the report's own `spec.vegaLite`, or one
 * chosen from the data's shape) compiled to Vega and rendered to SVG in Node, with no canvas and
 * no browser. Text is measured by Vega's estimate and drawn in DejaVu Sans by the rasteriser.
 */

type Row = Record<string, unknown>;

/** Vega-Lite reads `a.b` as a nested field; member names (`orders.count`) are flat keys. */
const field = (name: string) => name.replace(/([.[\]\\])/g, '\\$1');

interface Column {
  name: string;
  title: string;
  kind: 'measure' | 'dimension' | 'time';
}

function annotationOf(annotation: Record<string, unknown>, section: string): Record<string, { title?: string; shortTitle?: string; type?: string; kind?: string }> {
  const value = annotation[section];
  return typeof value === 'object' && value !== null ? (value as Record<string, { title?: string }>) : {};
}

/** The columns of a result in their order, each a measure, a time or another dimension (from the annotation, else the values). */
export function columnsOf(data: ReportData): Column[] {
  const first = data.rows[0];
  if (!first) return [];
  const measures = annotationOf(data.annotation, 'measures');
  const dimensions = annotationOf(data.annotation, 'dimensions');
  const times = annotationOf(data.annotation, 'timeDimensions');
  const columns = annotationOf(data.annotation, 'columns');
  return Object.keys(first).map((name) => {
    const base = name.replace(/\.(second|minute|hour|day|week|month|quarter|year)$/, '');
    const a = measures[name] ?? dimensions[name] ?? times[name] ?? times[base] ?? columns[name];
    const title = a?.shortTitle ?? a?.title ?? name;
    if (name in measures || columns[name]?.kind === 'measure') return { name, title, kind: 'measure' };
    if (name in times || base in times || a?.type === 'time') return { name, title, kind: 'time' };
    if (name in dimensions || columns[name]?.kind === 'dimension') return { name, title, kind: 'dimension' };
    return { name, title, kind: typeof first[name] === 'number' ? 'measure' : 'dimension' };
  });
}

/** The chart a result suggests: a line over time, else bars per category, of the first measure. */
function suggestedSpec(data: ReportData): Record<string, unknown> | null {
  const columns = columnsOf(data);
  const measure = columns.find((c) => c.kind === 'measure');
  if (!measure) return null;
  const x = columns.find((c) => c.kind === 'time') ?? columns.find((c) => c.kind === 'dimension');
  const y = { field: field(measure.name), type: 'quantitative', title: measure.title };
  if (!x) return { mark: { type: 'bar', color: '#4c78a8' }, encoding: { y } };
  if (x.kind === 'time') {
    // A grain in the column name (`orders.created_at.month`) labels the axis in that unit.
    const grain = /\.(day|week|month|quarter|year)$/.exec(x.name)?.[1];
    const timeUnit = grain ? { day: 'yearmonthdate', week: 'yearweek', month: 'yearmonth', quarter: 'yearquarter', year: 'year' }[grain] : undefined;
    return { mark: { type: 'line', point: true }, encoding: { x: { field: field(x.name), type: 'temporal', title: x.title, ...(timeUnit ? { timeUnit } : {}) }, y } };
  }
  return { mark: { type: 'bar', color: '#4c78a8' }, encoding: { x: { field: field(x.name), type: 'nominal', title: x.title, sort: null }, y } };
}

/** The report's own Vega-Lite spec (`spec.vegaLite`, or a `spec` that is one), else undefined. */
function ownSpec(spec: unknown): Record<string, unknown> | undefined {
  if (typeof spec !== 'object' || spec === null) return undefined;
  const s = spec as Record<string, unknown>;
  if (typeof s.vegaLite === 'object' && s.vegaLite !== null) return s.vegaLite as Record<string, unknown>;
  if ('mark' in s || 'layer' in s) {
    const { query: _query, ...rest } = s;
    return rest;
  }
  return undefined;
}

// A report's spec may name URLs (data, images): a render reads nothing but the rows it was given.
const refusingLoader = {
  ...vega.loader(),
  load: () => Promise.reject(new Error('Charts read only the report’s rows; URLs are not loaded')),
  sanitize: () => Promise.reject(new Error('Charts read only the report’s rows; URLs are not loaded')),
} as unknown as ReturnType<typeof vega.loader>;

export interface ChartSvg {
  svg: string;
  width: number;
  height: number;
}

/**
 * The rows as an SVG chart of at most `width` × `height`; null when neither the report's spec
 * nor the data's shape gives a chart (no measure), which the page draws as a table instead.
 */
export async function chartSvg(data: ReportData, spec: unknown, width: number, height: number): Promise<ChartSvg | null> {
  const chosen = ownSpec(spec) ?? suggestedSpec(data);
  if (!chosen) return null;
  const { data: _data, datasets: _datasets, width: _w, height: _h, $schema: _schema, ...rest } = chosen;
  const full = {
    ...rest,
    // Vega marks the rows it reads; the caller's rows stay as the runtime answered them.
    data: { values: data.rows.map((row) => ({ ...row })) as Row[] },
    width: Math.max(40, width),
    height: Math.max(30, height),
    autosize: { type: 'fit', contain: 'padding' },
    background: 'white',
    config: { font: FONT_FAMILY, view: { stroke: null }, axis: { labelFontSize: 10, titleFontSize: 11 }, legend: { labelFontSize: 10, titleFontSize: 11 } },
  } as unknown as TopLevelSpec;
  const compiled = compile(full).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: 'none', loader: refusingLoader });
  try {
    const svg = await view.toSVG();
    return { svg, width: view.width(), height: view.height() };
  } finally {
    view.finalize();
  }
}
