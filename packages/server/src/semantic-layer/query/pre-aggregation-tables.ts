import { createHash } from 'node:crypto';
import type { ModelArtifact } from '../../model/artifact.js';
import type { DataSource } from '../data-source.js';
import type { SecurityContext } from './access.js';
import { compileQuery } from './compile.js';
import { quote } from './dialect.js';
import { DEFAULT_REFRESH_CHECK_MS, everyMs } from './refresh-keys.js';
import type { ModelIndex } from './members.js';
import {
  matchRollup,
  preAggregationsOf,
  rollupBuildQuery,
  rollupIndex,
  unbuildable,
  withOriginalSql,
  type PreAggregationDef,
  type RollupColumns,
} from './pre-aggregations.js';
import type { Query } from './query.js';
import { Renderer } from './render.js';

/** How long a pre-aggregation lives without a refresh key of its own or its cube's (Cube's default). */
const DEFAULT_EVERY_MS = 3_600_000;
/** How long a replaced table is kept for the queries (and other runtimes) still reading it. */
const DROP_AFTER_MS = 10 * 60_000;
/** The zone the runtime builds every rollup in when it starts (Cube's scheduled refresh default). */
const SCHEDULED_ZONE = 'UTC';

type Status = 'not built' | 'building' | 'ready' | 'failed' | 'unbuildable';

/** One table of a pre-aggregation, in one time zone, as the runtime knows it. */
interface Entry {
  def: PreAggregationDef;
  timezone: string;
  status: Status;
  /** The table queries read, while it is ready (and while a new one is built). */
  table: string | null;
  builtAt: number | null;
  rows: number | null;
  buildMs: number | null;
  error: string | null;
  /** The refresh key's SQL value the table was built at. */
  refreshValue: string | null;
  checkedAt: number;
  building: Promise<void> | null;
  /** The build statement's columns, by member (rollups). */
  columns: RollupColumns | null;
  timer: NodeJS.Timeout | null;
}

/** What `/v1/pre-aggregations` lists of each. */
export interface PreAggregationState {
  id: string;
  cube: string;
  name: string;
  type: string;
  timezone: string;
  status: Status;
  table: string | null;
  builtAt: string | null;
  rows: number | null;
  buildMs: number | null;
  refreshKey: unknown;
  error: string | null;
}

/** What answered from a pre-aggregation, as Cube's `usedPreAggregations` says it. */
export interface UsedPreAggregation {
  id: string;
  table: string;
  builtAt: number;
  refreshValue: string | null;
}

/** A query rewritten to read pre-aggregations. */
export interface Rewritten {
  sql: string;
  params: unknown[];
  used: UsedPreAggregation[];
}

/**
 * The pre-aggregations of one build on one data source: each `rollup` and `original_sql` table
 * built into the source (Cube's `external: false`) in each time zone queries ask for, the first
 * time a query matches it (it waits, as in Cube) and at start in UTC; rebuilt in the background on
 * its `refresh_key` (its own, else its cube's, else every hour), the old table answering until the
 * new one is whole, then dropped after ten minutes. Tables another runtime of the environment built
 * (same statement, fresh by the refresh key's `every`) are used rather than built again.
 */
export class PreAggregationTables {
  readonly #defs: PreAggregationDef[];
  readonly #entries = new Map<string, Entry>();
  /** Rises whenever a table is ready or gone: statements compiled before read other tables. */
  generation = 0;

  constructor(
    private readonly artifact: ModelArtifact,
    private readonly index: ModelIndex,
    private readonly dataSource: DataSource,
    private readonly log: (line: string) => void = () => undefined,
  ) {
    this.#defs = preAggregationsOf(artifact);
  }

  get defined(): boolean {
    return this.#defs.length > 0;
  }

  /** Builds every pre-aggregation in UTC, one at a time, in the background. */
  scheduleAll(): void {
    if (!this.defined) return;
    void (async () => {
      for (const def of this.#defs) await this.#ensure(this.#entry(def, SCHEDULED_ZONE)).catch(() => undefined);
    })();
  }

  /** Every pre-aggregation of the build, in every zone built so far (UTC always). */
  state(): PreAggregationState[] {
    const zones = new Set([SCHEDULED_ZONE, ...[...this.#entries.values()].map((e) => e.timezone)]);
    return this.#defs.flatMap((def) =>
      [...zones].flatMap((timezone) => {
        const e = this.#entries.get(`${def.id}|${timezone}`);
        if (!e && timezone !== SCHEDULED_ZONE) return [];
        return [
          {
            id: def.id,
            cube: def.cube,
            name: def.name,
            type: def.type,
            timezone,
            status: e?.status ?? 'not built',
            table: e?.table ? this.dataSource.preAggregations.qualified(e.table) : null,
            builtAt: e?.builtAt ? new Date(e.builtAt).toISOString() : null,
            rows: e?.rows ?? null,
            buildMs: e?.buildMs ?? null,
            refreshKey: this.#refreshKey(def),
            error: e?.error ?? null,
          },
        ];
      }),
    );
  }

  /**
   * `query` rewritten to read pre-aggregations for `security`: a matching rollup's table, else the
   * tables of `original_sql` pre-aggregations of its cubes; null when none applies (or `wait` is
   * false and none is built yet). A first match waits for its table's build.
   */
  async rewrite(query: Query, security: SecurityContext, wait = true): Promise<Rewritten | null> {
    if (!this.defined) return null;
    const dialect = this.dataSource.dialect;
    const zone = query.timezone;
    const match = matchRollup(this.index, this.#defs, query, security, (def) => {
      const e = this.#entry(def, zone);
      return e.status === 'unbuildable' || e.status === 'failed' ? null : (e.columns ??= this.#columns(def, zone));
    });
    if (match) {
      const entry = this.#entry(match.def, zone);
      const table = await this.#tableOf(entry, wait);
      if (table !== null) {
        const { sql, params } = compileQuery(rollupIndex(match, this.dataSource.preAggregations.qualified(table)), match.query, dialect);
        return { sql, params, used: [this.#used(entry)] };
      }
    }
    // original_sql: every cube of the query whose table is ready reads it in place of its SQL.
    const originals = this.#defs.filter((d) => d.type === 'original_sql');
    if (originals.length === 0) return null;
    const tables = new Map<string, string>();
    const used: UsedPreAggregation[] = [];
    for (const def of originals) {
      if (tables.has(def.cube)) continue;
      const entry = this.#entry(def, SCHEDULED_ZONE);
      // A cube's SQL read as a table: built once for every zone, waited for like a rollup's first build.
      const table = entry.status === 'failed' ? null : await this.#tableOf(entry, wait);
      if (table === null) continue;
      tables.set(def.cube, this.dataSource.preAggregations.qualified(table));
      used.push(this.#used(entry));
    }
    if (tables.size === 0) return null;
    const compiled = compileQuery(withOriginalSql(this.artifact, tables), query, dialect, security);
    const read = new Set(compiled.cubes ?? []);
    const reading = used.filter((u) => read.has(u.id.slice(0, u.id.indexOf('.'))));
    return reading.length === 0 ? null : { sql: compiled.sql, params: compiled.params, used: reading };
  }

  /** A table a query read is gone (another runtime dropped it): build again. */
  lost(used: UsedPreAggregation[]): void {
    for (const u of used) {
      for (const e of this.#entries.values()) {
        if (e.table === u.table && e.def.id === u.id) {
          e.table = null;
          e.status = 'not built';
          this.generation++;
        }
      }
    }
  }

  #used(e: Entry): UsedPreAggregation {
    return { id: e.def.id, table: this.dataSource.preAggregations.qualified(e.table!), builtAt: e.builtAt!, refreshValue: e.refreshValue };
  }

  #entry(def: PreAggregationDef, timezone: string): Entry {
    const key = `${def.id}|${timezone}`;
    let e = this.#entries.get(key);
    if (!e) {
      const why = unbuildable(this.index, def);
      e = {
        def,
        timezone,
        status: why ? 'unbuildable' : 'not built',
        table: null,
        builtAt: null,
        rows: null,
        buildMs: null,
        error: why,
        refreshValue: null,
        checkedAt: 0,
        building: null,
        columns: null,
        timer: null,
      };
      this.#entries.set(key, e);
    }
    return e;
  }

  /** The refresh key that applies: the pre-aggregation's, else its cube's. */
  #refreshKey(def: PreAggregationDef): { every?: string; sql?: string } | undefined {
    return (
      (def.refresh_key as { every?: string; sql?: string } | undefined) ??
      (this.index.cubes.get(def.cube)?.refresh_key as { every?: string; sql?: string } | undefined)
    );
  }

  #everyMs(def: PreAggregationDef): number {
    const key = this.#refreshKey(def);
    return everyMs(key?.every) ?? (key?.sql ? Number.POSITIVE_INFINITY : DEFAULT_EVERY_MS);
  }

  /** The table to read for an entry: built first if it has none (when `wait`), refreshed in the background when stale. */
  async #tableOf(e: Entry, wait: boolean): Promise<string | null> {
    if (e.status === 'unbuildable') return null;
    if (e.table === null) {
      if (!wait) {
        if (e.status === 'not built') void this.#ensure(e).catch(() => undefined);
        return null;
      }
      await this.#ensure(e).catch(() => undefined);
      return e.table;
    }
    void this.#refreshIfStale(e).catch(() => undefined);
    return e.table;
  }

  /** Builds the entry's table unless one is being built (then waits for it). */
  #ensure(e: Entry): Promise<void> {
    if (e.status === 'unbuildable') return Promise.resolve();
    e.building ??= this.#build(e).finally(() => (e.building = null));
    return e.building;
  }

  async #refreshIfStale(e: Entry): Promise<void> {
    if (e.building || e.builtAt === null) return;
    const now = Date.now();
    if (now - e.builtAt >= this.#everyMs(e.def)) return this.#ensure(e);
    const sql = this.#refreshKey(e.def)?.sql;
    if (!sql) return;
    const checkEvery = everyMs(this.#refreshKey(e.def)?.every) ?? DEFAULT_REFRESH_CHECK_MS;
    if (now - e.checkedAt < checkEvery) return;
    e.checkedAt = now;
    if ((await this.#refreshValue(sql)) !== e.refreshValue) return this.#ensure(e);
  }

  async #refreshValue(sql: string): Promise<string> {
    return JSON.stringify(await this.dataSource.query(sql, []));
  }

  /** The build statement of a rollup in a zone, and the column each member fills. */
  #statement(def: PreAggregationDef, timezone: string): { sql: string; params: unknown[]; columns: RollupColumns } {
    if (def.type === 'original_sql') {
      const cube = this.index.cube(def.cube);
      const renderer = new Renderer(this.index, (c) => (c === cube.name ? c : undefined));
      return { sql: `SELECT * FROM ${renderer.table(cube)} AS ${quote(cube.name)}`, params: [], columns: new Map() };
    }
    const compiled = compileQuery(this.index, rollupBuildQuery(def, timezone), this.dataSource.dialect, undefined, { access: false });
    const columns: RollupColumns = new Map(compiled.columns.map((c) => [c.keys[0]!, { alias: c.alias, type: c.member.type }]));
    return { sql: compiled.sql, params: compiled.params, columns };
  }

  #columns(def: PreAggregationDef, timezone: string): RollupColumns | null {
    try {
      return this.#statement(def, timezone).columns;
    } catch {
      return null;
    }
  }

  async #build(e: Entry): Promise<void> {
    const storage = this.dataSource.preAggregations;
    const started = Date.now();
    const previous = e.table;
    e.status = previous ? 'ready' : 'building';
    try {
      const { sql, params, columns } = this.#statement(e.def, e.timezone);
      e.columns = columns;
      const refreshSql = this.#refreshKey(e.def)?.sql;
      const refreshValue = refreshSql ? await this.#refreshValue(refreshSql) : null;
      // Named for what it holds: its pre-aggregation, the statement (and zone) it is built from, when it was built.
      const hash = createHash('sha256')
        .update(JSON.stringify([storage.scope, sql, params, e.timezone, refreshValue]))
        .digest('hex')
        .slice(0, 8);
      const prefix =
        `${e.def.cube}_${e.def.name}`
          .toLowerCase()
          .replace(/[^a-z0-9_]/g, '_')
          .slice(0, 40) + `_${hash}_`;
      const existing = (await storage.list(prefix))
        .map((t) => ({ table: t, at: parseInt(t.slice(prefix.length), 36) }))
        .filter((t) => Number.isFinite(t.at))
        .sort((a, b) => b.at - a.at);
      const fresh = existing.find((t) => t.table !== previous && Date.now() - t.at * 1000 < this.#everyMs(e.def) && t.at * 1000 > (e.builtAt ?? 0));
      let table: string;
      let rows: number | null;
      if (fresh) {
        // Another runtime of this environment built it from the same statement, recently enough.
        table = fresh.table;
        rows = null;
        e.builtAt = fresh.at * 1000;
      } else {
        const at = Math.max(Math.floor(Date.now() / 1000), ...existing.map((t) => t.at + 1));
        table = `${prefix}${at.toString(36)}`;
        rows = await storage.create(table, sql, params);
        e.builtAt = at * 1000;
      }
      e.table = table;
      e.rows = rows;
      e.refreshValue = refreshValue;
      e.checkedAt = Date.now();
      e.buildMs = Date.now() - started;
      e.status = 'ready';
      e.error = null;
      this.generation++;
      this.log(
        `Pre-aggregation ${e.def.id} (${e.timezone}) ${fresh ? 'found' : 'built'}: ${storage.qualified(table)}${rows === null ? '' : `, ${rows} rows`}, ${e.buildMs} ms`,
      );
      // Older tables of this pre-aggregation go once no query (here or in another runtime) can still be reading them.
      const stale = existing.filter((t) => t.table !== table);
      if (stale.length > 0) {
        setTimeout(() => {
          for (const t of stale) if (t.table !== e.table) void storage.drop(t.table).catch(() => undefined);
        }, DROP_AFTER_MS).unref();
      }
      this.#schedule(e);
    } catch (error) {
      // Queries read the source meanwhile (or the table it had); the build is tried again on its refresh key's schedule.
      e.status = previous ? 'ready' : 'failed';
      e.error = `The build failed: ${(error as Error).message}`;
      this.log(`Pre-aggregation ${e.def.id} (${e.timezone}): ${e.error}`);
      this.#schedule(e);
      throw error;
    }
  }

  /** The next refresh: after `every`, or at the next check of its refresh-key SQL. */
  #schedule(e: Entry): void {
    if (e.timer) clearTimeout(e.timer);
    const key = this.#refreshKey(e.def);
    const delay = Math.min(this.#everyMs(e.def), key?.sql ? (everyMs(key.every) ?? DEFAULT_REFRESH_CHECK_MS) : Number.POSITIVE_INFINITY);
    if (!Number.isFinite(delay)) return;
    e.timer = setTimeout(
      () => {
        e.timer = null;
        const next = e.status === 'failed' ? this.#ensure(e) : this.#refreshIfStale(e);
        // A build schedules the next refresh itself; a check that built nothing schedules it here.
        void next.catch(() => undefined).finally(() => e.timer === null && !e.building && this.#schedule(e));
      },
      Math.max(1_000, Math.min(delay, 2_147_483_647)),
    );
    e.timer.unref();
  }
}
