import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QueryError } from '../src/semantic-layer/query/errors.js';
import { DEFAULT_ENGINE_LIMITS, QueryEngine } from '../src/semantic-layer/query/load.js';
import { DIALECTS } from './harness.js';
import { shopArtifact, shopSource, type ShopSource } from './query-fixtures.js';

/*
 * Issue 15, "Queries", the SQL API: `POST /v1/sql {query}` takes one SELECT written over a cube or
 * a view as if it were a table, translates it into the semantic query `/v1/load` takes and answers
 * rows keyed by the SELECT's column names. No client SQL reaches a data source: what the subset
 * does not cover (JOIN, UNION, subqueries, WITH, other statements, functions, `*`, ...) is a 400
 * naming the clause.
 */

type Row = Record<string, unknown>;

for (const dialect of DIALECTS) {
  describe(`the SQL API (${dialect})`, () => {
    let shop: ShopSource;
    let engine: QueryEngine;
    const rows = async (sql: string) => (await engine.sql(sql)).data as Row[];
    const count = async (where: string, from = 'orders') => (await rows(`SELECT count FROM ${from} WHERE ${where}`))[0]!.count;
    /** The SQL answers what the JSON query answers, column by column (`names`: output column → the engine's key). */
    const same = async (sql: string, query: Record<string, unknown>, names: Record<string, string>) => {
      const expected = (await engine.load(query)).data.map((row) => Object.fromEntries(Object.entries(names).map(([name, key]) => [name, row[key]])));
      expect(expected.length).toBeGreaterThan(0);
      expect(await rows(sql), sql).toEqual(expected);
    };
    const refused = async (sql: string, message: RegExp) => {
      const error = await engine.sql(sql).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error, sql).toBeInstanceOf(QueryError);
      expect((error as QueryError).status).toBe(400);
      expect((error as Error).message, sql).toMatch(message);
    };

    beforeAll(async () => {
      shop = await shopSource(dialect);
      engine = new QueryEngine(shopArtifact(), shop.source, { ...DEFAULT_ENGINE_LIMITS, cacheTtlMs: 0 });
    });
    afterAll(() => shop.close());

    it('the issue’s query: rows keyed by the SELECT’s columns, as the equivalent JSON query answers them', async () => {
      const sql = "SELECT status, count FROM orders WHERE created_at >= '2026-01-01' GROUP BY 1 ORDER BY 2 DESC LIMIT 10";
      const result = await engine.sql(sql);
      expect(result.data[0]).toEqual({ status: 'completed', count: 3 });
      expect(new Set(result.data.slice(1))).toEqual(
        new Set([
          { status: 'processing', count: 1 },
          { status: 'cancelled', count: 1 },
        ]),
      );
      expect(result.query).toMatchObject({
        measures: ['orders.count'],
        dimensions: ['orders.status'],
        filters: [{ member: 'orders.created_at', operator: 'greater_than_or_equal', value: '2026-01-01T00:00:00' }],
        order: [['orders.count', 'desc']],
        limit: 10,
        timezone: 'UTC',
      });
      await same(
        "SELECT status, count FROM orders WHERE created_at >= '2026-02-01' GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 10",
        {
          measures: ['orders.count'],
          dimensions: ['orders.status'],
          filters: [{ member: 'orders.created_at', operator: 'greater_than_or_equal', value: '2026-02-01T00:00:00' }],
          order: [
            ['orders.count', 'desc'],
            ['orders.status', 'asc'],
          ],
          limit: 10,
        },
        { status: 'orders.status', count: 'orders.count' },
      );
      expect(result.annotation.columns).toEqual({
        status: { member: 'orders.status', kind: 'dimension', title: 'Orders Status', shortTitle: 'Status', type: 'string' },
        count: {
          member: 'orders.count',
          kind: 'measure',
          title: 'Orders Count',
          shortTitle: 'Count',
          type: 'number',
          drillMembers: [],
          drillMembersGrouped: { measures: [], dimensions: [] },
        },
      });
      expect(result.annotation.measures['orders.count']).toMatchObject({ shortTitle: 'Count' });
    });

    it('aliases, qualified names, positions; MEASURE(), COUNT(*) and aggregates over measures of their kind; measures alone need no GROUP BY', async () => {
      expect(await rows('SELECT o.status AS s, MEASURE(total_amount) AS total, COUNT(*) AS n FROM orders AS o GROUP BY s ORDER BY total DESC')).toEqual([
        { s: 'completed', total: 190, n: 3 },
        { s: 'processing', total: 50, n: 1 },
        { s: 'cancelled', total: 30, n: 1 },
      ]);
      expect(await rows('SELECT orders.status, "count" FROM Orders GROUP BY orders.status ORDER BY orders.status')).toEqual([
        { status: 'cancelled', count: 1 },
        { status: 'completed', count: 3 },
        { status: 'processing', count: 1 },
      ]);
      expect(
        await rows(
          'SELECT count, SUM(total_amount) AS total, AVG(average_amount) AS mean, MAX(largest), COUNT(DISTINCT customers_count) AS customers, amount_per_order FROM orders',
        ),
      ).toEqual([{ count: 5, total: 270, mean: 54, largest: 100, customers: 3, amount_per_order: 54 }]);
      expect(await rows('SELECT size, status, total_amount FROM orders GROUP BY 2, size ORDER BY 1, 2')).toEqual([
        { size: 'large', status: 'completed', total_amount: 170 },
        { size: 'small', status: 'cancelled', total_amount: 30 },
        { size: 'small', status: 'completed', total_amount: 20 },
        { size: 'small', status: 'processing', total_amount: 50 },
      ]);
      expect(await rows('SELECT status FROM orders GROUP BY status ORDER BY status DESC LIMIT 1 OFFSET 1')).toEqual([{ status: 'completed' }]);
      expect(await rows('SELECT status FROM orders GROUP BY status ORDER BY status OFFSET 2')).toEqual([{ status: 'processing' }]);
    });

    it('a view is a table too: its members join the cubes behind it', async () => {
      const expected = [
        { region: 'EU', count: 3, total_amount: 180 },
        { region: 'US', count: 1, total_amount: 70 },
        { region: null, count: 1, total_amount: 20 },
      ];
      expect(await rows('SELECT region, count, total_amount FROM sales GROUP BY region ORDER BY count DESC, region')).toEqual(expected);
      await same(
        'SELECT s.region, count, total_amount FROM sales s GROUP BY 1 ORDER BY 2 DESC, 1',
        {
          measures: ['sales.count', 'sales.total_amount'],
          dimensions: ['sales.region'],
          order: [
            ['sales.count', 'desc'],
            ['sales.region', 'asc'],
          ],
        },
        { region: 'sales.region', count: 'sales.count', total_amount: 'sales.total_amount' },
      );
      expect(await count("region = 'EU'", 'sales')).toBe(3);
      expect(await count('region IS NULL', 'sales')).toBe(1);
      expect(await count('region IS NOT NULL', 'sales')).toBe(4);
    });

    it('DATE_TRUNC on a time dimension is a time dimension with that granularity (in UTC), named <dimension>_<granularity> unless aliased', async () => {
      expect(await rows("SELECT DATE_TRUNC('month', created_at), count FROM orders GROUP BY 1 ORDER BY 1")).toEqual([
        { created_at_month: '2026-01-01T00:00:00.000', count: 3 },
        { created_at_month: '2026-02-01T00:00:00.000', count: 2 },
      ]);
      const weeks =
        "SELECT date_trunc('week', created_at) AS week, count FROM orders WHERE created_at BETWEEN '2026-01-01' AND '2026-01-31' GROUP BY date_trunc('week', created_at) ORDER BY week";
      expect(await rows(weeks)).toEqual([
        { week: '2025-12-29T00:00:00.000', count: 2 },
        { week: '2026-01-12T00:00:00.000', count: 1 },
      ]);
      await same(
        weeks,
        { measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'week', dateRange: ['2026-01-01', '2026-01-31'] }] },
        { week: 'orders.created_at.week', count: 'orders.count' },
      );
      const result = await engine.sql(
        "SELECT DATE_TRUNC('day', created_at) AS day, DATE_TRUNC('month', created_at), count FROM sales GROUP BY 1, 2 ORDER BY 1 LIMIT 1",
      );
      expect(result.data).toEqual([{ day: '2026-01-01T00:00:00.000', created_at_month: '2026-01-01T00:00:00.000', count: 1 }]);
      expect(result.annotation.columns.day).toMatchObject({ member: 'sales.created_at.day', kind: 'timeDimension', type: 'time' });
    });

    it('WHERE: comparisons either way round, IN, BETWEEN, [I]LIKE, IS [NOT] NULL, AND/OR/NOT, segments; SQL’s meaning kept (NULLs, dates as midnight)', async () => {
      expect(await count("status IN ('completed', 'cancelled')")).toBe(4);
      expect(await count("status NOT IN ('completed')")).toBe(2);
      expect(await count("status <> 'completed'")).toBe(2);
      expect(await count("status != 'completed'")).toBe(2);
      expect(await count('amount BETWEEN 30 AND 70')).toBe(3);
      expect(await count('amount NOT BETWEEN 30 AND 70')).toBe(2);
      expect(await count('50 < amount')).toBe(2);
      expect(await count('100 <= amount')).toBe(1);
      expect(await count("amount >= '50'")).toBe(3);
      expect(await count("status LIKE 'proc%'")).toBe(1);
      expect(await count("status LIKE '%PLET%'")).toBe(0);
      expect(await count("status ILIKE '%PLET%'")).toBe(3);
      expect(await count("status NOT LIKE '%ed'")).toBe(1);
      expect(await count("status ILIKE '%LED'")).toBe(1);
      expect(await count("status NOT ILIKE 'C%'")).toBe(1);
      expect(await count("NOT (status = 'completed' OR amount > 60)")).toBe(2);
      expect(await count("NOT (status = 'completed' AND amount > 60)")).toBe(3);
      expect(await count("amount = 50 OR (status = 'cancelled' AND amount < 100)")).toBe(2);
      expect(await count(`NOT NOT NOT amount = 50 AND ${Array.from({ length: 100 }, (_, i) => `amount <> ${i + 1000}`).join(' AND ')}`)).toBe(4);
      expect(await count("NOT status IN ('completed') AND NOT amount BETWEEN 40 AND 60")).toBe(1);
      // NULLs: `<>`, NOT IN and NOT LIKE are not true where the member is NULL, as in SQL.
      expect(await count("region <> 'EU'", 'sales')).toBe(1);
      expect(await count("region NOT LIKE 'E%'", 'sales')).toBe(1);
      expect(await count("NOT (region = 'EU')", 'sales')).toBe(1);
      expect(await count("NOT (region IS NULL OR region = 'US')", 'sales')).toBe(3);
      // A date compared with a time is its midnight (the first order is at 23:30 on 1 January).
      expect(await count("created_at > '2026-01-01'")).toBe(5);
      expect(await count("created_at < '2026-01-02'")).toBe(1);
      expect(await count("created_at = '2026-01-15 08:00:00'")).toBe(1);
      expect(await count("created_at >= DATE '2026-02-01' AND created_at < '2026-03-01'::timestamptz")).toBe(2);
      // A segment is a condition of its own.
      expect(await count('completed')).toBe(3);
      expect(await count('completed AND amount > 50')).toBe(2);
      await same(
        "SELECT status, count FROM orders WHERE amount > 25 AND (status LIKE 'c%' OR status = 'processing') GROUP BY 1 ORDER BY 1",
        {
          measures: ['orders.count'],
          dimensions: ['orders.status'],
          filters: [
            { member: 'orders.amount', operator: 'greater_than', value: 25 },
            {
              or: [
                { member: 'orders.status', operator: 'starts_with', value: 'c', caseSensitive: true },
                { member: 'orders.status', operator: 'equals', value: 'processing' },
              ],
            },
          ],
          order: [['orders.status', 'asc']],
        },
        { status: 'orders.status', count: 'orders.count' },
      );
    });

    it('HAVING: conditions on measures, by name, MEASURE() or aggregate', async () => {
      expect(await rows('SELECT status, count FROM orders GROUP BY status HAVING count > 1')).toEqual([{ status: 'completed', count: 3 }]);
      expect(await rows('SELECT status, total_amount FROM orders GROUP BY 1 HAVING COUNT(*) >= 1 AND MEASURE(total_amount) < 100 ORDER BY 2')).toEqual([
        { status: 'cancelled', total_amount: 30 },
        { status: 'processing', total_amount: 50 },
      ]);
      await same(
        'SELECT status, count FROM orders GROUP BY 1 HAVING NOT SUM(total_amount) BETWEEN 40 AND 200 ORDER BY 1',
        {
          measures: ['orders.count'],
          dimensions: ['orders.status'],
          filters: [
            {
              or: [
                { member: 'orders.total_amount', operator: 'less_than', value: 40 },
                { member: 'orders.total_amount', operator: 'greater_than', value: 200 },
              ],
            },
          ],
          order: [['orders.status', 'asc']],
        },
        { status: 'orders.status', count: 'orders.count' },
      );
    });

    it('values are bound, never run; an unsupported statement changes nothing', async () => {
      expect(await count("status = 'x'' OR ''1''=''1'")).toBe(0);
      expect(await count("status = 'completed''; DROP TABLE orders; --'")).toBe(0);
      expect(await count("status LIKE '%\\%%'")).toBe(0);
      await refused('SELECT count FROM orders; DROP TABLE orders', /2 statements/);
      expect(await count("status = 'completed'")).toBe(3);
    });

    it('refuses what lies outside the subset with a 400 naming the clause', async () => {
      const cases: Array<[string, RegExp]> = [
        [
          'SELECT status FROM orders JOIN customers ON orders.customer_id = customers.id GROUP BY 1',
          /JOIN is not supported: query a view that joins the cubes/,
        ],
        ['SELECT status FROM orders, customers GROUP BY 1', /FROM names several tables/],
        ['SELECT status FROM orders GROUP BY 1 UNION SELECT region FROM customers GROUP BY 1', /UNION is not supported/],
        ['SELECT status FROM orders GROUP BY 1 EXCEPT SELECT region FROM customers GROUP BY 1', /EXCEPT is not supported/],
        ['SELECT count FROM orders WHERE status IN (SELECT status FROM orders)', /WHERE: subqueries are not supported/],
        ['SELECT count FROM (SELECT * FROM orders) AS o', /subquery in FROM/],
        ['WITH o AS (SELECT 1) SELECT count FROM orders', /WITH .* is not supported/],
        ['DELETE FROM orders', /DELETE is not supported/],
        ['INSERT INTO orders (id) VALUES (9)', /INSERT is not supported/],
        ["UPDATE orders SET status = 'x'", /UPDATE is not supported/],
        ['DROP TABLE orders', /DROP is not supported/],
        ['SELECT count FROM orders; SELECT count FROM customers', /2 statements/],
        ['SELECT count FROM orders /* a comment */; DROP TABLE orders', /2 statements/],
        ['SELECT pg_sleep(10) FROM orders', /SELECT: the function pg_sleep\(\) is not supported/],
        ['SELECT count FROM orders WHERE status = lower(status)', /WHERE status = lower\(status\).*not a literal/],
        ['SELECT * FROM orders', /SELECT: \* is not supported/],
        ['SELECT o.* FROM orders o', /SELECT: \* is not supported/],
        ['SELECT count FROM orders WHERE status = size', /WHERE status = size: size is not a literal/],
        ['SELECT count FROM orders WHERE amount + 1 > 2', /WHERE: amount \+ 1 is not supported here: name a member of orders/],
        ['SELECT count FROM orders WHERE 1 = 1', /a condition names a member/],
        ['SELECT DISTINCT status FROM orders', /DISTINCT is not supported/],
        ['SELECT status, COUNT(*) OVER () FROM orders GROUP BY 1', /window functions/],
        ['SELECT status, count FROM orders', /GROUP BY must list status/],
        ['SELECT status, size, count FROM orders GROUP BY 1', /GROUP BY must list size/],
        ['SELECT status, count FROM orders GROUP BY 1, size', /GROUP BY size: only selected columns/],
        ['SELECT status, count FROM orders GROUP BY 1, 2', /GROUP BY 2: count is a measure/],
        ['SELECT count FROM orders WHERE count > 1', /WHERE count > 1: count is a measure; conditions on measures go in HAVING/],
        ["SELECT status, count FROM orders GROUP BY 1 HAVING status = 'x'", /HAVING .*status is a dimension/],
        ["SELECT count FROM orders WHERE status LIKE 'c%d'", /LIKE "c%d": patterns are/],
        ["SELECT count FROM orders WHERE status LIKE 'c_mpleted%'", /patterns are/],
        ['SELECT count FROM orders WHERE status = NULL', /IS NULL/],
        ["SELECT count FROM orders WHERE status ~ 'c'", /operator ~ is not supported/],
        ['SELECT nope FROM orders', /SELECT: cube orders has no member "nope"/],
        ['SELECT count FROM nope', /FROM nope: no cube or view/],
        ['SELECT count FROM public.orders', /without a schema/],
        ['SELECT customers.region FROM orders', /customers.region names customers, which is not the FROM clause's orders/],
        ['SELECT count', /FROM is required/],
        ['SELECT status AS x, size AS x FROM orders GROUP BY 1, 2', /two columns are called x/],
        ['SELECT SUM(count) FROM orders', /count is a count measure; an aggregate takes a measure of its own kind/],
        ['SELECT SUM(amount) FROM orders', /amount is a dimension; SUM\(\) takes a measure/],
        ["SELECT DATE_TRUNC('fortnight', created_at), count FROM orders GROUP BY 1", /DATE_TRUNC takes a granularity/],
        ["SELECT DATE_TRUNC('month', status), count FROM orders GROUP BY 1", /status is not a time dimension/],
        ['SELECT status FROM orders GROUP BY 1 ORDER BY size', /ORDER BY size: only selected columns/],
        ['SELECT status FROM orders GROUP BY 1 ORDER BY 3', /ORDER BY 3: the SELECT has columns 1 to 1/],
        ['SELECT status FROM orders GROUP BY 1 ORDER BY status NULLS FIRST', /NULLS FIRST/],
        ['SELECT count FROM orders LIMIT 10 + 1', /LIMIT/],
        ['SELECT count FROM orders LIMIT 100000', /limit must be an integer from 0 to 50000/],
        ['SELECT count FROM orders WHERE status = $1', /not a literal/],
        ['SELECT count FROM orders WHERE', /does not parse \(line 1, column 31\): Expected .*\.\.\. but end of input found/],
        ['SELECT count FROM orders WHERE completed = true', /WHERE: completed is a segment, a condition of its own/],
        [`SELECT count FROM orders WHERE ${'('.repeat(3000)}amount = 1${')'.repeat(3000)}`, /nests too deeply/],
        [`SELECT count FROM orders WHERE amount IN (${'1, '.repeat(11_000)}1)`, /longer than 32768 characters/],
        ['', /no statement/],
      ];
      // Every case checked, the mismatches listed together.
      const wrong: string[] = [];
      for (const [sql, message] of cases) {
        const error = await engine.sql(sql).then(
          () => null,
          (e: unknown) => e,
        );
        if (!(error instanceof QueryError) || error.status !== 400 || !message.test(error.message)) wrong.push(`${sql} => ${String(error)}`);
      }
      expect(wrong).toEqual([]);
      expect((await rows('SELECT COUNT(*) AS n FROM sales'))[0]).toEqual({ n: 5 });
      await expect(engine.sql({ query: 'SELECT 1' })).rejects.toThrow(/the SQL as a string/);
    });
  });
}
