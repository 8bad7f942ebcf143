import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import {
  CompiledQuery,
  Kysely,
  Migrator,
  PostgresDialect,
  sql,
  SqliteAdapter,
  SqliteDialect,
  SqliteDriver,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type LogEvent,
  type SqliteDialectConfig,
  type TableMetadata,
} from 'kysely';
import { migrationProvider } from './migrations/index.js';
import { readDirectly, statementName } from './prepared.js';
import type { Dialect } from './dialect.js';
import type { Database, Db } from './tables.js';
import { ensurePrivateFile } from '../shared/private-files.js';

export type { Dialect };

export interface Store {
  db: Db;
  dialect: Dialect;
  /** PostgreSQL's connection pool, as the metrics read it; absent on SQLite. */
  pool?: Pick<pg.Pool, 'totalCount' | 'idleCount' | 'waitingCount'>;
  close(): Promise<void>;
}

/** Called with every statement the store runs (Kysely's log hook): for query logs and query counts. */
export type QueryLog = (event: LogEvent) => void;

export type StoreOptions =
  { dialect: 'sqlite'; file: string; log?: QueryLog } | { dialect: 'postgres'; url: string; schema?: string; poolSize?: number; log?: QueryLog };

/**
 * SQLite's plain BEGIN takes its write lock lazily, so two processes that both read and then write
 * deadlock into SQLITE_BUSY. BEGIN IMMEDIATE takes the write lock up front: every transaction
 * that may write is serialised across processes, which is what the tree's invariants need.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

/**
 * Kysely's SQLite adapter takes no migration lock (it assumes one process) and runs migrations
 * outside a transaction, so two processes starting on a fresh file both ran the first migration
 * ("table already exists"). SQLite's DDL is transactional: running the migrations in one
 * (IMMEDIATE) transaction serialises them across processes and rolls a failed one back whole.
 */
class TransactionalDdlSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}

class ImmediateSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;
  constructor(config: SqliteDialectConfig) {
    super(config);
    this.#config = config;
  }
  override createDriver() {
    return new ImmediateSqliteDriver(this.#config);
  }
  override createAdapter() {
    return new TransactionalDdlSqliteAdapter();
  }
}

/**
 * Kysely's migrator asks whether its tables exist through the dialect's introspector, whose
 * PostgreSQL query evaluates `has_schema_privilege` on the name of every schema of the database:
 * a schema dropped by someone else while it ran failed the migration with `schema "…" does not
 * exist`. The store only ever needs its own schema's tables (the search path's first schema), and
 * only their names, read from the catalogue without a lookup by name.
 */
class OwnSchemaPostgresIntrospector implements DatabaseIntrospector {
  constructor(private readonly db: Kysely<any>) {}

  async getSchemas() {
    const { rows } = await sql<{ name: string }>`select nspname as name from pg_catalog.pg_namespace`.execute(this.db);
    return rows;
  }

  async getTables(): Promise<TableMetadata[]> {
    const { rows } = await sql<{ name: string; schema: string; kind: string }>`
      select c.relname as name, n.nspname as schema, c.relkind as kind
        from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
       where n.nspname = current_schema() and c.relkind in ('r', 'p', 'v', 'm', 'f')`.execute(this.db);
    return rows.map((r) => ({ name: r.name, schema: r.schema, isView: r.kind === 'v' || r.kind === 'm', columns: [] }));
  }

  async getMetadata() {
    return { tables: await this.getTables() };
  }
}

class OwnSchemaPostgresDialect extends PostgresDialect {
  override createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new OwnSchemaPostgresIntrospector(db);
  }
}

// PostgreSQL returns bigint (OID 20) as a string; ids and counts here stay far below 2^53.
const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === 20) return (value: string) => Number.parseInt(value, 10);
    return pg.types.getTypeParser(oid, format);
  },
};

/**
 * Kysely's SQLite driver prepares every statement anew, which was a quarter of the time of a
 * move. Statements are keyed by their SQL text (parameters are bound per run), so the few dozen
 * shapes the service issues are compiled once; the bound keeps IN-lists of many lengths in check.
 */
function cachePreparedStatements(sqlite: SQLite.Database, limit = 500): void {
  const prepare = sqlite.prepare.bind(sqlite);
  const cache = new Map<string, SQLite.Statement>();
  sqlite.prepare = ((source: string) => {
    let statement = cache.get(source);
    if (statement) {
      // Most recently used last, so the oldest entry is the first to go.
      cache.delete(source);
    } else {
      statement = prepare(source);
      if (cache.size >= limit) cache.delete(cache.keys().next().value as string);
    }
    cache.set(source, statement);
    return statement;
  }) as typeof sqlite.prepare;
}

/**
 * Turning a fresh file to WAL needs the file to itself, and SQLite answers SQLITE_BUSY at once,
 * without its busy handler, when another process opening the same new file holds it at that
 * moment (two servers or admin commands started together). Retried for up to ten seconds, like
 * the busy timeout everything else waits for.
 */
function switchToWal(sqlite: SQLite.Database): void {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let attempt = 0; ; attempt++) {
    try {
      sqlite.pragma('journal_mode = WAL');
      return;
    } catch (error) {
      if ((error as { code?: string }).code !== 'SQLITE_BUSY' || attempt >= 200) throw error;
      Atomics.wait(pause, 0, 0, 50);
    }
  }
}

export function openStore(options: StoreOptions): Store {
  if (options.dialect === 'sqlite') {
    fs.mkdirSync(path.dirname(options.file), { recursive: true });
    if (options.file !== ':memory:') ensurePrivateFile(options.file, [`${options.file}-wal`, `${options.file}-shm`]);
    const sqlite = new SQLite(options.file);
    // First: another process holding the lock makes us wait rather than fail at once, and
    // switching a fresh file to WAL needs that lock too.
    sqlite.pragma('busy_timeout = 10000');
    switchToWal(sqlite);
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma('foreign_keys = ON');
    // Recursive queries (folder paths, visibility) build temporary tables; on disk, each one
    // opened a file and cost about four times as much.
    sqlite.pragma('temp_store = memory');
    // SQLite's own lower() folds ASCII only, while the service folds names and emails with
    // JavaScript's Unicode-aware toLowerCase() (and PostgreSQL's lower() is Unicode-aware too):
    // "Émile@x" and "émile@x" must be one email in every store. Deterministic, so the expression
    // indexes on lower() may use it; migration 0004 rebuilds them for files made before.
    sqlite.function('lower', { deterministic: true }, (s: unknown) => (typeof s === 'string' ? s.toLowerCase() : s));
    cachePreparedStatements(sqlite);
    const db = new Kysely<Database>({ dialect: new ImmediateSqliteDialect({ database: sqlite }), ...(options.log ? { log: options.log } : {}) });
    readDirectly(db, sqlite, options.log);
    return { db, dialect: 'sqlite', close: () => db.destroy() };
  }
  const pool = new pg.Pool({
    Client: NamingClient,
    // Queries sent without waiting for the previous answer leave together (db/transactions.ts
    // opens a transaction this way); Kysely awaits each query, so nothing else changes.
    pipeline: true,
    connectionString: options.url,
    max: options.poolSize ?? 10,
    types: pgTypes,
    ...(options.schema ? { options: `-c search_path=${options.schema}` } : {}),
  });
  const db = new Kysely<Database>({ dialect: new OwnSchemaPostgresDialect({ pool }), ...(options.log ? { log: options.log } : {}) });
  return { db, dialect: 'postgres', pool, close: () => db.destroy() };
}

/**
 * Kysely hands the driver SQL text and values only. The few statements `prepared` was asked to
 * name (db/prepared.ts) go to PostgreSQL as named statements: the driver parses each once per
 * connection and PostgreSQL may keep its plan, where an unnamed statement is planned on every run.
 * Behind a pooler in transaction mode, that pooler must support named statements (PgBouncer 1.21+).
 */
class NamingClient extends pg.Client {
  // pg's query() has a dozen overloads; this one only forwards what it was given.
  override query(config: any, values?: any, callback?: any): any {
    const name = typeof config === 'string' ? statementName(config) : undefined;
    return name === undefined ? super.query(config, values, callback) : super.query({ name, text: config, values }, callback);
  }
}

/** The store the configuration names: PostgreSQL at DATABASE_URL, else SQLite in DATA_DIR. */
export function storeFor(config: { databaseUrl: string | null; dataDir: string }, log?: QueryLog): Store {
  return config.databaseUrl
    ? openStore({ dialect: 'postgres', url: config.databaseUrl, ...(log ? { log } : {}) })
    : openStore({ dialect: 'sqlite', file: path.join(config.dataDir, 'mapi.sqlite'), ...(log ? { log } : {}) });
}

/**
 * Applies pending migrations in one transaction, serialised across processes (PostgreSQL: Kysely's
 * advisory lock; SQLite: BEGIN IMMEDIATE), so concurrent starts are safe.
 */
export async function migrate(store: Store): Promise<void> {
  // Kysely looks for its migration tables in every schema unless told which one: another schema
  // of the same database holding them (a second app, a test's schema) made it skip creating ours.
  const schema = store.dialect === 'postgres' ? (await sql<{ name: string }>`select current_schema() as name`.execute(store.db)).rows[0]?.name : undefined;
  const migrator = new Migrator({
    db: store.db,
    provider: migrationProvider(store.dialect),
    ...(schema ? { migrationTableSchema: schema } : {}),
  });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    throw new Error(`Database migration ${failed ? `${failed.migrationName} ` : ''}failed: ${String(error)}`);
  }
}
