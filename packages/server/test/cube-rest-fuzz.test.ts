import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NOBODY } from '../src/semantic-layer/query/access.js';
import { DEFAULT_ENGINE_LIMITS, QueryEngine } from '../src/semantic-layer/query/load.js';
import { restApi, type DataApiRequest } from '../src/semantic-layer/rest-api.js';
import { DIALECTS } from './harness.js';
import { shopArtifact, shopSource, type ShopSource } from './query-fixtures.js';

/*
 * Issue 32, "Bad input and limits": the runtime's REST layer (every route of Cube's protocol)
 * given malformed queries — random JSON, valid queries with one part broken, hostile strings in
 * member names and values — answers 200 or a refusal in Cube's shape (`{error}` naming what is
 * wrong, 400 or 403), never throws, and never sends the data source a statement that carries a
 * value written into its text: every statement it runs is one the compiler wrote, its values bound.
 */

const MEMBERS = ['orders.count', 'orders.total_amount', 'orders.status', 'orders.created_at', 'customers.region', 'sales.count', 'line_items.quantity'];
const HOSTILE = [
  "'; DROP TABLE orders; --",
  '" OR 1=1 --',
  'orders.count; SELECT 1',
  '{CUBE}',
  '${SECURITY_CONTEXT.x}',
  '\u0000',
  'ｏｒｄｅｒｓ.count',
  '../../etc/passwd',
  'x'.repeat(5000),
];

const value = fc.oneof(
  fc.constantFrom(...HOSTILE),
  fc.string(),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
);
const member = fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...MEMBERS) }, fc.constantFrom(...HOSTILE), fc.string());
const operator = fc.oneof(
  fc.constantFrom(
    'equals',
    'notEquals',
    'contains',
    'gt',
    'lte',
    'set',
    'notSet',
    'inDateRange',
    'beforeDate',
    'afterOrOnDate',
    'measureFilter',
    'not_equals',
    'between',
    'custom',
  ),
  fc.string(),
);
const leaf = fc.record({ member, operator, values: fc.oneof(fc.array(value, { maxLength: 4 }), value) }, { requiredKeys: ['member'] });
const filter = fc.letrec((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.record({ and: fc.array(tie('node'), { maxLength: 3 }) }),
    fc.record({ or: fc.array(tie('node'), { maxLength: 3 }) }),
  ),
})).node;
const query = fc.record(
  {
    measures: fc.oneof(fc.array(member, { maxLength: 3 }), value),
    dimensions: fc.oneof(fc.array(fc.oneof(member, fc.constant('orders.created_at.month')), { maxLength: 3 }), value),
    timeDimensions: fc.array(
      fc.record(
        {
          dimension: member,
          granularity: fc.oneof(fc.constantFrom('day', 'month', 'fortnight'), value),
          dateRange: fc.oneof(fc.constantFrom('last 7 days', 'this month', 'last fortnight'), fc.array(value, { maxLength: 3 }), value),
          compareDateRange: fc.array(fc.oneof(fc.constant('last month'), fc.array(value, { maxLength: 2 })), { maxLength: 3 }),
        },
        { requiredKeys: ['dimension'] },
      ),
      { maxLength: 2 },
    ),
    filters: fc.oneof(fc.array(filter, { maxLength: 3 }), value),
    order: fc.oneof(fc.dictionary(member, fc.oneof(fc.constantFrom('asc', 'desc'), value)), fc.array(fc.tuple(member, value), { maxLength: 2 })),
    limit: value,
    offset: value,
    total: value,
    timezone: fc.oneof(fc.constantFrom('UTC', 'Europe/Berlin', 'Mars/Olympus'), value),
    ungrouped: value,
    segments: fc.array(member, { maxLength: 2 }),
  },
  { requiredKeys: [] },
);
const body = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record(
      { query: fc.oneof({ weight: 5, arbitrary: query }, fc.array(query, { maxLength: 3 }), fc.jsonValue()), queryType: fc.oneof(fc.constant('multi'), value) },
      { requiredKeys: ['query'] },
    ),
  },
  fc.jsonValue(),
);

for (const dialect of DIALECTS) {
  describe(`Cube's REST routes given malformed input (${dialect})`, () => {
    let shop: ShopSource;
    let handle: ReturnType<typeof restApi>;
    const statements: Array<{ sql: string; params: unknown[] }> = [];

    beforeAll(async () => {
      shop = await shopSource(dialect);
      const source = {
        ...shop.source,
        query: (sql: string, params: unknown[]) => (statements.push({ sql, params }), shop.source.query(sql, params)),
      } as typeof shop.source;
      handle = restApi(shopArtifact(), new QueryEngine(shopArtifact(), source, { ...DEFAULT_ENGINE_LIMITS, cacheTtlMs: 0 }), {
        continueWaitMs: 10_000,
        dbType: dialect,
      });
    });
    afterAll(() => shop.close());

    it('every route answers 200 or Cube’s {error} (400/403), never throws, and no hostile value is ever written into a statement', async () => {
      const routes = ['/v1/load', '/v1/sql', '/v1/dry-run', '/v1/cubesql', '/v1/meta'];
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...routes), fc.constantFrom('GET', 'POST'), body, async (path, method, sent) => {
          statements.length = 0;
          const request: DataApiRequest = {
            method,
            path,
            search:
              method === 'GET' && typeof sent === 'object' && sent !== null && !Array.isArray(sent)
                ? new URLSearchParams(
                    Object.entries(sent).map(([k, v]): [string, string] => [k, typeof v === 'string' ? v : (JSON.stringify(v) ?? '')]),
                  ).toString()
                : '',
            privateMeta: false,
            security: NOBODY,
            body: async () => sent,
          };
          const answer = await handle(request);
          expect([200, 400, 403, 404]).toContain(answer.status);
          if (path === '/v1/cubesql' && answer.status === 200) return;
          const parsed = JSON.parse(answer.text) as Record<string, unknown>;
          if (answer.status !== 200) expect(typeof parsed.error).toBe('string');
          for (const { sql } of statements) for (const hostile of HOSTILE.slice(0, 5)) expect(sql).not.toContain(hostile);
        }),
        { numRuns: 300, seed: 32 },
      );
    });

    it('a NUL character in a query string (`\\u0000` in its JSON, or `%00` as it is) is a 400 naming where, before anything runs; so is one in SQL over cubes', async () => {
      const ask = (method: string, path: string, search: string, body?: unknown) =>
        handle({ method, path, search, privateMeta: false, security: NOBODY, body: async () => body });
      statements.length = 0;
      // JSON.stringify writes the NUL as the escape `\u0000`; the second spelling puts the character itself in the text.
      const escaped = JSON.stringify({
        measures: ['orders.count'],
        filters: [{ member: 'orders.status', operator: 'equals', values: ['completed', 'a\u0000b'] }],
      });
      const raw = escaped.replace('\\u0000', '\u0000');
      for (const path of ['/v1/load', '/v1/sql', '/v1/dry-run']) {
        for (const [text, where] of [
          [escaped, 'query.filters[0].values[1]'],
          [raw, 'query'],
        ]) {
          const answer = await ask('GET', path, `query=${encodeURIComponent(text!)}`);
          expect(answer.status, answer.text).toBe(400);
          expect(JSON.parse(answer.text)).toEqual({ type: 'UserError', error: `${where} holds a NUL character (U+0000), which a query may not hold.` });
        }
      }
      const sql = await ask('POST', '/v1/cubesql', '', { query: "SELECT count FROM orders WHERE status = 'a\u0000b'" });
      expect(JSON.parse(sql.text)).toEqual({ type: 'UserError', error: 'query holds a NUL character (U+0000), which a query may not hold.' });
      expect(statements).toEqual([]);
    });
  });
}
