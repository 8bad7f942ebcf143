import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chartsService } from '../src/areas/charts/charts.service.js';
import { MAX_CHART_VIEWS, viewsOf } from '../src/render/chart-spec.js';
import type { WorkerPool } from '../src/jobs/index.js';
import { chartSpec, ROWS_DATA_NAME } from '../src/render/chart-spec.js';
import { ApiError } from '../src/shared/problems.js';
import { problem, STORE_INDEPENDENT, TestApp } from './harness.js';

/**
 * `POST /api/v1/charts/compile` (areas/charts, an extension): the embedded dashboard page has its
 * charts' Vega-Lite specs compiled here, without their rows, and draws the Vega answer itself.
 * The route touches no store.
 */

type Json = Record<string, any>;

const rows = [
  { 'orders.status': 'shipped', 'orders.count': 3 },
  { 'orders.status': 'pending', 'orders.count': 5 },
];
const annotation = { measures: { 'orders.count': { title: 'Orders' } }, dimensions: { 'orders.status': { title: 'Status' } } };
/** The bar chart the page asks for: the shared spec, its data a named source. */
const barChart = () => chartSpec({ rows, annotation }, null, { width: 300, height: 200, font: 'sans-serif', dataName: ROWS_DATA_NAME })!;

describe.each(STORE_INDEPENDENT)('POST /api/v1/charts/compile (%s)', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await TestApp.create(dialect);
  });
  afterAll(async () => t?.close());

  const compile = (spec: unknown, headers: { key?: string | null; headers?: Record<string, string> } = {}) =>
    t.request({ method: 'POST', url: '/api/v1/charts/compile', body: { spec }, ...headers });

  it('compiles a bar chart: Vega marks, and the dataset the spec names, without values; the rows drawn into it make the bars', async () => {
    const res = await compile(barChart());
    expect(res.statusCode, res.body).toBe(200);
    const { vega } = res.json() as { vega: Json };
    expect(String(vega.$schema)).toContain('vega/v');
    expect(vega.marks.length).toBeGreaterThan(0);
    const source = (vega.data as Json[]).find((d) => d.name === ROWS_DATA_NAME);
    expect(source).toEqual({ name: ROWS_DATA_NAME });
    // Nothing of the rows went to the server, so nothing of them comes back.
    expect(res.body).not.toContain('shipped');

    // The page's part: the rows as the dataset's values, drawn by Vega alone.
    const vegaLib = await import('vega');
    const { expressionInterpreter } = await import('vega-interpreter');
    source!.values = rows.map((row) => ({ ...row }));
    const view = new vegaLib.View(vegaLib.parse(vega as never, undefined, { ast: true }), { renderer: 'none', expr: expressionInterpreter });
    try {
      const svg = await view.toSVG();
      expect(svg).toContain('shipped');
      expect(svg).toContain('pending');
      expect(svg.match(/<path[^>]*aria-roledescription="bar"/g)?.length).toBe(2);
    } finally {
      view.finalize();
    }
  });

  it('compiles a spec with no data at all, and answers the same spec again from memory', async () => {
    const spec = { mark: 'rule', encoding: { y: { datum: 1 } } };
    const first = await compile(spec);
    expect(first.statusCode, first.body).toBe(200);
    const again = await compile(spec);
    expect(again.statusCode).toBe(200);
    expect(again.body).toBe(first.body);
  });

  it('refuses a spec naming data other than a named source, at the top or below it: 400 VALIDATION_FAILED', async () => {
    const bar = { mark: 'bar', encoding: { x: { field: 'a', type: 'nominal' } } };
    const refusals: Array<[unknown, string]> = [
      [{ ...bar, data: { values: [{ a: 1 }] } }, '/body/spec/data'],
      [{ ...bar, data: { url: 'https://example.com/rows.json' } }, '/body/spec/data'],
      [{ ...bar, data: { name: 'rows', values: [{ a: 1 }] } }, '/body/spec/data'],
      [{ ...bar, data: { name: 'rows', format: { type: 'csv' } } }, '/body/spec/data'],
      [{ ...bar, data: { sequence: { start: 0, stop: 10 } } }, '/body/spec/data'],
      [{ ...bar, data: { name: '' } }, '/body/spec/data'],
      [{ ...bar, data: 'rows' }, '/body/spec/data'],
      [{ ...bar, datasets: { rows: [{ a: 1 }] } }, '/body/spec/datasets'],
      [{ data: { name: 'rows' }, layer: [{ ...bar, data: { url: 'https://example.com/rows.json' } }] }, '/body/spec'],
      [{ data: { name: 'rows' }, layer: [{ ...bar, data: { name: 'other' } }] }, '/body/spec'],
      [{ ...bar, transform: [{ lookup: 'a', from: { data: { url: 'https://example.com/x.json' }, key: 'a' } }] }, '/body/spec'],
      [{ ...bar, transform: [{ density: 'a', steps: 1e7 }] }, '/body/spec'],
    ];
    for (const [spec, pointer] of refusals) {
      const body = problem(await compile(spec), 400, 'VALIDATION_FAILED');
      expect(body.errors?.[0]?.pointer, JSON.stringify(spec)).toBe(pointer);
    }
  });

  it('refuses a spec Vega-Lite cannot compile with its message, and one that expands into too many views', async () => {
    const invalid = problem(await compile({ layer: [{ title: 'no mark' }] }), 400, 'VALIDATION_FAILED');
    expect(invalid.detail).toContain('Vega-Lite could not compile the chart: Invalid specification');
    // Refused again from memory, the same way.
    expect(problem(await compile({ layer: [{ title: 'no mark' }] }), 400, 'VALIDATION_FAILED').detail).toBe(invalid.detail);
    // A 1 KiB repeat of 60 × 60 × 20 views took Vega-Lite over 100 s: refused before it runs.
    const fields = (n: number, p: string) => Array.from({ length: n }, (_, i) => `${p}${i}`);
    const repeated = {
      repeat: { row: fields(60, 'r'), column: fields(60, 'c'), layer: fields(20, 'l') },
      spec: { layer: [{ mark: 'point', encoding: { x: { field: { repeat: 'column' }, type: 'quantitative' } } }] },
    };
    const started = Date.now();
    expect(problem(await compile(repeated), 400, 'VALIDATION_FAILED').detail).toContain(`expands into 72000 views`);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('refuses a body over 64 KiB (413) and a body that is not `{ spec: object }` (400)', async () => {
    const big = { mark: 'bar', description: 'x'.repeat(64 * 1024) };
    const body = problem(await compile(big), 413, 'PAYLOAD_TOO_LARGE');
    expect(body.detail).toContain('64 KiB');
    problem(await t.request({ method: 'POST', url: '/api/v1/charts/compile', body: { spec: 'bar' } }), 400, 'VALIDATION_FAILED');
    problem(await t.request({ method: 'POST', url: '/api/v1/charts/compile', body: { spec: { mark: 'bar' }, rows } }), 400, 'VALIDATION_FAILED');
    problem(await t.request({ method: 'POST', url: '/api/v1/charts/compile', body: {} }), 400, 'VALIDATION_FAILED');
  });

  it('refuses a request without a credential, or with a forged one: 401', async () => {
    problem(await compile(barChart(), { key: null }), 401, 'UNAUTHENTICATED');
    problem(await compile(barChart(), { key: `mapi_${'Z'.repeat(40)}` }), 401, 'UNAUTHENTICATED');
  });

  it('answers any user of the account, and an embed token', async () => {
    const viewer = await t.user('VIEWER');
    expect((await compile(barChart(), { key: viewer.key })).statusCode).toBe(200);
    const deploymentId = await t.deployment('charts');
    const generated = await t.request({ method: 'POST', url: '/api/v1/embed/generate-session', body: { deploymentId, externalId: 'chart-viewer' } });
    expect(generated.statusCode, generated.body).toBe(200);
    const exchanged = await t.request({ method: 'POST', url: '/api/v1/embed/session/token', key: null, body: generated.json() });
    expect(exchanged.statusCode, exchanged.body).toBe(200);
    const token = (exchanged.json() as { token: string }).token;
    const res = await compile(barChart(), { key: null, headers: { authorization: `Bearer ${token}` } });
    expect(res.statusCode, res.body).toBe(200);
    expect((res.json() as { vega: Json }).vega.marks.length).toBeGreaterThan(0);
  });
});

describe('the charts service', () => {
  /** A pool that answers every compile with the spec's mark, counting the runs; `hold` keeps them waiting. */
  function fakePool(options: { fail?: boolean; hold?: boolean } = {}) {
    const runs: unknown[] = [];
    const pool: WorkerPool = {
      size: 1,
      register: () => undefined,
      run: async <I, O>(_name: string, _fn: string, input: I, opts: { signal?: AbortSignal } = {}): Promise<O> => {
        runs.push(input);
        if (options.hold) {
          await new Promise((_resolve, reject) =>
            opts.signal?.addEventListener('abort', () => reject(Object.assign(new Error('aborted'), { name: 'AbortError' }))),
          );
        }
        if (options.fail) throw new Error('the pool is closed');
        const spec = (input as { spec: Json }).spec;
        if (spec.mark === 'refuse') return { refused: 'no such mark' } as O;
        return { vega: JSON.stringify({ marks: [{ type: spec.mark }], padding: 'x'.repeat(100) }) } as O;
      },
      close: async () => undefined,
    };
    return { pool, runs };
  }

  it('compiles a spec once per account, however many ask at once; another account compiles its own', async () => {
    const { pool, runs } = fakePool();
    const charts = chartsService(pool);
    const answers = await Promise.all([charts.compile(1, { mark: 'bar' }), charts.compile(1, { mark: 'bar' }), charts.compile(1, { mark: 'bar' })]);
    expect(runs).toHaveLength(1);
    expect(answers[0]).toEqual({ vega: { marks: [{ type: 'bar' }], padding: 'x'.repeat(100) } });
    await charts.compile(2, { mark: 'bar' });
    expect(runs).toHaveLength(2);
    await expect(charts.compile(1, { mark: 'refuse' })).rejects.toThrow('Vega-Lite could not compile the chart: no such mark');
    await expect(charts.compile(1, { mark: 'refuse' })).rejects.toThrow(ApiError);
    expect(runs).toHaveLength(3);
  });

  it('forgets the least recently used beyond its entries and its characters', async () => {
    const { pool, runs } = fakePool();
    const charts = chartsService(pool, { memoEntries: 2 });
    await charts.compile(1, { mark: 'a' });
    await charts.compile(1, { mark: 'b' });
    await charts.compile(1, { mark: 'a' });
    await charts.compile(1, { mark: 'c' });
    expect(runs).toHaveLength(3);
    // `a` was used after `b`: `b` went.
    await charts.compile(1, { mark: 'a' });
    expect(runs).toHaveLength(3);
    await charts.compile(1, { mark: 'b' });
    expect(runs).toHaveLength(4);

    const small = fakePool();
    const bounded = chartsService(small.pool, { memoChars: 250 });
    await bounded.compile(1, { mark: 'a' });
    await bounded.compile(1, { mark: 'b' });
    await bounded.compile(1, { mark: 'b' });
    expect(small.runs).toHaveLength(2);
    // Two answers of about 130 characters do not fit in 250: `a` went.
    await bounded.compile(1, { mark: 'a' });
    expect(small.runs).toHaveLength(3);
  });

  it('remembers no failure: a pool error is thrown and the next ask runs again; a compile past its time is 503', async () => {
    const failing = fakePool({ fail: true });
    const charts = chartsService(failing.pool);
    await expect(charts.compile(1, { mark: 'bar' })).rejects.toThrow('the pool is closed');
    await expect(charts.compile(1, { mark: 'bar' })).rejects.toThrow('the pool is closed');
    expect(failing.runs).toHaveLength(2);

    const held = fakePool({ hold: true });
    const slow = chartsService(held.pool, { timeoutMs: 20 });
    const error = await slow.compile(1, { mark: 'bar' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).code).toBe('UNAVAILABLE');
  });

  it('counts views: units, layers and concatenations add up, repeats multiply', () => {
    const unit = { mark: 'bar' };
    expect(viewsOf(unit)).toBe(1);
    expect(viewsOf({ layer: [unit, unit, { layer: [unit, unit] }] })).toBe(4);
    expect(viewsOf({ hconcat: [unit, { vconcat: [unit, unit] }], concat: [unit] })).toBe(4);
    expect(viewsOf({ repeat: ['a', 'b', 'c'], spec: { layer: [unit, unit] } })).toBe(6);
    expect(viewsOf({ repeat: { row: ['a', 'b'], column: ['c', 'd', 'e'] }, spec: unit })).toBe(6);
    expect(viewsOf({ facet: { row: { field: 'a' } }, spec: { layer: [unit, unit] } })).toBe(2);
    expect(viewsOf({ repeat: { row: Array(6).fill('a'), column: Array(6).fill('b') }, spec: unit })).toBeGreaterThan(MAX_CHART_VIEWS);
  });
});
