import { compile, type TopLevelSpec } from 'vega-lite';

/**
 * The worker-pool task of the charts area (charts.service.ts): a Vega-Lite spec compiled to Vega.
 * Loaded only on pool threads, so the server's main thread never loads Vega-Lite for it.
 */

type Quiet = NonNullable<Parameters<typeof compile>[1]>['logger'];

/** Vega-Lite's warnings (a field it cannot find, a channel it drops) are the chart's own business, not the server's log. */
const quiet = {
  level() {
    return 0;
  },
  error() {
    return this;
  },
  warn() {
    return this;
  },
  info() {
    return this;
  },
  debug() {
    return this;
  },
} as unknown as Quiet;

/** What the task answers: the Vega spec as JSON text (cheaper to pass between threads than an object), or why Vega-Lite refused it. */
export type CompileOutcome = { vega: string } | { refused: string };

/** A refusal is an answer rather than a thrown error: an error crosses threads without its kind. */
export function compileTask(input: { spec: Record<string, unknown> }): CompileOutcome {
  try {
    return { vega: JSON.stringify(compile(input.spec as unknown as TopLevelSpec, { logger: quiet }).spec) };
  } catch (error) {
    return { refused: error instanceof Error ? error.message : String(error) };
  }
}
