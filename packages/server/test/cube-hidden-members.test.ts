import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NOBODY } from '../src/semantic-layer/query/access.js';
import { DEFAULT_ENGINE_LIMITS, QueryEngine } from '../src/semantic-layer/query/load.js';
import { restApi } from '../src/semantic-layer/rest-api.js';
import { DIALECTS } from './harness.js';
import { LINE_ITEMS, SHOP_MODEL, shopArtifact, shopSource, type ShopSource } from './query-fixtures.js';

/*
 * Cube's rule for hidden members (found by conformance:cube): a member `/v1/meta` hides from the
 * caller (`public: false`, or a primary key that does not say `public: true`) may not be among the
 * columns `/v1/load` answers ("You requested hidden member"), though it may filter and order.
 * Cube lifts the rule where its meta shows hidden members (dev mode, the playground's secret);
 * here for callers whose meta shows them (a token with `meta-private`, the server's own runs).
 */

// line_items.id becomes a primary key without `public: true`; line_items.product private.
const MODEL = SHOP_MODEL.replace(
  '  - name: line_items\n    sql_table: line_items\n    dimensions:\n      - { name: id, sql: id, type: number, primary_key: true, public: true }\n',
  '  - name: line_items\n    sql_table: line_items\n    dimensions:\n      - { name: id, sql: id, type: number, primary_key: true }\n',
).replace('      - { name: product, sql: product, type: string }', '      - { name: product, sql: product, type: string, public: false }');

for (const dialect of DIALECTS) {
  describe(`hidden members in /v1/load (${dialect})`, () => {
    let shop: ShopSource;
    let handle: ReturnType<typeof restApi>;
    const load = async (query: unknown, privateMeta = false, path = '/v1/load') => {
      const answer = await handle({ method: 'POST', path, search: '', privateMeta, security: NOBODY, body: async () => ({ query }) });
      return { status: answer.status, body: JSON.parse(answer.text) as Record<string, any> };
    };

    beforeAll(async () => {
      expect(MODEL).not.toBe(SHOP_MODEL);
      expect(MODEL).not.toContain('{ name: product, sql: product, type: string }');
      shop = await shopSource(dialect);
      handle = restApi(shopArtifact(MODEL), new QueryEngine(shopArtifact(MODEL), shop.source, { ...DEFAULT_ENGINE_LIMITS, cacheTtlMs: 0 }), {
        continueWaitMs: 10_000,
        dbType: dialect,
      });
    });
    afterAll(() => shop.close());

    it('a hidden member among the measures, dimensions or time dimensions is refused in Cube’s words; as a filter or an order it is not', async () => {
      for (const query of [
        { dimensions: ['line_items.id'] },
        { measures: ['line_items.count'], dimensions: ['line_items.product'] },
        [{ dimensions: ['line_items.id'] }],
      ]) {
        const answer = await load(query);
        expect(answer.status).toBe(400);
        expect(answer.body.type).toBe('UserError');
        expect(answer.body.error).toMatch(
          /^You requested hidden member: 'line_items\.(id|product)'\. Please make it visible using `public: true`\. Please note primaryKey fields are `public: false` by default/,
        );
      }
      const filtered = await load({
        measures: ['line_items.quantity'],
        filters: [
          { member: 'line_items.product', operator: 'equals', values: ['pen'] },
          { member: 'line_items.id', operator: 'gt', values: ['0'] },
        ],
        order: { 'line_items.id': 'asc' },
      });
      expect(filtered.status).toBe(200);
      expect(filtered.body.data).toEqual([
        { 'line_items.quantity': LINE_ITEMS.filter(([, , p]) => p === 'pen').reduce((sum, l) => sum + (l[3] as number), 0) },
      ]);
      // An unknown member is the compiler's to name, not hidden.
      expect((await load({ dimensions: ['line_items.nope'] })).body.error).toMatch(/no member "nope"/);
      // A public primary key (orders.id says `public: true`) is a column like any other.
      expect((await load({ dimensions: ['orders.id'], limit: 1 })).status).toBe(200);
    });

    it('a caller whose meta shows private members (meta-private) loads them; /v1/sql and /v1/dry-run describe them for anyone, as Cube’s do', async () => {
      const answer = await load({ dimensions: ['line_items.id', 'line_items.product'], order: { 'line_items.id': 'asc' } }, true);
      expect(answer.status).toBe(200);
      expect(answer.body.data).toEqual(LINE_ITEMS.map(([id, , product]) => ({ 'line_items.id': id, 'line_items.product': product })));
      expect((await load({ dimensions: ['line_items.id'] }, false, '/v1/sql')).status).toBe(200);
      expect((await load({ dimensions: ['line_items.id'] }, false, '/v1/dry-run')).status).toBe(200);
    });
  });
}
