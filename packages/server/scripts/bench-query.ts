/**
 * `npm run bench:query`: the query engine on a sample dataset, each figure beside a floor measured
 * in the same run.
 *
 * The dataset: the shop of the query tests (test/query-fixtures.ts: its tables and its model) at
 * size: 1,000 customers, 100,000 orders over two years (2024 and 2025), 250,000 line items, drawn
 * by a seeded generator so that every run has the same rows, in a SQLite file in a temporary
 * data-sources directory, with indexes on the join keys and on the orders' time.
 *
 * 1. Compile: `QueryEngine.compile()` (normalise, resolve the members, plan the joins, write the
 *    SQL) of each query, in this process; the median of BENCH_COMPILES (default 2,000) after 200
 *    untimed, in µs.
 * 2. Load: the server as users run it (`node packages/server/dist/main.js`: HTTPS, SQLite in a
 *    temporary directory, RUNTIME_DRIVER=process, DATASOURCES_DIR the dataset's directory), one
 *    deployment whose variables name the file (DB_TYPE=sqlite, DB_URL) and whose model is the shop
 *    (dev mode, its file, a commit). Each query goes as `POST /deployments/<id>/data-api/v1/load`
 *    with the admin key through the whole path: client → server (TLS, the caller, the deployment
 *    and its pod) → the pod over its IPC channel (the server runs it; another server process would
 *    proxy over HTTP) → the runtime (compile, or reuse the statement it compiled for the same
 *    normalised query and caller context; execute, rows as JSON) → server → client. Each request
 *    runs its statement: the result cache is off (QUERY_CACHE_MS=0), as it is for the floor.
 *    Floor: the same compiled SQL and parameters (from `QueryEngine.compile`) run directly on the
 *    same file with better-sqlite3 in this process, prepared and run as the runtime does (one
 *    connection, one statement at a time, with the engine's SQLite functions), while the server
 *    idles.
 *    Throughput (the target's figure): the floor's statements per second, run back to back, beside
 *    /v1/load's requests per second from BENCH_CONCURRENCY (default 4) kept-alive connections, each
 *    sending its next request when its last is answered; by turns in BENCH_SECONDS (default 3)
 *    blocks of each per query (a second, or ten one-at-a-time requests for slower queries; the
 *    requests out at a block's end are answered, and counted, before the next), so both see the
 *    same machine. The runtime runs its statements on one connection, as the floor does.
 *    Target: /v1/load throughput within 1.5x of the floor's (floor per second / load per second)
 *    for queries returning fewer than 1,000 rows.
 *    Latency, one request at a time on one kept-alive connection, beside the floor's time per
 *    statement, by turns (p50, p99, and their ratio), for up to BENCH_LOAD_MS (default 3,000) per
 *    query after untimed ones. Each of the server, the pod and this process then waits idle while
 *    another works, and every hop wakes a sleeping process: this is the fixed cost a lone request
 *    pays, which throughput hides.
 * 3. Where the time goes, per query: the floor (execution); compile; the rows keyed by member and
 *    `JSON.stringify` of the answer, each alone in this process; the runtime program alone
 *    (dist/semantic-layer/main.js forked by this process and started as the server starts it,
 *    called over loopback HTTP with its secret: no TLS, no server), timed by turns with the floor
 *    and /v1/load; and the round trip of a query the runtime refuses at once (a 400 of a few
 *    bytes) both ways. BENCH_PROFILE=<dir> also writes the server's CPU profile there and prints
 *    where its main thread's time per request went (scripts/bench/profile-breakdown.ts).
 *    BENCH_ONLY=<regex> runs the queries whose label matches.
 */
import { execFileSync, fork, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { generateApiKey } from '../src/areas/api-keys/key-format.js';
import { openDataSource } from '../src/semantic-layer/data-source.js';
import { SECRET_HEADER, type ListeningMessage, type StartMessage } from '../src/semantic-layer/protocol.js';
import { DEFAULT_ENGINE_LIMITS, QueryEngine } from '../src/semantic-layer/query/load.js';
import { annotationOf, rowsOf } from '../src/semantic-layer/query/results.js';
import { registerSqliteFunctions } from '../src/semantic-layer/query/sqlite-functions.js';
import { sqliteParams } from '../src/semantic-layer/query/dialect.js';
import { DDL, SHOP_MODEL, shopArtifact } from '../test/query-fixtures.js';
import { breakdown, type Window } from './bench/profile-breakdown.js';
import { client, freePort, median, percentile, sleep, waitFor, type Client, type Json } from './bench/https-client.js';
import { seededRandom } from './bench/seeded-random.js';

const COMPILES = Number(process.env.BENCH_COMPILES ?? 2_000);
const COMPILE_WARMUP = 200;
const LOAD_MS = Number(process.env.BENCH_LOAD_MS ?? 3_000);
const CONCURRENCY = Math.max(1, Number(process.env.BENCH_CONCURRENCY ?? 4));
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const TARGET_RATIO = 1.5;
const TARGET_ROWS = 1_000;
const CUSTOMERS = 1_000;
const ORDERS = 100_000;
const LINE_ITEMS = 250_000;
const FILE = 'shop.sqlite';
/** The runtime's limits (semantic-layer/main.ts). */
// No result cache: every request runs its statement, as the floor does.
const LIMITS = { ...DEFAULT_ENGINE_LIMITS, cacheTtlMs: 0 };

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../../..');
const log = (line: string) => process.stdout.write(`${line}\n`);

/** Representative queries over the shop model. */
const QUERIES: Array<{ label: string; query: Json }> = [
  { label: 'count', query: { measures: ['orders.count'] } },
  { label: 'group by a dimension', query: { measures: ['orders.count', 'orders.total_amount'], dimensions: ['orders.status'] } },
  {
    label: 'join many-to-one',
    query: { measures: ['orders.count', 'orders.average_amount'], dimensions: ['customers.region'], order: { 'orders.count': 'desc' } },
  },
  { label: 'join one-to-many', query: { measures: ['orders.count', 'orders.total_amount', 'line_items.quantity'], dimensions: ['orders.status'] } },
  {
    label: 'month in a time zone',
    query: {
      measures: ['orders.count', 'orders.total_amount'],
      timeDimensions: [{ dimension: 'orders.created_at', granularity: 'month', dateRange: ['2024-07-01', '2025-06-30'] }],
      timezone: 'America/New_York',
    },
  },
  {
    label: 'filters and an or-group',
    query: {
      measures: ['orders.count', 'orders.completed_count', 'orders.amount_per_order'],
      dimensions: ['customers.region', 'orders.size'],
      filters: [
        { member: 'orders.status', operator: 'equals', value: ['completed', 'processing'] },
        {
          or: [
            { member: 'orders.amount', operator: 'greater_than', value: 150 },
            { member: 'customers.name', operator: 'starts_with', value: 'A' },
          ],
        },
        { member: 'orders.created_at', operator: 'greater_than_or_equal', value: '2025-01-01' },
      ],
    },
  },
  { label: 'view', query: { measures: ['sales.count', 'sales.total_amount'], dimensions: ['sales.region', 'sales.status'] } },
  // At and over the target's row count: the answer's size starts to weigh.
  {
    label: '1,000 rows (per customer)',
    query: { measures: ['orders.count', 'orders.total_amount'], dimensions: ['customers.id', 'customers.name'], order: { 'customers.id': 'asc' } },
  },
  { label: '10,000 rows (per order)', query: { measures: ['orders.total_amount'], dimensions: ['orders.id', 'orders.status'], order: { 'orders.id': 'asc' } } },
];

/** The shop's tables (the fixture's DDL) at size, in `dir/shop.sqlite`. */
function writeDataset(dir: string): { bytes: number; ms: number } {
  const started = performance.now();
  const file = path.join(dir, FILE);
  const db = new Database(file);
  db.pragma('journal_mode = OFF');
  db.pragma('synchronous = OFF');
  for (const statement of DDL) db.exec(statement);
  const next = seededRandom(15);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  const names = [
    'Ada',
    'Alan',
    'Anna',
    'Bo',
    'Cy',
    'Dee',
    'Eve',
    'Finn',
    'Grace',
    'Hal',
    'Ivy',
    'Joe',
    'Kim',
    'Lin',
    'Max',
    'Ned',
    'Olga',
    'Pia',
    'Quinn',
    'Rui',
  ];
  const regions = ['EU', 'US', 'APAC', 'LATAM', 'MEA'];
  const statuses = ['completed', 'completed', 'completed', 'processing', 'cancelled', 'returned'];
  const products = Array.from({ length: 50 }, (_, i) => `product ${i + 1}`);
  const from = Date.UTC(2024, 0, 1);
  const span = Date.UTC(2026, 0, 1) - from;
  db.transaction(() => {
    const customer = db.prepare('INSERT INTO customers VALUES (?, ?, ?)');
    // One customer in 50 has no region.
    for (let id = 1; id <= CUSTOMERS; id++) customer.run(id, `${pick(names)} ${id}`, next() < 0.02 ? null : pick(regions));
    // Orders in time order, as they are placed; one in 100 without a customer (a guest).
    const times = Array.from({ length: ORDERS }, () => from + Math.floor(next() * span)).sort((a, b) => a - b);
    const order = db.prepare('INSERT INTO orders VALUES (?, ?, ?, ?, ?)');
    for (let id = 1; id <= ORDERS; id++) {
      order.run(
        id,
        next() < 0.01 ? null : 1 + Math.floor(next() * CUSTOMERS),
        pick(statuses),
        5 + Math.floor(next() * 196),
        new Date(times[id - 1]!).toISOString().replace('.000Z', 'Z'),
      );
    }
    const item = db.prepare('INSERT INTO line_items VALUES (?, ?, ?, ?)');
    for (let id = 1; id <= LINE_ITEMS; id++) item.run(id, 1 + Math.floor(next() * ORDERS), pick(products), 1 + Math.floor(next() * 5));
  })();
  db.exec(
    'CREATE INDEX orders_customer_id ON orders (customer_id); CREATE INDEX orders_created_at ON orders (created_at); CREATE INDEX line_items_order_id ON line_items (order_id); ANALYZE',
  );
  db.close();
  return { bytes: fs.statSync(file).size, ms: performance.now() - started };
}

/** Timed runs of `run`: untimed ones for at least `warmupMs`, then samples for up to `budgetMs` (at least `min`, at most `max`). */
async function sample(run: () => unknown, options: { warmupMs: number; budgetMs: number; min?: number; max?: number }): Promise<number[]> {
  const min = options.min ?? 15;
  const max = options.max ?? 1_000;
  const warm = performance.now();
  for (let i = 0; i < 5 || performance.now() - warm < options.warmupMs; i++) await run();
  const samples: number[] = [];
  const started = performance.now();
  while (samples.length < max && (samples.length < min || performance.now() - started < options.budgetMs)) {
    const at = performance.now();
    await run();
    samples.push(performance.now() - at);
  }
  return samples;
}

/** Each of `runs` in turn, each timed: untimed rounds for at least `warmupMs`, then rounds for up to `budgetMs` (at least `min`, at most `max`). */
async function byTurns(runs: Array<() => unknown>, options: { warmupMs: number; budgetMs: number; min?: number; max?: number }): Promise<number[][]> {
  const min = options.min ?? 10;
  const max = options.max ?? 1_000;
  const warm = performance.now();
  for (let i = 0; i < 5 || performance.now() - warm < options.warmupMs; i++) for (const run of runs) await run();
  const samples = runs.map(() => [] as number[]);
  const started = performance.now();
  while (samples[0]!.length < max && (samples[0]!.length < min || performance.now() - started < options.budgetMs)) {
    for (let r = 0; r < runs.length; r++) {
      const at = performance.now();
      await runs[r]!();
      samples[r]!.push(performance.now() - at);
    }
  }
  return samples;
}

/** The runtime program on its own, started as the server starts it (protocol.ts), called over loopback HTTP with its secret: no TLS, no server, no proxy. */
async function bareRuntime(dataSources: string): Promise<{ request(body: unknown): Promise<number>; close(): Promise<void> }> {
  const secret = randomBytes(24).toString('hex');
  const child = fork(path.join(root, 'packages/server/dist/semantic-layer/main.js'), [], {
    env: { DB_TYPE: 'sqlite', DB_URL: FILE },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    serialization: 'json',
  });
  // Its log, read and dropped, as the server reads it into the deployment's log.
  child.stdout!.on('data', () => undefined);
  child.stderr!.on('data', () => undefined);
  const start: StartMessage = {
    type: 'start',
    pod: 'bench-0',
    host: '127.0.0.1',
    secret,
    version: 'bench',
    build: { id: 1, branch: 'main', commit: '0'.repeat(40) },
    artifact: JSON.stringify(shopArtifact()),
    dataSourcesDir: dataSources,
    ownCluster: null,
    allowSocketSources: false,
    queries: { timeoutMs: 30_000, maxRows: 50_000, maxResultBytes: 50 * 2 ** 20, cacheTtlMs: 0 },
  };
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (m: ListeningMessage) => resolve(m.port));
    child.once('exit', (code) => reject(new Error(`the runtime exited (${code})`)));
    child.send(start);
  });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  return {
    request(body) {
      const payload = JSON.stringify(body);
      return new Promise((resolve, reject) => {
        const req = http.request(
          {
            host: '127.0.0.1',
            port,
            path: '/v1/load',
            method: 'POST',
            agent,
            headers: { [SECRET_HEADER]: secret, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) },
          },
          (res) => {
            res.on('data', () => undefined);
            res.once('end', () => resolve(res.statusCode ?? 0));
          },
        );
        req.on('error', reject);
        req.end(payload);
      });
    },
    async close() {
      agent.destroy();
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.disconnect();
      await exited;
    },
  };
}

async function expectOk(answer: Promise<{ status: number; body: Json }>, what: string): Promise<Json> {
  const { status, body } = await answer;
  if (status < 200 || status > 299) throw new Error(`${what}: ${status} ${JSON.stringify(body)}`);
  return body;
}

/** The shop deployment: its variables name the dataset, its model is the shop; answers its id once its pod runs that. */
async function shopDeployment(api: Client): Promise<number> {
  const id = (await expectOk(api.json('POST', '/build/api/v1/deployments', { name: 'bench query' }), 'creating the deployment')).id as number;
  const build = `/build/api/v1/deployments/${id}`;
  await expectOk(
    api.json('PUT', `/api/v1/deployments/${id}/env-vars`, {
      env_variables: [
        { name: 'DB_TYPE', value: 'sqlite' },
        { name: 'DB_URL', value: FILE },
      ],
    }),
    'setting its variables',
  );
  await expectOk(api.json('POST', `${build}/dev-mode`), 'entering dev mode');
  await expectOk(api.json('PUT', `${build}/data-model/files`, { files: [{ path: 'model/cubes/shop.yml', content: SHOP_MODEL }] }), 'writing the model');
  await expectOk(api.json('POST', `${build}/commit`, { message: 'The shop', exitDevMode: true }), 'committing the model');
  // Running the shop model on the dataset: every order counted.
  await waitFor(async () => {
    const answer = await api.json('POST', `/deployments/${id}/data-api/v1/load`, { query: { measures: ['orders.count'] } });
    return answer.status === 200 && (answer.body.data as Json[])[0]?.['orders.count'] === ORDERS ? true : undefined;
  }, 'the pod running the shop model');
  return id;
}

interface Measured {
  label: string;
  rows: number;
  compileUs: number;
  floor: number;
  /** The runtime alone, called directly. */
  direct: number;
  keyed: number;
  stringify: number;
  bytes: number;
  load: { p50: number; p99: number; rps: number; samples: number };
  /** Throughput: the floor's statements per second back to back, and /v1/load's from CONCURRENCY connections. */
  throughput: { floor: number; load: number };
}

/** Runs `run` back to back for about `ms`: runs per second. */
function backToBack(run: () => unknown, ms: number): number {
  const started = performance.now();
  let done = 0;
  while (performance.now() - started < ms) {
    run();
    done++;
  }
  return (1000 * done) / (performance.now() - started);
}

/**
 * `send` from each of `connections` callers, each sending its next request when its last is
 * answered, for about `ms`, then until every request out is answered: answers per second over that
 * whole time, so the next block starts on an idle server and no request's work goes uncounted.
 */
async function concurrently(send: (connection: number) => Promise<boolean>, connections: number, ms: number): Promise<{ perSecond: number; failed: number }> {
  const started = performance.now();
  let answered = 0;
  let failed = 0;
  await Promise.all(
    Array.from({ length: connections }, async (_, connection) => {
      while (performance.now() - started < ms) {
        if (await send(connection)) answered++;
        else failed++;
      }
    }),
  );
  return { perSecond: (1000 * answered) / (performance.now() - started), failed };
}

async function main(): Promise<void> {
  execFileSync('npx', ['tsc', '-b', 'packages/server'], { cwd: root, stdio: 'inherit' });
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mapi-bench-query-'));
  const dataSources = path.join(dataDir, 'datasources');
  fs.mkdirSync(dataSources);
  const dataset = writeDataset(dataSources);
  log(`bench:query  node=${process.version}  cores=${os.availableParallelism()}  ${os.cpus()[0]?.model ?? ''}`);
  log(
    `dataset: the shop at size, ${CUSTOMERS.toLocaleString('en')} customers, ${ORDERS.toLocaleString('en')} orders over 2024-2025, ${LINE_ITEMS.toLocaleString('en')} line items; SQLite, ${(dataset.bytes / 2 ** 20).toFixed(1)} MiB, written in ${(dataset.ms / 1000).toFixed(1)} s`,
  );

  // In this process: the engine over the same file (for compiling), and the file again as the floor's connection.
  const source = openDataSource({ DB_TYPE: 'sqlite', DB_URL: FILE }, dataSources);
  const engine = new QueryEngine(shopArtifact(), source, LIMITS);
  const floorDb = new Database(path.join(dataSources, FILE), { readonly: true, fileMustExist: true });
  registerSqliteFunctions(floorDb);
  const only = process.env.BENCH_ONLY ? new RegExp(process.env.BENCH_ONLY) : null;
  const compiled = QUERIES.filter((q) => only === null || only.test(q.label)).map(({ label, query }) => {
    const { sql, params, columns } = engine.compile(query);
    return { label, query, sql, columns, params: params.map((p) => (typeof p === 'boolean' ? (p ? 1 : 0) : p)) };
  });

  // 1. Compile time, in µs.
  const compileUs = new Map<string, number>();
  for (const { label, query } of compiled) {
    for (let i = 0; i < COMPILE_WARMUP; i++) engine.compile(query);
    const samples: number[] = [];
    for (let i = 0; i < COMPILES; i++) {
      const at = process.hrtime.bigint();
      engine.compile(query);
      samples.push(Number(process.hrtime.bigint() - at) / 1000);
    }
    compileUs.set(label, median(samples));
  }

  const adminKey = generateApiKey();
  const port = await freePort();
  const env: Record<string, string | undefined> = {
    ...process.env,
    PORT: String(port),
    DATA_DIR: dataDir,
    DATASOURCES_DIR: dataSources,
    ADMIN_API_KEY: adminKey,
    RATE_LIMIT_PER_MINUTE: '0',
    RUNTIME_DRIVER: 'process',
    DATABASE_URL: '',
    QUERY_CACHE_MS: '0',
  };
  for (const name of Object.keys(env)) if (name.startsWith('RUNTIME_') && name !== 'RUNTIME_DRIVER') delete env[name];
  delete env.LOG_LEVEL;
  const profileDir = process.env.BENCH_PROFILE ? path.resolve(process.env.BENCH_PROFILE) : undefined;
  const logFile = fs.openSync(path.join(dataDir, 'server.log'), 'a');
  const server = spawn(
    process.execPath,
    [...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []), path.join(root, 'packages/server/dist/main.js')],
    { env, stdio: ['ignore', logFile, logFile] },
  );
  const windows: Window[] = [];
  let api: Client | undefined;
  let callers: Client[] = [];
  let runtime: Awaited<ReturnType<typeof bareRuntime>> | undefined;
  try {
    await waitFor(async () => (fs.existsSync(path.join(dataDir, 'tls', 'localhost.crt')) ? true : undefined), 'the certificate', 60_000);
    const base = `https://localhost:${port}`;
    const ca = fs.readFileSync(path.join(dataDir, 'tls', 'localhost.crt'), 'utf8');
    api = client(base, ca, adminKey);
    const a = api;
    // One client per connection of the throughput runs, each on its own kept-alive connection.
    const extra = Array.from({ length: CONCURRENCY - 1 }, () => client(base, ca, adminKey));
    callers = [a, ...extra];
    await waitFor(async () => ((await a.request('GET', '/healthz')).status === 200 ? true : undefined), 'the server', 60_000);
    const setupStarted = performance.now();
    const id = await shopDeployment(api);
    log(
      `server: dist/main.js, SQLite, RUNTIME_DRIVER=process; deployment ${id} running the shop model on the dataset ${((performance.now() - setupStarted) / 1000).toFixed(1)} s after its creation`,
    );
    const direct = await bareRuntime(dataSources);
    runtime = direct;
    await sleep(1_000);
    const loadUrl = `/deployments/${id}/data-api/v1/load`;

    // The round trip without a query: the runtime refuses a query that is not an object at once.
    const refused = await a.request('POST', loadUrl, { query: [] });
    if (refused.status !== 400) throw new Error(`a refused query answered ${refused.status} ${refused.text}`);
    const [hopDirect = [], hop = []] = await byTurns([() => direct.request({ query: [] }), () => a.request('POST', loadUrl, { query: [] })], {
      warmupMs: 1_000,
      budgetMs: LOAD_MS,
      max: 2_000,
    });
    // The same caller and deployment read, without the proxy: the management API's deployment.
    const readUrl = `/api/v1/deployments/${id}`;
    const read = await sample(() => a.request('GET', readUrl), { warmupMs: 500, budgetMs: LOAD_MS, max: 2_000 });

    const measured: Measured[] = [];
    for (const { label, query, sql, params, columns } of compiled) {
      // Through the server: checked once against the floor's rows.
      const floorRows = floorDb.prepare(sql).all(sqliteParams(params)) as Array<Record<string, unknown>>;
      const first = await a.json('POST', loadUrl, { query });
      if (first.status !== 200) throw new Error(`${label}: /v1/load answered ${first.status} ${JSON.stringify(first.body)}`);
      const rows = (first.body.data as Json[]).length;
      if (rows !== floorRows.length) throw new Error(`${label}: /v1/load answered ${rows} rows, the floor ${floorRows.length}`);
      // The floor and /v1/load by turns, so that both see the same machine: the floor runs while the server idles.
      const body = { query };
      let failed = 0;
      const from = process.hrtime.bigint();
      const [floor = [], alone = [], load = []] = await byTurns(
        [
          () => floorDb.prepare(sql).all(sqliteParams(params)),
          async () => {
            if ((await direct.request(body)) !== 200) failed++;
          },
          async () => {
            if ((await a.request('POST', loadUrl, body)).status !== 200) failed++;
          },
        ],
        { warmupMs: 500, budgetMs: 2 * LOAD_MS, max: 1_000 },
      );
      windows.push({ label, from, to: process.hrtime.bigint(), requests: load.length });
      if (failed > 0) throw new Error(`${label}: ${failed} requests to /v1/load failed`);
      // Throughput, by turns in blocks: the floor back to back, then /v1/load from CONCURRENCY
      // connections. A block lasts a second, or ten one-at-a-time requests for slower queries.
      for (let i = 0; i < CONCURRENCY; i++) await callers[i]!.request('POST', loadUrl, body);
      const blockMs = Math.max(1_000, 10 * percentile(load, 50));
      const floorRates: number[] = [];
      const loadRates: number[] = [];
      for (let block = 0; block < SECONDS; block++) {
        floorRates.push(backToBack(() => floorDb.prepare(sql).all(sqliteParams(params)), blockMs));
        const loads = await concurrently(
          async (connection) => (await callers[connection]!.request('POST', loadUrl, body)).status === 200,
          CONCURRENCY,
          blockMs,
        );
        if (loads.failed > 0) throw new Error(`${label}: ${loads.failed} requests to /v1/load failed`);
        loadRates.push(loads.perSecond);
      }
      const mean = (values: number[]) => values.reduce((sum, v) => sum + v, 0) / values.length;
      const throughput = { floor: mean(floorRates), load: mean(loadRates) };
      // The runtime's own work beyond execution, measured alone: rows keyed by member, then the answer as JSON.
      let answer: unknown;
      const keyed = await sample(() => (answer = { query, data: rowsOf(floorRows, columns), annotation: annotationOf(columns, []) }), {
        warmupMs: 100,
        budgetMs: 300,
        max: 300,
      });
      let text = '';
      const stringify = await sample(() => (text = JSON.stringify(answer)), { warmupMs: 100, budgetMs: 300, max: 300 });
      measured.push({
        label,
        rows,
        compileUs: compileUs.get(label)!,
        floor: median(floor),
        direct: median(alone),
        keyed: median(keyed),
        stringify: median(stringify),
        bytes: Buffer.byteLength(text),
        load: { p50: percentile(load, 50), p99: percentile(load, 99), rps: (1000 * load.length) / load.reduce((sum, v) => sum + v, 0), samples: load.length },
        throughput,
      });
    }
    const ms = (v: number) => (v < 10 ? v.toFixed(2) : v.toFixed(1));
    log('');
    log(`1-2. compile time, and /v1/load beside the floor: the same compiled SQL run on the file with better-sqlite3 in this process`);
    log(`${''.padEnd(46)}${'throughput (the target)'.padEnd(43)}latency, one request at a time`);
    log(
      [
        'query'.padEnd(28),
        'rows'.padStart(6),
        'compile µs'.padStart(11),
        `floor/s`.padStart(10),
        `load/s c=${CONCURRENCY}`.padStart(12),
        'ratio'.padStart(7),
        '  target'.padEnd(10),
        'floor ms'.padStart(10),
        'load p50'.padStart(9),
        'p99'.padStart(8),
        'ratio'.padStart(7),
      ].join(''),
    );
    const ratioOf = (m: Measured) => m.throughput.floor / Math.max(1e-9, m.throughput.load);
    for (const m of measured) {
      const ratio = ratioOf(m);
      const target = m.rows >= TARGET_ROWS ? 'n/a' : ratio <= TARGET_RATIO ? 'met' : 'missed';
      log(
        [
          m.label.padEnd(28),
          String(m.rows).padStart(6),
          m.compileUs.toFixed(0).padStart(11),
          m.throughput.floor.toFixed(0).padStart(10),
          m.throughput.load.toFixed(0).padStart(12),
          `${ratio.toFixed(2)}x`.padStart(7),
          `  ${target}`.padEnd(10),
          ms(m.floor).padStart(10),
          ms(m.load.p50).padStart(9),
          ms(m.load.p99).padStart(8),
          `${(m.load.p50 / m.floor).toFixed(2)}x`.padStart(7),
        ].join(''),
      );
    }
    const eligible = measured.filter((m) => m.rows < TARGET_ROWS);
    const met = eligible.filter((m) => ratioOf(m) <= TARGET_RATIO).length;
    const latencyMet = eligible.filter((m) => m.load.p50 / m.floor <= TARGET_RATIO).length;
    log(`compile: median of ${COMPILES} QueryEngine.compile() calls in this process.`);
    log(
      `throughput: floor/s, the compiled statement prepared and run back to back on one connection in this process; load/s, POST /deployments/<id>/data-api/v1/load over HTTPS with the admin key from ${CONCURRENCY} kept-alive connections, each sending its next request when its last is answered; by turns in ${SECONDS} blocks of each (1 s, or ten one-at-a-time requests if longer), the last requests of a block answered before the next; ratio: floor/s / load/s.`,
    );
    log(
      `latency: one request at a time on a kept-alive connection, by turns with the floor's statement (floor ms, the server idle), for ~${LOAD_MS / 1000} s per query; ratio: load p50 / floor p50.`,
    );
    log(
      `target: /v1/load throughput within ${TARGET_RATIO}x of the floor's for queries returning fewer than ${TARGET_ROWS.toLocaleString('en')} rows: met by ${met} of ${eligible.length}. (One request at a time, p50 within ${TARGET_RATIO}x: ${latencyMet} of ${eligible.length}.)`,
    );

    log('');
    log('3. where the time goes, per request (p50s in ms, each part measured alone)');
    log(
      `a query the runtime refuses at once (a 400 of ${Buffer.byteLength(refused.text)} bytes): through the server ${ms(median(hop))} ms (p99 ${ms(percentile(hop, 99))}); ` +
        `to the runtime alone ${ms(median(hopDirect))} ms; a deployment read on the management API (the same caller and TLS, no proxy) ${ms(median(read))} ms`,
    );
    log(
      `${'query'.padEnd(28)}${'floor'.padStart(8)}${'compile'.padStart(9)}${'keyed'.padStart(8)}${'stringify'.padStart(11)}${'KiB'.padStart(8)}${'runtime'.padStart(10)}${'− floor'.padStart(9)}${'load p50'.padStart(10)}${'− runtime'.padStart(11)}`,
    );
    for (const m of measured) {
      log(
        `${m.label.padEnd(28)}${ms(m.floor).padStart(8)}${ms(m.compileUs / 1000).padStart(9)}${ms(m.keyed).padStart(8)}${ms(m.stringify).padStart(11)}${(m.bytes / 1024).toFixed(1).padStart(8)}` +
          `${ms(m.direct).padStart(10)}${ms(m.direct - m.floor).padStart(9)}${ms(m.load.p50).padStart(10)}${ms(m.load.p50 - m.direct).padStart(11)}`,
      );
    }
    log(
      'floor: execution (part 2); compile: part 1; keyed: rows keyed by member and the annotation (results.ts) alone; stringify: JSON.stringify of that answer alone;',
    );
    log(
      'runtime: POST /v1/load to the runtime program alone (dist/semantic-layer/main.js started by this process as the server starts it; loopback HTTP with its secret, no TLS),',
    );
    log(
      "by turns with the floor and /v1/load; − floor: the runtime's own work (HTTP, the statement compiled once, rows, JSON, its log line); − runtime: the server's (TLS, the caller, the deployment and its pod, relaying the answer), less the HTTP round trip its IPC hop to the pod saves",
    );
    if (profileDir) {
      server.kill('SIGTERM');
      await new Promise((resolve) => server.once('exit', resolve));
      breakdown(profileDir, server.pid!, windows, log);
    }
  } catch (error) {
    const serverLog = fs.readFileSync(path.join(dataDir, 'server.log'), 'utf8');
    log(`server log (last lines):\n${serverLog.split('\n').slice(-15).join('\n')}`);
    throw error;
  } finally {
    for (const caller of callers) caller.close();
    api?.close();
    await runtime?.close();
    await source.close();
    floorDb.close();
    if (server.exitCode === null && server.signalCode === null) {
      server.kill('SIGTERM');
      await new Promise((resolve) => server.once('exit', resolve));
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
