import { expressionFunction, loader, parse, View, type Spec } from 'vega';
import { expressionInterpreter } from 'vega-interpreter';
import { boundedSequence } from '../../server/src/render/chart-spec.js';

/**
 * A chart drawn by Vega from the Vega spec the server compiled (POST /api/v1/charts/compile) from
 * the Vega-Lite spec its renders build too (server/src/render/chart-spec.ts), with the rows put
 * into its named dataset here: the rows never go to the compile, and the page ships no Vega-Lite.
 * Its own chunk, loaded with the first chart.
 *
 * - `ast: true` and vega-interpreter: Vega parses expressions to syntax trees and interprets them
 *   instead of compiling them with `new Function`, so the page's CSP needs no 'unsafe-eval'.
 * - No tooltip handler and no default style: either would add a <style> element, which the CSP's
 *   `style-src 'self'` refuses; the page's own stylesheet styles the chart's container.
 * - A loader that loads nothing: a report's spec draws its rows, never a URL (as on the server).
 * - `sequence()` bounded as on the server, so a spec cannot hang the viewer's tab with it.
 */

expressionFunction('sequence', boundedSequence);

const refusingLoader = {
  ...loader(),
  load: () => Promise.reject(new Error('Charts read only the report’s rows; URLs are not loaded')),
  sanitize: () => Promise.resolve({ href: '' }),
} as unknown as ReturnType<typeof loader>;

/** The compiled spec with `rows` as the values of its dataset `name` (a copy: the compiled spec is shared by the widgets that drew it). */
function withRows(compiled: Record<string, unknown>, name: string, rows: ReadonlyArray<Record<string, unknown>>): Spec {
  const spec = structuredClone(compiled) as { data?: Array<Record<string, unknown>> };
  const source = spec.data?.find((d) => d.name === name);
  if (!source) throw new Error('The compiled chart has no dataset for its rows');
  // Vega marks the rows it reads; the caller's rows stay as the runtime answered them.
  source.values = rows.map((row) => ({ ...row }));
  return spec as Spec;
}

export async function drawChart(
  element: HTMLElement,
  compiled: Record<string, unknown>,
  name: string,
  rows: ReadonlyArray<Record<string, unknown>>,
): Promise<() => void> {
  const view = new View(parse(withRows(compiled, name, rows), undefined, { ast: true }), {
    renderer: 'svg',
    container: element,
    loader: refusingLoader,
    expr: expressionInterpreter,
    hover: true,
  });
  try {
    await view.runAsync();
  } catch (error) {
    view.finalize();
    throw error;
  }
  return () => view.finalize();
}
