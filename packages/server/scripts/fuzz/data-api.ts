import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import pg from 'pg';
import type { Dialect } from '../../src/db/database.js';
import { RUNTIME_ENTRY } from '../../src/semantic-layer/entry.js';
import { TestApp } from '../../test/harness.js';
import { canStartSecondCluster, startSecondCluster } from '../../test/pg-cluster-fixture.js';
import { CUSTOMERS, DDL, LINE_ITEMS, ORDERS, SHOP_MODEL, writeShopSqlite } from '../../test/query-fixtures.js';
import type { Built } from './build.js';
import type { Finding } from './checks.js';
import type { Report } from './report.js';

/**
 * The data-API phase of `npm run fuzz`: Cube's REST routes of a deployment
 * (`/deployments/:id/data-api/v1/{load,sql,dry-run,cubesql,meta}`) end to end, through the
 * server's route and proxy to a runtime process it started. Two deployments run the shop model
 * (test/query-fixtures.ts) plus a cube of generated rows and one narrowed by the token's security
 * context: one on a SQLite file, one on a throwaway PostgreSQL cluster that logs every statement
 * it runs (`log_statement=all`; skipped on a host without PostgreSQL's binaries).
 *
 * Requests: GET `?query=` and POST bodies generated with fast-check, valid Cube queries and broken
 * ones (wrong types, unknown members and operators, `queryType=multi`, lists, compared ranges,
 * limits past the maximum, hostile strings: quotes, comments, `{CUBE}`, NUL, 5,000 characters),
 * SQL over cubes with the same strings, malformed JSON and bodies of other types, under a real
 * environment token (raw and after `Bearer`), an API key, a token without `sql-runner`, another
 * deployment's token, a tampered one, garbage and none.
 *
 * Checks: no 5xx; statuses 200/400/401/403/404 (405/413/415 where asked for); every refusal a
 * JSON body with Cube's `error`, and none the data source's own (a statement it refused: the
 * engine ran what it should have refused, or compiled what the source does not take); nothing
 * 2xx for a credential that may not have it; every answer within the runtime's limits (rows,
 * result bytes); no hostile value in the text of a statement: the SQL `/v1/sql` answers, every
 * statement PostgreSQL logged, and after the run both data sources as they were (the SQLite file
 * byte for byte, PostgreSQL's tables by checksum).
 */

/** Every hostile string carries this, so a statement that holds one is found by a plain search. */
export const MARKER = 'FZ7Q';
const HOSTILE = [
  `'; DROP TABLE orders; -- ${MARKER}`,
  `" OR 1=1 -- ${MARKER}`,
  `orders.count; SELECT '${MARKER}'`,
  `{CUBE}.${MARKER}`,
  `\${SECURITY_CONTEXT.${MARKER}}`,
  `\u0000${MARKER}`,
  `${MARKER}' || (SELECT 1) || '`,
  `$$${MARKER}$$`,
  `/*${MARKER}*/`,
  `${MARKER}\\'`,
  `ｏｒｄｅｒｓ.${MARKER}`,
  `../../${MARKER}`,
  `${MARKER}\ud800`,
  `${MARKER}${'x'.repeat(5000)}`,
];

/** What the phase's runtimes allow a query: small, so the generated rows reach both limits. */
export const PHASE_LIMITS = { timeoutMs: 10_000, maxRows: 100, maxResultBytes: 4_096, cacheTtlMs: 0, continueWaitMs: 5_000 };
const GENERATED_ROWS = 300;

/** The shop, a cube of generated rows, and the orders narrowed by the token's security context. */
function modelFor(kind: 'sqlite' | 'postgres'): string {
  const rows =
    kind === 'sqlite'
      ? `WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < ${GENERATED_ROWS}) SELECT n, 'generated row ' || n AS label, datetime('2026-01-01', '+' || n || ' hours') AS at FROM g`
      : `SELECT n, 'generated row ' || n AS label, timestamp '2026-01-01' + n * interval '1 hour' AS at FROM generate_series(1, ${GENERATED_ROWS}) AS n`;
  const extra = `
  - name: numbers
    sql: "${rows}"
    dimensions:
      - { name: n, sql: n, type: number, primary_key: true, public: true }
      - { name: label, sql: label, type: string }
      - { name: at, sql: at, type: time }
    measures:
      - { name: count, type: count }
      - { name: total, sql: n, type: sum }

  - name: regional
    sql_table: customers
    dimensions:
      - { name: id, sql: id, type: number, primary_key: true, public: true }
      - { name: region, sql: region, type: string }
    measures:
      - { name: count, type: count }
    access_policy:
      - group: "*"
        row_level:
          filters:
            - { member: region, operator: equals, values: ["{ securityContext.region }"] }
`;
  return SHOP_MODEL.replace('\nviews:', `${extra}\nviews:`);
}

const CUBES = ['orders', 'customers', 'line_items', 'numbers', 'regional', 'sales', 'a', 'd'];
const MEMBERS = [
  'orders.count',
  'orders.total_amount',
  'orders.amount_per_order',
  'orders.status',
  'orders.size',
  'orders.created_at',
  'orders.id',
  'customers.region',
  'customers.name',
  'line_items.quantity',
  'line_items.product',
  'numbers.n',
  'numbers.label',
  'numbers.count',
  'numbers.total',
  'regional.count',
  'regional.region',
  'sales.count',
  'sales.status',
  'a.id',
  'd.count',
];

// ---- what is sent -------------------------------------------------------------------------------

const hostile = fc.constantFrom(...HOSTILE);
const value = fc.oneof(
  { weight: 3, arbitrary: hostile },
  fc.constantFrom('completed', 'EU', '70', '2026-01-01', 'generated row 7'),
  fc.string({ maxLength: 12 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.date({ noInvalidDate: true, min: new Date('1900-01-01'), max: new Date('2100-01-01') }).map((d) => d.toISOString()),
);
const member = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...MEMBERS) },
  hostile,
  fc.string({ maxLength: 12 }),
  fc.constantFrom('orders.created_at.month', 'orders', 'orders.', '.count', 'orders.count.x'),
);
const operator = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      'equals',
      'notEquals',
      'contains',
      'notContains',
      'startsWith',
      'endsWith',
      'gt',
      'gte',
      'lt',
      'lte',
      'set',
      'notSet',
      'inDateRange',
      'notInDateRange',
      'beforeDate',
      'afterDate',
      'afterOrOnDate',
      'measureFilter',
    ),
  },
  fc.constantFrom('custom', 'between', 'not_equals', 'equals; DROP', '__proto__'),
  hostile,
);
const leaf = fc.record(
  { member, operator, values: fc.oneof({ weight: 3, arbitrary: fc.array(value, { maxLength: 4 }) }, value), dimension: member },
  { requiredKeys: ['member', 'operator'] },
);
const filter = fc.letrec((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.record({ and: fc.array(tie('node'), { maxLength: 3 }) }),
    fc.record({ or: fc.array(tie('node'), { maxLength: 3 }) }),
  ),
})).node;
const dateRange = fc.oneof(
  fc.constantFrom('last 7 days', 'this month', 'from 2026-01-01 to 2026-02-28', 'last fortnight'),
  fc.tuple(value, value),
  fc.array(value, { maxLength: 3 }),
  value,
);
const limit = fc.oneof(fc.constantFrom(0, 1, 10, PHASE_LIMITS.maxRows, PHASE_LIMITS.maxRows + 1, 50_000, 1e9, -1, 1.5), value);
const query = fc.record(
  {
    measures: fc.oneof({ weight: 4, arbitrary: fc.array(member, { maxLength: 3 }) }, value),
    dimensions: fc.oneof({ weight: 4, arbitrary: fc.array(member, { maxLength: 3 }) }, value),
    timeDimensions: fc.oneof(
      {
        weight: 4,
        arbitrary: fc.array(
          fc.record(
            {
              dimension: member,
              granularity: fc.oneof(fc.constantFrom('day', 'month', 'year', 'fortnight'), value),
              dateRange,
              compareDateRange: fc.array(dateRange, { maxLength: 3 }),
            },
            { requiredKeys: ['dimension'] },
          ),
          { maxLength: 2 },
        ),
      },
      value,
    ),
    filters: fc.oneof({ weight: 4, arbitrary: fc.array(filter, { maxLength: 3 }) }, value),
    segments: fc.oneof(fc.array(fc.oneof(fc.constant('orders.completed'), member), { maxLength: 2 }), value),
    order: fc.oneof(
      fc.dictionary(member, fc.oneof(fc.constantFrom('asc', 'desc'), value), { maxKeys: 2 }),
      fc.array(fc.tuple(member, fc.oneof(fc.constantFrom('asc', 'desc'), value)), { maxLength: 2 }),
      value,
    ),
    limit,
    rowLimit: limit,
    offset: fc.oneof(fc.nat(400), value),
    total: fc.oneof(fc.boolean(), value),
    timezone: fc.oneof(fc.constantFrom('UTC', 'Europe/Berlin', 'Mars/Olympus'), value),
    ungrouped: fc.oneof(fc.boolean(), value),
    renewQuery: fc.boolean(),
    // Not part of a query: refused by name.
    sql: value,
  },
  { requiredKeys: [] },
);
/** Members that join, by family: a query takes its members from one (other mixes are refused, and generated below). */
const FAMILIES = [
  {
    measures: ['orders.count', 'orders.total_amount', 'orders.amount_per_order', 'line_items.quantity', 'customers.count'],
    dimensions: ['orders.status', 'orders.size', 'orders.created_at', 'customers.region', 'customers.name', 'line_items.product'],
    text: ['orders.status', 'customers.region', 'line_items.product'],
    numbers: ['orders.amount', 'orders.id'],
    time: 'orders.created_at',
  },
  {
    measures: ['numbers.count', 'numbers.total'],
    dimensions: ['numbers.n', 'numbers.label', 'numbers.at'],
    text: ['numbers.label'],
    numbers: ['numbers.n'],
    time: 'numbers.at',
  },
  { measures: ['regional.count'], dimensions: ['regional.region'], text: ['regional.region'], numbers: ['regional.id'], time: undefined },
  {
    measures: ['sales.count', 'sales.total_amount'],
    dimensions: ['sales.status', 'sales.region', 'sales.created_at'],
    text: ['sales.status', 'sales.region'],
    numbers: [],
    time: 'sales.created_at',
  },
];
/** A query the compiler takes (mostly): members of one family of the model, values anything, hostile ones too. */
const validQuery = fc.constantFrom(...FAMILIES).chain((f) => {
  const filterOf = fc.oneof(
    fc.record({
      member: fc.constantFrom(...f.text),
      operator: fc.constantFrom('equals', 'notEquals', 'contains', 'startsWith', 'endsWith', 'notContains'),
      values: fc.array(fc.oneof(hostile, value.map(String)), { minLength: 1, maxLength: 3 }),
    }),
    ...(f.numbers.length
      ? [
          fc.record({
            member: fc.constantFrom(...f.numbers),
            operator: fc.constantFrom('gt', 'gte', 'lt', 'lte', 'equals'),
            values: fc.array(fc.oneof({ weight: 3, arbitrary: fc.integer({ min: -5, max: 400 }).map(String) }, hostile), { minLength: 1, maxLength: 2 }),
          }),
        ]
      : []),
    ...(f.time
      ? [
          fc.record({
            member: fc.constant(f.time),
            operator: fc.constantFrom('inDateRange', 'notInDateRange', 'beforeDate', 'afterDate'),
            values: fc.oneof({ weight: 3, arbitrary: fc.constant(['2026-01-01', '2026-01-31']) }, fc.tuple(hostile, fc.constant('2026-02-01'))),
          }),
        ]
      : []),
    fc.record({ member: fc.constantFrom(...f.text), operator: fc.constantFrom('set', 'notSet') }),
  );
  return fc
    .record(
      {
        measures: fc.subarray(f.measures, { maxLength: Math.min(2, f.measures.length) }),
        dimensions: fc.subarray(f.dimensions, { maxLength: Math.min(2, f.dimensions.length) }),
        timeDimensions: f.time
          ? fc.array(
              fc.record(
                {
                  dimension: fc.constant(f.time),
                  granularity: fc.constantFrom('hour', 'day', 'week', 'month', 'quarter', 'year'),
                  dateRange: fc.constantFrom('last 7 days', 'from 2026-01-01 to 2026-02-28', ['2026-01-01', '2026-03-01']),
                  compareDateRange: fc.constant([['2026-01-01', '2026-01-07'], ['2026-01-08', '2026-01-14'], 'last week']),
                },
                { requiredKeys: ['dimension'] },
              ),
              { maxLength: 1 },
            )
          : fc.constant([]),
        filters: fc.array(fc.oneof({ weight: 4, arbitrary: filterOf }, fc.record({ or: fc.array(filterOf, { minLength: 1, maxLength: 2 }) })), {
          maxLength: 2,
        }),
        order: fc.dictionary(fc.constantFrom(...f.measures, ...f.dimensions), fc.constantFrom('asc', 'desc'), { maxKeys: 1 }),
        limit: fc.oneof({ weight: 6, arbitrary: fc.integer({ min: 0, max: PHASE_LIMITS.maxRows }) }, limit),
        offset: fc.nat(400),
        total: fc.boolean(),
        timezone: fc.constantFrom('UTC', 'Europe/Berlin', 'America/New_York'),
      },
      { requiredKeys: ['measures', 'dimensions'] },
    )
    .filter((q) => q.measures.length + q.dimensions.length > 0);
});
/** A valid query with one field replaced by anything. */
const brokenQuery = fc
  .tuple(
    validQuery,
    fc.constantFrom(
      'measures',
      'dimensions',
      'timeDimensions',
      'filters',
      'segments',
      'order',
      'limit',
      'offset',
      'total',
      'timezone',
      'ungrouped',
      'renewQuery',
      'sql',
    ),
    query,
  )
  .map(([valid, field, wild]) => ({ ...valid, [field]: (wild as Record<string, unknown>)[field] ?? null }));
const anyQuery = fc.oneof(
  { weight: 6, arbitrary: validQuery },
  { weight: 3, arbitrary: brokenQuery },
  { weight: 2, arbitrary: query },
  fc.array(fc.oneof({ weight: 3, arbitrary: validQuery }, brokenQuery), { minLength: 0, maxLength: 22 }),
  fc.jsonValue({ maxDepth: 3 }),
);

const literal = (text: string) => `'${text.replace(/'/g, "''")}'`;
const sqlText = fc.oneof(
  fc
    .tuple(
      fc.constantFrom(...CUBES),
      fc.subarray(['status', 'count', 'total_amount', 'region', 'n', 'label', 'total', 'id', '*', 'MEASURE(count)', 'COUNT(*)'], {
        minLength: 1,
        maxLength: 3,
      }),
      fc.option(fc.integer({ min: -1, max: 200_000 })),
    )
    .map(([cube, columns, n]) => `SELECT ${columns.join(', ')} FROM ${cube}${n === null ? '' : ` LIMIT ${n}`}`),
  fc.tuple(hostile, fc.boolean()).map(([h, quoted]) => `SELECT status, count FROM orders WHERE status = ${quoted ? literal(h) : `'${h}'`} GROUP BY 1`),
  fc.tuple(hostile, hostile).map(([h, k]) => `SELECT region, count FROM regional WHERE region IN (${literal(h)}, ${literal(k)}) GROUP BY 1`),
  hostile.map((h) => `SELECT n, label FROM numbers WHERE label LIKE ${literal(`%${h}%`)} ORDER BY n`),
  hostile.map((h) => `SELECT "${h}" FROM orders`),
  hostile.map((h) => `SELECT status AS "${h}", count FROM orders GROUP BY 1`),
  hostile.map((h) => `SELECT count FROM orders; ${h}`),
  fc.constantFrom(
    'SELECT n, label FROM numbers',
    'SELECT n, label FROM numbers ORDER BY n',
    'SELECT * FROM numbers',
    'SELECT label, count FROM numbers GROUP BY 1 LIMIT 50000',
    'SELECT 1; DROP TABLE orders',
    'DELETE FROM orders',
    'SELECT pg_sleep(30)',
    'SELECT * FROM pg_catalog.pg_tables',
    'WITH x AS (SELECT 1) SELECT * FROM x',
  ),
  hostile,
  fc.string({ maxLength: 40 }),
);

export type DataCredential =
  'token' | 'bearerToken' | 'apiKey' | 'metaOnlyToken' | 'otherDeploymentToken' | 'tamperedToken' | 'viewerKey' | 'garbage' | 'bearerEmpty' | 'none';

export interface DataOperation {
  id: string;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Below `/v1/`. */
  route: string;
}
/** The routes of Cube's protocol, and a few that are not (404). */
export const DATA_OPERATIONS: DataOperation[] = [
  { id: 'dataApi GET load', method: 'GET', route: 'load' },
  { id: 'dataApi POST load', method: 'POST', route: 'load' },
  { id: 'dataApi GET sql', method: 'GET', route: 'sql' },
  { id: 'dataApi POST sql', method: 'POST', route: 'sql' },
  { id: 'dataApi GET dry-run', method: 'GET', route: 'dry-run' },
  { id: 'dataApi POST dry-run', method: 'POST', route: 'dry-run' },
  { id: 'dataApi POST cubesql', method: 'POST', route: 'cubesql' },
  { id: 'dataApi GET meta', method: 'GET', route: 'meta' },
  { id: 'dataApi GET cubesql', method: 'GET', route: 'cubesql' },
  { id: 'dataApi POST meta', method: 'POST', route: 'meta' },
  // Methods the routes do not take: 405.
  { id: 'dataApi PUT load', method: 'PUT', route: 'load' },
  { id: 'dataApi DELETE sql', method: 'DELETE', route: 'sql' },
];
export const dataOperationPath = (op: DataOperation) => `${op.method} /deployments/{deploymentId}/data-api/v1/${op.route}`;

type BodyMode = 'json' | 'malformed' | 'deep' | 'text/plain' | 'form' | 'latin1' | 'none' | 'oversize';
interface DataPlan {
  credential: DataCredential;
  source: number;
  /** Where: the deployment's URL, another deployment's, one that does not exist, a malformed id, a branch that does not exist, a route below v1 that is not one. */
  where: 'own' | 'other' | 'missing' | 'malformed' | 'branch' | 'unknownRoute';
  multi: unknown;
  payload: unknown;
  sql: string;
  /** GET: the query as JSON text, as text that is not JSON, or the params spelled as the query's own. */
  getMode: 'json' | 'notJson' | 'flat' | 'twice' | 'none';
  bodyMode: BodyMode;
}

const planArb: fc.Arbitrary<DataPlan> = fc.record({
  credential: fc.oneof(
    { weight: 10, arbitrary: fc.constantFrom<DataCredential>('token', 'bearerToken', 'apiKey') },
    {
      weight: 3,
      arbitrary: fc.constantFrom<DataCredential>('metaOnlyToken', 'otherDeploymentToken', 'tamperedToken', 'viewerKey', 'garbage', 'bearerEmpty', 'none'),
    },
  ),
  source: fc.nat(1),
  where: fc.oneof(
    { weight: 20, arbitrary: fc.constant<DataPlan['where']>('own') },
    fc.constantFrom<DataPlan['where']>('other', 'missing', 'malformed', 'branch', 'unknownRoute'),
  ),
  multi: fc.option(fc.oneof({ weight: 4, arbitrary: fc.constant('multi') }, value), { freq: 2 }),
  payload: anyQuery,
  sql: sqlText,
  getMode: fc.oneof(
    { weight: 8, arbitrary: fc.constant<DataPlan['getMode']>('json') },
    fc.constantFrom<DataPlan['getMode']>('notJson', 'flat', 'twice', 'none'),
  ),
  bodyMode: fc.oneof(
    { weight: 16, arbitrary: fc.constant<BodyMode>('json') },
    fc.constantFrom<BodyMode>('malformed', 'deep', 'text/plain', 'form', 'latin1', 'none', 'oversize'),
  ),
});

// ---- the world of the phase ---------------------------------------------------------------------

interface Source {
  kind: 'sqlite' | 'postgres';
  /** Statements seen in the source's log, and bound values there that held a hostile string. */
  seen: { statements: number; hostileParameters: number };
  env: Array<{ name: string; value: string }>;
  deploymentId: number;
  tokens: Record<'full' | 'metaOnly', string>;
  /** Statements the source ran since the last call (null: it cannot tell). */
  statements(): string[] | null;
  fingerprint(): Promise<string>;
  close(): Promise<void>;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`data-API phase: ${what} did not happen within ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function sqliteSource(dir: string): Promise<Omit<Source, 'deploymentId' | 'tokens'>> {
  writeShopSqlite(dir, 'shop.sqlite');
  const file = path.join(dir, 'shop.sqlite');
  return {
    kind: 'sqlite',
    seen: { statements: 0, hostileParameters: 0 },
    env: [
      { name: 'DB_TYPE', value: 'sqlite' },
      { name: 'DB_URL', value: 'shop.sqlite' },
    ],
    statements: () => null,
    async fingerprint() {
      const db = new Database(file, { readonly: true });
      try {
        const counts = ['customers', 'orders', 'line_items'].map((t) => (db.prepare(`SELECT count(*) AS n FROM ${t}`).get() as { n: number }).n);
        const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as Array<{ name: string }>).map((r) => r.name);
        return `${createHash('sha256').update(fs.readFileSync(file)).digest('hex')} ${tables.join(',')} ${counts.join(',')}`;
      } finally {
        db.close();
      }
    },
    close: async () => undefined,
  };
}

/** The shop in a PostgreSQL cluster of its own that logs every statement it is sent. */
async function postgresSource(): Promise<Omit<Source, 'deploymentId' | 'tokens'>> {
  const cluster = await startSecondCluster({ log_statement: 'all', log_min_error_statement: 'error' });
  // A run stopped with Ctrl-C leaves no PostgreSQL behind.
  const interrupted = (signal: NodeJS.Signals) => {
    cluster.stop();
    process.kill(process.pid, signal);
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  const admin = new pg.Client({ connectionString: cluster.url });
  await admin.connect();
  for (const statement of DDL) await admin.query(statement.replace('created_at TEXT', 'created_at TIMESTAMPTZ'));
  const insert = async (table: string, list: unknown[][]) => {
    for (const row of list) await admin.query(`INSERT INTO ${table} VALUES (${row.map((_, i) => `$${i + 1}`).join(', ')})`, row);
  };
  await insert('customers', CUSTOMERS);
  await insert('orders', ORDERS);
  await insert('line_items', LINE_ITEMS);
  let offset = fs.statSync(cluster.log).size;
  const seen = { statements: 0, hostileParameters: 0 };
  return {
    kind: 'postgres',
    seen,
    env: [
      { name: 'DB_TYPE', value: 'postgres' },
      { name: 'DB_URL', value: cluster.url },
    ],
    statements() {
      const size = fs.statSync(cluster.log).size;
      if (size <= offset) return [];
      const buffer = Buffer.alloc(size - offset);
      const fd = fs.openSync(cluster.log, 'r');
      try {
        fs.readSync(fd, buffer, 0, buffer.length, offset);
      } finally {
        fs.closeSync(fd);
      }
      offset = size;
      // One entry per log line and its continuation lines; the statements are those logged as run
      // (`statement:`, `execute <name>:`) or as the cause of an error (`STATEMENT:`), never the
      // bound values (`DETAIL:  parameters:`) or an error's message about one.
      const entries = buffer.toString('utf8').split(/\n(?=\d{4}-\d\d-\d\d )/);
      seen.hostileParameters += entries.filter((e) => /\] DETAIL: {2}parameters: /.test(e) && e.includes(MARKER)).length;
      const statements = entries
        .map((entry) => /\] (?:LOG: {2}(?:statement: |execute [^:]*: )|STATEMENT: {2})([\s\S]*)$/.exec(entry)?.[1])
        .filter((s): s is string => s !== undefined);
      seen.statements += statements.length;
      return statements;
    },
    async fingerprint() {
      const tables = await admin.query("SELECT string_agg(tablename, ',' ORDER BY tablename) AS t FROM pg_tables WHERE schemaname = 'public'");
      const sums: string[] = [];
      for (const t of ['customers', 'orders', 'line_items'])
        sums.push((await admin.query(`SELECT md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) AS m FROM ${t} x`)).rows[0].m as string);
      return `${tables.rows[0].t as string} ${sums.join(',')}`;
    },
    async close() {
      process.off('SIGINT', interrupted);
      process.off('SIGTERM', interrupted);
      await admin.end().catch(() => undefined);
      cluster.stop();
    },
  };
}

export class DataApiWorld {
  readonly sources: Source[] = [];
  lastLoggedError: string | undefined;
  private constructor(
    readonly t: TestApp,
    readonly dataSources: string,
    readonly viewerKey: string,
  ) {}

  static async create(dialect: Dialect, log: (line: string) => void): Promise<DataApiWorld> {
    const dataSources = fs.mkdtempSync(path.join(os.tmpdir(), 'mapi-fuzz-sources-'));
    const holder: { world?: DataApiWorld } = {};
    const stream = {
      write(line: string) {
        const world = holder.world;
        if (!world) return;
        try {
          const entry = JSON.parse(line) as { msg?: string; err?: { message?: string; stack?: string } };
          const frame = entry.err?.stack
            ?.split('\n')
            .find((l) => l.includes('/src/'))
            ?.trim();
          world.lastLoggedError = `${entry.err?.message ?? entry.msg ?? ''}${frame ? ` (${frame})` : ''}`.slice(0, 300);
        } catch {
          world.lastLoggedError = line.slice(0, 300);
        }
      },
    };
    const t = await TestApp.create(dialect, {
      logger: { level: 'error', stream },
      // The runtime from the sources (this script runs through tsx), started and checked quickly.
      runtime: {
        driver: 'process',
        entry: RUNTIME_ENTRY,
        tickMs: 200,
        leaseMs: 2_000,
        backoffBaseMs: 200,
        logFlushMs: 50,
        dataSourcesDir: dataSources,
        queries: PHASE_LIMITS,
      },
    });
    const viewer = await t.user('VIEWER');
    const world = new DataApiWorld(t, dataSources, viewer.key);
    holder.world = world;
    try {
      const made = [await sqliteSource(dataSources)];
      if (canStartSecondCluster()) made.push(await postgresSource());
      else log('data-API phase: no PostgreSQL binaries here, so only the SQLite data source (checked intact after the run)');
      for (const source of made) world.sources.push(await world.deploy(source, log));
    } catch (error) {
      await world.close();
      throw error;
    }
    return world;
  }

  private async call(method: 'GET' | 'POST' | 'PUT', url: string, body?: unknown): Promise<any> {
    const res = await this.t.request({ method, url, ...(body === undefined ? {} : { body }) });
    if (res.statusCode >= 300) throw new Error(`data-API phase: ${method} ${url} answered ${res.statusCode}: ${res.body.slice(0, 300)}`);
    return res.body ? res.json() : undefined;
  }

  /** A deployment serving the phase's model on `source`, and tokens of its production environment. */
  private async deploy(source: Omit<Source, 'deploymentId' | 'tokens'>, log: (line: string) => void): Promise<Source> {
    const started = performance.now();
    const { id } = (await this.call('POST', '/build/api/v1/deployments', { name: `fuzz ${source.kind}` })) as { id: number };
    const build = `/build/api/v1/deployments/${id}`;
    await this.call('PUT', `/api/v1/deployments/${id}/env-vars`, { env_variables: source.env });
    await this.call('POST', `${build}/dev-mode`);
    await this.call('PUT', `${build}/data-model/files`, { files: [{ path: 'model/cubes/shop.yml', content: modelFor(source.kind) }] });
    await this.call('POST', `${build}/commit`, { message: 'The fuzzed model', exitDevMode: true });
    // Served once the data API lists the model's own cubes.
    await until(`deployment ${id} (${source.kind}) serving the model`, async () => {
      const res = await this.t.request({ url: `/deployments/${id}/data-api/v1/meta` });
      return res.statusCode === 200 && res.body.includes('"numbers"') ? true : undefined;
    });
    const mint = async (scopes: string[]) => {
      const res = (await this.call('POST', `/api/v1/deployments/${id}/environments/production/tokens`, {
        security_context: { region: HOSTILE[0], note: HOSTILE[1] },
        scopes,
      })) as { data: { token: string } };
      return res.data.token;
    };
    const tokens = { full: await mint(['meta', 'sql-runner']), metaOnly: await mint(['meta']) };
    log(`data-API phase: deployment ${id} serves the model on ${source.kind} (${((performance.now() - started) / 1000).toFixed(1)} s)`);
    return { ...source, deploymentId: id, tokens };
  }

  async close(): Promise<void> {
    await this.t.close().catch(() => undefined);
    for (const source of this.sources) await source.close().catch(() => undefined);
    fs.rmSync(this.dataSources, { recursive: true, force: true });
  }
}

// ---- one request --------------------------------------------------------------------------------

function authorization(world: DataApiWorld, source: Source, other: Source | undefined, credential: DataCredential): string | undefined {
  const token = source.tokens.full;
  switch (credential) {
    case 'token':
      return token;
    case 'bearerToken':
      return `Bearer ${token}`;
    case 'apiKey':
      return `Bearer ${world.t.admin.key}`;
    case 'metaOnlyToken':
      return `Bearer ${source.tokens.metaOnly}`;
    case 'otherDeploymentToken':
      // Another deployment's token; with one source, a token of this one for another audience is what a tampered one is.
      return other ? other.tokens.full : `${token.slice(0, -2)}${token.endsWith('AA') ? 'BB' : 'AA'}`;
    case 'tamperedToken': {
      const [header, , signature] = token.split('.');
      const claims = Buffer.from(
        JSON.stringify({
          deployment_id: source.deploymentId,
          environment_id: 'production',
          user_id: world.t.admin.userId,
          scopes: ['meta', 'sql-runner', 'meta-private'],
        }),
      ).toString('base64url');
      return `Bearer ${header}.${claims}.${signature}`;
    }
    case 'viewerKey':
      return `Bearer ${world.viewerKey}`;
    case 'garbage':
      return 'Bearer eyJhbGciOiJub25lIn0.e30.';
    case 'bearerEmpty':
      return 'Bearer ';
    case 'none':
      return undefined;
  }
}

function jsonText(value: unknown): string {
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? 'null');
}

const encode = (text: string) => {
  try {
    return encodeURIComponent(text);
  } catch {
    return encodeURIComponent(text.replace(/[\ud800-\udfff]/g, '\ufffd'));
  }
};

/**
 * Whether the request must be refused whatever it asks: a credential that opens nothing here, a
 * URL that names no environment of this deployment, a route that is not one.
 */
function mustRefuse(plan: DataPlan, hasOther: boolean): boolean {
  if (['tamperedToken', 'viewerKey', 'garbage', 'bearerEmpty', 'none'].includes(plan.credential)) return true;
  if (plan.where !== 'own' && plan.where !== 'other') return true;
  const elsewhere = plan.where === 'other' && hasOther;
  if (plan.credential === 'otherDeploymentToken') return !elsewhere;
  return elsewhere && plan.credential !== 'apiKey';
}

export function buildRequest(world: DataApiWorld, op: DataOperation, plan: DataPlan): { built: Built; source: Source; refuse: boolean } {
  const source = world.sources[plan.source % world.sources.length]!;
  const other = world.sources.find((s) => s !== source);
  let base = `/deployments/${source.deploymentId}/data-api/v1`;
  if (plan.where === 'other' && other) base = `/deployments/${other.deploymentId}/data-api/v1`;
  if (plan.where === 'missing') base = '/deployments/987654/data-api/v1';
  if (plan.where === 'malformed') base = `/deployments/${encode(HOSTILE[0]!)}/data-api/v1`;
  if (plan.where === 'branch') base = `/deployments/${source.deploymentId}/dev-mode/${encode(HOSTILE[2]!)}/data-api/v1`;
  const route = plan.where === 'unknownRoute' ? `${op.route}/${encode(HOSTILE[3]!)}` : op.route;
  const headers: Record<string, string> = {};
  const auth = authorization(world, source, other, plan.credential);
  if (auth !== undefined) headers.authorization = auth;
  // `/v1/cubesql` and, now and then, `/v1/sql` take SQL; the rest a JSON query.
  const asSql = op.route === 'cubesql' || (op.route === 'sql' && op.method === 'POST' && plan.sql.length % 3 === 0);
  const query = asSql ? plan.sql : plan.payload;
  const params: Record<string, unknown> = plan.multi === null ? { query } : { query, queryType: plan.multi };
  let url = `${base}/${route}`;
  let payload: string | undefined;
  if (op.method === 'GET') {
    const pairs: Array<[string, string]> = [];
    if (plan.getMode === 'json' || plan.getMode === 'twice') pairs.push(['query', jsonText(query)]);
    if (plan.getMode === 'twice') pairs.push(['query', jsonText(plan.payload)]);
    if (plan.getMode === 'notJson') pairs.push(['query', `${jsonText(query).slice(0, -1)}`]);
    if (plan.getMode === 'flat' && typeof query === 'object' && query !== null && !Array.isArray(query))
      for (const [k, v] of Object.entries(query)) pairs.push([k, jsonText(v)]);
    if (plan.multi !== null) pairs.push(['queryType', jsonText(plan.multi)]);
    if (pairs.length) url += `?${pairs.map(([k, v]) => `${encode(k)}=${encode(v)}`).join('&')}`;
  } else {
    const text = JSON.stringify(plan.bodyMode === 'json' && plan.sql.length % 5 === 0 ? query : params) ?? 'null';
    switch (plan.bodyMode) {
      case 'json':
        payload = text;
        headers['content-type'] = 'application/json';
        break;
      case 'malformed':
        payload = text.slice(0, Math.max(1, text.length >> 1));
        headers['content-type'] = 'application/json';
        break;
      case 'deep':
        payload = `{"query":${'['.repeat(5000)}${']'.repeat(5000)}}`;
        headers['content-type'] = 'application/json';
        break;
      case 'text/plain':
        payload = text;
        headers['content-type'] = 'text/plain';
        break;
      case 'form':
        payload = `query=${encode(jsonText(query))}`;
        headers['content-type'] = 'application/x-www-form-urlencoded';
        break;
      case 'latin1':
        payload = text;
        headers['content-type'] = 'application/json; charset=latin1';
        break;
      case 'oversize':
        payload = JSON.stringify({
          query: {
            measures: ['orders.count'],
            filters: [{ member: 'orders.status', operator: 'equals', values: [HOSTILE[0]!.repeat((1 + 1_100_000 / HOSTILE[0]!.length) | 0)] }],
          },
        });
        headers['content-type'] = 'application/json';
        break;
      case 'none':
        break;
    }
  }
  const built: Built = {
    method: op.method,
    url,
    headers,
    payload,
    invalidParams: [],
    foreignParams: [],
    routerRefuses: false,
    deploymentId: source.deploymentId,
    body: undefined,
  };
  return { built, source, refuse: mustRefuse(plan, other !== undefined) };
}

/** Everything wrong with one answer of the data API. */
export function checkAnswer(op: DataOperation, plan: DataPlan, asSql: boolean, refuse: boolean, status: number, contentType: string, body: string): Finding[] {
  const out: Finding[] = [];
  const allowed = op.method === 'GET' || op.method === 'POST' ? new Set([200, 400, 401, 403, 404]) : new Set([400, 404, 405]);
  if (plan.bodyMode === 'oversize' && op.method !== 'GET') allowed.add(413);
  if ((plan.bodyMode === 'text/plain' || plan.bodyMode === 'form') && op.method !== 'GET') allowed.add(415);
  if (status >= 500) out.push({ kind: 'server-error', detail: String(status), message: `${status} ${body.slice(0, 200)}` });
  else if (!allowed.has(status))
    out.push({ kind: 'undocumented-status', detail: String(status), message: `${status} is not among ${[...allowed].join(', ')}` });
  if (!/json/.test(contentType))
    out.push({ kind: 'content-type', detail: `${status} ${contentType}`, message: `answered ${contentType || '(none)'}, not JSON` });
  if (status !== 200) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      out.push({ kind: 'error-shape', detail: `${status} not JSON`, message: body.slice(0, 200) });
      return out;
    }
    const error = (parsed as { error?: unknown } | null)?.error;
    if (typeof error !== 'string' || error.length === 0)
      out.push({ kind: 'error-shape', detail: `${status} no error`, message: `no {error} member: ${body.slice(0, 200)}` });
    // A statement the data source refused: the engine ran what it should have refused (naming the
    // field), or compiled something the source does not take.
    else if (error.startsWith('The data source refused the query'))
      out.push({ kind: 'source-refused', detail: error.replace(/\d+/g, 'N').slice(0, 80), message: error.slice(0, 300) });
    return out;
  }
  // 200: what the credential may have, and within the limits.
  if (refuse)
    out.push({
      kind: 'unauthenticated-accepted',
      detail: `${plan.credential} at ${plan.where}`,
      message: `a request with credential "${plan.credential}" at the ${plan.where} URL was answered 200`,
    });
  if (plan.credential === 'metaOnlyToken' && op.route !== 'meta')
    out.push({ kind: 'scope-bypass', detail: op.route, message: 'a token without sql-runner was answered 200' });
  let lines: unknown[];
  try {
    lines =
      op.route === 'cubesql'
        ? body
            .trim()
            .split('\n')
            .map((l) => JSON.parse(l) as unknown)
        : [JSON.parse(body) as unknown];
  } catch {
    out.push({ kind: 'response-schema', detail: 'not JSON', message: body.slice(0, 200) });
    return out;
  }
  const answer = lines[0] as Record<string, any>;
  if (answer.error !== undefined && answer.error !== 'Continue wait')
    out.push({ kind: 'response-schema', detail: '200 with error', message: body.slice(0, 200) });
  const { maxRows, maxResultBytes } = PHASE_LIMITS;
  const rowsWithin = (rows: unknown, what: string) => {
    if (!Array.isArray(rows)) return;
    if (rows.length > maxRows)
      out.push({ kind: 'limit-exceeded', detail: `${op.route} rows`, message: `${what}: ${rows.length} rows, more than QUERY_MAX_ROWS ${maxRows}` });
    const bytes = Buffer.byteLength(JSON.stringify(rows));
    // Rows as the runtime measures them (its JSON); a little slack for the text form of /v1/cubesql.
    if (bytes > maxResultBytes * (op.route === 'cubesql' ? 1.5 : 1))
      out.push({
        kind: 'limit-exceeded',
        detail: `${op.route} bytes`,
        message: `${what}: ${bytes} bytes of rows, more than QUERY_MAX_RESULT_BYTES ${maxResultBytes}`,
      });
  };
  if (op.route === 'load') {
    const results = Array.isArray(answer.results) ? (answer.results as Array<Record<string, unknown>>) : [answer];
    for (const [i, r] of results.entries()) rowsWithin(r.data, `result ${i}`);
    if (results.length > 1) {
      const bytes = results.reduce((n, r) => n + Buffer.byteLength(JSON.stringify(r.data ?? [])), 0);
      if (bytes > maxResultBytes)
        out.push({
          kind: 'limit-exceeded',
          detail: 'load bytes of all results',
          message: `${results.length} results with ${bytes} bytes of rows in all, more than QUERY_MAX_RESULT_BYTES ${maxResultBytes}`,
        });
    }
  }
  if (op.route === 'cubesql') rowsWithin((lines[1] as { data?: unknown } | undefined)?.data, 'cubesql');
  if (op.route === 'sql' && asSql) rowsWithin(answer.data, 'SQL over cubes');
  if (op.route === 'sql' && !asSql) {
    // The SQL a JSON query compiles to: values are parameters, never in its text.
    const described = Array.isArray(answer) ? (answer as Array<Record<string, any>>) : [answer];
    for (const d of described) {
      const text = d?.sql?.sql?.[0];
      if (typeof text === 'string' && text.includes(MARKER))
        out.push({ kind: 'hostile-in-sql', detail: '/v1/sql text', message: `the SQL answered holds a hostile value: ${text.slice(0, 200)}` });
    }
  }
  return out;
}

/**
 * Runs `requests` requests over `ops`, round robin, each from a plan generated with the run's
 * seed; findings go to `report`.
 */
export async function runDataApiPhase(
  world: DataApiWorld,
  ops: DataOperation[],
  requests: number,
  seed: number,
  report: Report,
  log: (line: string) => void,
  timeoutMs: number,
  onRequest: (index: number) => void,
): Promise<void> {
  const before = await Promise.all(world.sources.map((s) => s.fingerprint()));
  for (const s of world.sources) s.statements();
  const buffers = ops.map(() => [] as DataPlan[]);
  const batches = ops.map(() => 0);
  const next = (i: number): DataPlan => {
    if (buffers[i]!.length === 0)
      buffers[i] = fc.sample(planArb, { seed: (seed + Math.imul(i + 101, 1_000_003) + Math.imul(batches[i]!++, 7919)) | 0, numRuns: 64 }).reverse();
    return buffers[i]!.pop()!;
  };
  const started = performance.now();
  for (let i = 0; i < requests; i++) {
    const op = ops[i % ops.length]!;
    const plan = next(i % ops.length);
    const { built, refuse } = buildRequest(world, op, plan);
    const asSql = op.route === 'cubesql' || (op.route === 'sql' && op.method === 'POST' && plan.sql.length % 3 === 0);
    onRequest(i);
    world.lastLoggedError = undefined;
    let timer: NodeJS.Timeout | undefined;
    const sent = performance.now();
    const answer = await Promise.race([
      world.t.app.inject({
        method: built.method as 'GET',
        url: built.url,
        headers: built.headers,
        ...(built.payload === undefined ? {} : { payload: built.payload }),
      }),
      new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs))),
    ]);
    clearTimeout(timer);
    if (answer === 'timeout') {
      report.count(op.id, 0);
      report.add(
        op.id,
        { kind: 'timeout', detail: 'no answer', message: `no answer within ${timeoutMs / 1000} s` },
        built,
        plan.credential,
        0,
        '',
        undefined,
        i,
      );
      continue;
    }
    report.count(op.id, answer.statusCode, performance.now() - sent);
    const findings = checkAnswer(op, plan, asSql, refuse, answer.statusCode, String(answer.headers['content-type'] ?? ''), answer.body);
    // Statements PostgreSQL ran since the last request: this request's.
    for (const s of world.sources) {
      for (const statement of s.statements() ?? []) {
        if (statement.includes(MARKER))
          findings.push({
            kind: 'hostile-in-sql',
            detail: `${s.kind} statement`,
            message: `the data source was sent a statement holding a hostile value: ${statement.slice(0, 200)}`,
          });
      }
    }
    for (const finding of findings) {
      if (report.add(op.id, finding, built, plan.credential, answer.statusCode, answer.body, world.lastLoggedError, i))
        log(`  new finding at data-API request ${i}: [${finding.kind}] ${op.id} ${finding.detail}`);
    }
    if (i % 1000 === 999)
      log(`  ${i + 1} data-API requests, ${((i + 1) / ((performance.now() - started) / 1000)) | 0} a second, ${report.distinct} distinct findings`);
  }
  for (const s of world.sources) {
    if (s.kind === 'postgres')
      log(
        `data-API phase: PostgreSQL logged ${s.seen.statements} statements, ${s.seen.hostileParameters} of them with a hostile string among their bound values`,
      );
  }
  const after = await Promise.all(world.sources.map((s) => s.fingerprint()));
  for (const [i, s] of world.sources.entries()) {
    if (after[i] !== before[i]) {
      const built: Built = {
        method: '-',
        url: `(the ${s.kind} data source after the run)`,
        headers: {},
        payload: undefined,
        invalidParams: [],
        foreignParams: [],
        routerRefuses: false,
        deploymentId: s.deploymentId,
        body: undefined,
      };
      report.add(
        '(data source)',
        { kind: 'source-changed', detail: s.kind, message: `the data source changed during the run: ${before[i]} → ${after[i]}` },
        built,
        '-',
        0,
        '',
        undefined,
        requests,
      );
    }
  }
}
