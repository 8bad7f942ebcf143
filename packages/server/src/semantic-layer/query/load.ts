import type { ModelArtifact } from '../../model/artifact.js';
import type { DataSource } from '../data-source.js';
import { NOBODY, type SecurityContext } from './access.js';
import { compileQuery, type CompiledQuery } from './compile.js';
import { QueryError } from './errors.js';
import { ModelIndex } from './members.js';
import { normaliseQuery, type Query, type QueryLimits } from './query.js';
import { ResultCache } from './result-cache.js';
import { cubeQuery, type CubeQuery } from './cube-query.js';
import { DEFAULT_REFRESH_CHECK_MS, everyMs } from './refresh-keys.js';
import { PreAggregationTables, type UsedPreAggregation } from './pre-aggregation-tables.js';
import { annotationOf, rowsOf } from './results.js';
import { translateSql } from './sql-api.js';

export interface EngineLimits extends QueryLimits {
  /** The largest result a query may return, as JSON bytes. */
  maxResultBytes: number;
  /** How long an answer is reused for the same query and caller; 0: never. */
  cacheTtlMs: number;
}

const size = (bytes: number) =>
  bytes >= 1_048_576 ? `${(bytes / 1_048_576).toFixed(1)} MiB` : bytes >= 1024 ? `${(bytes / 1024).toFixed(1)} KiB` : `${bytes} bytes`;

/** How long an answer over a cube with a refresh-key SQL lives at most (it is replaced as soon as the value changes). */
const SQL_REFRESH_KEY_TTL_MS = 3_600_000;

/** Compiled statements an engine keeps (#compiled); the oldest goes first. */
const MAX_COMPILED = 500;

/** A compiled query and the parts of its answer that do not depend on the rows. */
export interface Prepared extends CompiledQuery {
  annotation: ReturnType<typeof annotationOf>;
  /** The normalised query as the answer shows it (Cube's form, cube-query.ts). */
  echo: CubeQuery;
  queryJson: string;
  annotationJson: string;
}

/** What one query answers: its rows (and their JSON text), when they were read, and the count without limit when asked. */
export interface Answer {
  query: Query;
  prepared: Prepared;
  rows: Array<Record<string, unknown>>;
  json: string;
  /** When the rows were read from the data source (the result cache may serve them later). */
  refreshedAt: number;
  total?: number;
  /** The pre-aggregations the rows were read from (Cube's `usedPreAggregations`). */
  usedPreAggregations?: UsedPreAggregation[];
}

type Cached = { rows: Array<Record<string, unknown>>; json: string; at: number; used?: UsedPreAggregation[] };

/** What a runtime is given when its server's configuration says nothing. */
export const DEFAULT_ENGINE_LIMITS: EngineLimits = { defaultLimit: 10_000, maxLimit: 50_000, maxResultBytes: 50 * 1_048_576, cacheTtlMs: 10_000 };

/**
 * `/v1/load`: a JSON query → `{query, data, annotation}`: normalised, compiled against the build's
 * model for the data source's dialect, run with its parameters bound.
 */
export class QueryEngine {
  readonly #index: ModelIndex;
  readonly #cache: ResultCache<Cached>;
  /** The build's pre-aggregations: tables in the source that answer matching queries. */
  readonly preAggregations: PreAggregationTables;
  /** The values of the cubes' refresh-key SQL, by cube and SQL. */
  readonly #refreshValues: ResultCache<{ rows: Array<Record<string, unknown>>; json: string; at: number }>;
  /**
   * Statements compiled before, by the key of the result cache (the normalised query and the
   * caller's context): a dashboard asks the same few queries again and again, and compiling
   * (resolving members, policies, joins, writing the SQL) is most of what a cheap query costs the
   * runtime beyond running it. The engine serves one build, so a new build starts with none.
   * Only successes are kept: a refused query is checked again each time.
   */
  readonly #compiled = new Map<string, Prepared>();

  constructor(
    artifact: ModelArtifact,
    private readonly dataSource: DataSource,
    private readonly limits: EngineLimits,
    /** The clock relative date ranges are resolved against. */
    private readonly now: () => number = Date.now,
    log?: (line: string) => void,
  ) {
    this.#index = new ModelIndex(artifact);
    this.preAggregations = new PreAggregationTables(artifact, this.#index, dataSource, log);
    this.#cache = new ResultCache({ ttlMs: limits.cacheTtlMs, maxEntries: 1_000, maxBytes: 64 * 1_048_576 });
    this.#refreshValues = new ResultCache({ ttlMs: limits.cacheTtlMs, maxEntries: 1_000, maxBytes: 1_048_576 });
  }

  /** A query as the engine runs it: checked, defaults filled in, relative dates resolved at this moment. */
  normalise(input: unknown): Query {
    return normaliseQuery(input, this.limits, this.now());
  }

  /** The SQL a normalised query compiles to for a caller, without running it (`/v1/sql`, `/v1/dry-run`). */
  plan(query: Query, security: SecurityContext = NOBODY): Prepared {
    return this.#prepare(this.#key(query, security), query, security);
  }

  /** The SQL a query compiles to, without running it (tests). */
  compile(input: unknown, security: SecurityContext = NOBODY) {
    const query = this.normalise(input);
    return { query, ...compileQuery(this.#index, query, this.dataSource.dialect, security) };
  }

  /** The model type of a member (`count`, `sum`, `string`, `time`, ...), for describing columns. */
  typeOf(member: string): string | null {
    return this.#index.resolve(member, 'measure-or-dimension', 'columns').type;
  }

  /** One query's answer as objects: the normalised query, the rows, the annotation (and `total` when asked). */
  async load(input: unknown, security: SecurityContext = NOBODY) {
    const answer = await this.answer(this.normalise(input), security);
    return { query: answer.query, data: answer.rows, annotation: answer.prepared.annotation, ...(answer.total === undefined ? {} : { total: answer.total }) };
  }

  // Keyed by the normalised query and the whole context (what compiling reads of the caller): two
  // callers share a statement or an answer only when the policies see them alike.
  #key(query: Query, security: SecurityContext): string {
    return JSON.stringify([query, security.groups, security.userAttributes, security.securityContext]);
  }

  /**
   * Runs a normalised query as the caller: rows from the result cache or the data source (a
   * `renewQuery` reads past the cache), and with `total` the count of rows the query has without
   * its limit and offset, run beside it.
   */
  async answer(query: Query, security: SecurityContext = NOBODY): Promise<Answer> {
    // Relative date ranges were resolved when the query was normalised: the key holds the dates they stand for.
    const compiledKey = this.#key(query, security);
    const prepared = this.#prepare(compiledKey, query, security);
    // The cubes' refresh keys: an answer lives as long as their `every` says, and one whose
    // refresh-key SQL answers something new is not reused (Cube's refresh_key).
    const refresh = await this.#refreshOf(prepared.cubes ?? []);
    const key = refresh.values.length > 0 ? `${compiledKey}|${JSON.stringify(refresh.values)}` : compiledKey;
    const { columns } = prepared;
    const read = async (): Promise<Cached> => {
      // A pre-aggregation that matches answers instead of the source (its first build is waited for).
      const rewritten = this.preAggregations.defined ? await this.preAggregations.rewrite(query, security) : null;
      let raw: Array<Record<string, unknown>>;
      let used: UsedPreAggregation[] | undefined;
      if (rewritten) {
        try {
          raw = await this.dataSource.query(rewritten.sql, rewritten.params);
          used = rewritten.used;
        } catch {
          // Its table is gone (dropped by another runtime of the environment): the source answers, the table is built again.
          this.preAggregations.lost(rewritten.used);
          raw = await this.dataSource.query(prepared.sql, prepared.params);
        }
      } else {
        raw = await this.dataSource.query(prepared.sql, prepared.params);
      }
      const rows = rowsOf(raw, columns);
      const json = JSON.stringify(rows);
      // UTF-16 units bound the UTF-8 size from below: count the bytes only near the limit.
      const bytes = json.length * 3 <= this.limits.maxResultBytes ? json.length : Buffer.byteLength(json);
      if (bytes > this.limits.maxResultBytes) {
        throw new QueryError(
          `The result is ${size(bytes)}, more than the ${size(this.limits.maxResultBytes)} a query may return: add filters, fewer dimensions or a limit.`,
        );
      }
      return { rows, json, at: Date.now(), ...(used ? { used } : {}) };
    };
    // The rows and their text are both held.
    const sizeOf = (value: { json: string }) => 2 * value.json.length;
    const counted = query.total ? this.#total(key, query, security, refresh.ttlMs) : undefined;
    // Both are awaited before either failure is reported: a rejected count is never left unhandled.
    const [data, total] = await Promise.all([this.#cache.get(key, read, sizeOf, query.renewQuery, refresh.ttlMs), counted]);
    return {
      query,
      prepared,
      rows: data.rows,
      json: data.json,
      refreshedAt: data.at,
      ...(total === undefined ? {} : { total }),
      ...(data.used ? { usedPreAggregations: data.used } : {}),
    };
  }

  /**
   * What the refresh keys of `cubes` say of an answer over them: how long it lives (the shortest
   * `every`; undefined: QUERY_CACHE_MS), and the current values of their refresh-key SQL, each
   * asked again at most once per its `every` (10 s without one).
   */
  async #refreshOf(cubes: string[]): Promise<{ ttlMs: number | undefined; values: unknown[] }> {
    let ttlMs: number | undefined;
    const values: unknown[] = [];
    // Nothing is kept (QUERY_CACHE_MS=0): nothing to check.
    if (this.limits.cacheTtlMs <= 0) return { ttlMs, values };
    for (const name of cubes) {
      const refreshKey = this.#index.cubes.get(name)?.refresh_key as { every?: string; sql?: string } | undefined;
      if (!refreshKey) continue;
      const every = everyMs(refreshKey.every);
      if (every !== undefined) ttlMs = Math.min(ttlMs ?? every, every);
      if (refreshKey.sql) {
        const sql = refreshKey.sql;
        const checked = await this.#refreshValues.get(
          `${name}|${sql}`,
          async () => ({ rows: await this.dataSource.query(sql, []), json: '', at: Date.now() }),
          () => 256,
          false,
          every ?? DEFAULT_REFRESH_CHECK_MS,
        );
        values.push(checked.rows);
        // Answers then live until the value changes (bounded by the cache's size), unless `every` says less.
        ttlMs ??= SQL_REFRESH_KEY_TTL_MS;
      }
    }
    return { ttlMs, values };
  }

  /** The rows a query has without its limit and offset (Cube's `total`), cached like an answer. */
  async #total(key: string, query: Query, security: SecurityContext, ttlMs: number | undefined): Promise<number> {
    const { sql, params } = compileQuery(this.#index, query, this.dataSource.dialect, security, { total: true });
    const read = async () => {
      const [row] = await this.dataSource.query(sql, params);
      return { rows: [{ total: Number(row?.total_count ?? 0) }], json: '', at: Date.now() };
    };
    const data = await this.#cache.get(`total:${key}`, read, () => 64, query.renewQuery, ttlMs);
    return data.rows[0]!.total as number;
  }

  /**
   * `compileQuery` of a normalised query with what the answer says around its rows (the query and
   * the annotation, as objects and as JSON), or the same from an earlier request with this key;
   * shared between requests, so read-only.
   */
  #prepare(key: string, query: Query, security: SecurityContext): Prepared {
    const known = this.#compiled.get(key);
    if (known) return known;
    const compiled = compileQuery(this.#index, query, this.dataSource.dialect, security);
    const segments = query.segments.map((s) => this.#index.resolve(s, 'segment', 'segments'));
    const annotation = annotationOf(compiled.columns, segments);
    const echo = cubeQuery(query);
    const prepared = { ...compiled, annotation, echo, queryJson: JSON.stringify(echo), annotationJson: JSON.stringify(annotation) };
    if (this.#compiled.size >= MAX_COMPILED) this.#compiled.delete(this.#compiled.keys().next().value as string);
    this.#compiled.set(key, prepared);
    return prepared;
  }

  /**
   * `/v1/sql`: one SELECT over a cube or a view, translated into a query (sql-api.ts) and loaded as
   * above; rows keyed by the SELECT's column names, `annotation.columns` saying what each one is.
   */
  async sql(text: unknown, security: SecurityContext = NOBODY) {
    if (typeof text !== 'string') throw new QueryError('The body must be {"query": "<SQL>"}, the SQL as a string.');
    const { query: input, columns } = translateSql(text, this.#index);
    const { query, data, annotation } = await this.load(input, security);
    const info = (key: string) => annotation.measures[key] ?? annotation.dimensions[key] ?? annotation.timeDimensions[key];
    return {
      query,
      data: data.map((row) => Object.fromEntries(columns.map((c) => [c.name, row[c.key]]))),
      annotation: { ...annotation, columns: Object.fromEntries(columns.map((c) => [c.name, { member: c.key, kind: c.kind, ...info(c.key) }])) },
    };
  }
}
