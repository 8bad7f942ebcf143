import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { QueryError } from '../src/semantic-layer/query/errors.js';
import { DEFAULT_ENGINE_LIMITS, QueryEngine } from '../src/semantic-layer/query/load.js';
import { explicitRange } from '../src/semantic-layer/query/relative-dates.js';
import { DIALECTS } from './harness.js';
import { CUSTOMERS, LINE_ITEMS, ORDERS, SHOP_MODEL, shopArtifact, shopSource, type ShopSource } from './query-fixtures.js';

/*
 * Issue 15, "Queries": JSON queries over cubes and views compiled to SQL for each data source:
 * measure aggregations, dimension expressions with {CUBE} references, joins along the model's
 * join graph (ambiguous or missing paths refused, naming the cubes), views resolved to their
 * cubes, granularities in time zones, counts and sums not inflated across one-to-many joins, the
 * reference's 18 filter operators with and/or groups, values always bound.
 */

type Row = Record<string, unknown>;

for (const dialect of DIALECTS) {
  describe(`the query engine (${dialect})`, () => {
    let shop: ShopSource;
    let engine: QueryEngine;
    const load = async (query: Record<string, unknown>) => (await engine.load(query)).data as Row[];
    const refused = async (query: Record<string, unknown>, message: RegExp) => {
      const error = await engine.load(query).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(QueryError);
      expect((error as Error).message).toMatch(message);
    };

    beforeAll(async () => {
      shop = await shopSource(dialect);
      engine = new QueryEngine(shopArtifact(), shop.source, { ...DEFAULT_ENGINE_LIMITS, cacheTtlMs: 0 });
    });
    afterAll(() => shop.close());

    it('aggregates measures: count, sum, avg, max, count_distinct, a filtered count and a number measure over others', async () => {
      const [row] = await load({
        measures: [
          'orders.count',
          'orders.total_amount',
          'orders.average_amount',
          'orders.largest',
          'orders.customers_count',
          'orders.completed_count',
          'orders.amount_per_order',
        ],
      });
      expect(row).toEqual({
        'orders.count': 5,
        'orders.total_amount': 270,
        'orders.average_amount': 54,
        'orders.largest': 100,
        'orders.customers_count': 3,
        'orders.completed_count': 3,
        'orders.amount_per_order': 54,
      });
    });

    it('measures that aggregate in separate groups (one-to-many), with a filter, bind its value in each group: on SQLite too', async () => {
      const rows = await load({
        measures: ['orders.count', 'line_items.quantity'],
        dimensions: ['customers.region'],
        filters: [{ member: 'orders.status', operator: 'equals', values: ['completed'] }],
        order: { 'customers.region': 'asc' },
      });
      const regionOf = new Map(CUSTOMERS.map(([id, , region]) => [id, region]));
      const completed = ORDERS.filter(([, , status]) => status === 'completed');
      const expected = new Map<unknown, { count: number; quantity: number | null }>();
      for (const [id, customer] of completed) {
        const region = regionOf.get(customer as number) ?? null;
        const entry = expected.get(region) ?? { count: 0, quantity: null };
        entry.count += 1;
        for (const [, order, , quantity] of LINE_ITEMS) if (order === id) entry.quantity = (entry.quantity ?? 0) + (quantity as number);
        expected.set(region, entry);
      }
      expect(rows).toEqual(
        ['EU', 'US', null].map((region) => ({
          'customers.region': region,
          'orders.count': expected.get(region)!.count,
          'line_items.quantity': expected.get(region)!.quantity,
        })),
      );
    });

    it('rolling windows as Cube computes them: trailing N days and unbounded per bucket of the series, empty buckets kept, leading and offset start, in the query’s time zone', async () => {
      const model = SHOP_MODEL.replace(
        '      - { name: amount_per_order, sql: "{total_amount} / {count}", type: number }',
        `      - { name: amount_per_order, sql: "{total_amount} / {count}", type: number }
      - { name: count_3d, type: count, rolling_window: { trailing: 3 day } }
      - { name: running_amount, sql: amount, type: sum, rolling_window: { trailing: unbounded } }
      - { name: next_2d, type: count, rolling_window: { trailing: unbounded, leading: 2 day, offset: start } }
      - { name: month_to_date, sql: amount, type: sum, rolling_window: { type: to_date, granularity: month } }`,
      );
      expect(model).not.toBe(SHOP_MODEL);
      const rolling = new QueryEngine(shopArtifact(model), shop.source, { ...DEFAULT_ENGINE_LIMITS, cacheTtlMs: 0 });
      const times = ORDERS.map(([, , , amount, at]) => ({ amount: amount as number, at: Date.parse(at as string) }));
      const day = (d: string) => Date.parse(`${d}T00:00:00Z`);
      const DAY = 86_400_000;
      const days = ['2026-01-01', '2026-01-02', '2026-01-03', '2026-01-04', '2026-01-05'];
      const answer = await rolling.load({
        measures: ['orders.count_3d', 'orders.running_amount', 'orders.next_2d'],
        timeDimensions: [{ dimension: 'orders.created_at', granularity: 'day', dateRange: ['2026-01-01', '2026-01-05'] }],
      });
      expect(answer.data).toEqual(
        days.map((d) => {
          const start = day(d);
          const end = start + DAY - 1;
          return {
            'orders.created_at.day': `${d}T00:00:00.000`,
            'orders.created_at': `${d}T00:00:00.000`,
            // (end - 3 days, end]
            'orders.count_3d': times.filter((o) => o.at > end - 3 * DAY && o.at <= end).length,
            // everything up to the bucket's end, before the range too
            'orders.running_amount': times.filter((o) => o.at <= end).reduce((sum, o) => sum + o.amount, 0) || null,
            // offset start: everything before start + 2 days
            'orders.next_2d': times.filter((o) => o.at < start + 2 * DAY).length,
          };
        }),
      );
      // Period to date: from the start of each bucket's month to its end.
      const mtd = await rolling.load({
        measures: ['orders.month_to_date'],
        timeDimensions: [{ dimension: 'orders.created_at', granularity: 'week', dateRange: ['2026-01-26', '2026-02-15'] }],
      });
      expect(mtd.data.map((row) => row['orders.month_to_date'])).toEqual(
        ['2026-01-26', '2026-02-02', '2026-02-09'].map((monday) => {
          const end = day(monday) + 7 * DAY - 1;
          const monthStart = Date.UTC(new Date(end).getUTCFullYear(), new Date(end).getUTCMonth(), 1);
          return times.filter((o) => o.at >= monthStart && o.at <= end).reduce((sum, o) => sum + o.amount, 0) || null;
        }),
      );
      // Without a granularity the date range is one bucket; without a date range it is refused, as in Cube.
      const whole = await rolling.load({
        measures: ['orders.running_amount'],
        timeDimensions: [{ dimension: 'orders.created_at', dateRange: ['2026-01-01', '2026-01-31'] }],
      });
      expect(whole.data).toEqual([{ 'orders.running_amount': times.filter((o) => o.at <= day('2026-02-01') - 1).reduce((sum, o) => sum + o.amount, 0) }]);
      await expect(rolling.load({ measures: ['orders.count_3d'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'day' }] })).rejects.toThrow(
        /give the time dimension orders.created_at a dateRange/,
      );
      // In a time zone ahead of UTC, the days are Tokyo's.
      const tokyo = await rolling.load({
        measures: ['orders.count_3d'],
        timeDimensions: [{ dimension: 'orders.created_at', granularity: 'day', dateRange: ['2026-01-02', '2026-01-02'] }],
        timezone: 'Asia/Tokyo',
      });
      const tokyoEnd = day('2026-01-03') - 9 * 3_600_000 - 1;
      expect(tokyo.data).toEqual([
        {
          'orders.created_at.day': '2026-01-02T00:00:00.000',
          'orders.created_at': '2026-01-02T00:00:00.000',
          'orders.count_3d': times.filter((o) => o.at > tokyoEnd - 3 * DAY && o.at <= tokyoEnd).length,
        },
      ]);
    });

    it('sub_query dimensions: a measure of a joined cube per row of the dimension’s cube, groupable and filterable, without joining that cube into the query', async () => {
      const model = `cubes:
  - name: customers
    sql_table: customers
    joins:
      - { name: orders, relationship: one_to_many, sql: "{CUBE}.id = {orders.customer_id}" }
    dimensions:
      - { name: id, sql: id, type: number, primary_key: true }
      - { name: region, sql: region, type: string }
      - { name: orders_count, sql: "{orders.count}", type: number, sub_query: true }
      - { name: spent, sql: "{orders.total_amount}", type: number, sub_query: true }
    measures:
      - { name: count, type: count }
  - name: orders
    sql_table: orders
    dimensions:
      - { name: id, sql: id, type: number, primary_key: true }
      - { name: customer_id, sql: customer_id, type: number }
    measures:
      - { name: count, type: count }
      - { name: total_amount, sql: amount, type: sum }
`;
      const sub = new QueryEngine(shopArtifact(model), shop.source, { ...DEFAULT_ENGINE_LIMITS, cacheTtlMs: 0 });
      const ordersOf = (customer: unknown) => ORDERS.filter(([, c]) => c === customer);
      const rows = await sub.load({ dimensions: ['customers.id', 'customers.orders_count', 'customers.spent'], order: { 'customers.id': 'asc' } });
      expect(rows.data).toEqual(
        CUSTOMERS.map(([id]) => ({
          'customers.id': id,
          'customers.orders_count': ordersOf(id).length,
          'customers.spent': ordersOf(id).reduce((sum, o) => sum + (o[3] as number), 0) || null,
        })),
      );
      // Grouped by it, the customers are counted once each (orders are not joined into the query).
      const byCount = await sub.load({ measures: ['customers.count'], dimensions: ['customers.orders_count'], order: { 'customers.orders_count': 'asc' } });
      const histogram = new Map<number, number>();
      for (const [id] of CUSTOMERS) histogram.set(ordersOf(id).length, (histogram.get(ordersOf(id).length) ?? 0) + 1);
      expect(byCount.data).toEqual(
        [...histogram].sort(([a], [b]) => a - b).map(([n, customers]) => ({ 'customers.orders_count': n, 'customers.count': customers })),
      );
      const filtered = await sub.load({ measures: ['customers.count'], filters: [{ member: 'customers.orders_count', operator: 'gte', values: ['2'] }] });
      expect(filtered.data).toEqual([{ 'customers.count': CUSTOMERS.filter(([id]) => ordersOf(id).length >= 2).length }]);
    });

    it('propagate_filters_to_sub_query: the query’s top-level dimension filters, segments and date ranges hold inside the subquery (not and/or groups, measure filters or filters on subquery dimensions); its joins de-duplicate; values bound', async () => {
      const model = `cubes:
  - name: customers
    sql_table: customers
    joins:
      - { name: orders, relationship: one_to_many, sql: "{CUBE}.id = {orders.customer_id}" }
    dimensions:
      - { name: id, sql: id, type: number, primary_key: true, public: true }
      - { name: region, sql: region, type: string }
      - { name: orders_count, sql: "{orders.count}", type: number, sub_query: true, propagate_filters_to_sub_query: true }
      - { name: all_orders, sql: "{orders.count}", type: number, sub_query: true }
      - { name: average, sql: "1.0 * {orders.total_amount} / NULLIF({orders.count}, 0)", type: number, sub_query: true, propagate_filters_to_sub_query: true }
      - { name: quantity, sql: "{line_items.quantity}", type: number, sub_query: true, propagate_filters_to_sub_query: true }
    measures:
      - { name: count, type: count }
  - name: orders
    sql_table: orders
    joins:
      - { name: line_items, relationship: one_to_many, sql: "{CUBE}.id = {line_items.order_id}" }
    dimensions:
      - { name: id, sql: id, type: number, primary_key: true, public: true }
      - { name: customer_id, sql: customer_id, type: number }
      - { name: status, sql: status, type: string }
      - { name: amount, sql: amount, type: number }
      - { name: created_at, sql: created_at, type: time }
    measures:
      - { name: count, type: count }
      - { name: total_amount, sql: amount, type: sum }
    segments:
      - { name: completed, sql: "{CUBE}.status = 'completed'" }
  - name: line_items
    sql_table: line_items
    dimensions:
      - { name: id, sql: id, type: number, primary_key: true, public: true }
      - { name: order_id, sql: order_id, type: number }
      - { name: product, sql: product, type: string }
    measures:
      - { name: quantity, sql: quantity, type: sum }
`;
      const sub = new QueryEngine(shopArtifact(model), shop.source, { ...DEFAULT_ENGINE_LIMITS, cacheTtlMs: 0 });
      type Order = { id: number; customer: number | null; status: string; amount: number; at: string };
      const orders: Order[] = ORDERS.map(([id, customer, status, amount, at]) => ({
        id: id as number,
        customer: customer as number | null,
        status: status as string,
        amount: amount as number,
        at: at as string,
      }));
      /** Per customer the query's rows have: the customer, its order count over `inner` (NULL without one, as Cube's subquery), over all its orders. */
      const expected = (customers: number[], inner: (o: Order) => boolean) =>
        customers.map((id) => ({
          'customers.id': id,
          'customers.orders_count': orders.filter((o) => o.customer === id && inner(o)).length || null,
          'customers.all_orders': orders.filter((o) => o.customer === id).length || null,
        }));
      const q = (extra: Record<string, unknown>) =>
        sub
          .load({ dimensions: ['customers.id', 'customers.orders_count', 'customers.all_orders'], order: { 'customers.id': 'asc' }, ...extra })
          .then((r) => r.data);
      const completed = (o: Order) => o.status === 'completed';
      const customersWith = (pick: (o: Order) => boolean) =>
        [
          ...new Set(
            orders
              .filter(pick)
              .map((o) => o.customer)
              .filter((c): c is number => c !== null),
          ),
        ].sort();

      // A filter on the joined cube's dimension: the subquery counts the completed orders only.
      expect(await q({ filters: [{ member: 'orders.status', operator: 'equals', values: ['completed'] }] })).toEqual(
        expected(customersWith(completed), completed),
      );
      // A segment, likewise.
      expect(await q({ segments: ['orders.completed'] })).toEqual(expected(customersWith(completed), completed));
      // A time dimension's date range (in the query's zone), without a granularity.
      const january = (o: Order) => o.at >= '2026-01-02' && o.at < '2026-02-01';
      expect(await q({ timeDimensions: [{ dimension: 'orders.created_at', dateRange: ['2026-01-02', '2026-01-31'] }] })).toEqual(
        expected(customersWith(january), january),
      );
      // A filter on the dimension's own cube: the subquery reads those customers' orders.
      expect(await q({ filters: [{ member: 'customers.region', operator: 'equals', values: ['EU'] }] })).toEqual(
        expected(
          CUSTOMERS.filter(([, , r]) => r === 'EU').map(([id]) => id as number),
          () => true,
        ),
      );
      // An or-group is not propagated (Cube passes its top-level filters only): every order is counted.
      const either = {
        or: [
          { member: 'orders.status', operator: 'equals', values: ['completed'] },
          { member: 'orders.amount', operator: 'gt', values: ['1000'] },
        ],
      };
      expect(await q({ filters: [either] })).toEqual(expected(customersWith(completed), () => true));
      // A filter on a subquery dimension filters the query, not the subquery.
      expect(
        await q({
          filters: [
            { member: 'customers.orders_count', operator: 'gte', values: ['1'] },
            { member: 'orders.status', operator: 'equals', values: ['completed'] },
          ],
        }),
      ).toEqual(expected(customersWith(completed), completed));
      // Without filters, the subquery counts every order; a customer without one has NULL.
      expect(await q({})).toEqual(
        expected(
          CUSTOMERS.map(([id]) => id as number),
          () => true,
        ),
      );

      // An expression over two measures of the subquery.
      const avg = await sub.load({
        dimensions: ['customers.id', 'customers.average'],
        filters: [{ member: 'orders.status', operator: 'notEquals', values: ['processing'] }],
        order: { 'customers.id': 'asc' },
      });
      expect(avg.data).toEqual(
        customersWith((o) => o.status !== 'processing').map((id) => {
          const own = orders.filter((o) => o.customer === id && o.status !== 'processing');
          return { 'customers.id': id, 'customers.average': own.reduce((sum, o) => sum + o.amount, 0) / own.length };
        }),
      );
      // A filter on a cube joined one-to-many from the measure's cube: the orders are counted once each.
      const penOrInk = new Set(LINE_ITEMS.filter(([, , p]) => p === 'pen' || p === 'ink').map(([, order]) => order));
      const items = await sub.load({
        dimensions: ['customers.id', 'customers.orders_count', 'customers.quantity'],
        filters: [{ member: 'line_items.product', operator: 'equals', values: ['pen', 'ink'] }],
        order: { 'customers.id': 'asc' },
      });
      expect(items.data).toEqual(
        customersWith((o) => penOrInk.has(o.id)).map((id) => ({
          'customers.id': id,
          'customers.orders_count': orders.filter((o) => o.customer === id && penOrInk.has(o.id)).length,
          'customers.quantity': LINE_ITEMS.filter(([, order, p]) => (p === 'pen' || p === 'ink') && orders.find((o) => o.id === order)?.customer === id).reduce(
            (sum, l) => sum + (l[3] as number),
            0,
          ),
        })),
      );
      // Values are bound in the subquery as in the query: text that looks like SQL stays text.
      const hostile = "completed' OR '1'='1";
      const compiled = sub.compile({
        dimensions: ['customers.id', 'customers.orders_count'],
        filters: [{ member: 'orders.status', operator: 'equals', values: [hostile] }],
      });
      expect(compiled.sql).not.toContain("OR '1'");
      expect(compiled.params.filter((p) => p === hostile)).toHaveLength(2);
      expect(await q({ filters: [{ member: 'orders.status', operator: 'equals', values: [hostile] }] })).toEqual([]);
    });

    it('ungrouped queries answer the rows themselves with each measure’s value per row, and need every joined cube’s primary key; order: [] asks for no order', async () => {
      const rows = await load({
        dimensions: ['orders.id', 'orders.status'],
        measures: ['orders.count', 'orders.total_amount', 'orders.completed_count'],
        ungrouped: true,
        order: { 'orders.id': 'asc' },
      });
      expect(rows).toEqual(
        ORDERS.map(([id, , status, amount]) => ({
          'orders.id': id,
          'orders.status': status,
          'orders.count': 1,
          'orders.total_amount': amount,
          'orders.completed_count': status === 'completed' ? 1 : 0,
        })),
      );
      // A filter on a measure is a condition on its value in each row.
      const big = await load({
        dimensions: ['orders.id'],
        measures: ['orders.total_amount'],
        filters: [{ member: 'orders.total_amount', operator: 'gte', values: ['70'] }],
        ungrouped: true,
        order: { 'orders.id': 'asc' },
      });
      expect(big.map((r) => r['orders.id'])).toEqual(ORDERS.filter(([, , , amount]) => (amount as number) >= 70).map(([id]) => id));
      await refused(
        { dimensions: ['orders.status'], measures: ['orders.count'], ungrouped: true },
        /primary key of every cube it reads among its dimensions: add orders\.id/,
      );
      await refused({ dimensions: ['orders.id', 'customers.region'], ungrouped: true }, /add customers\.id/);
      // order: [] opts out of the default order: no ORDER BY is written.
      expect(engine.compile({ measures: ['orders.count'], dimensions: ['orders.status'], order: [] }).sql).not.toContain('ORDER BY');
      expect(engine.compile({ measures: ['orders.count'], dimensions: ['orders.status'] }).sql).toContain('ORDER BY');
    });

    it('a cube’s refresh_key `every` is how long its answers are reused; others keep QUERY_CACHE_MS; renewQuery reads past the cache', async () => {
      const model = SHOP_MODEL.replace(
        '  - name: line_items\n    sql_table: line_items\n',
        '  - name: line_items\n    sql_table: line_items\n    refresh_key: { every: 1 second }\n',
      );
      expect(model).not.toBe(SHOP_MODEL);
      const cached = new QueryEngine(shopArtifact(model), shop.source, { ...DEFAULT_ENGINE_LIMITS, cacheTtlMs: 60_000 });
      const at = async (measure: string, extra: Record<string, unknown> = {}) =>
        (await cached.answer(cached.normalise({ measures: [measure], ...extra }))).refreshedAt;
      const orders = await at('orders.count');
      const items = await at('line_items.count');
      expect(await at('line_items.count')).toBe(items);
      // Read again once its second has passed.
      await vi.waitFor(async () => expect(await at('line_items.count')).toBeGreaterThan(items), { timeout: 10_000, interval: 100 });
      // The cube without a refresh key still answers from the cache kept since.
      expect(await at('orders.count')).toBe(orders);
      expect(await at('orders.count', { renewQuery: true })).toBeGreaterThan(orders);
    });

    it('multi-stage measures: a grand total and a share of it (group_by: []), a total by one dimension (group_by), by all but one (reduce_by), a nested average (add_group_by), a rank', async () => {
      const model = SHOP_MODEL.replace(
        '      - { name: amount_per_order, sql: "{total_amount} / {count}", type: number }',
        `      - { name: amount_per_order, sql: "{total_amount} / {count}", type: number }
      - { name: amount_all, multi_stage: true, sql: "{total_amount}", type: sum, group_by: [] }
      - { name: share, multi_stage: true, sql: "1.0 * {total_amount} / NULLIF({amount_all}, 0)", type: number }
      - { name: amount_by_status, multi_stage: true, sql: "{total_amount}", type: sum, group_by: [status] }
      - { name: amount_without_region, multi_stage: true, sql: "{total_amount}", type: sum, reduce_by: [customers.region] }
      - { name: average_customer_amount, multi_stage: true, sql: "{total_amount}", type: avg, add_group_by: [customer_id] }
      - { name: amount_rank, multi_stage: true, type: rank, order_by: [{ sql: "{total_amount}", dir: desc }], reduce_by: [customers.region] }
      - { name: prior_month_amount, multi_stage: true, sql: "{total_amount}", type: sum, time_shift: [{ time_dimension: created_at, interval: 1 month, type: prior }] }
      - { name: next_month_count, multi_stage: true, sql: "{count}", type: sum, time_shift: [{ interval: 1 month, type: next }] }`,
      ).replace(
        '      - { name: amount, sql: amount, type: number }\n',
        '      - { name: amount, sql: amount, type: number }\n      - { name: customer_id, sql: customer_id, type: number }\n',
      );
      expect(model).not.toBe(SHOP_MODEL);
      const staged = new QueryEngine(shopArtifact(model), shop.source, { ...DEFAULT_ENGINE_LIMITS, cacheTtlMs: 0 });
      const regionOf = new Map(CUSTOMERS.map(([id, , region]) => [id, region]));
      const orders = ORDERS.map(([id, customer, status, amount]) => ({
        id,
        customer,
        status: status as string,
        amount: amount as number,
        region: (regionOf.get(customer as number) as string | undefined) ?? null,
      }));
      const sum = (list: typeof orders) => list.reduce((total, o) => total + o.amount, 0);
      const all = sum(orders);

      const byStatus = await staged.load({
        measures: ['orders.total_amount', 'orders.amount_all', 'orders.share'],
        dimensions: ['orders.status'],
        order: { 'orders.status': 'asc' },
      });
      expect(byStatus.data).toEqual(
        [...new Set(orders.map((o) => o.status))].sort().map((status) => {
          const amount = sum(orders.filter((o) => o.status === status));
          return { 'orders.status': status, 'orders.total_amount': amount, 'orders.amount_all': all, 'orders.share': amount / all };
        }),
      );
      // Filters apply in both stages: the total is of the filtered rows.
      const completed = await staged.load({
        measures: ['orders.amount_all'],
        dimensions: ['orders.status'],
        filters: [{ member: 'orders.status', operator: 'notEquals', values: ['cancelled'] }],
      });
      expect(new Set(completed.data.map((r) => r['orders.amount_all']))).toEqual(new Set([sum(orders.filter((o) => o.status !== 'cancelled'))]));

      const twoDims = await staged.load({
        measures: ['orders.total_amount', 'orders.amount_by_status', 'orders.amount_without_region', 'orders.amount_rank'],
        dimensions: ['orders.status', 'customers.region'],
      });
      const cell = (status: string, region: unknown) => sum(orders.filter((o) => o.status === status && o.region === region));
      for (const row of twoDims.data) {
        const status = row['orders.status'] as string;
        const region = row['customers.region'];
        expect(row['orders.total_amount']).toBe(cell(status, region));
        expect(row['orders.amount_by_status']).toBe(sum(orders.filter((o) => o.status === status)));
        expect(row['orders.amount_without_region']).toBe(sum(orders.filter((o) => o.status === status)));
        // Rank within the status, by amount descending (ties share a rank).
        const peers = [...new Set(orders.filter((o) => o.status === status).map((o) => o.region))].map((r) => cell(status, r));
        expect(row['orders.amount_rank']).toBe(1 + peers.filter((amount) => amount > cell(status, region)).length);
      }
      expect(twoDims.data).toHaveLength(new Set(orders.map((o) => `${o.status}|${o.region}`)).size);

      // time_shift: each month meets its prior (or next) month's value; the range is shifted with it.
      const monthOf = (at: unknown) => String(at).slice(0, 7);
      const shifted = await staged.load({
        measures: ['orders.total_amount', 'orders.prior_month_amount', 'orders.next_month_count'],
        timeDimensions: [{ dimension: 'orders.created_at', granularity: 'month', dateRange: ['2026-01-01', '2026-02-28'] }],
      });
      expect(shifted.data).toEqual(
        ['2026-01', '2026-02'].map((month) => {
          const [year, m] = month.split('-').map(Number) as [number, number];
          const previous = new Date(Date.UTC(year, m - 2, 1)).toISOString().slice(0, 7);
          const next = new Date(Date.UTC(year, m, 1)).toISOString().slice(0, 7);
          const of = (which: string) => ORDERS.filter(([, , , , at]) => monthOf(at) === which);
          return {
            'orders.created_at.month': `${month}-01T00:00:00.000`,
            'orders.created_at': `${month}-01T00:00:00.000`,
            'orders.total_amount': of(month).reduce((t, o) => t + (o[3] as number), 0),
            'orders.prior_month_amount': of(previous).reduce((t, o) => t + (o[3] as number), 0) || null,
            'orders.next_month_count': of(next).length || null,
          };
        }),
      );

      // add_group_by: the average over customers of each customer's amount, per region.
      const nested = await staged.load({
        measures: ['orders.average_customer_amount'],
        dimensions: ['customers.region'],
        order: { 'customers.region': 'asc' },
      });
      expect(nested.data).toEqual(
        ['EU', 'US', null].map((region) => {
          const customers = [...new Set(orders.filter((o) => o.region === region).map((o) => o.customer))];
          const perCustomer = customers.map((c) => sum(orders.filter((o) => o.customer === c)));
          return { 'customers.region': region, 'orders.average_customer_amount': perCustomer.reduce((a, b) => a + b, 0) / perCustomer.length };
        }),
      );
    });

    it('empty filter groups say nothing, limit 0 is no rows, an order by a measure not selected or an unknown member is left out (no ORDER BY, as Cube), a date-filtered time dimension reads in the query’s zone', async () => {
      expect(await load({ measures: ['orders.count'], filters: [{ and: [] }, { or: [{ and: [] }] }] })).toEqual([{ 'orders.count': ORDERS.length }]);
      expect(await load({ dimensions: ['orders.status'], limit: 0 })).toEqual([]);
      // An order by a measure the query does not select, or by an unknown member, is left out as
      // Cube's SQL leaves it out: with nothing left, no ORDER BY at all (Cube's /v1/sql writes none).
      const byAmount = { dimensions: ['orders.status'], order: { 'orders.total_amount': 'desc', 'orders.nope': 'asc' } };
      expect(engine.compile(byAmount).sql).not.toContain('ORDER BY');
      expect(engine.compile(byAmount).sql).not.toContain('sum(');
      const statuses = (await load(byAmount)).map((row) => row['orders.status']);
      expect(statuses.sort()).toEqual([...new Set(ORDERS.map(([, , status]) => status as string))].sort());
      // Beside a selected one, only the selected one orders.
      expect(
        engine.compile({ measures: ['orders.count'], dimensions: ['orders.status'], order: { 'orders.total_amount': 'desc', 'orders.count': 'asc' } }).sql,
      ).toMatch(/ORDER BY "c1" ASC NULLS LAST LIMIT/);
      // Filtered by date in Asia/Tokyo, the times read in Tokyo; unfiltered, in UTC.
      const tokyo = await load({
        dimensions: ['orders.id', 'orders.created_at'],
        filters: [{ member: 'orders.created_at', operator: 'inDateRange', values: ['2026-01-02', '2026-01-02'] }],
        timezone: 'Asia/Tokyo',
        order: { 'orders.id': 'asc' },
      });
      const inTokyo = (at: string) => new Date(Date.parse(at) + 9 * 3_600_000).toISOString().slice(0, 23);
      expect(tokyo).toEqual(
        ORDERS.filter(([, , , , at]) => inTokyo(at as string).startsWith('2026-01-02')).map(([id, , , , at]) => ({
          'orders.id': id,
          'orders.created_at': inTokyo(at as string),
        })),
      );
      const utc = await load({ dimensions: ['orders.id', 'orders.created_at'], timezone: 'Asia/Tokyo', order: { 'orders.id': 'asc' }, limit: 1 });
      expect(utc).toEqual([{ 'orders.id': ORDERS[0]![0], 'orders.created_at': new Date(Date.parse(ORDERS[0]![4] as string)).toISOString().slice(0, 23) }]);
    });

    it('custom granularities a time dimension defines (an interval, an offset, an origin) group the rows into their buckets in the query’s zone; an unknown one is refused naming those it has', async () => {
      const model = SHOP_MODEL.replace(
        '      - { name: created_at, sql: created_at, type: time }',
        `      - name: created_at
        sql: created_at
        type: time
        granularities:
          - { name: half_day, interval: 12 hours }
          - { name: fiscal_month, interval: 1 month, offset: 1 month }
          - { name: fortnight, interval: 2 weeks, origin: "2025-12-29" }`,
      );
      expect(model).not.toBe(SHOP_MODEL);
      const custom = new QueryEngine(shopArtifact(model), shop.source, { ...DEFAULT_ENGINE_LIMITS, cacheTtlMs: 0 });
      const buckets = async (granularity: string, timezone = 'UTC') =>
        (await custom.load({ measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', granularity }], timezone })).data.map((row) => [
          row[`orders.created_at.${granularity}`],
          row['orders.count'],
        ]);
      const count = (label: (at: number) => string) => {
        const out = new Map<string, number>();
        for (const [, , , , at] of ORDERS) out.set(label(Date.parse(at as string)), (out.get(label(Date.parse(at as string))) ?? 0) + 1);
        return [...out].sort(([a], [b]) => (a < b ? -1 : 1));
      };
      const iso = (ms: number) => new Date(ms).toISOString().slice(0, 23);
      expect(await buckets('half_day')).toEqual(count((at) => iso(Math.floor(at / 43_200_000) * 43_200_000)));
      // Tokyo's half days start at 00:00 and 12:00 Tokyo time.
      expect(await buckets('half_day', 'Asia/Tokyo')).toEqual(count((at) => iso(Math.floor((at + 9 * 3_600_000) / 43_200_000) * 43_200_000)));
      expect(await buckets('fiscal_month')).toEqual(count((at) => iso(Date.UTC(new Date(at).getUTCFullYear(), new Date(at).getUTCMonth(), 1))));
      const origin = Date.UTC(2025, 11, 29);
      expect(await buckets('fortnight')).toEqual(count((at) => iso(origin + Math.floor((at - origin) / (14 * 86_400_000)) * 14 * 86_400_000)));
      const annotation = (await custom.load({ measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'fortnight' }] }))
        .annotation;
      expect(annotation.timeDimensions['orders.created_at.fortnight']).toMatchObject({
        granularity: { name: 'fortnight', title: 'Fortnight', interval: '2 week' },
      });
      await refused({ measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'decade' }] }, /has no granularity "decade"/);
    });

    it('groups by dimensions, ordered by the first measure descending by default; order, limit and offset as given', async () => {
      expect(await load({ measures: ['orders.count', 'orders.total_amount'], dimensions: ['orders.status'] })).toEqual([
        { 'orders.status': 'completed', 'orders.count': 3, 'orders.total_amount': 190 },
        { 'orders.status': expect.any(String), 'orders.count': 1, 'orders.total_amount': expect.any(Number) },
        { 'orders.status': expect.any(String), 'orders.count': 1, 'orders.total_amount': expect.any(Number) },
      ]);
      expect(await load({ dimensions: ['orders.status'], order: { 'orders.status': 'asc' } })).toEqual([
        { 'orders.status': 'cancelled' },
        { 'orders.status': 'completed' },
        { 'orders.status': 'processing' },
      ]);
      expect(await load({ dimensions: ['orders.status'], order: [['orders.status', 'desc']], limit: 1, offset: 1 })).toEqual([
        { 'orders.status': 'completed' },
      ]);
      expect(await load({ measures: ['orders.count'], dimensions: ['orders.size'], order: { 'orders.size': 'asc' } })).toEqual([
        { 'orders.size': 'large', 'orders.count': 2 },
        { 'orders.size': 'small', 'orders.count': 3 },
      ]);
    });

    it('joins along the model: a many-to-one join keeps every order (LEFT JOIN), and a view resolves to the same cubes and path', async () => {
      const expected = [
        { region: 'EU', count: 3 },
        { region: 'US', count: 1 },
        { region: null, count: 1 },
      ];
      const byCube = await load({ measures: ['orders.count'], dimensions: ['customers.region'], order: { 'orders.count': 'desc', 'customers.region': 'asc' } });
      expect(byCube.map((r) => ({ region: r['customers.region'], count: r['orders.count'] }))).toEqual(expected);
      const byView = await load({ measures: ['sales.count'], dimensions: ['sales.region'], order: { 'sales.count': 'desc', 'sales.region': 'asc' } });
      expect(byView.map((r) => ({ region: r['sales.region'], count: r['sales.count'] }))).toEqual(expected);
    });

    it('counts and sums are not inflated across a one-to-many join (an order with two line items counts once)', async () => {
      const rows = await load({
        measures: ['orders.count', 'orders.total_amount', 'line_items.quantity'],
        dimensions: ['orders.status'],
        order: { 'orders.status': 'asc' },
      });
      expect(rows).toEqual([
        { 'orders.status': 'cancelled', 'orders.count': 1, 'orders.total_amount': 30, 'line_items.quantity': null },
        { 'orders.status': 'completed', 'orders.count': 3, 'orders.total_amount': 190, 'line_items.quantity': 4 },
        { 'orders.status': 'processing', 'orders.count': 1, 'orders.total_amount': 50, 'line_items.quantity': 5 },
      ]);
      const [all] = await load({ measures: ['orders.count', 'line_items.count'], dimensions: [] });
      expect(all).toEqual({ 'orders.count': 5, 'line_items.count': 4 });
    });

    it('truncates times in the query’s time zone and filters date ranges in it (a UTC evening is the next local day elsewhere)', async () => {
      const months = (timezone: string) =>
        load({ measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'month' }], timezone });
      expect(await months('UTC')).toEqual([
        { 'orders.created_at.month': '2026-01-01T00:00:00.000', 'orders.created_at': '2026-01-01T00:00:00.000', 'orders.count': 3 },
        { 'orders.created_at.month': '2026-02-01T00:00:00.000', 'orders.created_at': '2026-02-01T00:00:00.000', 'orders.count': 2 },
      ]);
      expect((await months('America/New_York')).map((r) => r['orders.count'])).toEqual([4, 1]);
      const days = await load({
        measures: ['orders.count'],
        timeDimensions: [{ dimension: 'orders.created_at', granularity: 'day' }],
        timezone: 'Asia/Tokyo',
        limit: 2,
      });
      // 23:30 UTC on 1 January is 08:30 on 2 January in Tokyo, the same day as the next order.
      expect(days.map((r) => [r['orders.created_at.day'], r['orders.count']])).toEqual([
        ['2026-01-02T00:00:00.000', 2],
        ['2026-01-15T00:00:00.000', 1],
      ]);
      const weeks = await load({
        measures: ['orders.count'],
        timeDimensions: [{ dimension: 'orders.created_at', granularity: 'week', dateRange: ['2026-01-01', '2026-01-31'] }],
      });
      expect(weeks).toEqual([
        { 'orders.created_at.week': '2025-12-29T00:00:00.000', 'orders.created_at': '2025-12-29T00:00:00.000', 'orders.count': 2 },
        { 'orders.created_at.week': '2026-01-12T00:00:00.000', 'orders.created_at': '2026-01-12T00:00:00.000', 'orders.count': 1 },
      ]);
      const inRange = async (timezone: string) =>
        (
          await load({ measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', dateRange: ['2026-01-01', '2026-01-31'] }], timezone })
        )[0]!['orders.count'];
      expect(await inRange('UTC')).toBe(3);
      expect(await inRange('America/New_York')).toBe(4);
      // Asked both as a dimension and with a granularity, the bare key keeps the dimension's own value, as in Cube.
      const both = await load({
        dimensions: ['orders.created_at'],
        timeDimensions: [{ dimension: 'orders.created_at', granularity: 'year' }],
        order: { 'orders.created_at': 'asc' },
        limit: 1,
      });
      expect(both[0]!['orders.created_at.year']).toBe('2026-01-01T00:00:00.000');
      expect(both[0]!['orders.created_at']).not.toBe('2026-01-01T00:00:00.000');
      expect(both[0]!['orders.created_at']).toMatch(/^2026-01-\d\dT\d\d:\d\d:\d\d\.\d{3}$/);
    });

    it('resolves relative date ranges ("this month", "last 7 days", "from 1 month ago to now") at the engine’s clock in the query’s time zone, and answers with the dates it used', async () => {
      // 20 February 2026, 23:30 UTC: already 21 February in Tokyo.
      const clocked = new QueryEngine(shopArtifact(), shop.source, { ...DEFAULT_ENGINE_LIMITS, cacheTtlMs: 0 }, () => Date.UTC(2026, 1, 20, 23, 30));
      const run = async (dateRange: unknown, timezone = 'UTC') => {
        const answer = await clocked.load({ measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', dateRange }], timezone });
        return { range: answer.query.timeDimensions[0]!.dateRange, count: (answer.data as Row[])[0]!['orders.count'] };
      };
      const explicit = async (range: [string, string], timezone = 'UTC') => (await run(range, timezone)).count;
      const lastMonth = await run('last month');
      expect(lastMonth.range).toEqual(explicitRange(['2026-01-01', '2026-01-31']));
      expect(lastMonth.count).toBe(await explicit(['2026-01-01', '2026-01-31']));
      expect(lastMonth.count).toBe(3);
      const thisMonth = await run('This Month');
      expect(thisMonth.range).toEqual(explicitRange(['2026-02-01', '2026-02-28']));
      expect(thisMonth.count).toBe(2);
      expect((await run('last 7 days')).range).toEqual(explicitRange(['2026-02-13', '2026-02-19']));
      expect((await run('last 7 days', 'Asia/Tokyo')).range).toEqual(explicitRange(['2026-02-14', '2026-02-20']));
      expect((await run('today', 'Asia/Tokyo')).range).toEqual(explicitRange(['2026-02-21', '2026-02-21']));
      expect((await run('last week')).range).toEqual(explicitRange(['2026-02-09', '2026-02-15']));
      expect((await run('this quarter')).range).toEqual(explicitRange(['2026-01-01', '2026-03-31']));
      expect((await run('last 2 quarters')).range).toEqual(explicitRange(['2025-07-01', '2025-12-31']));
      expect((await run('next year')).range).toEqual(explicitRange(['2027-01-01', '2027-12-31']));
      const toNow = await run('from 1 month ago to now');
      // As Cube reads it: from the start of the day a month ago to the end of today.
      expect(toNow.range).toEqual(['2026-01-20T00:00:00.000', '2026-02-20T23:59:59.999']);
      expect(toNow.count).toBe(await explicit(['2026-01-20', '2026-02-20']));
      expect((await run('from 30 days ago to 10 days ago')).range).toEqual(['2026-01-21T00:00:00.000', '2026-02-10T23:59:59.999']);
      expect((await run('from yesterday to tomorrow')).range).toEqual(['2026-02-19T00:00:00.000', '2026-02-21T23:59:59.999']);
      expect((await run('year to date')).range).toEqual(explicitRange(['2026-01-01', '2026-02-20T23:30:00.000']));
      await expect(
        clocked.load({ measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', dateRange: 'last fortnight' }] }),
      ).rejects.toThrow(/"last fortnight" is not a range/);
      await expect(
        clocked.load({ measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', dateRange: 'last 0 days' }] }),
      ).rejects.toThrow(/whole number from 1/);
      // A single date still names that day.
      expect((await run('2026-01-15')).range).toEqual(explicitRange(['2026-01-15', '2026-01-15']));
    });

    it('asked again once its clock has moved on, the same relative range stands for the new dates', async () => {
      let now = Date.UTC(2026, 1, 20, 12);
      const clocked = new QueryEngine(shopArtifact(), shop.source, { ...DEFAULT_ENGINE_LIMITS, cacheTtlMs: 0 }, () => now);
      const query = { measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', dateRange: 'this month' }] };
      const run = async () => {
        const answer = await clocked.load(query);
        return { range: answer.query.timeDimensions[0]!.dateRange, count: (answer.data as Row[])[0]!['orders.count'] };
      };
      expect(await run()).toEqual({ range: explicitRange(['2026-02-01', '2026-02-28']), count: 2 });
      expect(await run()).toEqual({ range: explicitRange(['2026-02-01', '2026-02-28']), count: 2 });
      now = Date.UTC(2026, 0, 15, 12);
      expect(await run()).toEqual({ range: explicitRange(['2026-01-01', '2026-01-31']), count: 3 });
    });

    it('the 18 filter operators, with and/or groups; negative operators keep NULLs; measure filters apply to the groups', async () => {
      const count = async (filters: unknown[]) => (await load({ measures: ['orders.count'], filters }))[0]!['orders.count'];
      expect(await count([{ member: 'orders.status', operator: 'equals', value: ['completed', 'cancelled'] }])).toBe(4);
      expect(await count([{ member: 'orders.status', operator: 'not_equals', value: 'completed' }])).toBe(2);
      expect(await count([{ member: 'orders.amount', operator: 'greater_than', value: 50 }])).toBe(2);
      expect(await count([{ member: 'orders.amount', operator: 'greater_than_or_equal', value: '50' }])).toBe(3);
      expect(await count([{ member: 'orders.amount', operator: 'less_than', value: 30 }])).toBe(1);
      expect(await count([{ member: 'orders.amount', operator: 'less_than_or_equal', value: 30 }])).toBe(2);
      expect(await count([{ member: 'orders.amount', operator: 'between', value: [30, 70] }])).toBe(3);
      expect(await count([{ member: 'orders.amount', operator: 'between', value: [30, 70], startInclusive: false, endInclusive: false }])).toBe(1);
      expect(await count([{ member: 'orders.status', operator: 'contains', value: 'PLET' }])).toBe(3);
      expect(await count([{ member: 'orders.status', operator: 'contains', value: 'PLET', caseSensitive: true }])).toBe(0);
      expect(await count([{ member: 'orders.status', operator: 'not_contains', value: 'plet' }])).toBe(2);
      expect(await count([{ member: 'orders.status', operator: 'starts_with', value: 'proc' }])).toBe(1);
      expect(await count([{ member: 'orders.status', operator: 'not_starts_with', value: 'proc' }])).toBe(4);
      expect(await count([{ member: 'orders.status', operator: 'ends_with', value: 'led' }])).toBe(1);
      expect(await count([{ member: 'orders.status', operator: 'not_ends_with', value: 'ed' }])).toBe(1);
      expect(await count([{ member: 'customers.region', operator: 'is_null' }])).toBe(1);
      expect(await count([{ member: 'customers.region', operator: 'is_not_null' }])).toBe(4);
      expect(await count([{ member: 'customers.region', operator: 'is_empty' }])).toBe(1);
      expect(await count([{ member: 'customers.region', operator: 'is_not_empty' }])).toBe(4);
      expect(await count([{ member: 'orders.created_at', operator: 'equals', value: '2026-01-15' }])).toBe(1);
      expect(await count([{ member: 'orders.created_at', operator: 'less_than', value: '2026-01-02' }])).toBe(1);
      expect(await count([{ member: 'customers.region', operator: 'not_equals', value: 'EU' }])).toBe(2);
      expect(
        await count([
          {
            or: [
              { member: 'orders.status', operator: 'equals', value: 'processing' },
              { member: 'orders.amount', operator: 'greater_than', value: 90 },
            ],
          },
        ]),
      ).toBe(2);
      expect(
        await count([
          {
            and: [
              { member: 'orders.status', operator: 'equals', value: 'completed' },
              {
                or: [
                  { member: 'customers.region', operator: 'equals', value: 'US' },
                  { member: 'customers.region', operator: 'is_null' },
                ],
              },
            ],
          },
        ]),
      ).toBe(2);
      await refused({ measures: ['orders.count'], filters: [{ member: 'orders.status', operator: 'custom', value: '1=1' }] }, /custom filter .*no client SQL/);
      const busy = await load({
        measures: ['orders.count'],
        dimensions: ['orders.status'],
        filters: [{ member: 'orders.count', operator: 'greater_than', value: 1 }],
      });
      expect(busy).toEqual([{ 'orders.status': 'completed', 'orders.count': 3 }]);
      expect((await load({ measures: ['orders.count'], segments: ['orders.completed'] }))[0]).toEqual({ 'orders.count': 3 });
    });

    it('binds every value: text that looks like SQL is compared as text, never run', async () => {
      for (const value of ["x' OR '1'='1", "completed'; DROP TABLE orders; --", 'completed" OR 1=1 --', '%', '_ompleted']) {
        const [row] = await load({ measures: ['orders.count'], filters: [{ member: 'orders.status', operator: 'equals', value }] });
        expect(row!['orders.count'], value).toBe(0);
      }
      expect((await load({ measures: ['orders.count'], filters: [{ member: 'orders.status', operator: 'contains', value: '%' }] }))[0]!['orders.count']).toBe(
        0,
      );
      expect((await load({ measures: ['orders.count'] }))[0]!['orders.count']).toBe(5);
    });

    it('keeps an answer for the cache time per query and caller context; a result over the size limit is a 400', async () => {
      const cached = new QueryEngine(shopArtifact(), shop.source, { ...DEFAULT_ENGINE_LIMITS, cacheTtlMs: 60_000 });
      const query = { measures: ['orders.count'] };
      const first = await cached.load(query);
      const spy = vi.spyOn(shop.source, 'query');
      expect(await cached.load(query)).toEqual(first);
      expect(spy).not.toHaveBeenCalled();
      // Another caller context is another entry.
      await cached.load(query, { userId: 2, groups: ['g'], userAttributes: {}, securityContext: {} });
      expect(spy).toHaveBeenCalledTimes(1);
      spy.mockRestore();
      const small = new QueryEngine(shopArtifact(), shop.source, { ...DEFAULT_ENGINE_LIMITS, cacheTtlMs: 0, maxResultBytes: 100 });
      const error = await small.load({ dimensions: ['orders.status', 'orders.id'] }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(QueryError);
      expect((error as Error).message).toMatch(/^The result is \d+ bytes, more than the 100 bytes a query may return: add filters/);
    });

    it('refuses what it cannot answer with a 400 naming it: unknown members, wrong kinds, ambiguous and missing join paths, bad values', async () => {
      await refused({ measures: ['orders.nope'] }, /cube orders has no member "nope"/);
      await refused({ measures: ['nope.count'] }, /"nope" is neither a cube nor a view/);
      await refused({ measures: ['orders.status'] }, /orders.status is a dimension, not a measure/);
      await refused({ measures: ['d.count'], dimensions: ['a.id'] }, /join path from cube .* to cube .* is ambiguous/);
      await refused({ dimensions: ['customers.region', 'line_items.product'] }, /No join path from cube customers to cube line_items/);
      await refused(
        { measures: ['orders.count'], filters: [{ member: 'orders.amount', operator: 'greater_than', value: 'lots' }] },
        /needs numbers; "lots" is not one/,
      );
      await refused({ measures: ['orders.count'], timezone: 'Mars/Olympus' }, /not an IANA time zone/);
      await refused({ measures: ['orders.count'], limit: 50_001 }, /limit must be an integer from 0 to 50000/);
      await refused({ measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.status', granularity: 'day' }] }, /not a time dimension/);
      await refused(
        {
          measures: ['orders.count'],
          filters: [
            {
              or: [
                { member: 'orders.count', operator: 'greater_than', value: 1 },
                { member: 'orders.status', operator: 'equals', value: 'x' },
              ],
            },
          ],
        },
        /may not mix measures and dimensions/,
      );
      await refused({}, /at least one measure, dimension/);
      await refused({ measures: ['orders.count'], sql: 'SELECT 1' }, /unknown field "sql"/);
    });
  });
}

describe('wall times in a time zone, with each UTC day’s offset remembered', () => {
  it('give what the zone database gives for any instant and zone, across daylight-saving changes and historical offsets (property)', async () => {
    const fc = (await import('fast-check')).default;
    const { wallTime, wallTimeFromZoneDatabase } = await import('../src/semantic-layer/query/time-zones.js');
    const zones = [
      'UTC',
      'Europe/Berlin',
      'America/New_York',
      'Asia/Kathmandu',
      'Australia/Lord_Howe',
      'Asia/Kolkata',
      'America/St_Johns',
      'Pacific/Chatham',
      'Africa/Monrovia',
      'Europe/Amsterdam',
    ];
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(1900, 0, 1), max: Date.UTC(2040, 0, 1) }), fc.constantFrom(...zones), (ms, zone) => {
        // Twice: the second answer comes from the remembered offset.
        wallTime(ms, zone);
        expect(wallTime(ms, zone)).toEqual(wallTimeFromZoneDatabase(ms, zone));
      }),
      { numRuns: 5_000 },
    );
    // Around a change: the last second before and the first after 2026-03-29 01:00 UTC in Berlin.
    const change = Date.UTC(2026, 2, 29, 1, 0, 0);
    for (const ms of [change - 1000, change, change + 1000]) expect(wallTime(ms, 'Europe/Berlin')).toEqual(wallTimeFromZoneDatabase(ms, 'Europe/Berlin'));
  });
});
