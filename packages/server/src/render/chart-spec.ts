/**
 * The Vega-Lite spec of a report's chart, built the same way for the server's renders (charts.ts,
 * to SVG) and for the embedded dashboard page (packages/embed, in the browser): a widget looks the
 * same in a PNG, a PDF and an iframe. Pure on purpose: no Node module, and no import but its pure
 * neighbours (chart-axes.ts, chart-periods.ts), so the page's bundler takes these files as they are.
 */

import { LABEL_FONT_SIZE, tuneAxes } from './chart-axes.js';
import { fillMissingPeriods, grainOf, type MissingValues } from './chart-periods.js';

export { MISSING_VALUES, missingValuesOf, type MissingValues } from './chart-periods.js';

type Row = Record<string, unknown>;

/** The rows and annotation of a query's answer (the report-run call and the data API's `/v1/load` answer both). */
export interface ChartData {
  rows: Row[];
  annotation: Record<string, unknown>;
}

/** Vega-Lite reads `a.b` as a nested field; member names (`orders.count`) are flat keys. */
export const field = (name: string) => name.replace(/([.[\]\\])/g, '\\$1');

export interface Column {
  name: string;
  title: string;
  kind: 'measure' | 'dimension' | 'time';
}

function annotationOf(
  annotation: Record<string, unknown>,
  section: string,
): Record<string, { title?: string; shortTitle?: string; type?: string; kind?: string }> {
  const value = annotation[section];
  return typeof value === 'object' && value !== null ? (value as Record<string, { title?: string }>) : {};
}

/** The columns of a result in their order, each a measure, a time or another dimension (from the annotation, else the values). */
export function columnsOf(data: ChartData): Column[] {
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

/** How a column is labelled: its title, or its member name where the viewer asked for names (the embed setting `showMemberNames`). */
export type Labels = 'titles' | 'names';
const labelOf = (column: Column, labels: Labels) => (labels === 'names' ? column.name : column.title);

/** The chart a result suggests: a line over time, else bars per category, of the first measure. */
function suggestedSpec(data: ChartData, labels: Labels): Record<string, unknown> | null {
  const columns = columnsOf(data);
  const measure = columns.find((c) => c.kind === 'measure');
  if (!measure) return null;
  const x = columns.find((c) => c.kind === 'time') ?? columns.find((c) => c.kind === 'dimension');
  const y = { field: field(measure.name), type: 'quantitative', title: labelOf(measure, labels) };
  if (!x) return { mark: { type: 'bar', color: '#4c78a8' }, encoding: { y } };
  if (x.kind === 'time') {
    // A grain in the column name (`orders.created_at.month`) labels the axis in that unit.
    const grain = /\.(day|week|month|quarter|year)$/.exec(x.name)?.[1];
    const timeUnit = grain ? { day: 'yearmonthdate', week: 'yearweek', month: 'yearmonth', quarter: 'yearquarter', year: 'year' }[grain] : undefined;
    return {
      mark: { type: 'line', point: true },
      encoding: { x: { field: field(x.name), type: 'temporal', title: labelOf(x, labels), ...(timeUnit ? { timeUnit } : {}) }, y },
    };
  }
  return {
    mark: { type: 'bar', color: '#4c78a8' },
    encoding: { x: { field: field(x.name), type: 'nominal', title: labelOf(x, labels), sort: null }, y },
  };
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

/** A report's spec that is not drawn; the widget shows why instead. */
export class ChartRefused extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'ChartRefused';
  }
}

/**
 * The most values a spec may make Vega generate in one step (expression `sequence`, density
 * steps, quantile probes). The chart draws the report's rows, so a few thousand is plenty; a
 * spec asking for millions would fill the heap of the process every render runs in.
 */
export const MAX_GENERATED_VALUES = 10_000;

const count = (start: number, stop: number, step: number) => (step === 0 ? Infinity : Math.max(0, Math.ceil((stop - start) / step)));

/**
 * Vega's expression `sequence` (vega-util `range`) with a bounded length, registered in place of
 * Vega's own by the server (charts.ts) and the embedded page: same result, but `sequence(0, 1e9)`
 * in a calculate or a bin axis is an error of that expression, not an exhausted heap or a hung tab.
 */
export function boundedSequence(...args: number[]): number[] {
  const [start, stop, step = 1] = args.length === 1 ? [0, args[0]!] : args;
  const n = count(Number(start), Number(stop), Number(step));
  if (!(n <= MAX_GENERATED_VALUES)) throw new Error(`sequence() would make ${n} values; a chart may make at most ${MAX_GENERATED_VALUES}`);
  return Array.from({ length: n }, (_, i) => Number(start) + i * Number(step));
}

/**
 * The most views (unit specs) a spec may expand into. A dashboard's chart has one to a few; the
 * bound is on what Vega-Lite's work grows with, which the body's size does not bound: `repeat`
 * multiplies its inner spec, so a 1 KiB spec repeating a layer over 60 rows, 60 columns and 20
 * layers (72,000 views) took Vega-Lite over 100 s of one core. At this bound the slowest spec
 * measured (32 box plots, each a composite of several layers) took about 0.3 s on a loaded 2-core machine.
 */
export const MAX_CHART_VIEWS = 32;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The views a Vega-Lite spec expands into: a unit is one, layers and concatenations add up theirs,
 * a repeat multiplies its inner spec by its fields (rows × columns × layers), a facet by nothing
 * (it splits the rows when Vega runs, as the row, column and facet channels do).
 */
export function viewsOf(spec: unknown, depth = 0): number {
  if (!isObject(spec)) return 0;
  // Bodies nest at most MAX_BODY_DEPTH levels (http/validation.ts); this is a second bound, not the first.
  if (depth > 64) return Infinity;
  if ('mark' in spec) return 1;
  let views = 0;
  for (const key of ['layer', 'concat', 'hconcat', 'vconcat'] as const) {
    const children = spec[key];
    if (Array.isArray(children)) for (const child of children) views += viewsOf(child, depth + 1);
  }
  if (isObject(spec.spec)) {
    const { repeat } = spec;
    const times = Array.isArray(repeat)
      ? repeat.length
      : isObject(repeat)
        ? [repeat.row, repeat.column, repeat.layer].reduce<number>((n, fields) => n * (Array.isArray(fields) ? fields.length : 1), 1)
        : 1;
    views += times * viewsOf(spec.spec, depth + 1);
  }
  return views;
}

/**
 * Refuses what a chart must not do, before Vega-Lite compiles it: read data other than the
 * report's rows (`data` or `datasets` anywhere below the top, where the rows go: a `sequence` or
 * `graticule` generator, a URL, a lookup's source) or generate values without a bound (density
 * steps, quantile probes, imputed key sequences). Iterative: the spec's depth is bounded at input
 * (MAX_JSON_DEPTH), but no spec should rely on that here. Nor may it expand into more than
 * MAX_CHART_VIEWS views: Vega-Lite's work grows with them, and the server's renders compile on
 * the event loop.
 */
export function checkChartSpec(spec: Record<string, unknown>): void {
  const views = viewsOf(spec);
  if (views > MAX_CHART_VIEWS)
    throw new ChartRefused(`The chart expands into ${views} views (layers, concatenations, repeats); a chart may have at most ${MAX_CHART_VIEWS}.`);
  const stack: unknown[] = [spec];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node !== 'object' || node === null) continue;
    if (Array.isArray(node)) {
      stack.push(...(node as unknown[]));
      continue;
    }
    const o = node as Record<string, unknown>;
    if (node !== spec && ('data' in o || 'datasets' in o))
      throw new ChartRefused('A chart draws its report’s rows; a spec may not name other data (data, datasets).');
    if ('density' in o) {
      for (const key of ['steps', 'minsteps', 'maxsteps'] as const) {
        if (typeof o[key] === 'number' && !(o[key] <= MAX_GENERATED_VALUES)) throw new ChartRefused(`density ${key} may be at most ${MAX_GENERATED_VALUES}.`);
      }
    }
    if ('quantile' in o && typeof o.step === 'number' && !(1 / o.step <= MAX_GENERATED_VALUES))
      throw new ChartRefused(`quantile step may be no smaller than ${1 / MAX_GENERATED_VALUES}.`);
    // keyvals as {start, stop, step} is a sequence, in a transform or in an encoding's impute.
    if (o.keyvals !== undefined && !Array.isArray(o.keyvals)) throw new ChartRefused('impute keyvals must be a list of values, not a generated sequence.');
    stack.push(...Object.values(o));
  }
}

export interface ChartSpecOptions {
  width: number;
  height: number;
  font: string;
  /** Axis and legend titles: the columns' titles (default) or their member names. */
  labels?: Labels;
  /** The page's background; the server draws on white. */
  background?: string;
  /**
   * Names the data source (`data: { name }`) instead of carrying the rows inline: the embedded
   * page sends the spec without its rows to be compiled by the server (POST /api/v1/charts/compile)
   * and puts the rows into the compiled Vega spec's dataset of this name.
   */
  dataName?: string;
  /** How a period of a time series with no rows is drawn: a gap (default) or a zero (the widget's `chart.missingValues`). */
  missingValues?: MissingValues;
}

/** The data source the embedded page names in the specs it has compiled. */
export const ROWS_DATA_NAME = 'rows';

/** The chart a report's spec and rows give: the spec chosen (its own, else one suggested by the rows), null when neither gives one. */
function chosenSpec(data: ChartData, spec: unknown, options: ChartSpecOptions): Record<string, unknown> | null {
  return ownSpec(spec) ?? suggestedSpec(data, options.labels ?? 'titles');
}

/** The x encodings' fields (as row keys) of a single view or its layers. */
function xFields(spec: Record<string, unknown>): string[] {
  const fields: string[] = [];
  const visit = (unit: unknown) => {
    if (!isObject(unit)) return;
    const x = isObject(unit.encoding) ? unit.encoding.x : undefined;
    if (isObject(x) && typeof x.field === 'string') fields.push(x.field.replace(/\\(.)/g, '$1'));
    if (Array.isArray(unit.layer)) unit.layer.forEach(visit);
  };
  visit(spec);
  return fields;
}

/** The query's date range on `dimension` when it names two dates (a relative range such as `last 6 months` is left to the rows). */
function dateRangeOf(spec: unknown, dimension: string): [string, string] | undefined {
  const query = isObject(spec) && isObject(spec.query) ? spec.query : undefined;
  const list = query && Array.isArray(query.timeDimensions) ? (query.timeDimensions as unknown[]) : [];
  for (const td of list) {
    if (!isObject(td) || td.dimension !== dimension || !Array.isArray(td.dateRange)) continue;
    const [from, to] = td.dateRange as unknown[];
    if (typeof from === 'string' && typeof to === 'string') return [from, to];
  }
  return undefined;
}

/**
 * The rows a chart draws: the query's rows, with a row for every missing period of the time
 * column the chart runs along (chart-periods.ts), its measures null (a gap) or 0 per
 * `options.missingValues`. The rows as answered when the chart runs along no time column with a
 * grain. The embedded page gives these to the spec it had compiled with `dataName`.
 */
export function chartRows(data: ChartData, spec: unknown, options: Pick<ChartSpecOptions, 'labels' | 'missingValues'> = {}): Row[] {
  const chosen = chosenSpec(data, spec, { width: 0, height: 0, font: '', ...options });
  if (!chosen) return data.rows;
  const along = new Set(xFields(chosen));
  const columns = columnsOf(data);
  const time = columns.find((c) => c.kind === 'time' && along.has(c.name) && grainOf(c.name, data.annotation) !== undefined);
  if (!time) return data.rows;
  const base = time.name.replace(/\.(second|minute|hour|day|week|month|quarter|year)$/, '');
  const aliases = columns.filter((c) => c !== time && c.kind === 'time' && c.name === base).map((c) => c.name);
  return fillMissingPeriods(data.rows, {
    time: { name: time.name, grain: grainOf(time.name, data.annotation)! },
    aliases,
    measures: columns.filter((c) => c.kind === 'measure').map((c) => c.name),
    dimensions: columns.filter((c) => c !== time && c.kind !== 'measure' && !aliases.includes(c.name)).map((c) => c.name),
    missingValues: options.missingValues ?? 'gap',
    dateRange: dateRangeOf(spec, base),
  });
}

/**
 * The full Vega-Lite spec of a chart of `data` at most `width` × `height`: the report's own spec
 * (`spec.vegaLite`) or one chosen from the data's shape, with the rows as its inline values (or
 * a named source, `options.dataName`): the rows of chartRows, missing periods filled. Its x and y
 * axes get what the rows say where the spec says nothing (chart-axes.ts): integer ticks for
 * integer-valued measures, category labels horizontal when they fit and rotated when they do not.
 * Null when neither gives a chart (no measure), which is shown as a table instead; ChartRefused
 * for a spec that reads other data or generates values without a bound.
 */
export function chartSpec(data: ChartData, spec: unknown, options: ChartSpecOptions): Record<string, unknown> | null {
  const chosen = chosenSpec(data, spec, options);
  if (!chosen) return null;
  const { data: _data, datasets: _datasets, width: _w, height: _h, $schema: _schema, ...rest } = chosen;
  checkChartSpec(rest);
  const width = Math.max(40, options.width);
  return {
    ...tuneAxes(rest, data.rows, width),
    // Vega marks the rows it reads; the caller's rows stay as the runtime answered them.
    data: options.dataName !== undefined ? { name: options.dataName } : { values: chartRows(data, spec, options).map((row) => ({ ...row })) },
    width,
    height: Math.max(30, options.height),
    autosize: { type: 'fit', contain: 'padding' },
    background: options.background ?? 'white',
    config: {
      font: options.font,
      view: { stroke: null },
      axis: { labelFontSize: LABEL_FONT_SIZE, titleFontSize: 11 },
      legend: { labelFontSize: 10, titleFontSize: 11 },
    },
  };
}
