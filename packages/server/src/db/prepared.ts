import { performance } from 'node:perf_hooks';
import type SQLite from 'better-sqlite3';
import { PostgresAdapter, type CompiledQuery, type DatabaseConnection, type LogEvent, type QueryResult } from 'kysely';
import type { Executor } from './tables.js';

interface Template {
  compiled: CompiledQuery;
  /** For each compiled parameter: which argument fills it, or -1 for a constant of the query. */
  slots: number[];
}

/**
 * A query built and compiled once per dialect, then run with new arguments. Building and compiling
 * a Kysely query costs about as much as SQLite takes to run a primary-key lookup, and a bulk move
 * runs the same few queries for every item. `build` receives stand-ins for its arguments and must
 * produce the same SQL whatever they are (no branching on them); each stand-in is then replaced,
 * wherever it landed among the compiled parameters, by the real argument.
 */
/** A query builder or a raw `sql` template: both compile against an executor. */
interface Compiles<R> {
  compile(db: Executor): CompiledQuery<R>;
}

/** SQL text -> statement name, for the statements `prepared` was asked to name (see `statementName`). */
const names = new Map<string, string>();

/**
 * The name under which PostgreSQL runs `sql` as a named statement, parsed and planned once per
 * connection instead of on every run (database.ts hands it to the driver), or undefined.
 */
export function statementName(sql: string): string | undefined {
  return names.get(sql);
}

/** A SQLite store's driver handle with the store's query log (see `readDirectly`). */
export interface SqliteHandle {
  handle: SQLite.Database;
  log: ((event: LogEvent) => void) | undefined;
}

/** Executors whose statements go straight to their connection, or to SQLite's driver (see `sendDirectly`). */
const direct = new WeakMap<object, DatabaseConnection | SqliteHandle>();

/**
 * Sends the prepared statements run on `db`, an executor bound to `target` (a transaction's
 * connection), straight to it, past the query executor's queue and plugins (none are installed):
 * the executor's layers cost a bulk move's item several microseconds per statement. A SQLite
 * target is the driver itself, which runs each statement synchronously (`runOnHandle`); the
 * caller must hold the store's connection, as a transaction does.
 */
export function sendDirectly(db: Executor, target: DatabaseConnection | SqliteHandle): void {
  direct.set(db, target);
}

/**
 * Runs `query` on SQLite's driver at once, as the query builder's SQLite connection would
 * (reads return their rows, writes their counts), and reports it to the store's query log.
 */
export function runOnHandle<R>(sqlite: SqliteHandle, query: CompiledQuery): QueryResult<R> {
  const started = performance.now();
  const statement = sqlite.handle.prepare(query.sql);
  let result: QueryResult<R>;
  if (statement.reader) {
    result = { rows: statement.all(query.parameters) as R[] };
  } else {
    const { changes, lastInsertRowid } = statement.run(query.parameters);
    result = { rows: [], numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid) };
  }
  sqlite.log?.({ level: 'query', query, queryDurationMillis: performance.now() - started });
  return result;
}

/** SQLite stores' connections, by the store's own executor (see `readDirectly`). */
const sqliteHandles = new WeakMap<object, SqliteHandle>();

/**
 * Lets the prepared reads run on `db`, a SQLite store's own executor, go to the driver directly
 * when its connection is outside any transaction: better-sqlite3 runs a statement synchronously,
 * so nothing can interleave with it, and outside a transaction it reads what is committed, as it
 * would behind the query builder's connection lock. That lock, and the asynchronous path through
 * it, cost a hot read about twice what SQLite takes to run it. Inside a transaction (another
 * request's, holding the lock) the read waits its turn as before. `log` is the store's query log,
 * which sees these reads too.
 */
export function readDirectly(db: object, handle: SQLite.Database, log: ((event: LogEvent) => void) | undefined): void {
  sqliteHandles.set(db, { handle, log });
}

/** The driver handle of the SQLite store whose own executor is `db`, if it is one. */
export function sqliteHandleOf(db: object): SqliteHandle | undefined {
  return sqliteHandles.get(db);
}

export function prepared<A extends unknown[], R>(
  arity: A['length'],
  build: (db: Executor, ...args: A) => Compiles<R>,
  /**
   * PostgreSQL: run it as a named statement. For statements run for every item of a request whose
   * planning costs more than running them (a recursive walk is planned in about as long as a
   * round trip takes); PostgreSQL keeps a plan per connection, so name only queries whose best
   * plan does not depend on the values (primary-key lookups), and only a few.
   */
  options: { name?: string } = {},
) {
  const templates = new WeakMap<object, Template>();
  const queryFor = (db: Executor, args: A): CompiledQuery<R> => {
    const adapter = db.getExecutor().adapter;
    let template = templates.get(adapter);
    if (!template) {
      const standIns = Array.from({ length: arity }, (_, i) => ({ standIn: i }));
      const compiled = build(db, ...(standIns as unknown as A)).compile(db);
      const slots = compiled.parameters.map((p) => standIns.indexOf(p as (typeof standIns)[number]));
      template = { compiled, slots };
      templates.set(adapter, template);
      if (options.name !== undefined && adapter instanceof PostgresAdapter && !names.has(compiled.sql))
        names.set(compiled.sql, `mapi_${options.name}_${names.size + 1}`);
    }
    const { compiled, slots } = template;
    const parameters = slots.map((slot, i) => (slot === -1 ? compiled.parameters[i] : args[slot]));
    return { ...compiled, parameters } as CompiledQuery<R>;
  };
  const onStore = async (db: Executor, args: A): Promise<QueryResult<R>> => {
    const query = queryFor(db, args);
    const sqlite = sqliteHandles.get(db);
    if (sqlite !== undefined && !sqlite.handle.inTransaction) {
      const statement = sqlite.handle.prepare(query.sql);
      // Reads only: a write keeps to the connection lock and its transaction handling.
      if (statement.reader && statement.readonly) return runOnHandle<R>(sqlite, query);
    }
    return db.executeQuery<R>(query);
  };
  return (db: Executor, ...args: A): Promise<QueryResult<R>> => {
    const target = direct.get(db);
    if (target === undefined) return onStore(db, args);
    // The driver has the statement (SQLite: has run it) by the time this returns: see `alreadySent`.
    const running = settled(() => {
      const query = queryFor(db, args);
      return 'handle' in target ? runOnHandle<R>(target, query) : target.executeQuery<R>(query);
    });
    sent.add(running);
    return running;
  };
}

/** Statements handed to their connection before the promise for them was returned (see `prepared`). */
const sent = new WeakSet<Promise<unknown>>();

/**
 * Whether `statement` is a prepared statement already handed to its transaction's connection, so
 * that a statement sent after it runs after it (db/transactions.ts `Trailing`). PostgreSQL's
 * driver writes statements to the connection in the order it is given them; through the query
 * builder, a statement reaches the driver only after several turns of the promise queue.
 */
export function alreadySent(statement: Promise<unknown>): boolean {
  return sent.has(statement);
}

function settled<R>(run: () => R | Promise<R>): Promise<R> {
  try {
    return Promise.resolve(run());
  } catch (error) {
    return Promise.reject(error);
  }
}
