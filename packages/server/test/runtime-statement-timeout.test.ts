import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_RUNTIME_OPTIONS } from '../src/runtime/supervisor.js';
import { openDataSource } from '../src/semantic-layer/data-source.js';
import { DIALECTS, TestApp } from './harness.js';
import { FAST_RUNTIME, runtimeProbe } from './runtime-support.js';

/*
 * Issue 15, "Data sources": the statement timeout from configuration (QUERY_TIMEOUT_MS) holds on
 * both kinds of data source. PostgreSQL ends a statement itself (`statement_timeout`). A SQLite
 * statement cannot be interrupted, so the runtime's watchdog stops the runtime instead: the query
 * is answered 400 with the limit, and the runtime starts again at once without counting a crash.
 */

type Json = Record<string, any>;

/** Longer than the three failed liveness checks (~2 s with FAST_RUNTIME) that would otherwise kill a runtime busy in a statement. */
const LIMIT_MS = 2_500;

/**
 * The sample dataset (no DB_TYPE) and a cube over a billion generated rows, which no statement
 * counts within the limit, beside the starter model's cube of three rows.
 */
const SLOW_MODEL = `cubes:
  - name: slow
    sql: "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000000) SELECT x AS id FROM c"
    dimensions:
      - { name: id, sql: id, type: number, primary_key: true }
    measures:
      - { name: count, type: count }
`;

for (const dialect of DIALECTS) {
  describe(`QUERY_TIMEOUT_MS on a SQLite data source (${dialect})`, () => {
    let t: TestApp;
    let r: ReturnType<typeof runtimeProbe>;
    let id: number;
    const load = (measure: string) => t.request({ method: 'POST', url: `/deployments/${id}/data-api/v1/load`, body: { query: { measures: [measure] } } });

    beforeAll(async () => {
      t = await TestApp.create(dialect, { runtime: { ...FAST_RUNTIME, queries: { ...DEFAULT_RUNTIME_OPTIONS.queries, timeoutMs: LIMIT_MS, cacheTtlMs: 0 } } });
      r = runtimeProbe(t);
      id = await r.create('slow queries');
      const first = await r.running(id);
      const build = `/build/api/v1/deployments/${id}`;
      expect((await t.request({ method: 'POST', url: `${build}/dev-mode` })).statusCode).toBe(200);
      expect(
        (await t.request({ method: 'PUT', url: `${build}/data-model/files`, body: { files: [{ path: 'model/cubes/slow.yml', content: SLOW_MODEL }] } }))
          .statusCode,
      ).toBe(200);
      expect((await t.request({ method: 'POST', url: `${build}/commit`, body: { message: 'A slow cube', exitDevMode: true } })).statusCode).toBe(200);
      await r.replaced(id, first.name);
      await r.logsWith(id, '2 cubes and 1 view');
    });
    afterAll(async () => {
      await t.close();
    });

    it('a statement over the limit is stopped: 400 naming the limit, the runtime starts again at once without counting a crash, and answers the next query', async () => {
      const before = await r.running(id);
      const mark = await r.mark(id);
      const started = Date.now();
      const res = await load('slow.count');
      expect(Date.now() - started).toBeGreaterThanOrEqual(LIMIT_MS);
      expect(res.statusCode, res.body).toBe(400);
      expect((res.json() as Json).error).toBe(
        `The statement ran longer than the ${LIMIT_MS} ms a query may take (QUERY_TIMEOUT_MS) and was stopped. Add filters, fewer dimensions or a narrower date range.`,
      );
      // The watchdog's line, then the restart: at once, and not a crash (no back-off, no CrashLoopBackOff).
      const lines = await r.logsWith(
        id,
        `The runtime stopped a statement that ran longer than the ${LIMIT_MS} ms a query may take (QUERY_TIMEOUT_MS). Restarting now (restart ${before.restartCount + 1})`,
        mark,
      );
      expect(
        lines.some((l) => /^A statement ran for \d+ ms, longer than the 2500 ms a query may take \(QUERY_TIMEOUT_MS\)/.test(l)),
        lines.join('\n'),
      ).toBe(true);
      // Stopped by its watchdog at the limit, not killed as hung by failed liveness checks before it.
      expect(lines.some((l) => l.includes('Killing the runtime'))).toBe(false);
      const after = await r.running(id);
      expect(after.restartCount).toBe(before.restartCount + 1);
      const next = await load('starter_orders.count');
      expect(next.statusCode, next.body).toBe(200);
      expect((next.json() as Json).data).toEqual([{ 'starter_orders.count': 3 }]);
    }, 60_000);

    it('the same slow query again and again never puts the runtime in CrashLoopBackOff', async () => {
      for (let i = 0; i < 2; i++) {
        const before = await r.running(id);
        expect((await load('slow.count')).statusCode).toBe(400);
        const pod = await r.podWhere(id, { status: 'Running', ready: true, restartCount: before.restartCount + 1 });
        expect(pod.status).toBe('Running');
      }
      const pods = await r.pods(id);
      expect(pods.find((p) => p.type === 'production')?.status).toBe('Running');
      expect((await load('starter_orders.count')).statusCode).toBe(200);
    });
  });
}

describe.runIf(process.env.DATABASE_URL)('QUERY_TIMEOUT_MS on a PostgreSQL data source', () => {
  it('is the statement_timeout of its connections: a statement over it fails with PostgreSQL’s reason, and the next one runs', async () => {
    const url = new URL(process.env.DATABASE_URL!);
    url.password = '';
    const source = openDataSource({ DB_TYPE: 'postgres', DB_URL: url.toString() }, null, 200);
    try {
      await expect(source.query('SELECT pg_sleep(2)', [])).rejects.toThrow('canceling statement due to statement timeout');
      expect(await source.query('SELECT 1 AS one', [])).toEqual([{ one: 1 }]);
    } finally {
      await source.close();
    }
  });
});
