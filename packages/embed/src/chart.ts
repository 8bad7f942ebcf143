import embed, { vega } from 'vega-embed';
import { boundedSequence } from '../../server/src/render/chart-spec.js';

/**
 * A chart drawn by vega-embed from the Vega-Lite spec the server's renders build too
 * (server/src/render/chart-spec.ts). Its own chunk, loaded with the first chart.
 *
 * - `ast: true`: Vega parses expressions to syntax trees and interprets them (vega-interpreter)
 *   instead of compiling them with `new Function`, so the page's CSP needs no 'unsafe-eval'.
 * - `defaultStyle: false` and no tooltip handler: both add a <style> element, which the CSP's
 *   `style-src 'self'` refuses; the page's own stylesheet styles the chart's container.
 * - A loader that loads nothing: a report's spec draws its rows, never a URL (as on the server).
 * - `sequence()` bounded as on the server, so a spec cannot hang the viewer's tab with it.
 */

vega.expressionFunction('sequence', boundedSequence);

const refusingLoader = {
  ...vega.loader(),
  load: () => Promise.reject(new Error('Charts read only the report’s rows; URLs are not loaded')),
  sanitize: () => Promise.resolve({ href: '' }),
} as unknown as ReturnType<typeof vega.loader>;

export async function drawChart(element: HTMLElement, spec: Record<string, unknown>): Promise<() => void> {
  const result = await embed(element, spec as never, {
    actions: false,
    renderer: 'svg',
    ast: true,
    defaultStyle: false,
    tooltip: false,
    loader: refusingLoader,
    mode: 'vega-lite',
  });
  return () => result.finalize();
}
