import type * as Vega from 'vega';
import type { TopLevelSpec } from 'vega-lite';
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

function annotationOf(
  annotation: Record<string, unknown>,
  section: string,
): Record<string, { title?: string; shortTitle?: string; type?: string; kind?: string }> {
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
    return {
      mark: { type: 'line', point: true },
      encoding: { x: { field: field(x.name), type: 'temporal', title: x.title, ...(timeUnit ? { timeUnit } : {}) }, y },
    };
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

// A report's spec may name URLs (data, images, links): a render reads nothing but the rows it was
// given. `sanitize` answers with no URL rather than rejecting: the SVG renderer reads the answer
// of a link's sanitize without a catch, so a rejection there is an unhandled rejection that ends
// the process.
const NO_URL = 'Charts read only the report’s rows; URLs are not loaded';

interface ChartLibraries {
  vega: typeof Vega;
  compile: typeof import('vega-lite').compile;
  expressionInterpreter: typeof import('vega-interpreter').expressionInterpreter;
  refusingLoader: ReturnType<typeof Vega.loader>;
}
let libraries: Promise<ChartLibraries> | undefined;

/** Vega and Vega-Lite, loaded with the process's first chart: most processes draw none, and loading them takes most of a second. */
function chartLibraries(): Promise<ChartLibraries> {
  libraries ??= (async () => {
    const [vega, { compile }, { expressionInterpreter }] = await Promise.all([import('vega'), import('vega-lite'), import('vega-interpreter')]);
    vega.expressionFunction('sequence', boundedSequence);
    const refusingLoader = {
      ...vega.loader(),
      load: () => Promise.reject(new Error(NO_URL)),
      sanitize: () => Promise.resolve({ href: '' }),
    } as unknown as ReturnType<typeof Vega.loader>;
    return { vega, compile, expressionInterpreter, refusingLoader };
  })();
  return libraries;
}

/** A report's spec that the server will not draw; the widget shows why instead. */
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

// Replaces Vega's expression `sequence` (vega-util `range`) for every view of this process: same
// result, but a bounded length, so `sequence(0, 1e9)` in a calculate or a bin axis is an error of
// that expression, not an out-of-memory crash.
function boundedSequence(...args: number[]): number[] {
  const [start, stop, step = 1] = args.length === 1 ? [0, args[0]!] : args;
  const n = count(Number(start), Number(stop), Number(step));
  if (!(n <= MAX_GENERATED_VALUES)) throw new Error(`sequence() would make ${n} values; a chart may make at most ${MAX_GENERATED_VALUES}`);
  return Array.from({ length: n }, (_, i) => Number(start) + i * Number(step));
}

/**
 * Refuses what a server-side chart must not do, before Vega-Lite compiles it: read data other
 * than the report's rows (`data` or `datasets` anywhere below the top, where the rows go: a
 * `sequence` or `graticule` generator, a URL, a lookup's source) or generate values without a
 * bound (density steps, quantile probes, imputed key sequences). Iterative: the spec's depth is
 * bounded at input (MAX_JSON_DEPTH), but no spec should rely on that here.
 */
export function checkChartSpec(spec: Record<string, unknown>): void {
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
  checkChartSpec(rest);
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
  const { vega, compile, expressionInterpreter, refusingLoader } = await chartLibraries();
  const compiled = compile(full).spec;
  // Expressions are parsed to syntax trees and interpreted, never compiled to JavaScript with
  // `new Function`: a spec's `expr` and signals can only do what the interpreter implements.
  const view = new vega.View(vega.parse(compiled, undefined, { ast: true }), { renderer: 'none', loader: refusingLoader, expr: expressionInterpreter });
  try {
    const svg = await view.toSVG();
    return { svg, width: view.width(), height: view.height() };
  } finally {
    view.finalize();
  }
}
