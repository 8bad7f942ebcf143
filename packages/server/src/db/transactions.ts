import { CompiledQuery, PostgresAdapter, sql, type RawBuilder } from 'kysely';
import { ApiError } from '../shared/problems.js';
import type { Store } from './database.js';
import { LockQueue } from './lock-queue.js';
import { alreadySent, runOnHandle, sendDirectly, sqliteHandleOf, type SqliteHandle } from './prepared.js';
import type { Db, Executor } from './tables.js';

/** How long a serialized transaction waits for its locks before it gives up (LOCK_TIMEOUT_MS). */
export const DEFAULT_LOCK_TIMEOUT_MS = 5000;

const lockWaitObservers = new WeakMap<object, (seconds: number) => void>();

/** Reports how long each serialized transaction on `store` waited for its locks (the metrics listen). */
export function observeLockWaits(store: Store, observer: (seconds: number) => void): void {
  lockWaitObservers.set(store.db, observer);
}

const lockTimeouts = new WeakMap<object, number>();
const queues = new WeakMap<object, LockQueue>();

/** Sets how long serialized transactions on `store` wait for their locks (config: LOCK_TIMEOUT_MS). */
export function configureLockWaits(store: Store, options: { timeoutMs: number }): void {
  lockTimeouts.set(store.db, options.timeoutMs);
}

/** The queue of this process's waiters for `store`'s lock keys (see lock-queue.ts). */
export function lockQueueOf(store: Store): LockQueue {
  let queue = queues.get(store.db);
  if (!queue) queues.set(store.db, (queue = new LockQueue()));
  return queue;
}

/**
 * The wait shared by several serialized transactions of one request (a bulk request's items):
 * together they wait at most one lock timeout. Once it is spent, each later item still gets its
 * turn if the lock is free, but no longer waits, so a busy deployment answers the whole request
 * in about one timeout instead of one per item.
 */
export class LockWaitBudget {
  constructor(public remainingMs: number) {}
}

export function lockWaitBudget(store: Store): LockWaitBudget {
  return new LockWaitBudget(lockTimeouts.get(store.db) ?? DEFAULT_LOCK_TIMEOUT_MS);
}

/**
 * Hands a transaction's last write to `serialized` without waiting for its answer: the COMMIT
 * follows it at once, in the same round trip on PostgreSQL, and the write's outcome is still the
 * transaction's. Only for a statement after which `fn` neither reads nor decides anything.
 */
export type Trailing = (write: Promise<unknown>) => void;

/**
 * Runs `fn` in a transaction that no other transaction holding one of the same keys can
 * interleave with, across every server process sharing the database. PostgreSQL: transaction-
 * scoped advisory locks, taken in sorted order so two callers never wait on each other in a cycle.
 * SQLite: the transaction begins IMMEDIATE, which serialises writers.
 *
 * Waiting is bounded. In this process, callers wait for their keys in a queue before they take a
 * connection (lock-queue.ts), so a hammered deployment cannot take the whole pool; across
 * processes, PostgreSQL's `lock_timeout` and SQLite's busy timeout bound the wait for the lock
 * itself. A caller that gives up gets a 503 with Retry-After (`busy`), and nothing was changed.
 */
export async function serialized<T>(
  store: Store,
  keys: LockKey | LockKey[],
  fn: (trx: Db, trailing: Trailing) => Promise<T>,
  budget?: LockWaitBudget,
): Promise<T> {
  const all = Array.isArray(keys) ? keys : [keys];
  const sorted = [...new Set(all.filter((key) => typeof key === 'string'))].sort();
  // Held by a key's other sharers at the same time: this process's queue is for exclusive keys only.
  const shared = [...new Set(all.flatMap((key) => (typeof key === 'string' || sorted.includes(key.shared) ? [] : [key.shared])))].sort();
  const timeoutMs = lockTimeouts.get(store.db) ?? DEFAULT_LOCK_TIMEOUT_MS;
  const waitMs = budget === undefined ? timeoutMs : Math.max(0, budget.remainingMs);
  if (store.dialect === 'sqlite') await letOthersIn();
  const observer = lockWaitObservers.get(store.db);
  const started = performance.now();
  const waited = () => {
    const ms = performance.now() - started;
    if (budget !== undefined) budget.remainingMs -= ms;
    return ms;
  };
  const opening = beginning(store, sorted, shared, waitMs);
  let leave: () => void;
  try {
    leave = await lockQueueOf(store).enter(sorted, waitMs, () => busy(sorted, timeoutMs));
  } catch (error) {
    waited();
    throw error;
  }
  try {
    const sqlite = sqliteHandleOf(store.db);
    if (sqlite !== undefined) {
      const trx = await boundToConnection(store, sqlite);
      // Holding the store's one connection (the query builder's lock on it) for the transaction.
      return await store.db.getExecutor().provideConnection(() =>
        onSqlite(sqlite, trx, fn, {
          locked: () => observer?.(waited() / 1000),
          failed: (error) => {
            waited();
            return isLockWaitTimeout(error) ? busy(sorted, timeoutMs) : error;
          },
        }),
      );
    }
    return await store.db.connection().execute(async (trx) => {
      // The opening is not awaited before `fn` sends its first statement: with a pipelining driver
      // (PostgreSQL, database.ts) both leave in one round trip. The server still runs them in
      // order, so that statement reads after the locks are held; if they could not be had, the
      // transaction is aborted and that statement fails too, and the opening's error is the answer.
      // Only a failing BEGIN could leave that statement outside a transaction: BEGIN does not fail
      // on a healthy connection, and on a broken one nothing runs.
      const connection = await trx.getExecutor().provideConnection(async (c) => c);
      sendDirectly(trx, connection);
      const opened = connection.executeQuery(opening).then(
        () => {
          observer?.(waited() / 1000);
          return undefined;
        },
        (error: unknown) => {
          waited();
          return { error };
        },
      );
      const writes: Array<Promise<unknown>> = [];
      try {
        const result = await fn(trx, trail(writes));
        await throwIfFailed(opened);
        // Sent behind the trailing writes without waiting for them. A write that failed aborted
        // the transaction, and PostgreSQL answers a COMMIT of an aborted transaction by rolling
        // it back: the write's error is then the answer, and nothing was changed.
        const committed = connection.executeQuery(COMMIT);
        committed.catch(() => undefined);
        await Promise.all(writes);
        await committed;
        return result;
      } catch (thrown) {
        const error = (await opened)?.error ?? thrown;
        // A failed rollback means a broken connection, which the pool discards. The first error is the answer.
        await trx.executeQuery(ROLLBACK).catch(() => undefined);
        throw isLockWaitTimeout(error) ? busy(sorted, timeoutMs) : error;
      }
    });
  } finally {
    leave();
  }
}

/** Collects the trailing writes of one transaction; a rejection is observed here and answered by `serialized`. */
function trail(writes: Array<Promise<unknown>>): Trailing {
  return (write) => {
    // Through the query builder, a statement reaches the driver only after the COMMIT sent behind it.
    if (!alreadySent(write)) throw new Error('A trailing write must be a prepared statement (db/prepared.ts) run on the transaction');
    write.catch(() => undefined);
    writes.push(write);
  };
}

const bound = new WeakMap<object, Promise<Db>>();

/**
 * SQLite has one connection: an executor bound to it, whose prepared statements run on the driver
 * (`sendDirectly`), made once per store instead of once per transaction, and used only while the
 * caller holds that connection.
 */
function boundToConnection(store: Store, sqlite: SqliteHandle): Promise<Db> {
  let trx = bound.get(store.db);
  if (!trx) {
    trx = store.db.connection().execute(async (db) => {
      sendDirectly(db, sqlite);
      return db;
    });
    bound.set(store.db, trx);
  }
  return trx;
}

/**
 * SQLite: the transaction's statements run on the driver synchronously (`boundToConnection`), while
 * this request holds the store's one connection, so nothing else runs on it in between. BEGIN
 * IMMEDIATE waits for other processes' writes up to the busy timeout; past it, `busy`.
 */
async function onSqlite<T>(
  sqlite: SqliteHandle,
  trx: Db,
  fn: (trx: Db, trailing: Trailing) => Promise<T>,
  report: { locked: () => void; failed: (error: unknown) => unknown },
): Promise<T> {
  try {
    runOnHandle(sqlite, SQLITE_BEGIN);
  } catch (error) {
    throw report.failed(error);
  }
  report.locked();
  const writes: Array<Promise<unknown>> = [];
  try {
    const result = await fn(trx, trail(writes));
    // A failed statement does not end a SQLite transaction: every write must have succeeded
    // before the COMMIT. They ran synchronously, so this waits for nothing.
    await Promise.all(writes);
    runOnHandle(sqlite, COMMIT);
    return result;
  } catch (error) {
    // A commit that failed can leave the transaction open: rolling back ends it either way. A
    // failing rollback means a broken handle; the first error is the answer.
    try {
      if (sqlite.handle.inTransaction) runOnHandle(sqlite, ROLLBACK);
    } catch {
      // the first error is thrown below
    }
    throw isLockWaitTimeout(error) ? report.failed(error) : error;
  }
}

async function throwIfFailed(opened: Promise<{ error: unknown } | undefined>): Promise<void> {
  const failed = await opened;
  if (failed) throw failed.error;
}

/** When a SQLite transaction last let the event loop turn (see `letOthersIn`). */
let lastTurn = 0;
const SLICE_MS = 2;

/**
 * SQLite's driver is synchronous, so a bulk request's transactions follow each other in one run
 * of promise callbacks and no other request's I/O is read until the last item is done: a hammered
 * deployment would stall every other one. At most every couple of milliseconds a transaction
 * first lets the event loop turn, so other requests take their turn between items.
 */
async function letOthersIn(): Promise<void> {
  if (performance.now() - lastTurn < SLICE_MS) return;
  await new Promise<void>((resolve) => setImmediate(resolve));
  lastTurn = performance.now();
}

const COMMIT = CompiledQuery.raw('commit');
const ROLLBACK = CompiledQuery.raw('rollback');
const SQLITE_BEGIN = CompiledQuery.raw('begin immediate');
/** Lock keys are this module's own words (`deployment:12`), never client input; checked all the same. */
const LOCK_KEY = /^[a-z][a-z0-9_-]*(:[0-9]+)?$/;

/**
 * The advisory lock number of a key (an SQL text expression). Advisory locks belong to the whole
 * database, while a store lives in one schema of it (`search_path`): two stores in one database
 * (two installations, or tests side by side) numbered `deployment:1` alike and waited on each
 * other. The schema named first makes the key the store's own; servers sharing a store share it.
 * `coalesce`: a missing schema must not make the number NULL, which locks nothing.
 */
function advisoryKey(keyText: string): string {
  return `hashtextextended(coalesce(current_schema(), '') || ':' || ${keyText}, 0)`;
}

/** PostgreSQL: the number of `key`'s advisory lock in this store, as an SQL expression (for a holder or a look at pg_locks). */
export function advisoryLockId(key: string): RawBuilder<bigint> {
  if (!LOCK_KEY.test(key)) throw new Error(`Lock key ${JSON.stringify(key)} is not of the form name or name:id`);
  return sql.raw(advisoryKey(`'${key}'`));
}

/**
 * The opening of a serialized transaction. PostgreSQL: one message of several statements (no
 * parameters, so the driver sends them together), so the transaction begins, bounds its lock
 * waits and holds its locks after one round trip. Each statement of a READ COMMITTED transaction
 * reads from a snapshot taken when it starts, so everything `fn` reads afterwards sees what
 * committed while the locks were awaited; a read in the same statement as the lock would not.
 * The text depends only on the keys and the wait allowed, so two single moves in one deployment
 * run identical statements.
 */
function beginning(store: Store, keys: readonly string[], shared: readonly string[], timeoutMs: number): CompiledQuery {
  if (store.dialect === 'sqlite') return SQLITE_BEGIN;
  const lock = (fn: string) => (key: string) => {
    if (!LOCK_KEY.test(key)) throw new Error(`Lock key ${JSON.stringify(key)} is not of the form name or name:id`);
    return `select ${fn}(${advisoryKey(`'${key}'`)})`;
  };
  // Shared ones first: sharers never wait on each other, and the order stays the same for everyone.
  const locks = [...shared.map(lock('pg_advisory_xact_lock_shared')), ...keys.map(lock('pg_advisory_xact_lock'))];
  // lock_timeout 0 would mean no limit: a spent budget still waits a millisecond, then gives up.
  return CompiledQuery.raw(['begin isolation level read committed', `set local lock_timeout = ${Math.max(1, Math.round(timeoutMs))}`, ...locks].join('; '));
}

/** PostgreSQL's lock_not_available (lock_timeout), or SQLite's busy timeout running out. */
function isLockWaitTimeout(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '55P03' || (typeof code === 'string' && code.startsWith('SQLITE_BUSY'));
}

/**
 * The answer when the locks did not come in time: nothing was changed, so the client may send
 * the same request again. A deployment's lock guards its workspace; other keys guard records the
 * caller does not name, so they are a plain 503.
 */
function busy(keys: readonly string[], timeoutMs: number): ApiError {
  const seconds = Math.max(1, Math.ceil(timeoutMs / 1000));
  const headers = { 'Retry-After': String(seconds) };
  const deployment = keys.map((key) => /^deployment:(\d+)$/.exec(key)?.[1]).find((id) => id !== undefined);
  if (deployment !== undefined) {
    return new ApiError(
      'DEPLOYMENT_BUSY',
      `Deployment ${deployment} is busy with other changes to its workspace; nothing was changed. Retry after ${seconds} second${seconds === 1 ? '' : 's'}.`,
      { headers },
    );
  }
  return new ApiError(
    'UNAVAILABLE',
    `The records this request changes are busy with other changes; nothing was changed. Retry after ${seconds} second${seconds === 1 ? '' : 's'}.`,
    { headers },
  );
}

/**
 * Runs `fn`, which writes outside the database (a git repository), while no other caller holding
 * `key` runs, in any process sharing the store. PostgreSQL: a transaction holds the key's advisory
 * lock while `fn` runs, and the lock goes with the transaction, even when the process dies.
 * SQLite: this process's queue alone, without holding the store's one connection, which other
 * requests need meanwhile; an embedded store is served by one process.
 */
export async function exclusive<T>(store: Store, key: string, fn: () => Promise<T>): Promise<T> {
  if (store.dialect === 'postgres') {
    return serialized(store, key, async (trx) => {
      // `serialized` sends the lock without waiting for it, ahead of the transaction's first
      // statement; `fn` sends none, so this one waits for the lock before `fn` starts.
      await trx.executeQuery(CompiledQuery.raw('select 1'));
      return fn();
    });
  }
  const timeoutMs = lockTimeouts.get(store.db) ?? DEFAULT_LOCK_TIMEOUT_MS;
  const leave = await lockQueueOf(store).enter([key], timeoutMs, () => busy([key], timeoutMs));
  try {
    return await fn();
  } finally {
    leave();
  }
}

/**
 * A lock key of `serialized`: a key's name holds it exclusively; `{ shared: name }` holds it
 * together with the key's other sharers, and excludes its exclusive holders (PostgreSQL; on SQLite
 * every writer runs alone anyway).
 */
export type LockKey = string | { shared: string };

/**
 * Takes `key` exclusively inside a transaction already open (PostgreSQL; SQLite's one writer
 * holds everything already), bounded by that transaction's lock timeout: for a short last step
 * of a transaction that held nothing exclusive until then.
 */
export async function lockWithin(trx: Executor, key: string): Promise<void> {
  if (trx.getExecutor().adapter instanceof PostgresAdapter) await sql`select pg_advisory_xact_lock(${advisoryLockId(key)})`.execute(trx);
}

/** Lock keys shared by every change that must not interleave with changes to the same record. */
export const lockKey = {
  deployment: (id: number) => `deployment:${id}`,
  group: (id: number) => `group:${id}`,
  repository: (deploymentId: number) => `repository:${deploymentId}`,
  /** A tenant's deployment names, unique in it. */
  deploymentNames: (tenantId: number) => `deployment-names:${tenantId}`,
  envVars: (deploymentId: number) => `env-vars:${deploymentId}`,
  /** A tenant's signing keys: creating the first one, rotating. */
  signingKeys: (tenantId: number) => `signing-keys:${tenantId}`,
  /** A deployment's runtime log: its lines commit in id order, so a reader following by id misses none. */
  runtimeLogs: (deploymentId: number) => `runtime-logs:${deploymentId}`,
  /** A tenant's settings (tenant and embed): a merge reads and writes them as one. */
  accountSettings: (tenantId: number) => `account-settings:${tenantId}`,
  /** An account's embed tenants and users: creating them (the account-wide cap), deleting tenants. */
  embedPeople: (tenantId: number) => `embed-people:${tenantId}`,
  /** A notification: claiming an occurrence, changing its schedule or recipients, deleting it. */
  notification: (id: number) => `notification:${id}`,
  /** One embed user: sessions of that user take turns (embed-sessions). */
  embedUser: (embedUserId: number) => `embed-user:${embedUserId}`,
  /** An account's count of embed users, checked against the cap by sessions that created one (provision.ts). */
  embedUserCount: (tenantId: number) => `embed-user-count:${tenantId}`,
  /** A tenant's dashboard exports: counting those rendering and adding one, as one (the per-identity limit). */
  dashboardExports: (tenantId: number) => `dashboard-exports:${tenantId}`,
  /** A user's scheduled agent tasks: counting the active ones and adding or switching one on, as one (the 20-task cap). */
  agentTasksOf: (userId: number) => `agent-tasks-of:${userId}`,
  /** One scheduled agent task: claiming an occurrence, adding a run and pruning the old ones. */
  agentTask: (taskId: number) => `agent-task:${taskId}`,
  /** One report delivery: claiming an occurrence, pausing or changing it, adding a run and pruning the old ones. */
  reportDelivery: (id: number) => `report-delivery:${id}`,
  /** One chat thread: appending a message takes the next seq. */
  agentThread: (threadId: number) => `agent-thread:${threadId}`,
  /** A published dashboard's AI-widget threads: read, changed and written back as one. */
  dashboard: (dashboardId: number) => `dashboard:${dashboardId}`,
  /** One comment thread on a dashboard (its root's id): replies, edits, removals and resolving, so its last activity and a reply racing a removal stay consistent. */
  commentThread: (rootId: number) => `comment-thread:${rootId}`,
  /** A tenant's custom role names, unique in it regardless of case: creating and renaming roles. */
  roleNames: (tenantId: number) => `role-names:${tenantId}`,
  /** One custom role: changing, deleting and assigning it, so no assignment lands on a role being deleted. */
  role: (roleId: number) => `role:${roleId}`,
};
