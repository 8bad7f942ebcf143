import type * as Vega from 'vega';
import type { TopLevelSpec } from 'vega-lite';
import { FONT_FAMILY } from './fonts.js';
import { boundedSequence, chartSpec, type MissingValues } from './chart-spec.js';
import type { ReportData } from './types.js';

export { ChartRefused, checkChartSpec, columnsOf, MAX_GENERATED_VALUES, missingValuesOf, type MissingValues } from './chart-spec.js';

/**
 * A report's rows drawn as a chart: a Vega-Lite spec (chart-spec.ts: the report's own
 * `spec.vegaLite`, or one chosen from the data's shape) compiled to Vega and rendered to SVG in Node, with no canvas and
 * no browser. Text is measured by Vega's estimate and drawn in DejaVu Sans by the rasteriser.
 */

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

export interface ChartSvg {
  svg: string;
  width: number;
  height: number;
}

/**
 * The rows as an SVG chart of at most `width` × `height`; null when neither the report's spec
 * nor the data's shape gives a chart (no measure), which the page draws as a table instead.
 * `missingValues`: how a missing period of a time series is drawn (a gap by default, or zero).
 */
export async function chartSvg(data: ReportData, spec: unknown, width: number, height: number, missingValues?: MissingValues): Promise<ChartSvg | null> {
  const built = chartSpec(data, spec, { width, height, font: FONT_FAMILY, missingValues });
  if (!built) return null;
  const full = built as unknown as TopLevelSpec;
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
