import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Ajv, type ValidateFunction } from 'ajv';
import type { WorkerPool } from '../../jobs/index.js';
import { ApiError } from '../../shared/problems.js';

/** Rows of the last query a chart carries inline. */
export const CHART_ROWS = 500;

let validator: ValidateFunction | null = null;

/**
 * Vega-Lite's own JSON schema, as the installed `vega-lite` ships it, compiled once per thread on
 * first use (about 2 s, which is why the server checks charts on a worker-pool thread: chartChecker)
 * : a chart the model writes is checked against what Vega-Lite accepts before anyone's browser is given it.
 */
function validate(): ValidateFunction {
  if (validator === null) {
    const path = createRequire(import.meta.url).resolve('vega-lite/vega-lite-schema.json');
    const schema = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
    // Vega-Lite's schema uses keywords and formats Ajv's strict mode refuses; it is trusted input.
    validator = new Ajv({ strict: false, validateFormats: false, allErrors: false }).compile(schema);
  }
  return validator;
}

/** Whether a value names a URL anywhere (`url` keys: data to fetch, images, links): a chart draws only the rows given to it. */
function namesUrl(value: unknown, depth = 0): boolean {
  if (depth > 64) return true;
  if (Array.isArray(value)) return value.some((v) => namesUrl(v, depth + 1));
  if (value === null || typeof value !== 'object') return false;
  return Object.entries(value).some(([key, v]) => key === 'url' || key === 'href' || namesUrl(v, depth + 1));
}

/**
 * The model's chart as it is shown: its own data dropped, the last query's rows inlined as
 * `data.values`, then checked against Vega-Lite's schema. A spec that is not valid, or names a
 * URL, is refused (400, told to the model).
 */
export function checkChart(input: unknown, rows: Array<Record<string, unknown>>): Record<string, unknown> {
  if (input === null || typeof input !== 'object' || Array.isArray(input))
    throw new ApiError('VALIDATION_FAILED', 'The chart must be a Vega-Lite spec: a JSON object.');
  const { data: _ignored, datasets: _alsoIgnored, ...rest } = input as Record<string, unknown>;
  if (namesUrl(rest)) throw new ApiError('VALIDATION_FAILED', 'The chart may not name a URL: it draws only the rows of the last query.');
  const spec = { ...rest, data: { values: rows.slice(0, CHART_ROWS) } };
  const check = validate();
  if (!check(spec)) {
    const first = check.errors?.[0];
    throw new ApiError(
      'VALIDATION_FAILED',
      `The chart is not a valid Vega-Lite spec: ${first ? `${first.instancePath || '/'} ${first.message ?? ''}` : 'rejected'}.`,
    );
  }
  return spec;
}

/** The name the chart check is registered under on the jobs service's worker pool. */
export const CHART_TASKS = 'agent-charts';

/** The pool task: `checkChart` with its refusal as a message, since an ApiError does not cross threads. */
export function checkTask(input: { spec: unknown; rows: Array<Record<string, unknown>> }): { spec: Record<string, unknown> } | { refused: string } {
  try {
    return { spec: checkChart(input.spec, input.rows) };
  } catch (error) {
    if (error instanceof ApiError) return { refused: error.detail };
    throw error;
  }
}

export type ChartChecker = (spec: unknown, rows: Array<Record<string, unknown>>) => Promise<Record<string, unknown>>;

/**
 * `checkChart` on a worker-pool thread: compiling Vega-Lite's schema takes seconds once per
 * thread, and checking a chart of 500 rows tens of milliseconds, neither on the event loop.
 */
export function chartChecker(pool: WorkerPool): ChartChecker {
  pool.register(CHART_TASKS, new URL('./chart.js', import.meta.url));
  return async (spec, rows) => {
    const result = await pool.run<{ spec: unknown; rows: Array<Record<string, unknown>> }, { spec: Record<string, unknown> } | { refused: string }>(
      CHART_TASKS,
      'checkTask',
      { spec, rows },
    );
    if ('refused' in result) throw new ApiError('VALIDATION_FAILED', result.refused);
    return result.spec;
  };
}
