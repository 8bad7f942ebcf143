import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_RUNTIME_OPTIONS } from '../src/runtime/supervisor.js';
import { STORE_INDEPENDENT, TestApp } from './harness.js';
import { canStartSecondCluster, startSecondCluster } from './pg-cluster-fixture.js';
import { FAST_RUNTIME, runtimeProbe } from './runtime-support.js';

/*
 * Issue 32, "Bad input and limits": the limits of the runtime's configuration hold on every route
 * that runs a query, and on the SQL port: QUERY_MAX_ROWS (a query names at most that many rows as
 * its limit, and gets at most the default, min(10,000, QUERY_MAX_ROWS), when it names none),
 * QUERY_MAX_RESULT_BYTES (the rows of an answer, as JSON: per query, and in all for a request of
 * several) and QUERY_TIMEOUT_MS (a statement stopped at it, answered 400 naming it; 57014 on the
 * SQL port, PostgreSQL's own code for a statement stopped at its statement_timeout).
 * `/v1/sql` of a JSON query and `/v1/dry-run` run nothing: only the row limit applies there (the
 * statement they answer carries it), and a query too slow to run is answered at once.
 */

type Json = Record<string, any>;

const MAX_ROWS = 50;
const MAX_BYTES = 2_048;
/** Longer than the three failed liveness checks (~2 s with FAST_RUNTIME) that would otherwise kill a runtime busy in a statement. */
const TIMEOUT_MS = 2_500;

/**
 * Beside the starter model (the sample dataset): 300 generated rows, an hour apart, and a cube
 * over a billion, which no statement counts within the limit.
 */
const MODEL = `cubes:
  - name: numbers
    sql: "WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 300) SELECT n, 'generated row ' || n AS label, datetime('2026-01-01', '+' || (n - 1) || ' hours') AS at FROM g"
    dimensions:
      - { name: n, sql: n, type: number, primary_key: true, public: true }
      - { name: label, sql: label, type: string }
      - { name: at, sql: at, type: time }
    measures:
      - { name: count, type: count }

  - name: slow
    sql: "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000000) SELECT x AS id FROM c"
    dimensions:
      - { name: id, sql: id, type: number, primary_key: true }
    measures:
      - { name: count, type: count }
`;

/** A PostgreSQL data source's cube that sleeps past the limit: PostgreSQL's statement_timeout stops it. */
const PG_MODEL = `cubes:
  - name: sleepy
    sql: "SELECT 1 AS id FROM pg_sleep(30)"
    dimensions:
      - { name: id, sql: id, type: number, primary_key: true }
    measures:
      - { name: count, type: count }
  - name: awake
    sql: "SELECT 1 AS id"
    dimensions:
      - { name: id, sql: id, type: number, primary_key: true }
    measures:
      - { name: count, type: count }
`;

const TIMEOUT_ERROR = `The statement ran longer than the ${TIMEOUT_MS} ms a query may take (QUERY_TIMEOUT_MS) and was stopped. Add filters, fewer dimensions or a narrower date range.`;
const bytesOf = (rows: unknown) => Buffer.byteLength(JSON.stringify(rows));

for (const dialect of STORE_INDEPENDENT) {
  describe(`QUERY_MAX_ROWS, QUERY_MAX_RESULT_BYTES and QUERY_TIMEOUT_MS on every data-API route and the SQL port (${dialect})`, () => {
    let t: TestApp;
    let r: ReturnType<typeof runtimeProbe>;
    let id: number;
    let port: number;
    let warehouse: Awaited<ReturnType<typeof startSecondCluster>> | undefined;
    let onPostgres: number;
    const base = (deployment = id) => `/deployments/${deployment}/data-api/v1`;
    const post = (route: string, body: unknown, deployment = id) => t.request({ method: 'POST', url: `${base(deployment)}/${route}`, body });
    const get = (route: string, query: unknown) => t.request({ url: `${base()}/${route}?query=${encodeURIComponent(JSON.stringify(query))}` });
    /** Rows of `/v1/cubesql`'s answer (its second line). */
    const cubeSqlRows = (text: string) => (JSON.parse(text.trim().split('\n')[1]!) as { data: unknown[][] }).data;
    /** A `pg` client on the SQL port, as the admin; closed after `work`. */
    const overWire = async <T>(work: (c: pg.Client) => Promise<T>, deployment = id): Promise<T> => {
      const c = new pg.Client({ host: '127.0.0.1', port, user: 'analyst', database: String(deployment), password: t.admin.key });
      await c.connect();
      try {
        return await work(c);
      } finally {
        await c.end();
      }
    };
    const wireError = (sql: string) =>
      overWire((c) =>
        c.query(sql).then(
          () => null,
          (e: pg.DatabaseError) => ({ code: e.code, message: e.message }),
        ),
      );

    beforeAll(async () => {
      t = await TestApp.create(dialect, {
        runtime: {
          ...FAST_RUNTIME,
          queries: { ...DEFAULT_RUNTIME_OPTIONS.queries, maxRows: MAX_ROWS, maxResultBytes: MAX_BYTES, timeoutMs: TIMEOUT_MS, cacheTtlMs: 0 },
        },
        sqlApi: { port: 0, host: '127.0.0.1' },
      });
      port = t.app.sqlApi!.address()!.port;
      r = runtimeProbe(t);
      id = await r.create('limits');
      const first = await r.running(id);
      const build = `/build/api/v1/deployments/${id}`;
      expect((await t.request({ method: 'POST', url: `${build}/dev-mode` })).statusCode).toBe(200);
      expect(
        (await t.request({ method: 'PUT', url: `${build}/data-model/files`, body: { files: [{ path: 'model/cubes/limits.yml', content: MODEL }] } }))
          .statusCode,
      ).toBe(200);
      expect(
        (await t.request({ method: 'POST', url: `${build}/commit`, body: { message: 'Generated rows and a slow cube', exitDevMode: true } })).statusCode,
      ).toBe(200);
      await r.replaced(id, first.name);
      await r.logsWith(id, '3 cubes and 1 view');
      if (canStartSecondCluster()) {
        warehouse = await startSecondCluster();
        onPostgres = await r.create('limits on postgres');
        const firstPg = await r.running(onPostgres);
        const buildPg = `/build/api/v1/deployments/${onPostgres}`;
        const vars = [
          { name: 'DB_TYPE', value: 'postgres' },
          { name: 'DB_URL', value: warehouse.url },
        ];
        expect((await t.request({ method: 'PUT', url: `/api/v1/deployments/${onPostgres}/env-vars`, body: { env_variables: vars } })).statusCode).toBe(200);
        expect((await t.request({ method: 'POST', url: `${buildPg}/dev-mode` })).statusCode).toBe(200);
        expect(
          (await t.request({ method: 'PUT', url: `${buildPg}/data-model/files`, body: { files: [{ path: 'model/cubes/sleepy.yml', content: PG_MODEL }] } }))
            .statusCode,
        ).toBe(200);
        expect((await t.request({ method: 'POST', url: `${buildPg}/commit`, body: { message: 'A sleepy cube', exitDevMode: true } })).statusCode).toBe(200);
        await r.replaced(onPostgres, firstPg.name);
        await r.logsWith(onPostgres, '3 cubes and 1 view');
        await r.logsWith(onPostgres, 'Ready: the data source answers');
      }
    }, 120_000);
    afterAll(async () => {
      await t?.close();
      warehouse?.stop();
    });

    describe('QUERY_MAX_ROWS', () => {
      const rowsQuery = { dimensions: ['numbers.n'], order: { 'numbers.n': 'asc' } };
      const rowLimitError = `limit must be an integer from 0 to ${MAX_ROWS}.`;

      it('/v1/load: the default limit is QUERY_MAX_ROWS (below 10,000), a limit past it is a 400 naming it, by POST and by GET; each query of a list is held to it', async () => {
        for (const res of [await post('load', { query: rowsQuery }), await get('load', rowsQuery)]) {
          expect(res.statusCode, res.body).toBe(200);
          const body = res.json() as Json;
          expect(body.data).toHaveLength(MAX_ROWS);
          expect(body.query).toMatchObject({ limit: MAX_ROWS, rowLimit: MAX_ROWS });
        }
        expect(((await post('load', { query: { ...rowsQuery, limit: MAX_ROWS } })).json() as Json).data).toHaveLength(MAX_ROWS);
        for (const res of [await post('load', { query: { ...rowsQuery, limit: MAX_ROWS + 1 } }), await get('load', { ...rowsQuery, limit: 100_000 })]) {
          expect(res.statusCode, res.body).toBe(400);
          expect(res.json()).toEqual({ type: 'UserError', error: rowLimitError });
        }
        const multi = await post('load', {
          queryType: 'multi',
          query: [
            { ...rowsQuery, dimensions: ['numbers.n'], limit: 5 },
            { ...rowsQuery, limit: MAX_ROWS + 1 },
          ],
        });
        expect(multi.statusCode, multi.body).toBe(400);
        expect((multi.json() as Json).error).toBe(rowLimitError);
      });

      it('/v1/sql of a JSON query runs nothing and answers the statement with the limit bound: QUERY_MAX_ROWS by default, a limit past it a 400', async () => {
        const res = await post('sql', { query: rowsQuery });
        expect(res.statusCode, res.body).toBe(200);
        const [text, params] = (res.json() as Json).sql.sql as [string, unknown[]];
        expect(text).toMatch(/ LIMIT \S+ OFFSET \S+$/);
        expect(params.at(-2)).toBe(MAX_ROWS);
        expect(((await post('sql', { query: { ...rowsQuery, limit: 7 } })).json() as Json).sql.sql[1].at(-2)).toBe(7);
        const refused = await get('sql', { ...rowsQuery, limit: MAX_ROWS + 1 });
        expect(refused.statusCode, refused.body).toBe(400);
        expect((refused.json() as Json).error).toBe(rowLimitError);
        // /v1/dry-run too: the normalised query carries the default.
        expect(((await post('dry-run', { query: rowsQuery })).json() as Json).normalizedQueries[0]).toMatchObject({ limit: MAX_ROWS });
      });

      it('SQL over cubes (/v1/cubesql, /v1/sql with SQL): without LIMIT at most QUERY_MAX_ROWS rows, a LIMIT past it a 400 naming it', async () => {
        const cubesql = await post('cubesql', { query: 'SELECT n FROM numbers GROUP BY 1 ORDER BY n' });
        expect(cubesql.statusCode, cubesql.body).toBe(200);
        expect(cubeSqlRows(cubesql.body)).toHaveLength(MAX_ROWS);
        const sql = await post('sql', { query: 'SELECT n FROM numbers GROUP BY 1 ORDER BY n' });
        expect(sql.statusCode, sql.body).toBe(200);
        expect((sql.json() as Json).data).toHaveLength(MAX_ROWS);
        for (const res of [
          await post('cubesql', { query: `SELECT n FROM numbers GROUP BY 1 LIMIT ${MAX_ROWS + 1}` }),
          await post('sql', { query: `SELECT n FROM numbers GROUP BY 1 LIMIT ${MAX_ROWS + 1}` }),
        ]) {
          expect(res.statusCode, res.body).toBe(400);
          expect((res.json() as Json).error).toBe(rowLimitError);
        }
      });

      it('the SQL port: without LIMIT at most QUERY_MAX_ROWS rows, a LIMIT past it refused naming it', async () => {
        const rows = await overWire(async (c) => (await c.query('SELECT n FROM numbers GROUP BY 1 ORDER BY n')).rows);
        expect(rows).toHaveLength(MAX_ROWS);
        expect(rows[0]).toEqual({ n: '1' });
        expect(await wireError(`SELECT n FROM numbers GROUP BY 1 LIMIT ${MAX_ROWS + 1}`)).toEqual({ code: '42000', message: rowLimitError });
      });
    });

    describe('QUERY_MAX_RESULT_BYTES', () => {
      // 50 rows of about 50 bytes each: over 2 KiB; 20 of them are not.
      const wide = { dimensions: ['numbers.n', 'numbers.label'], order: { 'numbers.n': 'asc' } };
      const bytesError = /^The result is \d+(\.\d)? KiB, more than the 2\.0 KiB a query may return: add filters, fewer dimensions or a limit\.$/;

      it('/v1/load: a result over the limit is a 400 naming it, by POST and GET; under it, answered', async () => {
        for (const res of [await post('load', { query: wide }), await get('load', wide)]) {
          expect(res.statusCode, res.body).toBe(400);
          expect((res.json() as Json).error).toMatch(bytesError);
        }
        const small = await post('load', { query: { ...wide, limit: 20 } });
        expect(small.statusCode, small.body).toBe(200);
        expect(bytesOf((small.json() as Json).data)).toBeLessThan(MAX_BYTES);
      });

      it('/v1/load of several queries (compared ranges, a list): each under the limit, together over it, is a 400 naming the limit for the whole answer', async () => {
        // Twelve hourly rows of about 100 bytes: one under the limit, two over it.
        const day = (d: string) => ({
          measures: ['numbers.count'],
          timeDimensions: [{ dimension: 'numbers.at', granularity: 'hour', dateRange: [`${d}T00:00:00`, `${d}T11:59:59`] }],
          order: { 'numbers.at': 'asc' },
        });
        const one = await post('load', { query: day('2026-01-01') });
        expect(one.statusCode, one.body).toBe(200);
        const bytes = bytesOf((one.json() as Json).data);
        expect(bytes).toBeLessThan(MAX_BYTES);
        expect(bytes * 2).toBeGreaterThan(MAX_BYTES);
        const together =
          /^The 2 results are \d+(\.\d)? KiB in all, more than the 2\.0 KiB a request may return: add filters, fewer dimensions, fewer ranges or queries, or a limit\.$/;
        const { dateRange: _range, ...td } = day('2026-01-01').timeDimensions[0]!;
        const compared = await post('load', {
          queryType: 'multi',
          query: {
            ...day('2026-01-01'),
            timeDimensions: [
              {
                ...td,
                compareDateRange: [
                  ['2026-01-01T00:00:00', '2026-01-01T11:59:59'],
                  ['2026-01-02T00:00:00', '2026-01-02T11:59:59'],
                ],
              },
            ],
          },
        });
        expect(compared.statusCode, compared.body).toBe(400);
        expect((compared.json() as Json).error).toMatch(together);
        const blended = await get('load', [day('2026-01-01'), day('2026-01-02')]);
        expect(blended.statusCode, blended.body).toBe(400);
        // Without queryType=multi a list is refused before anything runs; with it, the sum is what counts.
        const multi = await t.request({
          url: `${base()}/load?queryType=multi&query=${encodeURIComponent(JSON.stringify([day('2026-01-01'), day('2026-01-02')]))}`,
        });
        expect(multi.statusCode, multi.body).toBe(400);
        expect((multi.json() as Json).error).toMatch(together);
        const fits = await post('load', {
          queryType: 'multi',
          query: [
            { ...day('2026-01-01'), limit: 5 },
            { ...day('2026-01-02'), limit: 5 },
          ],
        });
        expect(fits.statusCode, fits.body).toBe(200);
        expect((fits.json() as Json).results).toHaveLength(2);
      });

      it('SQL over cubes (/v1/cubesql, /v1/sql with SQL) and the SQL port: a result over the limit is refused naming it', async () => {
        const sql = 'SELECT n, label FROM numbers GROUP BY 1, 2 ORDER BY n';
        for (const res of [await post('cubesql', { query: sql }), await post('sql', { query: sql })]) {
          expect(res.statusCode, res.body).toBe(400);
          expect((res.json() as Json).error).toMatch(bytesError);
        }
        expect(cubeSqlRows((await post('cubesql', { query: `${sql} LIMIT 20` })).body)).toHaveLength(20);
        const refused = await wireError(sql);
        expect(refused?.code).toBe('42000');
        expect(refused?.message).toMatch(bytesError);
        expect(await overWire(async (c) => (await c.query(`${sql} LIMIT 20`)).rows.length)).toBe(20);
      });

      it('/v1/sql of a JSON query and /v1/dry-run run nothing, so no result is measured: a query whose rows would be over the limit is answered', async () => {
        expect((await post('sql', { query: wide })).statusCode).toBe(200);
        expect((await get('dry-run', wide)).statusCode).toBe(200);
      });
    });

    describe('QUERY_TIMEOUT_MS', () => {
      /** Runs `send` against the slow cube: answered after the limit, and the runtime back without counting a crash. */
      const stopped = async <T>(send: () => Promise<T>): Promise<T> => {
        const before = await r.running(id);
        const started = Date.now();
        const answer = await send();
        expect(Date.now() - started).toBeGreaterThanOrEqual(TIMEOUT_MS);
        const after = await r.podWhere(id, { status: 'Running', ready: true, restartCount: before.restartCount + 1 });
        expect(after.status).toBe('Running');
        return answer;
      };

      it('/v1/load: a statement over the limit is stopped, a 400 naming it', async () => {
        const res = await stopped(() => post('load', { query: { measures: ['slow.count'] } }));
        expect(res.statusCode, res.body).toBe(400);
        expect(res.json()).toEqual({ type: 'QueryTimeout', error: TIMEOUT_ERROR });
      }, 60_000);

      it('/v1/cubesql and /v1/sql with SQL: the same', async () => {
        for (const route of ['cubesql', 'sql']) {
          const res = await stopped(() => post(route, { query: 'SELECT count FROM slow' }));
          expect(res.statusCode, res.body).toBe(400);
          expect(res.json()).toEqual({ type: 'QueryTimeout', error: TIMEOUT_ERROR });
        }
        expect((await post('load', { query: { measures: ['starter_orders.count'] } })).statusCode).toBe(200);
      }, 60_000);

      it('the SQL port: the statement is stopped with 57014 (query_canceled, as PostgreSQL stops one at its statement_timeout), and the session goes on', async () => {
        await overWire(async (c) => {
          const error = await stopped(() =>
            c.query('SELECT count FROM slow').then(
              () => null,
              (e: pg.DatabaseError) => e,
            ),
          );
          expect({ code: error?.code, message: error?.message }).toEqual({ code: '57014', message: TIMEOUT_ERROR });
          expect((await c.query('SELECT count FROM starter_orders')).rows).toEqual([{ count: '3' }]);
        });
      }, 60_000);

      it.runIf(canStartSecondCluster())(
        'a PostgreSQL data source stops the statement itself (statement_timeout): /v1/load, /v1/cubesql and /v1/sql with SQL answer the same 400, the SQL port 57014',
        async () => {
          const before = await r.running(onPostgres);
          for (const [route, query] of [
            ['load', { measures: ['sleepy.count'] }],
            ['cubesql', 'SELECT count FROM sleepy'],
            ['sql', 'SELECT count FROM sleepy'],
          ] as const) {
            const started = Date.now();
            const res = await post(route, { query }, onPostgres);
            expect(Date.now() - started).toBeGreaterThanOrEqual(TIMEOUT_MS - 100);
            expect(res.statusCode, res.body).toBe(400);
            expect(res.json()).toEqual({ type: 'QueryTimeout', error: TIMEOUT_ERROR });
          }
          await overWire(async (c) => {
            const error = await c.query('SELECT count FROM sleepy').then(
              () => null,
              (e: pg.DatabaseError) => e,
            );
            expect({ code: error?.code, message: error?.message }).toEqual({ code: '57014', message: TIMEOUT_ERROR });
            expect((await c.query('SELECT count FROM awake')).rows).toEqual([{ count: '1' }]);
          }, onPostgres);
          // The source ended the statement: the runtime was never stopped.
          expect((await r.running(onPostgres)).restartCount).toBe(before.restartCount);
        },
        60_000,
      );

      it('/v1/sql of a JSON query and /v1/dry-run run nothing: the slow query is answered at once, the runtime untouched', async () => {
        const before = await r.running(id);
        const sql = await post('sql', { query: { measures: ['slow.count'] } });
        expect(sql.statusCode, sql.body).toBe(200);
        expect((sql.json() as Json).sql.sql[0]).toMatch(/^SELECT /);
        expect((await get('dry-run', { measures: ['slow.count'] })).statusCode).toBe(200);
        // Had either run the statement, the watchdog would have stopped the runtime (a restart).
        expect((await r.running(id)).restartCount).toBe(before.restartCount);
      });
    });
  });
}
