import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SecurityContext } from '../src/semantic-layer/query/access.js';
import { QueryError } from '../src/semantic-layer/query/errors.js';
import { metaOf } from '../src/semantic-layer/meta.js';
import { DEFAULT_ENGINE_LIMITS, QueryEngine } from '../src/semantic-layer/query/load.js';
import { DIALECTS } from './harness.js';
import { CUSTOMERS, ORDERS, SECURED_MODEL, shopArtifact, shopSource, type ShopSource } from './query-fixtures.js';

/*
 * Issue 15, "Row-level security": the model's access_policy is enforced on every query. Two
 * users with different attribute values run the same queries and each gets only their rows;
 * attempts to escape (an `or` that would match everything, a join to another cube, a member the
 * policy excludes, a cube no policy grants) are refused or return only permitted rows; a
 * property test compares random queries with a direct computation over the permitted rows.
 */

type Row = Record<string, unknown>;
const user = (region: string | null, extra: Partial<SecurityContext> = {}): SecurityContext => ({
  userId: 1,
  groups: [],
  userAttributes: region === null ? {} : { region },
  securityContext: {},
  ...extra,
});
const EU = user('EU');
const US = user('US');

/** The orders a user of `region` may see, by the policy written in SECURED_MODEL. */
function permitted(region: string) {
  const regionOf = new Map(CUSTOMERS.map(([id, , r]) => [id, r]));
  return ORDERS.filter(([, customer]) => customer !== null && regionOf.get(customer as number) === region).map(([id, , status, amount]) => ({
    id: id as number,
    status: status as string,
    amount: amount as number,
  }));
}

for (const dialect of DIALECTS) {
  describe(`row-level security (${dialect})`, () => {
    let shop: ShopSource;
    let engine: QueryEngine;
    const load = async (query: Record<string, unknown>, security: SecurityContext) => (await engine.load(query, security)).data as Row[];
    const count = async (security: SecurityContext, extra: Record<string, unknown> = {}) =>
      (await load({ measures: ['orders.count'], ...extra }, security))[0]!['orders.count'];
    const refused = async (query: Record<string, unknown>, security: SecurityContext, status: number, message: RegExp) => {
      const error = await engine.load(query, security).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(QueryError);
      expect((error as QueryError).status).toBe(status);
      expect((error as Error).message).toMatch(message);
    };

    beforeAll(async () => {
      shop = await shopSource(dialect);
      engine = new QueryEngine(shopArtifact(SECURED_MODEL), shop.source, { ...DEFAULT_ENGINE_LIMITS, cacheTtlMs: 0 });
    });
    afterAll(() => shop.close());

    it('a dimension that refers to a joined cube’s member brings that join, so a policy on it restricts orders-only queries, also through a view', async () => {
      // orders.customer_region is `{customers.region}`; the policy filters on it; the query names orders only.
      const model = SECURED_MODEL.replace(
        '      - { name: amount, sql: amount, type: number }\n    measures:\n      - { name: count, type: count }\n      - { name: total_amount, sql: amount, type: sum }\n    access_policy:\n      - group: "*"\n        member_level:\n          excludes: [amount, total_amount]\n        row_level:\n          filters:\n            - { member: customers.region,',
        '      - { name: amount, sql: amount, type: number }\n      - { name: customer_region, sql: "{customers.region}", type: string }\n    measures:\n      - { name: count, type: count }\n      - { name: total_amount, sql: amount, type: sum }\n    access_policy:\n      - group: "*"\n        member_level:\n          excludes: [amount, total_amount]\n        row_level:\n          filters:\n            - { member: customer_region,',
      );
      expect(model).not.toBe(SECURED_MODEL);
      const joined = new QueryEngine(shopArtifact(model), shop.source, { ...DEFAULT_ENGINE_LIMITS, cacheTtlMs: 0 });
      const countAs = async (security: SecurityContext, measure: string) => (await joined.load({ measures: [measure] }, security)).data[0]![measure];
      expect(await countAs(EU, 'orders.count')).toBe(permitted('EU').length);
      expect(await countAs(US, 'orders.count')).toBe(permitted('US').length);
      expect(await countAs(EU, 'regional.count')).toBe(permitted('EU').filter((o) => o.status !== 'cancelled').length);
      // Queried as a dimension, the member joins customers too.
      const byRegion = await joined.load(
        { measures: ['orders.count'], dimensions: ['orders.customer_region'] },
        user('EU', { groups: ['finance'], securityContext: { region: 'EU' } }),
      );
      expect(byRegion.data.map((row) => row['orders.customer_region'])).toContain('EU');
    });

    it('{SECURITY_CONTEXT.x.filter(...)}, {securityContext.x} and {FILTER_PARAMS...} in model SQL read the caller and the query, their values bound', async () => {
      const model = `cubes:
  - name: scoped
    sql: "SELECT o.* FROM orders o LEFT JOIN customers c ON c.id = o.customer_id WHERE {SECURITY_CONTEXT.region.filter('c.region')} AND {FILTER_PARAMS.scoped.status.filter('o.status')}"
    dimensions:
      - { name: id, sql: id, type: number, primary_key: true }
      - { name: status, sql: status, type: string }
      - { name: mine, sql: "CASE WHEN {CUBE}.status = {securityContext.status} THEN 'yes' ELSE 'no' END", type: string }
    measures:
      - { name: count, type: count }
`;
      const scoped = new QueryEngine(shopArtifact(model), shop.source, { ...DEFAULT_ENGINE_LIMITS, cacheTtlMs: 0 });
      const withContext = (securityContext: Record<string, unknown>) => user(null, { securityContext });
      const countAs = async (securityContext: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
        (await scoped.load({ measures: ['scoped.count'], ...extra }, withContext(securityContext))).data[0]!['scoped.count'];
      const regionOf = new Map(CUSTOMERS.map(([id, , r]) => [id, r]));
      const inRegions = (regions: unknown[]) => ORDERS.filter(([, customer]) => regions.includes(regionOf.get(customer as number))).length;
      expect(await countAs({ region: 'EU' })).toBe(inRegions(['EU']));
      expect(await countAs({ region: ['EU', 'US'] })).toBe(inRegions(['EU', 'US']));
      // No value in the context: that condition holds for every row (Cube's reading).
      expect(await countAs({})).toBe(ORDERS.length);
      // A value is bound, never written into the statement.
      expect(await countAs({ region: "EU' OR '1'='1" })).toBe(0);
      const compiled = scoped.compile(
        { measures: ['scoped.count'], filters: [{ member: 'scoped.status', operator: 'equals', values: ['completed'] }] },
        withContext({ region: "EU' OR '1'='1" }),
      );
      expect(compiled.sql).not.toContain("OR '1'='1");
      expect(compiled.params).toContain("EU' OR '1'='1");
      // The query's filter on scoped.status is also written inside the cube's SQL; none there is 1 = 1.
      expect(compiled.sql).toMatch(/WHERE c\.region = \S+ AND \(o\.status = \S+\)/);
      expect(scoped.compile({ measures: ['scoped.count'] }, withContext({ region: 'EU' })).sql).toMatch(/WHERE c\.region = \S+ AND 1 = 1/);
      expect(await countAs({ region: 'EU' }, { filters: [{ member: 'scoped.status', operator: 'equals', values: ['completed'] }] })).toBe(
        ORDERS.filter(([, customer, status]) => regionOf.get(customer as number) === 'EU' && status === 'completed').length,
      );
      // {securityContext.status} as a value in a dimension.
      const mine = await scoped.load(
        { measures: ['scoped.count'], dimensions: ['scoped.mine'], order: { 'scoped.mine': 'asc' } },
        withContext({ status: 'cancelled' }),
      );
      expect(mine.data).toEqual([
        { 'scoped.mine': 'no', 'scoped.count': ORDERS.filter(([, , status]) => status !== 'cancelled').length },
        { 'scoped.mine': 'yes', 'scoped.count': ORDERS.filter(([, , status]) => status === 'cancelled').length },
      ]);
    });

    it('security: a cube read only through another cube’s member SQL still applies its row-level policy; a subquery dimension over a cube with policies is refused', async () => {
      const model = `cubes:
  - name: customers
    sql_table: customers
    joins:
      - { name: orders, relationship: one_to_many, sql: "{CUBE}.id = {orders.customer_id}" }
    dimensions:
      - { name: id, sql: id, type: number, primary_key: true }
      - { name: region, sql: region, type: string }
      - { name: orders_count, sql: "{orders.count}", type: number, sub_query: true }
    access_policy:
      - group: "*"
        row_level:
          filters:
            - { member: region, operator: equals, values: ["{ userAttributes.region }"] }
  - name: orders
    sql_table: orders
    joins:
      - { name: customers, relationship: many_to_one, sql: "{CUBE}.customer_id = {customers.id}" }
    dimensions:
      - { name: id, sql: id, type: number, primary_key: true }
      - { name: customer_id, sql: customer_id, type: number }
      - { name: customer_region, sql: "{customers.region}", type: string }
    measures:
      - { name: count, type: count }
    access_policy:
      - group: "*"
        row_level:
          filters:
            - { member: id, operator: gt, values: ["0"] }
`;
      const guarded = new QueryEngine(shopArtifact(model), shop.source, { ...DEFAULT_ENGINE_LIMITS, cacheTtlMs: 0 });
      const regions = await guarded.load({ measures: ['orders.count'], dimensions: ['orders.customer_region'] }, EU);
      expect(regions.data).toEqual([{ 'orders.customer_region': 'EU', 'orders.count': permitted('EU').length }]);
      const error = await guarded.load({ measures: [], dimensions: ['customers.id', 'customers.orders_count'] }, EU).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(QueryError);
      expect((error as QueryError).status).toBe(403);
      expect((error as Error).message).toMatch(/subquery dimension over cube orders, whose access policies/);
    });

    it('security: propagate_filters_to_sub_query: a subquery over its own cube’s policy meets only the rows the caller sees; one whose propagated filters read a cube with policies is refused', async () => {
      const model = `cubes:
  - name: customers
    sql_table: customers
    joins:
      - { name: orders, relationship: one_to_many, sql: "{CUBE}.id = {orders.customer_id}" }
    dimensions:
      - { name: id, sql: id, type: number, primary_key: true }
      - { name: region, sql: region, type: string }
      - { name: orders_count, sql: "{orders.count}", type: number, sub_query: true, propagate_filters_to_sub_query: true }
    measures:
      - { name: count, type: count }
    access_policy:
      - group: "*"
        row_level:
          filters:
            - { member: region, operator: equals, values: ["{ userAttributes.region }"] }
  - name: orders
    sql_table: orders
    joins:
      - { name: customers, relationship: many_to_one, sql: "{CUBE}.customer_id = {customers.id}" }
    dimensions:
      - { name: id, sql: id, type: number, primary_key: true }
      - { name: customer_id, sql: customer_id, type: number }
      - { name: status, sql: status, type: string }
      - { name: customers_count, sql: "{customers.count}", type: number, sub_query: true, propagate_filters_to_sub_query: true }
      - { name: own_count, sql: "{orders.count}", type: number, sub_query: true, propagate_filters_to_sub_query: true }
    measures:
      - { name: count, type: count }
`;
      const guarded = new QueryEngine(shopArtifact(model), shop.source, { ...DEFAULT_ENGINE_LIMITS, cacheTtlMs: 0 });
      const completed = { member: 'orders.status', operator: 'equals', values: ['completed'] };
      // The customers the caller sees, each with its completed orders counted inside the subquery.
      for (const [caller, region] of [
        [EU, 'EU'],
        [US, 'US'],
      ] as const) {
        const answer = await guarded.load(
          { dimensions: ['customers.id', 'customers.orders_count'], filters: [completed], order: { 'customers.id': 'asc' } },
          caller,
        );
        const mine = CUSTOMERS.filter(([id, , r]) => r === region && ORDERS.some(([, c, status]) => c === id && status === 'completed')).map(([id]) => id);
        expect(answer.data).toEqual(
          mine.map((id) => ({ 'customers.id': id, 'customers.orders_count': ORDERS.filter(([, c, status]) => c === id && status === 'completed').length })),
        );
      }
      // A subquery over orders alone (no policies), the query's filter on orders propagated: allowed.
      const own = await guarded.load({ dimensions: ['orders.id', 'orders.own_count'], filters: [completed], order: { 'orders.id': 'asc' } }, EU);
      expect(own.data).toEqual(ORDERS.filter(([, , status]) => status === 'completed').map(([id]) => ({ 'orders.id': id, 'orders.own_count': 1 })));
      // A propagated filter on customers, or a measure of customers, would read customers inside
      // the subquery past their policy: refused, before anything runs.
      for (const query of [
        { dimensions: ['orders.id', 'orders.own_count'], filters: [{ member: 'customers.region', operator: 'equals', values: ['US'] }] },
        { dimensions: ['orders.id', 'orders.customers_count'] },
      ]) {
        const error = await guarded.load(query, EU).then(
          () => null,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(QueryError);
        expect((error as QueryError).status).toBe(403);
        expect((error as Error).message).toMatch(/subquery dimension over cube customers, whose access policies/);
      }
    });

    it('two users with different attribute values run the same query and each gets only their rows', async () => {
      expect(await count(EU)).toBe(3);
      expect(await count(US)).toBe(1);
      expect(await load({ measures: ['orders.count'], dimensions: ['orders.status'], order: { 'orders.status': 'asc' } }, US)).toEqual([
        { 'orders.status': 'completed', 'orders.count': 1 },
      ]);
      // No attribute value: the filter cannot hold, so no rows (not an error that says why).
      expect(await count(user(null))).toBe(0);
    });

    it('a client filter cannot undo the policy: an or-group matching everything, the other region by name', async () => {
      const everything = {
        or: [
          { member: 'customers.region', operator: 'equals', value: 'US' },
          { member: 'orders.status', operator: 'is_not_null' },
          { member: 'orders.id', operator: 'is_null' },
        ],
      };
      expect(await count(EU, { filters: [everything] })).toBe(3);
      expect(await count(EU, { filters: [{ member: 'customers.region', operator: 'equals', value: 'US' }] })).toBe(0);
      expect(await count(EU, { filters: [{ member: 'orders.status', operator: 'not_equals', value: "x' OR '1'='1" }] })).toBe(3);
    });

    it('a join to another cube applies that cube’s policy too; a cube no policy grants is 403 naming it', async () => {
      const names = await load({ dimensions: ['customers.name'], order: { 'customers.name': 'asc' } }, EU);
      expect(names).toEqual([{ 'customers.name': 'Ada' }, { 'customers.name': 'Cy' }]);
      const joined = await load({ measures: ['orders.count'], dimensions: ['customers.name'], order: { 'customers.name': 'asc' } }, US);
      expect(joined).toEqual([{ 'customers.name': 'Bo', 'orders.count': 1 }]);
      await refused({ measures: ['vault.count'] }, EU, 403, /no access to vault/);
      expect((await load({ measures: ['vault.count'] }, user('EU', { groups: ['auditors'] })))[0]).toEqual({ 'vault.count': 1 });
    });

    it('members a policy excludes are 403 with their names, as measures, dimensions or filters; another policy of the caller may allow them', async () => {
      await refused({ measures: ['orders.total_amount'] }, EU, 403, /orders\.total_amount/);
      await refused({ measures: ['orders.count'], dimensions: ['orders.amount'] }, EU, 403, /orders\.amount/);
      await refused({ measures: ['orders.count'], filters: [{ member: 'orders.amount', operator: 'greater_than', value: 0 }] }, EU, 403, /orders\.amount/);
      // finance: every member, and the rows of either policy (EU by attribute, US by security context, and cancelled ones).
      const finance = user('EU', { groups: ['finance'], securityContext: { region: 'US' } });
      expect((await load({ measures: ['orders.count', 'orders.total_amount'] }, finance))[0]).toEqual({ 'orders.count': 4, 'orders.total_amount': 250 });
    });

    it('through a view, the view’s policy and the cube’s both apply', async () => {
      expect((await load({ measures: ['regional.count'] }, EU))[0]).toEqual({ 'regional.count': 2 });
      expect((await load({ measures: ['regional.count'] }, US))[0]).toEqual({ 'regional.count': 1 });
    });

    it('/v1/meta lists only what the caller may query, and everything it lists can be queried', async () => {
      const finance = user('EU', { groups: ['finance'], securityContext: { region: 'US' } });
      for (const [who, security] of [
        ['EU', EU],
        ['finance', finance],
        ['nobody', user(null)],
      ] as const) {
        const meta = metaOf(shopArtifact(SECURED_MODEL), false, security);
        const names = meta.cubes.map((c) => c.name);
        expect(names, who).not.toContain('vault');
        const members = meta.cubes.flatMap((c) => [...c.measures.map((m) => ['measures', m.name]), ...c.dimensions.map((d) => ['dimensions', d.name])]);
        expect(members.length, who).toBeGreaterThan(0);
        for (const [kind, name] of members) {
          const answer = await engine.load({ [kind!]: [name] }, security).then(
            () => 'ok',
            (e: QueryError) => `${e.status} ${e.message}`,
          );
          expect(answer, `${who} ${name}`).toBe('ok');
        }
      }
      const orders = (security: SecurityContext) =>
        metaOf(shopArtifact(SECURED_MODEL), false, security)
          .cubes.find((c) => c.name === 'orders')!
          .measures.map((m) => m.name);
      expect(orders(EU)).toEqual(['orders.count']);
      expect(orders(finance)).toEqual(['orders.count', 'orders.total_amount']);
      expect(metaOf(shopArtifact(SECURED_MODEL), false, user('EU', { groups: ['auditors'] })).cubes.map((c) => c.name)).toContain('vault');
    });

    it('property: random filtered queries return exactly what a direct computation over the permitted rows gives', async () => {
      const statuses = ['completed', 'processing', 'cancelled', 'archived'];
      const leaf = fc.oneof(
        fc.record({ member: fc.constant('orders.status'), operator: fc.constantFrom('equals', 'not_equals'), value: fc.subarray(statuses, { minLength: 1 }) }),
        fc.record({
          member: fc.constant('orders.status'),
          operator: fc.constantFrom('contains', 'starts_with', 'ends_with', 'not_contains'),
          value: fc.constantFrom('com', 'p', 'ed', 'x', 'can'),
        }),
        fc.record({ member: fc.constant('orders.id'), operator: fc.constantFrom('greater_than', 'less_than_or_equal'), value: fc.integer({ min: 0, max: 6 }) }),
      );
      const filter = fc.oneof(
        leaf,
        fc.record({ or: fc.array(leaf, { minLength: 1, maxLength: 3 }) }),
        fc.record({ and: fc.array(leaf, { minLength: 1, maxLength: 3 }) }),
      );
      type Leaf = { member: string; operator: string; value: unknown };
      const test = (row: { id: number; status: string }, f: Leaf | { or: Leaf[] } | { and: Leaf[] }): boolean => {
        if ('or' in f) return f.or.some((x) => test(row, x));
        if ('and' in f) return f.and.every((x) => test(row, x));
        const v = f.member === 'orders.status' ? row.status : row.id;
        const values = Array.isArray(f.value) ? f.value : [f.value];
        switch (f.operator) {
          case 'equals':
            return values.includes(v);
          case 'not_equals':
            return !values.includes(v);
          case 'contains':
            return String(v).includes(String(f.value));
          case 'not_contains':
            return !String(v).includes(String(f.value));
          case 'starts_with':
            return String(v).startsWith(String(f.value));
          case 'ends_with':
            return String(v).endsWith(String(f.value));
          case 'greater_than':
            return (v as number) > (f.value as number);
          default:
            return (v as number) <= (f.value as number);
        }
      };
      await fc.assert(
        fc.asyncProperty(fc.constantFrom('EU', 'US'), fc.array(filter, { maxLength: 3 }), async (region, filters) => {
          const expected = permitted(region).filter((row) => filters.every((f) => test(row, f as never))).length;
          expect(await count(user(region), { filters })).toBe(expected);
        }),
        { numRuns: 60 },
      );
    });
  });
}
