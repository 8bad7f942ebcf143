import { AsyncLocalStorage } from 'node:async_hooks';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { QueryLog, Store } from '../db/database.js';
import { observeLockWaits } from '../db/transactions.js';

/** What a request carries while it runs, so statements can be attributed to it. */
export interface StatementCounter {
  /** Statements run so far; null when the request is not in the sample (see `startRequest`). */
  dbStatements: number | null;
}

/** Requests a second whose statements are counted, by default; below that rate, every one. */
export const STATEMENT_SAMPLES_PER_SECOND = 100;

/** The label every request that matched no route gets, so clients cannot mint new series. */
export const UNMATCHED_ROUTE = 'unmatched';

interface Series {
  labels: { method: string; route: string; status: string };
  /** Requests answered; copied into the counter at scrape time, so a request pays one increment. */
  count: number;
  duration: { observe(value: number): void };
}

const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const STATEMENT_BUCKETS = [0, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144];
const LOCK_WAIT_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * The process's Prometheus metrics, in a registry of their own (never prom-client's global one),
 * so each app instance counts alone. Served by metrics/listener.ts, never on the API port: they
 * cover every tenant. Built before the store (its `queryLog` goes to openStore), attached to the
 * store with `observeStore`, and to the HTTP stack by metrics/http-hooks.ts.
 *
 * Other services add what they measure with `collectGauge` (a jobs service: its queue depth), or
 * with any prom-client metric created with `registers: [metrics.registry]`.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly #duration: Histogram<'method' | 'route' | 'status'>;
  readonly #statements: Histogram;
  readonly #lockWait: Histogram;
  /** route -> method -> status -> series, so a request allocates no label object. */
  readonly #series = new Map<string, Map<string, Map<number, Series>>>();
  readonly #allSeries: Series[] = [];
  readonly #current = new AsyncLocalStorage<StatementCounter>();
  readonly #samplesPerSecond: number;
  #sampleSecond = 0;
  #sampledThisSecond = 0;
  #sampledInFlight = 0;

  constructor(options: { defaultMetrics?: boolean; statementSamplesPerSecond?: number } = {}) {
    const registers = [this.registry];
    this.#samplesPerSecond = options.statementSamplesPerSecond ?? STATEMENT_SAMPLES_PER_SECOND;
    const series = this.#allSeries;
    new Counter({
      name: 'mapi_http_requests_total',
      help: 'HTTP requests answered, by method, route template and status.',
      labelNames: ['method', 'route', 'status'],
      registers,
      collect() {
        this.reset();
        for (const s of series) this.inc(s.labels, s.count);
      },
    });
    this.#duration = new Histogram({
      name: 'mapi_http_request_duration_seconds',
      help: 'Time from a request reaching the router to its response finishing, by method, route template and status.',
      labelNames: ['method', 'route', 'status'],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.#statements = new Histogram({
      name: 'mapi_db_statements_per_request',
      help: `Database statements a request ran, authentication included; up to ${this.#samplesPerSecond} requests a second are counted.`,
      buckets: STATEMENT_BUCKETS,
      registers,
    });
    this.#lockWait = new Histogram({
      name: 'mapi_lock_wait_seconds',
      help: 'Time a serialised transaction waited for its locks: PostgreSQL advisory locks (and a pooled connection), SQLite BEGIN IMMEDIATE.',
      buckets: LOCK_WAIT_BUCKETS,
      registers,
    });
    // Event-loop lag, memory, CPU, handles, garbage collection.
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry, prefix: 'mapi_' });
  }

  /** Kysely's log hook for the store: counts each statement against the request running it, if any. */
  readonly queryLog: QueryLog = () => {
    const request = this.#current.getStore();
    if (request !== undefined && request.dbStatements !== null) request.dbStatements++;
  };

  /**
   * Runs `next`, the rest of a request's handling, and counts its statements when the request is in
   * the sample. Attributing statements needs async context tracking, which on Node 20 costs every
   * promise of the process while it is on (about a fifth of a read's CPU): so only the first
   * `statementSamplesPerSecond` requests of each second are tracked, and tracking is switched off
   * whenever none of them is in flight. `response` closes when the request is over, aborted or not.
   */
  startRequest(request: StatementCounter, response: NodeJS.EventEmitter, next: () => void): void {
    const second = Math.floor(performance.now() / 1000);
    if (second !== this.#sampleSecond) {
      this.#sampleSecond = second;
      this.#sampledThisSecond = 0;
    }
    if (this.#sampledThisSecond >= this.#samplesPerSecond) {
      next();
      return;
    }
    this.#sampledThisSecond++;
    this.#sampledInFlight++;
    request.dbStatements = 0;
    response.once('close', this.#sampleOver);
    this.#current.run(request, next);
  }

  readonly #sampleOver = () => {
    // Contexts left on timers or sockets made by finished requests come back when tracking does;
    // they only count against requests already observed.
    if (--this.#sampledInFlight === 0) this.#current.disable();
  };

  /** Lock waits of the store's serialised transactions, and its connection pool on PostgreSQL. */
  observeStore(store: Store): void {
    observeLockWaits(store, (seconds) => this.#lockWait.observe(seconds));
    const pool = store.pool;
    if (pool === undefined) return;
    this.collectGauge('mapi_db_pool_connections', 'PostgreSQL connections the pool holds open, idle or in use.', () => pool.totalCount);
    this.collectGauge('mapi_db_pool_idle_connections', 'PostgreSQL connections idle in the pool.', () => pool.idleCount);
    this.collectGauge('mapi_db_pool_waiting_clients', 'Callers waiting for a PostgreSQL connection from the pool.', () => pool.waitingCount);
  }

  /** A gauge read at scrape time, such as a queue's depth. */
  collectGauge(name: string, help: string, read: () => number): void {
    new Gauge({
      name,
      help,
      registers: [this.registry],
      collect() {
        this.set(read());
      },
    });
  }

  /** One answered request. `route` is the route template, undefined when no route matched; `statements` null outside the sample. */
  observeRequest(method: string, route: string | undefined, status: number, seconds: number, statements: number | null): void {
    const series = this.#seriesFor(method, route ?? UNMATCHED_ROUTE, status);
    series.count++;
    series.duration.observe(seconds);
    if (statements !== null) this.#statements.observe(statements);
  }

  #seriesFor(method: string, route: string, status: number): Series {
    let byMethod = this.#series.get(route);
    if (byMethod === undefined) this.#series.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (byStatus === undefined) byMethod.set(method, (byStatus = new Map()));
    let series = byStatus.get(status);
    if (series === undefined) {
      const labels = { method, route, status: String(status) };
      series = { labels, count: 0, duration: this.#duration.labels(labels) };
      byStatus.set(status, series);
      this.#allSeries.push(series);
    }
    return series;
  }
}
