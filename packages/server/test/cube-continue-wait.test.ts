import http from 'node:http';
import type { AddressInfo } from 'node:net';
import cube from '@cubejs-client/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_ENGINE_LIMITS, QueryEngine } from '../src/semantic-layer/query/load.js';
import { restApi } from '../src/semantic-layer/rest-api.js';
import { NOBODY } from '../src/semantic-layer/query/access.js';
import { shopArtifact, shopSource, type ShopSource } from './query-fixtures.js';

/*
 * Issue 32, "the Continue wait protocol": a query still running after the wait is answered 200
 * `{"error": "Continue wait"}`, and the same request asked again waits on the same run rather
 * than starting another; Cube's own client polls through it to the answer. The runtime's REST
 * layer over a PostgreSQL data source (a statement that sleeps), served over HTTP as the
 * runtime serves it, with the wait shortened to 100 ms. (A SQLite statement holds its runtime
 * until it ends, so there the answer simply comes when it is done.)
 */

const SLOW_MODEL = `cubes:
  - name: slow
    sql: "SELECT id, pg_sleep(0.3) AS slept FROM orders"
    dimensions:
      - { name: id, sql: id, type: number, primary_key: true }
    measures:
      - { name: count, type: count }
`;

describe.runIf(process.env.DATABASE_URL)('Continue wait (postgres data source)', () => {
  let shop: ShopSource;
  let server: http.Server;
  let origin: string;
  const seen: string[] = [];
  let statements = 0;

  beforeAll(async () => {
    shop = await shopSource('postgres');
    const source = { ...shop.source, query: (sql: string, params: unknown[]) => (statements++, shop.source.query(sql, params)) } as typeof shop.source;
    const engine = new QueryEngine(shopArtifact(SLOW_MODEL), source, { ...DEFAULT_ENGINE_LIMITS, cacheTtlMs: 0 });
    const handle = restApi(shopArtifact(SLOW_MODEL), engine, { continueWaitMs: 100, dbType: 'postgres' });
    server = http.createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      void (async () => {
        let text = '';
        for await (const chunk of req) text += String(chunk);
        const answer = await handle({
          method: req.method ?? 'GET',
          path: url.pathname.replace(/^\/cubejs-api/, ''),
          search: url.search.slice(1),
          privateMeta: false,
          security: NOBODY,
          body: async () => JSON.parse(text),
        });
        seen.push(answer.text);
        res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.text);
      })();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    await shop?.close();
  });

  it('a query past the wait answers 200 Continue wait; asked again it joins the same run and answers its rows', async () => {
    const url = `${origin}/cubejs-api/v1/load?query=${encodeURIComponent(JSON.stringify({ measures: ['slow.count'] }))}`;
    const before = statements;
    const first = await fetch(url);
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ error: 'Continue wait' });
    let body: Record<string, any> = { error: 'Continue wait' };
    while (body.error === 'Continue wait') body = (await (await fetch(url)).json()) as Record<string, any>;
    expect(body.data).toEqual([{ 'slow.count': 5 }]);
    // One run, however often the client asked.
    expect(statements - before).toBe(1);
  });

  it('Cube’s client polls through Continue wait to the answer', async () => {
    seen.length = 0;
    const resultSet = await cube('token', { apiUrl: `${origin}/cubejs-api/v1` }).load({
      measures: ['slow.count'],
      filters: [{ member: 'slow.id', operator: 'gt', values: ['2'] }],
    });
    expect(resultSet.tablePivot()).toEqual([{ 'slow.count': 3 }]);
    expect(seen.filter((text) => text === '{"error":"Continue wait"}').length).toBeGreaterThan(0);
  });
});
