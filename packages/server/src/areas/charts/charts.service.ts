import { createHash } from 'node:crypto';
import type { WorkerPool } from '../../jobs/index.js';
import { ChartRefused, checkChartSpec } from '../../render/chart-spec.js';
import { ApiError } from '../../shared/problems.js';
import type { CompiledChart } from './charts.schemas.js';
import type { CompileOutcome } from './compile-task.js';

/** The name the compile task is registered under on the jobs service's worker pool. */
export const CHART_COMPILE_TASKS = 'chart-compile';

/** Compiled specs remembered, by tenant and spec: the same dashboards are viewed by many viewers. */
const MEMO_ENTRIES = 256;
/** And at most this much compiled Vega, in characters of its JSON, across them. */
const MEMO_CHARS = 32 * 1024 * 1024;
/** A compile that has not answered by then (waiting for a thread included) is given up: 503. */
const COMPILE_TIMEOUT_MS = 10_000;

export interface ChartsService {
  /** The Vega spec of a Vega-Lite spec (`POST /api/v1/charts/compile`), for a caller of `tenantId`. */
  compile(tenantId: number, spec: Record<string, unknown>): Promise<CompiledChart>;
}

export interface ChartsOptions {
  timeoutMs?: number;
  memoEntries?: number;
  memoChars?: number;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function refuse(pointer: string, message: string): never {
  throw new ApiError('VALIDATION_FAILED', message, { errors: [{ pointer, message }] });
}

/**
 * What a spec must be to be compiled: its data a named source at most (the caller has the rows and
 * puts them into the compiled spec; the server never sees them), no data below the top
 * (checkChartSpec, as the server's renders and the embedded page refuse it), and no more than
 * MAX_CHART_VIEWS views.
 */
function checkSpec(spec: Record<string, unknown>): void {
  if ('datasets' in spec) refuse('/body/spec/datasets', 'A chart names its data source; `datasets` (rows in the spec) is not accepted.');
  const { data } = spec;
  if (data !== undefined && !(isObject(data) && Object.keys(data).length === 1 && typeof data.name === 'string' && data.name !== '')) {
    refuse(
      '/body/spec/data',
      'A chart’s data is a named source at most, `data: { name }`: no `values`, `url`, generator or format. Put the rows into the compiled spec’s dataset of that name.',
    );
  }
  try {
    checkChartSpec(spec);
  } catch (error) {
    // Including more than MAX_CHART_VIEWS views (render/chart-spec.ts).
    if (error instanceof ChartRefused) refuse('/body/spec', error.message);
    throw error;
  }
}

type Remembered = { chart: CompiledChart; chars: number } | { refused: string; chars: number };

/**
 * Compiles Vega-Lite specs to Vega for the embedded dashboard page, which then ships Vega alone
 * (no Vega-Lite) to viewers' browsers. The server's own renders compile in render/charts.ts.
 *
 * On the worker pool, not the main thread: the body's 64 KiB do not bound the work (see
 * MAX_CHART_VIEWS), and even within the view bound a spec costs up to a few hundred milliseconds
 * of Vega-Lite, which any viewer holding an embed token could send again and again with a small
 * change each time. On a pool thread that time holds no request's event loop, and a compile past
 * COMPILE_TIMEOUT_MS is abandoned (piscina ends the thread). A typical chart compiles in a few
 * milliseconds, and the memo answers a dashboard's charts for its next viewers without the pool.
 */
export function chartsService(pool: WorkerPool, options: ChartsOptions = {}): ChartsService {
  pool.register(CHART_COMPILE_TASKS, new URL('./compile-task.js', import.meta.url));
  const timeoutMs = options.timeoutMs ?? COMPILE_TIMEOUT_MS;
  const maxEntries = options.memoEntries ?? MEMO_ENTRIES;
  const maxChars = options.memoChars ?? MEMO_CHARS;
  // Least recently used first (a Map keeps insertion order; a hit is moved to the end).
  const memo = new Map<string, Promise<Remembered>>();
  const sizes = new Map<string, number>();
  let chars = 0;

  function forget(key: string): void {
    memo.delete(key);
    chars -= sizes.get(key) ?? 0;
    sizes.delete(key);
  }
  function trim(): void {
    while (memo.size > maxEntries || (chars > maxChars && memo.size > 0)) forget(memo.keys().next().value!);
  }

  async function run(spec: Record<string, unknown>): Promise<Remembered> {
    let outcome: CompileOutcome;
    try {
      outcome = await pool.run<{ spec: Record<string, unknown> }, CompileOutcome>(
        CHART_COMPILE_TASKS,
        'compileTask',
        { spec },
        { signal: AbortSignal.timeout(timeoutMs) },
      );
    } catch (error) {
      if ((error as Error).name === 'AbortError') throw new ApiError('UNAVAILABLE', `The chart was not compiled within ${timeoutMs / 1000} s; try again.`);
      throw error;
    }
    if ('refused' in outcome) {
      // Vega-Lite's message may quote the spec back: a line of it is enough.
      const refused = outcome.refused.length > 500 ? `${outcome.refused.slice(0, 500)}…` : outcome.refused;
      return { refused, chars: refused.length };
    }
    return { chart: { vega: JSON.parse(outcome.vega) as Record<string, unknown> }, chars: outcome.vega.length };
  }

  return {
    async compile(tenantId, spec) {
      checkSpec(spec);
      // By tenant too: whether a spec was compiled lately says nothing across accounts.
      const key = createHash('sha256')
        .update(`${tenantId}\n${JSON.stringify(spec)}`)
        .digest('base64url');
      let remembered = memo.get(key);
      if (remembered) {
        memo.delete(key);
        memo.set(key, remembered);
      } else {
        const compiling = run(spec);
        remembered = compiling;
        memo.set(key, compiling);
        // Failures (a timeout, the pool closing) are not remembered; answers, refusals included, are.
        void compiling.then(
          (answer) => {
            if (memo.get(key) !== compiling) return;
            sizes.set(key, answer.chars);
            chars += answer.chars;
            trim();
          },
          () => {
            if (memo.get(key) === compiling) forget(key);
          },
        );
        trim();
      }
      const answer = await remembered;
      if ('refused' in answer) throw new ApiError('VALIDATION_FAILED', `Vega-Lite could not compile the chart: ${answer.refused}`);
      return answer.chart;
    },
  };
}
