import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NOBODY, type SecurityContext } from '../src/semantic-layer/query/access.js';
import { DEFAULT_ENGINE_LIMITS, QueryEngine } from '../src/semantic-layer/query/load.js';
import { onBucketEdge } from '../src/semantic-layer/query/pre-aggregations.js';
import { restApi } from '../src/semantic-layer/rest-api.js';
import { DIALECTS } from './harness.js';
import { SECURED_MODEL, SHOP_MODEL, shopArtifact, shopSource, type ShopSource } from './query-fixtures.js';

/*
 * Issue 32, "pre_aggregations of type rollup/original_sql built into the source database
 * (external: false) and used when a query matches, refreshed on their refresh_key, with their
 * state visible". Every answer read from a pre-aggregation is compared with the same query
 * answered by an engine without any: a pre-aggregation makes an answer faster, never different.
 */

const ROLLUPS = `    pre_aggregations:
      - name: by_status_day
        measures: [count, total_amount, largest, average_amount]
        dimensions: [status, customers.region]
        time_dimension: created_at
        granularity: day
        refresh_key: { every: 1 hour }
      - name: source
        type: original_sql
`;
const MODEL = SHOP_MODEL.replace('\n  - name: line_items\n', `\n${ROLLUPS}\n  - name: line_items\n`);

async function until(check: () => boolean | Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

for (const dialect of DIALECTS) {
  describe(`pre-aggregations (${dialect})`, () => {
    const schema = `pa_${randomBytes(5).toString('hex')}`;
    let shop: ShopSource;
    let plain: QueryEngine;
    let fast: QueryEngine;
    const logs: string[] = [];
    const limits = { ...DEFAULT_ENGINE_LIMITS, cacheTtlMs: 0 };

    beforeAll(async () => {
      shop = await shopSource(dialect, { PRE_AGGREGATIONS_SCHEMA: schema });
      plain = new QueryEngine(shopArtifact(SHOP_MODEL), shop.source, limits);
      fast = new QueryEngine(shopArtifact(MODEL), shop.source, limits, Date.now, (line) => logs.push(line));
    });
    afterAll(() => shop.close());

    const both = async (query: object, security: SecurityContext = NOBODY) => {
      const [answer, expected] = await Promise.all([fast.answer(fast.normalise(query), security), plain.answer(plain.normalise(query), security)]);
      expect(answer.rows, JSON.stringify(query)).toEqual(expected.rows);
      return answer.usedPreAggregations?.map((u) => u.id) ?? [];
    };

    it('a query the rollup holds is answered from its table, built on first use, with the rows the source gives', async () => {
      const matching = [
        { measures: ['orders.count', 'orders.total_amount'] },
        { measures: ['orders.count'], dimensions: ['orders.status'] },
        { measures: ['orders.largest', 'orders.count'], dimensions: ['customers.region'], order: { 'orders.count': 'desc' } },
        { measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'month' }] },
        { measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'week', dateRange: ['2026-01-01', '2026-01-31'] }] },
        { measures: ['orders.total_amount'], timeDimensions: [{ dimension: 'orders.created_at', dateRange: ['2026-01-02', '2026-02-01'] }] },
        { measures: ['orders.count'], filters: [{ member: 'orders.status', operator: 'equals', values: ['completed'] }] },
        { measures: ['orders.count'], dimensions: ['orders.status'], filters: [{ member: 'orders.count', operator: 'gt', values: ['1'] }] },
        { measures: ['orders.total_amount'], dimensions: ['orders.status'], order: [['orders.total_amount', 'desc']], limit: 1 },
        { measures: ['sales.count'], dimensions: ['sales.region'] },
        { measures: ['orders.count'], filters: [{ member: 'orders.status', operator: 'equals', values: ['nothing'] }] },
      ];
      for (const query of matching) expect(await both(query), JSON.stringify(query)).toEqual(['orders.by_status_day']);
      expect(fast.preAggregations.state().find((s) => s.id === 'orders.by_status_day' && s.timezone === 'UTC')).toMatchObject({
        status: 'ready',
        type: 'rollup',
        rows: expect.any(Number),
      });
      expect(logs.some((line) => /Pre-aggregation orders\.by_status_day \(UTC\) built: .*by_status_day.*rows/.test(line))).toBe(true);
    });

    it('a non-additive measure (avg) is read from the rollup only at its own grain: the same dimensions and granularity', async () => {
      const exact = {
        measures: ['orders.average_amount'],
        dimensions: ['orders.status', 'customers.region'],
        timeDimensions: [{ dimension: 'orders.created_at', granularity: 'day' }],
      };
      expect(await both(exact)).toEqual(['orders.by_status_day']);
      // Coarser: the average of averages would differ; the cube's original_sql table answers it instead.
      expect(await both({ measures: ['orders.average_amount'], dimensions: ['orders.status'] })).toEqual(['orders.source']);
    });

    it('what the rollup cannot answer exactly goes to the source (through the original_sql table), with the same rows', async () => {
      const others = [
        // A range that does not fall on the rollup's day edges.
        { measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', dateRange: ['2026-01-01T12:00:00', '2026-01-31'] }] },
        // A granularity finer than the rollup's.
        { measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'hour' }] },
        // A dimension, a filter member, a measure it does not hold.
        { measures: ['orders.count'], dimensions: ['orders.size'] },
        { measures: ['orders.count'], filters: [{ member: 'orders.amount', operator: 'gt', values: ['40'] }] },
        { measures: ['orders.customers_count'] },
        // A segment it was not built with.
        { measures: ['orders.count'], segments: ['orders.completed'] },
      ];
      for (const query of others) expect(await both(query), JSON.stringify(query)).toEqual(['orders.source']);
      // A cube without pre-aggregations reads its own table.
      expect(await both({ measures: ['line_items.count'], dimensions: ['line_items.product'] })).toEqual([]);
    });

    it('in another time zone the rollup is built again in that zone, and answers as the source does across its days', async () => {
      const query = {
        measures: ['orders.count', 'orders.total_amount'],
        timeDimensions: [{ dimension: 'orders.created_at', granularity: 'day', dateRange: ['2026-01-01', '2026-01-02'] }],
        timezone: 'America/Los_Angeles',
      };
      expect(await both(query)).toEqual(['orders.by_status_day']);
      const zones = fast.preAggregations
        .state()
        .filter((s) => s.id === 'orders.by_status_day')
        .map((s) => [s.timezone, s.status]);
      expect(zones).toEqual(expect.arrayContaining([['America/Los_Angeles', 'ready']]));
    });

    it('its state is listed at /v1/pre-aggregations for tokens that see the model whole, and answers say which table they read (usedPreAggregations)', async () => {
      const api = restApi(shopArtifact(MODEL), fast, { continueWaitMs: 10_000, dbType: dialect });
      const listed = await api({ method: 'GET', path: '/v1/pre-aggregations', search: '', privateMeta: true, security: NOBODY, body: async () => undefined });
      expect(listed.status).toBe(200);
      const states = (JSON.parse(listed.text) as { preAggregations: Array<{ id: string; status: string; table: string | null }> }).preAggregations;
      expect(states.map((s) => s.id)).toEqual(expect.arrayContaining(['orders.by_status_day', 'orders.source']));
      const refused = await api({ method: 'GET', path: '/v1/pre-aggregations', search: '', privateMeta: false, security: NOBODY, body: async () => undefined });
      expect(refused.status).toBe(403);
      const loaded = await api({
        method: 'POST',
        path: '/v1/load',
        search: '',
        privateMeta: false,
        security: NOBODY,
        body: async () => ({ query: { measures: ['orders.count'] } }),
      });
      const result = JSON.parse(loaded.text) as { usedPreAggregations: Record<string, { targetTableName: string; lastUpdatedAt: number }>; data: unknown[] };
      const table = states.find((s) => s.id === 'orders.by_status_day' && s.table)!.table!;
      expect(Object.keys(result.usedPreAggregations)).toEqual([table]);
      expect(result.usedPreAggregations[table]!.lastUpdatedAt).toBeGreaterThan(0);
    });

    it('is rebuilt when its refresh_key’s SQL answers something new, and then answers the new rows', async () => {
      const model = SHOP_MODEL.replace(
        '\n  - name: line_items\n',
        `
    pre_aggregations:
      - name: by_status
        measures: [count]
        dimensions: [status]
        refresh_key: { sql: "SELECT max(id) AS last FROM orders", every: 1 second }

  - name: line_items
`,
      );
      const engine = new QueryEngine(shopArtifact(model), shop.source, limits);
      const count = async () =>
        (
          await engine.answer(
            engine.normalise({ measures: ['orders.count'], filters: [{ member: 'orders.status', operator: 'equals', values: ['refunded'] }] }),
          )
        ).rows[0]!['orders.count'];
      expect(Number(await count())).toBe(0);
      const before = engine.preAggregations.state().find((s) => s.id === 'orders.by_status')!;
      await shop.run("INSERT INTO orders VALUES (6, 2, 'refunded', 15, '2026-03-01T09:00:00Z')");
      try {
        await until(async () => Number(await count()) === 1, 'the rebuilt table');
        const after = engine.preAggregations.state().find((s) => s.id === 'orders.by_status')!;
        expect(after.table).not.toBe(before.table);
        expect(after.status).toBe('ready');
      } finally {
        await shop.run('DELETE FROM orders WHERE id = 6');
      }
    });

    it('row-level security: a restricted caller reads only their rows from the rollup, which must hold the members their policy filters on', async () => {
      const secured = (dims: string) =>
        SECURED_MODEL.replace(
          '\n  - name: vault\n',
          `
    pre_aggregations:
      - name: main
        measures: [count]
        dimensions: [${dims}]

  - name: vault
`,
        );
      const eu: SecurityContext = { userId: 7, groups: [], userAttributes: { region: 'EU' }, securityContext: {} };
      const nobody: SecurityContext = { userId: 8, groups: [], userAttributes: {}, securityContext: {} };
      const reference = new QueryEngine(shopArtifact(SECURED_MODEL), shop.source, limits);
      for (const [dims, used] of [
        ['status, customers.region', ['orders.main']],
        ['status', []],
      ] as const) {
        const engine = new QueryEngine(shopArtifact(secured(dims)), shop.source, limits);
        for (const caller of [eu, nobody]) {
          const query = { measures: ['orders.count'], dimensions: ['orders.status'] };
          const [answer, expected] = await Promise.all([engine.answer(engine.normalise(query), caller), reference.answer(reference.normalise(query), caller)]);
          expect(answer.rows).toEqual(expected.rows);
          // A caller whose policy lets no row through is answered from the source (no rows at no cost).
          expect(answer.usedPreAggregations?.map((u) => u.id) ?? []).toEqual(caller === eu ? used : []);
        }
        expect(engine.preAggregations.state()[0]!.status).toBe(used.length > 0 ? 'ready' : 'not built');
      }
    });

    it('one whose SQL reads the caller’s context is never built (it would answer everyone with one caller’s rows): its state says why', async () => {
      const model = SHOP_MODEL.replace(
        '    sql_table: customers\n',
        '    sql: "SELECT * FROM customers WHERE {SECURITY_CONTEXT.region.filter(\'region\')}"\n',
      ).replace(
        '\n  - name: orders\n',
        `
    pre_aggregations:
      - { name: regions, measures: [count], dimensions: [region] }

  - name: orders
`,
      );
      const engine = new QueryEngine(shopArtifact(model), shop.source, limits);
      const caller: SecurityContext = { userId: 1, groups: [], userAttributes: {}, securityContext: { region: 'EU' } };
      const answer = await engine.answer(engine.normalise({ measures: ['customers.count'], dimensions: ['customers.region'] }), caller);
      expect(answer.rows).toEqual([{ 'customers.region': 'EU', 'customers.count': 2 }]);
      expect(answer.usedPreAggregations).toBeUndefined();
      expect(engine.preAggregations.state()[0]).toMatchObject({ id: 'customers.regions', status: 'unbuildable', error: expect.stringMatching(/caller/) });
    });
  });
}

describe('pre-aggregation date ranges', () => {
  it('a range is read from a rollup only when it falls on its buckets’ edges', () => {
    expect(onBucketEdge('2026-01-01T00:00:00.000', 'month', 'start')).toBe(true);
    expect(onBucketEdge('2026-01-31T23:59:59.999', 'month', 'end')).toBe(true);
    expect(onBucketEdge('2026-01-30T23:59:59.999', 'month', 'end')).toBe(false);
    expect(onBucketEdge('2026-01-05T00:00:00.000', 'week', 'start')).toBe(true);
    expect(onBucketEdge('2026-01-06T00:00:00.000', 'week', 'start')).toBe(false);
    expect(onBucketEdge('2026-03-31T23:59:59.999', 'quarter', 'end')).toBe(true);
    expect(onBucketEdge('2026-02-28T23:59:59.999', 'quarter', 'end')).toBe(false);
    expect(onBucketEdge('2026-01-01T10:00:00.000', 'hour', 'start')).toBe(true);
    expect(onBucketEdge('2026-01-01T10:30:00.000', 'hour', 'start')).toBe(false);
    expect(onBucketEdge('next week', 'day', 'start')).toBe(false);
  });
});
