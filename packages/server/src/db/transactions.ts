import { sql } from 'kysely';
import type { Store } from './database.js';
import type { Database } from './tables.js';
import type { Transaction } from 'kysely';

const lockWaitObservers = new WeakMap<object, (seconds: number) => void>();

/** Reports how long each serialized transaction on `store` waited for its locks (the metrics listen). */
export function observeLockWaits(store: Store, observer: (seconds: number) => void): void {
  lockWaitObservers.set(store.db, observer);
}

/**
 * Runs `fn` in a transaction that no other transaction holding one of the same keys can
 * interleave with, across every server process sharing the database. PostgreSQL: transaction-
 * scoped advisory locks, taken in sorted order so two callers never wait on each other in a cycle.
 * SQLite: every transaction already begins IMMEDIATE (see database.ts), which serialises writers.
 */
export async function serialized<T>(store: Store, keys: string | string[], fn: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  // Lock, then read: only correct if reads see what committed while the lock was awaited, which
  // READ COMMITTED guarantees whatever the server's default isolation is.
  const transaction = store.dialect === 'postgres' ? store.db.transaction().setIsolationLevel('read committed') : store.db.transaction();
  const observer = lockWaitObservers.get(store.db);
  const started = observer === undefined ? 0 : performance.now();
  return transaction.execute(async (trx) => {
    if (store.dialect === 'postgres') {
      for (const key of [...new Set(typeof keys === 'string' ? [keys] : keys)].sort()) {
        await sql`select pg_advisory_xact_lock(hashtextextended(${key}, 0))`.execute(trx);
      }
    }
    observer?.((performance.now() - started) / 1000);
    return fn(trx);
  });
}

/** Lock keys shared by every change that must not interleave with changes to the same record. */
export const lockKey = {
  deployment: (id: number) => `deployment:${id}`,
  group: (id: number) => `group:${id}`,
};
