import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { OWN_CLUSTER_MESSAGE, readClusterIdentity, sameCluster, type ClusterIdentity } from './cluster-identity.js';
import { onlyPassword, pgTarget, pinnedSettings } from './pg-target.js';
import { postgresDialect, quote, sqliteDialect, sqliteParams, type SqlDialect } from './query/dialect.js';
import { registerSqliteFunctions } from './query/sqlite-functions.js';
import type { StatementWatchdog } from './statement-watchdog.js';

/**
 * The data source a runtime queries, chosen by the environment's variables:
 * - `DB_TYPE` unset: the sample dataset, in memory (the starter experience needs no outside service);
 * - `DB_TYPE=sqlite`: the SQLite file `DB_URL`, a name inside the data-sources directory
 *   (DATASOURCES_DIR), opened read-only;
 * - `DB_TYPE=postgres`: `DB_URL` a `postgres://user@host:port/database` URL without a password,
 *   and the password in `DB_PASSWORD` (a name whose value reads back masked); never a database of
 *   the server's own PostgreSQL cluster.
 * Anything else stops the runtime at start, with the reason in its log.
 */
export interface DataSource {
  /** What it is, for the log: the variables it comes from, never their values. */
  describe: string;
  dialect: SqlDialect;
  /** Runs one compiled statement with its parameters bound; rows keyed by column name. */
  query(sql: string, params: unknown[]): Promise<Array<Record<string, unknown>>>;
  /** Throws when the data source cannot answer (the runtime is then not ready). */
  check(): Promise<void>;
  /** PostgreSQL: compares the source with the server's own cluster, once; throws OwnClusterRefused when they are one. */
  verify?(): Promise<void>;
  /** Where pre-aggregation tables are built (query/pre-aggregation-tables.ts). */
  preAggregations: PreAggregationStorage;
  close(): Promise<void>;
}

/**
 * Pre-aggregation tables beside a source's own: on PostgreSQL a schema of the source database
 * (`PRE_AGGREGATIONS_SCHEMA`, default `prod_pre_aggregations`, as Cube names it), which several
 * runtimes of one environment share; on SQLite, whose files are opened read-only, a database file
 * of the runtime's own attached to the source's connection as `pre_aggregations`.
 */
export interface PreAggregationStorage {
  /** What tells this source from another whose statements read alike (in table names' hashes): its URL or file. */
  scope: string;
  /** A table's name as statements over the source write it. */
  qualified(table: string): string;
  /** Builds `table` from a statement's rows, whole or not at all; answers its row count. */
  create(table: string, sql: string, params: unknown[]): Promise<number>;
  /** The tables whose names begin with `prefix`. */
  list(prefix: string): Promise<string[]>;
  drop(table: string): Promise<void>;
}

const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** The data source is the server's own PostgreSQL cluster: the runtime must stop, not serve. */
export class OwnClusterRefused extends Error {}

/**
 * What a PostgreSQL data source is held to: the server's own cluster (null: the server has no
 * PostgreSQL database), whether DB_URL may name sockets or set host=/hostaddr=
 * (DATASOURCES_ALLOW_SOCKETS), and what to do once the source turns out to be the server's own.
 */
export interface PostgresGuard {
  ownCluster: ClusterIdentity | null;
  allowSockets: boolean;
  refused(error: OwnClusterRefused): void;
}

const NO_GUARD: PostgresGuard = { ownCluster: null, allowSockets: false, refused: () => undefined };

export const SAMPLE_ROWS = [
  { id: 1, status: 'completed', amount: 10 },
  { id: 2, status: 'processing', amount: 20 },
  { id: 3, status: 'completed', amount: 30 },
];

/**
 * `statementTimeoutMs` is PostgreSQL's `statement_timeout`. A SQLite statement cannot be
 * interrupted; `watchdog`, where given (the runtime gives one), stops the runtime when one runs
 * longer than that (statement-watchdog.ts). `guard` is what a PostgreSQL source is held to: the
 * runtime gives the server's own cluster; tests that query a source directly give none.
 */
export function openDataSource(
  env: NodeJS.ProcessEnv,
  dataSourcesDir: string | null,
  statementTimeoutMs = 30_000,
  watchdog?: StatementWatchdog,
  guard: PostgresGuard = NO_GUARD,
): DataSource {
  const type = env.DB_TYPE;
  if (type === undefined || type === '') return sample(watchdog);
  if (type === 'sqlite') return sqliteFile(env.DB_URL, dataSourcesDir, watchdog);
  if (type === 'postgres') {
    const schema = env.PRE_AGGREGATIONS_SCHEMA || 'prod_pre_aggregations';
    if (!SCHEMA_NAME.test(schema))
      throw new Error('PRE_AGGREGATIONS_SCHEMA must be a schema name: letters, digits and _, not starting with a digit, at most 63.');
    return postgres(env.DB_URL, env.DB_PASSWORD, statementTimeoutMs, guard, schema);
  }
  throw new Error('DB_TYPE names no data source type: set it to sqlite or postgres, or remove it for the sample dataset.');
}

function sample(watchdog: StatementWatchdog | undefined): DataSource {
  const db = new Database(':memory:');
  // The starter model's orders as a table too, for a first model of one's own.
  db.exec('CREATE TABLE starter_orders (id INTEGER PRIMARY KEY, status TEXT NOT NULL, amount INTEGER NOT NULL)');
  const insert = db.prepare('INSERT INTO starter_orders (id, status, amount) VALUES (@id, @status, @amount)');
  for (const row of SAMPLE_ROWS) insert.run(row);
  return sqliteSource(db, `the sample SQLite dataset (starter_orders, ${SAMPLE_ROWS.length} rows)`, watchdog);
}

/** Only a file inside the data-sources directory: never the server's own database, or any other file on the host. */
function sqliteFile(name: string | undefined, dir: string | null, watchdog: StatementWatchdog | undefined): DataSource {
  if (!name) throw new Error('DB_TYPE=sqlite needs DB_URL, the name of a SQLite file in the data-sources directory.');
  if (dir === null) throw new Error('SQLite data sources are off on this server: it has no data-sources directory (DATASOURCES_DIR).');
  // Real paths on both sides: a symbolic link inside the directory to a file outside it is refused too.
  let root: string;
  let file: string;
  try {
    root = fs.realpathSync(dir);
    file = fs.realpathSync(path.resolve(dir, name));
  } catch {
    throw new Error('DB_URL names no file in the data-sources directory.');
  }
  const inside = path.relative(root, file);
  if (inside === '' || inside.startsWith('..') || path.isAbsolute(inside)) throw new Error('DB_URL names a file outside the data-sources directory.');
  const db = new Database(file, { readonly: true, fileMustExist: true });
  return sqliteSource(db, 'SQLite, the file DB_URL names in the data-sources directory', watchdog);
}

function sqliteSource(db: Database.Database, describe: string, watchdog: StatementWatchdog | undefined): DataSource {
  registerSqliteFunctions(db);
  const guarded = watchdog ?? { run: <T>(statement: () => T) => statement() };
  const run = (sql: string, params: unknown[]) =>
    guarded.run(() => {
      const statement = db.prepare(sql);
      return {
        rows: (params.length === 0 ? statement.all() : statement.all(sqliteParams(params))) as Array<Record<string, unknown>>,
        columns: statement.columns().map((c) => c.name),
      };
    });
  // Pre-aggregations: a file of the runtime's own, written through a connection of its own (the
  // source's is read-only), attached to the source's connection, where queries read it.
  let tables: Database.Database | null = null;
  const file = path.join(os.tmpdir(), `pre-aggregations-${process.pid}-${randomUUID()}.sqlite`);
  const tablesDb = () => {
    if (tables === null) {
      tables = new Database(file);
      tables.pragma('journal_mode = WAL');
      db.prepare('ATTACH DATABASE ? AS pre_aggregations').run(file);
    }
    return tables;
  };
  return {
    describe,
    dialect: sqliteDialect,
    async query(sql, params) {
      return run(sql, params).rows;
    },
    async check() {
      db.prepare('SELECT 1').get();
    },
    preAggregations: {
      scope: describe,
      qualified: (table) => `${quote('pre_aggregations')}.${quote(table)}`,
      async create(table, sql, params) {
        const target = tablesDb();
        const { rows, columns } = run(sql, params);
        target.transaction(() => {
          target.exec(`CREATE TABLE ${quote(table)} (${columns.map((c) => quote(c)).join(', ')})`);
          const insert = target.prepare(`INSERT INTO ${quote(table)} VALUES (${columns.map(() => '?').join(', ')})`);
          for (const row of rows) insert.run(columns.map((c) => (typeof row[c] === 'boolean' ? Number(row[c]) : row[c])));
        })();
        return rows.length;
      },
      async list(prefix) {
        const names = tablesDb().prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[];
        return names.filter((name) => name.startsWith(prefix));
      },
      async drop(table) {
        tablesDb().exec(`DROP TABLE IF EXISTS ${quote(table)}`);
      },
    },
    async close() {
      db.close();
      if (tables !== null) {
        (tables as Database.Database).close();
        for (const suffix of ['', '-wal', '-shm']) fs.rmSync(`${file}${suffix}`, { force: true });
      }
    },
  };
}

/**
 * PostgreSQL. No statement reaches the source before it is known not to be the server's own
 * cluster (`guard.ownCluster`; cluster-identity.ts): `check` and `query` wait for that comparison,
 * made once over the pool, whose connections all go to the address DB_URL's host resolved to
 * (pg-target.ts). A source that does not answer yet is not ready and is compared once it does; one
 * that is the server's own is reported to `guard.refused` (the runtime stops) and never queried.
 */
function postgres(
  url: string | undefined,
  password: string | undefined,
  statementTimeoutMs: number,
  guard: PostgresGuard,
  schema = 'prod_pre_aggregations',
): DataSource {
  const target = pgTarget(url, guard.allowSockets);
  let pool: Promise<pg.Pool> | null = null;
  const poolOf = () =>
    (pool ??= pinnedSettings(target).then((settings) => {
      const created = new pg.Pool({
        ...settings,
        password: onlyPassword(password),
        max: 4,
        connectionTimeoutMillis: 2_000,
        statement_timeout: statementTimeoutMs,
      });
      // An idle client's error (the server restarted) must not crash the runtime; the next check reports it.
      created.on('error', () => undefined);
      return created;
    })).catch((error: Error) => {
      // A name that did not resolve is tried again by the next check.
      pool = null;
      throw error;
    });
  let verified: Promise<pg.Pool> | null = null;
  const verifiedPool = () =>
    (verified ??= (async () => {
      const ready = await poolOf();
      const own = guard.ownCluster;
      if (own !== null && sameCluster(own, await readClusterIdentity(ready))) {
        const refusal = new OwnClusterRefused(OWN_CLUSTER_MESSAGE);
        guard.refused(refusal);
        throw refusal;
      }
      return ready;
    })()).catch((error: Error) => {
      if (!(error instanceof OwnClusterRefused)) verified = null;
      throw error;
    });
  return {
    describe: `PostgreSQL at DB_URL${password === undefined ? '' : ', with the password in DB_PASSWORD'}`,
    dialect: postgresDialect,
    async query(sql, params) {
      return (await (await verifiedPool()).query(sql, params)).rows as Array<Record<string, unknown>>;
    },
    async check() {
      await (await verifiedPool()).query('SELECT 1');
    },
    verify: async () => {
      await verifiedPool();
    },
    preAggregations: {
      // Two sources that differ only in their search_path write alike statements.
      scope: `${url ?? ''}|${schema}`,
      qualified: (table) => `${quote(schema)}.${quote(table)}`,
      async create(table, sql, params) {
        const pool = await verifiedPool();
        // CREATE TABLE AS takes no parameters: the build statement's (its LIMIT, values the model
        // writes) are written in as literals. None comes from a caller: a build reads no query.
        const text = sql.replace(/\$(\d+)\b/g, (_, n: string) => literal(params[Number(n) - 1]));
        await pool.query(`CREATE SCHEMA IF NOT EXISTS ${quote(schema)}`);
        // One statement: the table appears whole, or not at all.
        await pool.query(`CREATE TABLE ${quote(schema)}.${quote(table)} AS ${text}`);
        const [row] = (await pool.query(`SELECT count(*) AS n FROM ${quote(schema)}.${quote(table)}`)).rows as Array<{ n: string }>;
        return Number(row?.n ?? 0);
      },
      async list(prefix) {
        const { rows } = await (
          await verifiedPool()
        ).query('SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND left(table_name, length($2)) = $2', [schema, prefix]);
        return (rows as Array<{ table_name: string }>).map((r) => r.table_name);
      },
      async drop(table) {
        await (await verifiedPool()).query(`DROP TABLE IF EXISTS ${quote(schema)}.${quote(table)}`);
      },
    },
    async close() {
      if (pool !== null) await (await pool).end();
    },
  };
}

/** A value as a PostgreSQL literal. */
function literal(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error('A build parameter is not a finite number.');
    return String(value);
  }
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  if (typeof value === 'bigint') return value.toString();
  return pg.escapeLiteral(value instanceof Date ? value.toISOString() : typeof value === 'string' ? value : JSON.stringify(value));
}
