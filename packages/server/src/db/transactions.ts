import { sql } from 'kysely';
import type { Store } from './database.js';
import type { Database } from './tables.js';
import type { Transaction } from 'kysely';

/**
 * Runs `fn` in a transaction that no other transaction holding the same key can interleave with,
 * across every server process sharing the database. PostgreSQL: a transaction-scoped advisory lock.
 * SQLite: every transaction already begins IMMEDIATE (see database.ts), which serialises writers.
 */
export async function serialized<T>(store: Store, key: string, fn: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  return store.db.transaction().execute(async (trx) => {
    if (store.dialect === 'postgres') {
      await sql`select pg_advisory_xact_lock(hashtextextended(${key}, 0))`.execute(trx);
    }
    return fn(trx);
  });
}
