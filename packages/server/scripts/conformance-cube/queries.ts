/**
 * The query corpus of `npm run conformance:cube`: Cube REST queries over the corpus model
 * (model/*.yml), each with the feature it exercises. Most lists are generated: every measure,
 * every dimension, every filter operator over members of each type, every granularity in each
 * time zone. `ordered` marks a query whose rows are compared in order (its order is total);
 * the others are compared as sets.
 */
export type CubeQuery = Record<string, unknown>;

export interface CorpusQuery {
  id: string;
  feature: string;
  query: CubeQuery;
  ordered: boolean;
}

export const TIME_ZONES = ['UTC', 'Europe/Berlin', 'America/New_York'] as const;
export const GRANULARITIES = ['second', 'minute', 'hour', 'day', 'week', 'month', 'quarter', 'year'] as const;

const MEASURES = [
  'orders.count',
  'orders.customer_count',
  'orders.total_amount',
  'orders.average_amount',
  'orders.min_amount',
  'orders.max_amount',
  'orders.amount_per_order',
  'orders.completed_count',
  'orders.completed_amount',
  'orders.completed_share',
  'orders.first_order_at',
  'orders.last_order_at',
  'customers.count',
  'customers.vip_count',
  'customers.total_credit',
  'customers.average_credit',
  'customers.distinct_regions',
  'line_items.count',
  'line_items.total_quantity',
  'line_items.revenue',
  'line_items.average_unit_price',
  'line_items.product_count',
  'products.count',
  'products.average_price',
  'products.max_price',
  'products.active_count',
  'returns.count',
  'returns.refunded',
];

const DIMENSIONS: Array<[string, string]> = [
  ['orders.status', 'orders.count'],
  ['orders.amount', 'orders.count'],
  ['orders.is_large', 'orders.count'],
  ['orders.is_gift', 'orders.count'],
  ['orders.note', 'orders.count'],
  ['orders.size', 'orders.total_amount'],
  ['orders.customer_id', 'orders.count'],
  ['orders.created_at', 'orders.count'],
  ['orders.shipped_at', 'orders.count'],
  ['customers.name', 'customers.count'],
  ['customers.region', 'customers.count'],
  ['customers.email', 'customers.count'],
  ['customers.is_vip', 'customers.count'],
  ['customers.credit', 'customers.count'],
  ['customers.tier', 'customers.total_credit'],
  ['customers.signup_at', 'customers.count'],
  ['products.name', 'products.count'],
  ['products.category', 'products.count'],
  ['products.price', 'products.count'],
  ['products.active', 'products.count'],
  ['products.launched_at', 'products.count'],
  ['line_items.quantity', 'line_items.count'],
  ['returns.reason', 'returns.count'],
];

/** Filter cases per operator: [member, values] (values undefined for set / notSet). */
const FILTERS: Record<string, Array<[string, unknown[] | undefined]>> = {
  equals: [
    ['orders.status', ['completed']],
    ['orders.status', ['completed', 'Completed']],
    ['customers.region', ['EU']],
    ['orders.amount', ['100.5']],
    ['orders.is_gift', ['true']],
    ['products.active', ['false']],
    ['orders.customer_id', [3, 5, 7]],
    ['customers.name', ["O'Neil 12"]],
  ],
  notEquals: [
    ['orders.status', ['completed']],
    ['customers.region', ['EU', 'eu']],
    ['orders.is_gift', ['true']],
    ['orders.note', ['']],
    ['products.category', ['Books']],
  ],
  contains: [
    ['customers.name', ['ada']],
    ['customers.name', ['%']],
    ['customers.name', ['_']],
    ['orders.note', ['gift']],
    ['customers.email', ['example', 'mail']],
    ['orders.status', ['omp']],
  ],
  notContains: [
    ['customers.name', ['ada']],
    ['orders.note', ['gift']],
    ['customers.email', ['Example']],
    ['products.category', ['oo']],
  ],
  startsWith: [
    ['customers.name', ['A']],
    ['customers.name', ['a']],
    ['orders.status', ['c', 'p']],
    ['products.name', ['Product B']],
    ['customers.name', ['%']],
  ],
  notStartsWith: [
    ['customers.name', ['A']],
    ['orders.status', ['c']],
    ['products.category', ['G']],
  ],
  endsWith: [
    ['customers.email', ['.com']],
    ['orders.status', ['ed']],
    ['customers.name', ['1']],
  ],
  notEndsWith: [
    ['customers.email', ['.com']],
    ['orders.status', ['ed']],
    ['orders.note', ['door']],
  ],
  gt: [
    ['orders.amount', ['150']],
    ['orders.amount', [150]],
    ['customers.credit', ['999.99']],
    ['orders.created_at', ['2025-06-01T00:00:00.000']],
    ['line_items.quantity', ['3']],
  ],
  gte: [
    ['orders.amount', ['150']],
    ['customers.credit', ['1000']],
    ['products.price', ['50']],
    ['orders.created_at', ['2025-03-30T01:00:00.000']],
  ],
  lt: [
    ['orders.amount', ['20']],
    ['customers.credit', ['100']],
    ['line_items.quantity', ['2']],
    ['orders.shipped_at', ['2024-06-01']],
  ],
  lte: [
    ['orders.amount', ['20']],
    ['products.price', ['10.5']],
    ['line_items.quantity', ['1']],
  ],
  set: [
    ['customers.region', undefined],
    ['orders.amount', undefined],
    ['orders.shipped_at', undefined],
    ['orders.is_gift', undefined],
    ['products.category', undefined],
  ],
  notSet: [
    ['customers.region', undefined],
    ['orders.amount', undefined],
    ['orders.shipped_at', undefined],
    ['orders.note', undefined],
    ['customers.is_vip', undefined],
  ],
  inDateRange: [
    ['orders.created_at', ['2025-03-29', '2025-03-30']],
    ['orders.created_at', ['2025-10-26', '2025-10-26']],
    ['orders.created_at', ['2025-01-01T00:00:00', '2025-01-01T05:00:00']],
    ['orders.shipped_at', ['2025-01-01', '2025-12-31']],
    ['customers.signup_at', ['2024-01-01', '2024-06-30']],
  ],
  notInDateRange: [
    ['orders.created_at', ['2025-03-29', '2025-03-30']],
    ['orders.shipped_at', ['2025-01-01', '2025-12-31']],
    ['customers.signup_at', ['2024-01-01', '2024-06-30']],
  ],
  beforeDate: [
    ['orders.created_at', ['2025-03-30']],
    ['orders.shipped_at', ['2025-01-01T00:00:00']],
    ['products.launched_at', ['2025-01-01']],
  ],
  beforeOrOnDate: [
    ['orders.created_at', ['2025-03-30']],
    ['orders.shipped_at', ['2025-01-01']],
  ],
  afterDate: [
    ['orders.created_at', ['2025-10-26']],
    ['orders.shipped_at', ['2025-12-31']],
    ['products.launched_at', ['2025-06-01']],
  ],
  afterOrOnDate: [
    ['orders.created_at', ['2025-10-26']],
    ['customers.signup_at', ['2025-11-02T05:00:00']],
  ],
};

/** The measure and dimension a filter on `member` is shown with. */
function companion(member: string): { measures: string[]; dimensions: string[] } {
  const cube = member.split('.')[0];
  const measure = `${cube}.count`;
  const dimension: Record<string, string> = {
    orders: 'orders.status',
    customers: 'customers.region',
    products: 'products.category',
    line_items: 'orders.status',
  };
  return { measures: cube === 'orders' ? ['orders.count', 'orders.total_amount'] : [measure], dimensions: [dimension[cube!]!] };
}

export function corpus(): CorpusQuery[] {
  const list: CorpusQuery[] = [];
  const add = (feature: string, query: CubeQuery, ordered = false) =>
    list.push({ id: `${feature}#${list.filter((q) => q.feature === feature).length + 1}`, feature, query, ordered });

  // Measures of each type, alone and by a dimension of their cube.
  for (const m of MEASURES) add('measures', { measures: [m] });
  for (const m of MEASURES.filter((m) => m.startsWith('orders.'))) add('measures', { measures: [m], dimensions: ['orders.status'] });
  for (const m of MEASURES.filter((m) => m.startsWith('customers.'))) add('measures', { measures: [m], dimensions: ['customers.region'] });
  add('measures', {
    measures: ['orders.count', 'orders.total_amount', 'orders.average_amount', 'orders.amount_per_order', 'orders.completed_share'],
    dimensions: ['orders.size'],
  });
  add('measures', { measures: ['line_items.revenue', 'line_items.average_unit_price'], dimensions: ['products.category'] });

  // Dimensions of each type (string, number, time, boolean, case).
  for (const [d, m] of DIMENSIONS) add('dimensions', { measures: [m], dimensions: [d] });
  add('dimensions', { dimensions: ['customers.tier', 'customers.is_vip'] });
  add('dimensions', { dimensions: ['orders.size', 'orders.is_large'] });
  add('dimensions', { dimensions: ['products.name', 'products.price', 'products.active'] });
  add('dimensions', { dimensions: ['customers.id', 'customers.name'], order: { 'customers.id': 'asc' } }, true);

  // Joins: many_to_one, one_to_many, through two hops, and sums that must not double count.
  add('joins', { measures: ['orders.count', 'orders.total_amount'], dimensions: ['customers.region'] });
  add('joins', { measures: ['orders.count', 'orders.average_amount'], dimensions: ['customers.tier'] });
  add('joins', { measures: ['orders.count'], dimensions: ['customers.is_vip', 'orders.status'] });
  add('joins', { measures: ['customers.count'], dimensions: ['orders.status'] });
  add('joins', { measures: ['customers.count', 'customers.total_credit', 'orders.count'] });
  add('joins', { measures: ['customers.total_credit', 'orders.total_amount'], dimensions: ['customers.region'] });
  add('joins', { measures: ['orders.count', 'orders.total_amount', 'line_items.count', 'line_items.total_quantity'] });
  add('joins', { measures: ['orders.total_amount', 'line_items.revenue'], dimensions: ['orders.status'] });
  add('joins', { measures: ['line_items.revenue', 'line_items.total_quantity'], dimensions: ['products.category', 'orders.status'] });
  add('joins', { measures: ['line_items.revenue'], dimensions: ['customers.region'] });
  add('joins', { measures: ['orders.count', 'line_items.product_count'], dimensions: ['customers.tier'] });
  add('joins', { measures: ['products.count', 'line_items.count'], dimensions: ['products.active'] });
  add('joins', { measures: ['customers.count', 'line_items.revenue'], dimensions: ['customers.is_vip'] });
  add('joins', { measures: ['orders.customer_count', 'customers.count'], dimensions: ['customers.region'] });
  add('joins', { measures: ['orders.count'], dimensions: ['customers.name'], filters: [{ member: 'customers.region', operator: 'equals', values: ['EU'] }] });
  add('joins', { measures: ['orders.min_amount', 'orders.max_amount'], dimensions: ['products.category'] });

  // Views.
  add('views', { measures: ['customer_orders.count', 'customer_orders.total_amount'] });
  add('views', { measures: ['customer_orders.count', 'customer_orders.average_amount'], dimensions: ['customer_orders.status'] });
  add('views', { measures: ['customer_orders.count'], dimensions: ['customer_orders.customers_region'] });
  add('views', { measures: ['customer_orders.customers_count'], dimensions: ['customer_orders.status'] });
  add('views', { measures: ['customer_orders.customers_count', 'customer_orders.count'] });
  add(
    'views',
    {
      dimensions: ['customer_orders.customers_name', 'customer_orders.order_id'],
      filters: [{ member: 'customer_orders.order_id', operator: 'lt', values: ['20'] }],
      order: { 'customer_orders.order_id': 'asc' },
    },
    true,
  );
  add('views', {
    measures: ['customer_orders.total_amount'],
    timeDimensions: [{ dimension: 'customer_orders.created_at', granularity: 'month', dateRange: ['2025-01-01', '2025-06-30'] }],
  });
  add('views', { measures: ['sales.revenue', 'sales.total_quantity'], dimensions: ['sales.category'] });
  add('views', { measures: ['sales.count', 'sales.revenue'], dimensions: ['sales.status'] });
  add('views', { measures: ['sales.revenue'], dimensions: ['sales.product_name'], order: { 'sales.product_name': 'asc' } }, true);
  add('views', { measures: ['sales.revenue'], timeDimensions: [{ dimension: 'sales.created_at', granularity: 'quarter' }] });
  add('views', { measures: ['sales.revenue'], filters: [{ member: 'sales.category', operator: 'equals', values: ['Books', 'books'] }] });

  // Segments.
  add('segments', { measures: ['orders.count'], segments: ['orders.completed'] });
  add('segments', { measures: ['orders.count', 'orders.total_amount'], segments: ['orders.completed', 'orders.large'] });
  add('segments', { measures: ['customers.count'], segments: ['customers.vips'], dimensions: ['customers.region'] });
  add('segments', { measures: ['customers.count'], segments: ['customers.europe'] });
  add('segments', { measures: ['orders.count'], segments: ['customers.vips'], dimensions: ['orders.status'] });
  add('segments', { measures: ['line_items.revenue'], segments: ['orders.large'], dimensions: ['products.category'] });

  // Every filter operator over members of each type.
  for (const [operator, cases] of Object.entries(FILTERS)) {
    for (const [member, values] of cases) {
      add(`filter ${operator}`, { ...companion(member), filters: [{ member, operator, ...(values === undefined ? {} : { values }) }] });
    }
  }
  // Filters on measures (HAVING).
  add('filter on measures', {
    measures: ['orders.count'],
    dimensions: ['customers.name'],
    filters: [{ member: 'orders.count', operator: 'gt', values: ['12'] }],
  });
  add('filter on measures', {
    measures: ['orders.total_amount'],
    dimensions: ['orders.status'],
    filters: [{ member: 'orders.total_amount', operator: 'lt', values: ['10000'] }],
  });
  add('filter on measures', {
    measures: ['customers.count'],
    dimensions: ['customers.region'],
    filters: [
      { member: 'customers.count', operator: 'gte', values: ['10'] },
      { member: 'customers.region', operator: 'set' },
    ],
  });

  // and / or groups.
  const status = (v: string) => ({ member: 'orders.status', operator: 'equals', values: [v] });
  const amountGt = (v: string) => ({ member: 'orders.amount', operator: 'gt', values: [v] });
  add('and/or', { measures: ['orders.count'], filters: [{ or: [status('cancelled'), amountGt('250')] }] });
  add('and/or', { measures: ['orders.count'], filters: [{ and: [status('completed'), amountGt('100')] }] });
  add('and/or', {
    measures: ['orders.count'],
    dimensions: ['orders.status'],
    filters: [{ or: [status('cancelled'), { and: [status('completed'), amountGt('200')] }] }],
  });
  add('and/or', {
    measures: ['orders.count'],
    dimensions: ['customers.region'],
    filters: [
      {
        or: [
          { member: 'customers.region', operator: 'notSet' },
          { member: 'customers.region', operator: 'equals', values: ['US'] },
        ],
      },
    ],
  });
  add('and/or', {
    measures: ['orders.count'],
    filters: [{ or: [{ member: 'customers.is_vip', operator: 'equals', values: ['true'] }, amountGt('280')] }, status('completed')],
  });
  add('and/or', {
    measures: ['orders.total_amount'],
    filters: [{ and: [{ or: [status('completed'), status('returned')] }, { or: [amountGt('100'), { member: 'orders.note', operator: 'set' }] }] }],
  });
  add('and/or', {
    measures: ['line_items.revenue'],
    dimensions: ['products.category'],
    filters: [
      {
        or: [
          { member: 'products.category', operator: 'contains', values: ['oo'] },
          { member: 'products.active', operator: 'equals', values: ['false'] },
        ],
      },
    ],
  });
  add('and/or', {
    measures: ['customers.count'],
    filters: [
      {
        or: [
          { member: 'customers.credit', operator: 'lt', values: ['100'] },
          { member: 'customers.credit', operator: 'notSet' },
        ],
      },
    ],
  });
  add('and/or', {
    measures: ['orders.count'],
    filters: [
      {
        or: [
          { member: 'orders.created_at', operator: 'beforeDate', values: ['2024-03-01'] },
          { member: 'orders.created_at', operator: 'afterDate', values: ['2025-12-01'] },
        ],
      },
    ],
  });
  add('and/or', { measures: ['orders.count'], filters: [{ or: [status('completed')] }, { and: [] }] });

  // Time dimensions: each granularity in each time zone, with an absolute date range.
  for (const timezone of TIME_ZONES) {
    for (const granularity of GRANULARITIES) {
      const range =
        granularity === 'second' || granularity === 'minute'
          ? ['2025-03-30T00:00:00', '2025-03-30T02:30:00']
          : granularity === 'hour'
            ? ['2025-10-25', '2025-10-26']
            : ['2024-12-01', '2025-11-30'];
      add(`granularity ${granularity}`, {
        measures: ['orders.count', 'orders.total_amount'],
        timeDimensions: [{ dimension: 'orders.created_at', granularity, dateRange: range }],
        timezone,
      });
    }
    add('time zones', {
      measures: ['orders.count'],
      timeDimensions: [{ dimension: 'orders.created_at', granularity: 'hour', dateRange: ['2025-03-29', '2025-03-30'] }],
      timezone,
    });
    add('time zones', {
      measures: ['orders.count'],
      timeDimensions: [{ dimension: 'orders.created_at', granularity: 'hour', dateRange: ['2025-11-01', '2025-11-02'] }],
      timezone,
    });
    add('time zones', {
      measures: ['orders.count'],
      timeDimensions: [{ dimension: 'orders.created_at', granularity: 'day', dateRange: ['2025-03-08', '2025-03-31'] }],
      timezone,
    });
    add('time zones', {
      measures: ['orders.count'],
      timeDimensions: [{ dimension: 'orders.created_at', granularity: 'day', dateRange: ['2025-10-24', '2025-11-03'] }],
      timezone,
    });
    add('time zones', { measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'year' }], timezone });
    add('time zones', {
      measures: ['orders.count'],
      timeDimensions: [{ dimension: 'orders.created_at', granularity: 'week', dateRange: ['2024-12-20', '2025-01-10'] }],
      timezone,
    });
    add('time zones', { measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', dateRange: ['2025-01-01', '2025-01-01'] }], timezone });
    add('time zones', {
      measures: ['orders.count'],
      dimensions: ['orders.status'],
      filters: [{ member: 'orders.created_at', operator: 'inDateRange', values: ['2025-03-30', '2025-03-30'] }],
      timezone,
    });
    add(
      'time zones',
      {
        dimensions: ['orders.id', 'orders.created_at'],
        filters: [{ member: 'orders.created_at', operator: 'inDateRange', values: ['2025-10-26', '2025-10-26'] }],
        order: { 'orders.id': 'asc' },
        timezone,
      },
      true,
    );
    add('time zones', { measures: ['orders.first_order_at', 'orders.last_order_at'], dimensions: ['orders.status'], timezone });
    add('time zones', {
      measures: ['customers.count'],
      timeDimensions: [{ dimension: 'customers.signup_at', granularity: 'month' }],
      filters: [{ member: 'customers.signup_at', operator: 'afterOrOnDate', values: ['2025-03-30'] }],
      timezone,
    });
  }
  // Several time dimensions, and a time dimension without a date range.
  add('time dimensions', {
    measures: ['orders.count'],
    timeDimensions: [
      { dimension: 'orders.created_at', granularity: 'month' },
      { dimension: 'orders.shipped_at', dateRange: ['2025-01-01', '2025-03-31'] },
    ],
  });
  add('time dimensions', {
    measures: ['orders.count'],
    timeDimensions: [
      { dimension: 'orders.created_at', granularity: 'quarter' },
      { dimension: 'orders.shipped_at', granularity: 'quarter' },
    ],
  });
  add('time dimensions', {
    measures: ['orders.count'],
    dimensions: ['orders.created_at'],
    timeDimensions: [{ dimension: 'orders.created_at', granularity: 'year' }],
  });
  add('time dimensions', {
    measures: ['orders.count'],
    timeDimensions: [
      { dimension: 'orders.created_at', granularity: 'day', dateRange: ['2025-03-30', '2025-03-30'] },
      { dimension: 'orders.created_at', granularity: 'hour' },
    ],
  });

  // Relative date ranges (the data spans 2024-2025; some are empty on purpose).
  for (const phrase of [
    'today',
    'yesterday',
    'this week',
    'this month',
    'this quarter',
    'this year',
    'last week',
    'last month',
    'last quarter',
    'last year',
    'last 7 days',
    'last 30 days',
    'last 12 months',
    'from 2 years ago to now',
    'from 800 days ago to 300 days ago',
  ]) {
    add('relative dates', { measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'month', dateRange: phrase }] });
  }
  add('relative dates', { measures: ['orders.count'], filters: [{ member: 'orders.created_at', operator: 'inDateRange', values: ['last year'] }] });
  add('relative dates', {
    measures: ['orders.count'],
    timeDimensions: [{ dimension: 'orders.created_at', granularity: 'year', dateRange: 'last year' }],
    timezone: 'America/New_York',
  });

  // Order, limit, offset.
  add('order/limit/offset', { measures: ['orders.count'], dimensions: ['orders.status'], order: { 'orders.status': 'asc' } }, true);
  add('order/limit/offset', { measures: ['orders.count'], dimensions: ['orders.status'], order: { 'orders.status': 'desc' } }, true);
  add('order/limit/offset', { measures: ['customers.count'], dimensions: ['customers.region'], order: { 'customers.region': 'asc' } }, true);
  add('order/limit/offset', { measures: ['customers.count'], dimensions: ['customers.region'], order: { 'customers.region': 'desc' } }, true);
  add(
    'order/limit/offset',
    {
      measures: ['orders.total_amount'],
      dimensions: ['orders.customer_id'],
      order: [
        ['orders.total_amount', 'desc'],
        ['orders.customer_id', 'asc'],
      ],
      limit: 10,
    },
    true,
  );
  add(
    'order/limit/offset',
    {
      measures: ['orders.total_amount'],
      dimensions: ['orders.customer_id'],
      order: [
        ['orders.total_amount', 'desc'],
        ['orders.customer_id', 'asc'],
      ],
      limit: 10,
      offset: 10,
    },
    true,
  );
  add('order/limit/offset', { dimensions: ['orders.id', 'orders.amount'], order: { 'orders.amount': 'asc', 'orders.id': 'asc' }, limit: 15 }, true);
  add('order/limit/offset', { dimensions: ['orders.id', 'orders.amount'], order: { 'orders.amount': 'desc', 'orders.id': 'asc' }, limit: 15 }, true);
  add('order/limit/offset', { dimensions: ['customers.id', 'customers.name'], order: { 'customers.name': 'asc', 'customers.id': 'asc' }, limit: 20 }, true);
  add(
    'order/limit/offset',
    {
      dimensions: ['customers.id', 'customers.credit'],
      order: [
        ['customers.credit', 'asc'],
        ['customers.id', 'asc'],
      ],
      limit: 10,
      offset: 45,
    },
    true,
  );
  add('order/limit/offset', { dimensions: ['orders.id'], order: { 'orders.id': 'asc' }, limit: 5, offset: 598 }, true);
  add('order/limit/offset', { dimensions: ['orders.id'], order: { 'orders.id': 'desc' }, limit: 3 }, true);
  add(
    'order/limit/offset',
    {
      measures: ['orders.count'],
      timeDimensions: [{ dimension: 'orders.created_at', granularity: 'month' }],
      order: { 'orders.created_at': 'desc' },
      limit: 6,
    },
    true,
  );
  add(
    'order/limit/offset',
    { measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'month' }], order: { 'orders.created_at': 'asc' } },
    true,
  );
  add(
    'order/limit/offset',
    {
      measures: ['line_items.revenue'],
      dimensions: ['products.name'],
      order: [
        ['line_items.revenue', 'desc'],
        ['products.name', 'asc'],
      ],
      limit: 5,
    },
    true,
  );
  add('order/limit/offset', { measures: ['orders.count'], dimensions: ['orders.status'], order: { 'orders.count': 'desc', 'orders.status': 'asc' } }, true);
  add('order/limit/offset', { measures: ['orders.count'], dimensions: ['orders.note'], order: { 'orders.note': 'asc' } }, true);
  add('order/limit/offset', { measures: ['products.count'], dimensions: ['products.category'], order: { 'products.category': 'desc' } }, true);
  add('order/limit/offset', { dimensions: ['customers.id'], limit: 0 });
  add('order/limit/offset', { measures: ['orders.count'], dimensions: ['orders.status'], limit: 100, offset: 2, order: { 'orders.status': 'asc' } }, true);

  // total.
  add('total', { measures: ['orders.count'], dimensions: ['orders.customer_id'], limit: 5, order: { 'orders.customer_id': 'asc' }, total: true }, true);
  add('total', { dimensions: ['orders.id'], limit: 10, order: { 'orders.id': 'asc' }, total: true }, true);
  add('total', { measures: ['customers.count'], dimensions: ['customers.region'], total: true });
  add('total', { measures: ['orders.count'], total: true });
  add('total', {
    measures: ['orders.count'],
    dimensions: ['orders.status'],
    filters: [{ member: 'orders.status', operator: 'equals', values: ['nope'] }],
    total: true,
  });
  add(
    'total',
    {
      dimensions: ['orders.id'],
      limit: 7,
      offset: 3,
      order: { 'orders.id': 'asc' },
      total: true,
      filters: [{ member: 'orders.amount', operator: 'gt', values: ['200'] }],
    },
    true,
  );

  // compareDateRange.
  add('compareDateRange', {
    measures: ['orders.count', 'orders.total_amount'],
    timeDimensions: [
      {
        dimension: 'orders.created_at',
        granularity: 'month',
        compareDateRange: [
          ['2024-01-01', '2024-06-30'],
          ['2025-01-01', '2025-06-30'],
        ],
      },
    ],
  });
  add('compareDateRange', {
    measures: ['orders.count'],
    timeDimensions: [
      {
        dimension: 'orders.created_at',
        granularity: 'day',
        compareDateRange: [
          ['2025-03-29', '2025-03-31'],
          ['2025-10-25', '2025-10-27'],
        ],
      },
    ],
    timezone: 'Europe/Berlin',
  });
  add('compareDateRange', {
    measures: ['orders.count'],
    dimensions: ['orders.status'],
    timeDimensions: [
      {
        dimension: 'orders.created_at',
        compareDateRange: [
          ['2024-01-01', '2024-12-31'],
          ['2025-01-01', '2025-12-31'],
        ],
      },
    ],
  });
  add('compareDateRange', {
    measures: ['orders.count'],
    timeDimensions: [{ dimension: 'orders.created_at', granularity: 'week', compareDateRange: ['last year', 'this year'] }],
  });
  add('compareDateRange', {
    measures: ['customers.count'],
    timeDimensions: [
      {
        dimension: 'customers.signup_at',
        granularity: 'quarter',
        compareDateRange: [
          ['2024-01-01', '2024-12-31'],
          ['2025-01-01', '2025-12-31'],
          ['2026-01-01', '2026-12-31'],
        ],
      },
    ],
    timezone: 'America/New_York',
  });

  // Empty results and the empty table.
  add('empty', { measures: ['returns.count', 'returns.refunded'] });
  add('empty', { measures: ['returns.count'], dimensions: ['returns.reason'] });
  add('empty', {
    measures: ['returns.count'],
    timeDimensions: [{ dimension: 'returns.returned_at', granularity: 'day', dateRange: ['2025-01-01', '2025-01-31'] }],
  });
  add('empty', {
    measures: ['orders.count'],
    dimensions: ['orders.status'],
    filters: [{ member: 'orders.status', operator: 'equals', values: ['no such status'] }],
  });
  add('empty', { measures: ['orders.count', 'orders.total_amount'], filters: [{ member: 'orders.status', operator: 'equals', values: ['no such status'] }] });
  add('empty', {
    measures: ['orders.count'],
    timeDimensions: [{ dimension: 'orders.created_at', granularity: 'day', dateRange: ['2030-01-01', '2030-01-31'] }],
  });
  add('empty', { dimensions: ['orders.id'], filters: [{ member: 'orders.amount', operator: 'gt', values: ['1000000'] }] });
  add('empty', {
    measures: ['orders.average_amount', 'orders.min_amount', 'orders.amount_per_order'],
    filters: [{ member: 'orders.amount', operator: 'notSet' }],
  });

  // NULLs: grouping by and aggregating nullable columns, outer joins.
  add('nulls', {
    measures: ['orders.count', 'orders.total_amount'],
    dimensions: ['orders.customer_id'],
    filters: [{ member: 'orders.customer_id', operator: 'notSet' }],
  });
  add('nulls', { measures: ['orders.count'], dimensions: ['customers.name'], filters: [{ member: 'customers.id', operator: 'notSet' }] });
  add('nulls', { measures: ['orders.count'], dimensions: ['orders.is_gift', 'customers.is_vip'] });
  add('nulls', { measures: ['customers.count', 'customers.average_credit'], dimensions: ['customers.tier'] });
  add('nulls', {
    measures: ['products.count'],
    dimensions: ['products.category'],
    filters: [{ member: 'products.category', operator: 'notEquals', values: ['Books'] }],
  });
  add('nulls', { measures: ['orders.count'], dimensions: ['orders.note'], filters: [{ member: 'orders.note', operator: 'notContains', values: ['x'] }] });
  add('nulls', { measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.shipped_at', granularity: 'year' }] });

  // Ungrouped queries, several granularities of one dimension, numbers given as numbers, views with segments and policies.
  add(
    'more',
    {
      dimensions: ['orders.id', 'orders.status', 'orders.amount'],
      ungrouped: true,
      filters: [{ member: 'orders.id', operator: 'lte', values: ['10'] }],
      order: { 'orders.id': 'asc' },
    },
    true,
  );
  add(
    'more',
    {
      measures: ['orders.total_amount'],
      dimensions: ['orders.id'],
      ungrouped: true,
      filters: [{ member: 'orders.id', operator: 'lte', values: ['10'] }],
      order: { 'orders.id': 'asc' },
    },
    true,
  );
  add('more', {
    measures: ['orders.count'],
    timeDimensions: [
      { dimension: 'orders.created_at', granularity: 'month', dateRange: ['2025-01-01', '2025-03-31'] },
      { dimension: 'orders.created_at', granularity: 'week' },
    ],
  });
  add('more', { measures: ['orders.count'], filters: [{ member: 'orders.amount', operator: 'equals', values: [100.5, 42] }] });
  add('more', { measures: ['orders.count'], filters: [{ member: 'orders.customer_id', operator: 'notEquals', values: [1, 2, 3] }] });
  add('more', { measures: ['orders.count'], filters: [{ member: 'customers.name', operator: 'contains', values: ['ADA', 'zoë'] }] });
  add('more', { measures: ['orders.count'], filters: [{ member: 'customers.name', operator: 'equals', values: ['ada 1', 'Ada 1'] }] });
  add('more', {
    measures: ['customer_orders.count'],
    dimensions: ['customer_orders.customers_region'],
    filters: [{ member: 'customer_orders.customers_region', operator: 'notSet' }],
  });
  add(
    'more',
    {
      measures: ['sales.revenue'],
      dimensions: ['sales.category'],
      timeDimensions: [{ dimension: 'sales.created_at', granularity: 'year' }],
      order: [
        ['sales.created_at', 'asc'],
        ['sales.category', 'asc'],
      ],
    },
    true,
  );
  add('more', { measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'day' }], limit: 5 });
  add('more', { measures: ['orders.count'], dimensions: ['orders.status'], limit: 3 });
  add(
    'more',
    {
      measures: ['orders.count', 'customers.count'],
      dimensions: ['customers.region', 'orders.status'],
      order: [
        ['customers.region', 'asc'],
        ['orders.status', 'asc'],
      ],
    },
    true,
  );
  add('more', {
    measures: ['orders.count'],
    timeDimensions: [{ dimension: 'orders.shipped_at', granularity: 'month', dateRange: ['2025-12-01', '2026-01-31'] }],
    timezone: 'America/New_York',
  });
  add('more', {
    measures: ['orders.count'],
    filters: [{ member: 'orders.created_at', operator: 'inDateRange', values: ['2025-03-30T00:00:00.000', '2025-03-30T02:59:59.999'] }],
    timezone: 'Europe/Berlin',
  });
  add('more', {
    measures: ['orders.count'],
    filters: [
      { member: 'orders.created_at', operator: 'beforeDate', values: ['2025-11-02T01:30:00'] },
      { member: 'orders.created_at', operator: 'afterDate', values: ['2025-11-01T23:00:00'] },
    ],
    timezone: 'America/New_York',
  });

  add('more', { measures: ['orders.count'], dimensions: ['orders.customer_region'] });
  add('more', { measures: ['orders.count'], filters: [{ member: 'orders.customer_region', operator: 'equals', values: ['EU'] }] });
  add('more', {
    measures: ['orders.count'],
    timeDimensions: [{ dimension: 'orders.created_at', granularity: 'hour', dateRange: '2025-03-30' }],
    timezone: 'Europe/Berlin',
  });
  add('more', { measures: ['orders.count'], filters: [{ member: 'orders.created_at', operator: 'equals', values: ['2025-03-30T00:30:00.000'] }] });
  add('more', { measures: ['orders.count'], filters: [{ member: 'orders.status', operator: 'gt', values: ['d'] }] });
  add('more', { measures: ['orders.count'], dimensions: ['orders.status'], filters: [{ member: 'orders.count', operator: 'equals', values: ['60'] }] });
  add('more', { measures: ['orders.count'], dimensions: ['orders.status'], filters: [{ member: 'orders.total_amount', operator: 'set' }] });
  add('more', { dimensions: ['orders.id'], order: { 'orders.id': 'asc' }, offset: 590 }, true);
  // Ordered by a measure it does not select: Cube's SQL has no ORDER BY (the name is left out), so the rows are compared as a set.
  add('more', { measures: ['orders.count'], dimensions: ['orders.status'], order: { 'orders.total_amount': 'desc' } });
  add('more', { measures: ['orders.count'], dimensions: ['orders.status'], filters: [{ member: 'orders.status', operator: 'equals', values: [null] }] });
  add('more', {
    measures: ['orders.count'],
    timeDimensions: [{ dimension: 'orders.created_at', dateRange: ['2025-01-01', '2025-01-31'] }],
    order: { 'orders.created_at': 'asc' },
  });
  add('more', {
    measures: ['orders.count'],
    timeDimensions: [{ dimension: 'orders.created_at', granularity: 'month', dateRange: ['2025-01-15T12:00:00', '2025-03-15T12:00:00'] }],
  });
  add('more', {
    measures: ['orders.count'],
    timeDimensions: [{ dimension: 'orders.created_at', granularity: 'day', dateRange: ['2025-03-31', '2025-03-29'] }],
  });
  add('more', { dimensions: ['returns.id'] });
  add('more', { measures: ['orders.count'], limit: 60000 });
  add('more', {
    measures: ['customers.count'],
    dimensions: ['customers.region'],
    filters: [{ member: 'customers.region', operator: 'equals', values: ['US', 'EU'] }],
    segments: ['customers.vips'],
  });

  // Beyond the basics: custom granularities, rolling windows, a count over a column, half-hour time zones.
  add('advanced', { measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'fiscal_year' }] });
  add('advanced', {
    measures: ['orders.count'],
    timeDimensions: [{ dimension: 'orders.created_at', granularity: 'half_hour', dateRange: ['2025-03-30', '2025-03-30'] }],
    timezone: 'Europe/Berlin',
  });
  add('advanced', {
    measures: ['orders.rolling_count_7d'],
    timeDimensions: [{ dimension: 'orders.created_at', granularity: 'day', dateRange: ['2025-03-25', '2025-04-05'] }],
  });
  add('advanced', {
    measures: ['orders.running_total'],
    timeDimensions: [{ dimension: 'orders.created_at', granularity: 'month', dateRange: ['2025-01-01', '2025-12-31'] }],
  });
  add('advanced', { measures: ['orders.shipped_count', 'orders.count'], dimensions: ['orders.status'] });
  for (const timezone of ['Asia/Kolkata', 'Australia/Lord_Howe', 'Asia/Kathmandu']) {
    add('advanced', {
      measures: ['orders.count'],
      timeDimensions: [{ dimension: 'orders.created_at', granularity: 'hour', dateRange: ['2025-03-30', '2025-03-30'] }],
      timezone,
    });
    add('advanced', {
      measures: ['orders.count'],
      timeDimensions: [{ dimension: 'orders.created_at', granularity: 'day', dateRange: ['2025-03-28', '2025-04-08'] }],
      timezone,
    });
  }
  add('advanced', {
    measures: ['orders.count'],
    dimensions: ['orders.status'],
    filters: [
      {
        or: [
          { member: 'orders.count', operator: 'gt', values: ['50'] },
          { member: 'orders.status', operator: 'equals', values: ['cancelled'] },
        ],
      },
    ],
  });
  add('advanced', { measures: ['orders.count'], filters: [{ member: 'orders.created_at', operator: 'inDateRange', values: ['2025-03-30'] }] });
  add('advanced', { measures: ['orders.count'], filters: [{ member: 'orders.amount', operator: 'equals', values: ['abc'] }] });
  add(
    'advanced',
    {
      measures: ['customer_orders.count'],
      dimensions: ['customer_orders.customers_name'],
      filters: [{ member: 'customer_orders.customers_name', operator: 'startsWith', values: ['A'] }],
      order: { 'customer_orders.customers_name': 'asc' },
    },
    true,
  );

  // Subquery dimensions (customers.orders_count, filtered_amount, items_bought and orders.item_count
  // propagate the query's filters into their subquery; customers.lifetime_amount does not).
  const byCustomer = (extra: CubeQuery, dimensions = ['customers.orders_count', 'customers.lifetime_amount']) => ({
    dimensions: ['customers.id', ...dimensions],
    order: { 'customers.id': 'asc' },
    ...extra,
  });
  add('sub_query', byCustomer({}), true);
  add('sub_query', byCustomer({ filters: [{ member: 'orders.status', operator: 'equals', values: ['completed'] }] }), true);
  add(
    'sub_query',
    byCustomer(
      {
        filters: [
          { member: 'orders.amount', operator: 'gt', values: ['100'] },
          { member: 'customers.region', operator: 'equals', values: ['EU', 'US'] },
        ],
      },
      ['customers.orders_count', 'customers.filtered_amount', 'customers.lifetime_amount'],
    ),
    true,
  );
  // A date range (the granularity is Cube's quirk's doing: an empty answer to a query whose time dimension has no
  // granularity is refused by Cube as "hidden member"; see docs/conformance-cube.md).
  add(
    'sub_query',
    {
      ...byCustomer(
        { timeDimensions: [{ dimension: 'orders.created_at', granularity: 'month', dateRange: ['2025-01-01', '2025-06-30'] }], timezone: 'Europe/Berlin' },
        ['customers.orders_count', 'customers.filtered_amount'],
      ),
      order: [
        ['customers.id', 'asc'],
        ['orders.created_at.month', 'asc'],
      ],
    },
    true,
  );
  add('sub_query', byCustomer({ segments: ['orders.completed'] }), true);
  add('sub_query', byCustomer({ segments: ['customers.vips'], filters: [{ member: 'orders.is_gift', operator: 'equals', values: ['true'] }] }), true);
  add(
    'sub_query',
    byCustomer({
      filters: [
        {
          or: [
            { member: 'orders.status', operator: 'equals', values: ['completed'] },
            { member: 'orders.amount', operator: 'gt', values: ['100000'] },
          ],
        },
      ],
    }),
    true,
  );
  add(
    'sub_query',
    byCustomer({ filters: [{ member: 'products.category', operator: 'equals', values: ['Books', 'books'] }] }, [
      'customers.items_bought',
      'customers.orders_count',
    ]),
    true,
  );
  add(
    'sub_query',
    {
      dimensions: ['orders.id', 'orders.item_count'],
      filters: [
        { member: 'products.category', operator: 'equals', values: ['Books'] },
        { member: 'orders.id', operator: 'lte', values: ['60'] },
      ],
      order: { 'orders.id': 'asc' },
    },
    true,
  );
  add('sub_query', {
    measures: ['customers.count'],
    dimensions: ['customers.orders_count'],
    filters: [{ member: 'orders.status', operator: 'equals', values: ['completed'] }],
  });
  add('sub_query', { measures: ['customers.count'], filters: [{ member: 'customers.orders_count', operator: 'gte', values: ['10'] }] });
  add('sub_query', {
    measures: ['orders.count'],
    dimensions: ['customers.orders_count'],
    timeDimensions: [{ dimension: 'orders.created_at', granularity: 'quarter', dateRange: ['2025-01-01', '2025-12-31'] }],
    timezone: 'America/New_York',
  });

  // Pre-aggregations (model/rollups.yml): answered from the rollup where it matches, else from the source.
  const facts = 'order_facts';
  add('pre-aggregations', { measures: [`${facts}.count`, `${facts}.total_amount`], dimensions: [`${facts}.status`] });
  add('pre-aggregations', { measures: [`${facts}.count`, `${facts}.max_amount`], dimensions: ['customers.region'] });
  add('pre-aggregations', {
    measures: [`${facts}.total_amount`, `${facts}.max_amount`],
    timeDimensions: [{ dimension: `${facts}.created_at`, granularity: 'month', dateRange: ['2025-01-01', '2025-06-30'] }],
  });
  add('pre-aggregations', {
    measures: [`${facts}.count`],
    timeDimensions: [{ dimension: `${facts}.created_at`, granularity: 'week', dateRange: ['2025-03-03', '2025-04-27'] }],
    timezone: 'Europe/Berlin',
  });
  add('pre-aggregations', {
    measures: [`${facts}.count`, `${facts}.total_amount`],
    timeDimensions: [{ dimension: `${facts}.created_at`, granularity: 'day', dateRange: ['2025-03-28', '2025-04-02'] }],
    timezone: 'America/New_York',
  });
  add('pre-aggregations', {
    measures: [`${facts}.average_amount`],
    dimensions: [`${facts}.status`, 'customers.region'],
    timeDimensions: [{ dimension: `${facts}.created_at`, granularity: 'day', dateRange: ['2025-03-01', '2025-03-31'] }],
  });
  add('pre-aggregations', { measures: [`${facts}.average_amount`], dimensions: [`${facts}.status`] });
  add('pre-aggregations', {
    measures: [`${facts}.count`],
    filters: [
      { member: `${facts}.status`, operator: 'equals', values: ['completed'] },
      { member: `${facts}.amount`, operator: 'gt', values: ['100'] },
    ],
  });
  add('pre-aggregations', {
    measures: [`${facts}.count`, `${facts}.total_amount`],
    filters: [{ member: `${facts}.count`, operator: 'gt', values: ['3'] }],
    dimensions: [`${facts}.status`],
    order: { [`${facts}.total_amount`]: 'desc' },
    limit: 3,
  });
  add('pre-aggregations', {
    measures: [`${facts}.count`],
    timeDimensions: [{ dimension: `${facts}.created_at`, dateRange: ['2025-01-01T12:00:00', '2025-02-15T06:00:00'] }],
  });

  // Requests both should refuse.
  add('errors', { measures: ['orders.nope'] });
  add('errors', { measures: ['orders.count'], filters: [{ member: 'orders.status', operator: 'like', values: ['x'] }] });
  add('errors', { measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'fortnight' }] });
  add('errors', { measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.status', granularity: 'day' }] });
  add('errors', { measures: ['orders.count'], order: { 'orders.nope': 'asc' } });
  add('errors', { measures: ['orders.count'], timezone: 'Mars/Olympus' });
  add('errors', { measures: ['orders.count'], limit: -1 });
  add('errors', { measures: ['orders.count'], filters: [{ member: 'orders.amount', operator: 'gt' }] });
  return list;
}
