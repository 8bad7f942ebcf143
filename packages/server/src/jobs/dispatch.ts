import type { Store } from '../db/database.js';
import type { Executor, JobRow } from '../db/tables.js';
import { claimQueued } from './jobs.store.js';

/**
 * How queued jobs reach a worker: the one part that differs between the stores. The `jobs` rows
 * are the truth on both; a dispatch only adds the delivery (PostgreSQL: pg-boss).
 */
export interface Dispatch {
  /**
   * Runs `change`, a statement that may leave a job of `kind` queued (enqueue, retry, a stale job
   * taken back), such that a worker will see it. PostgreSQL: in one transaction with its pg-boss job.
   */
  queue(kind: string, change: (db: Executor) => Promise<JobRow | undefined>): Promise<JobRow | undefined>;
  /** Marks up to `limit` queued jobs of `kinds` running for `owner` and returns them. */
  claim(kinds: readonly string[], limit: number, owner: string, at: string): Promise<JobRow[]>;
  stop(): Promise<void>;
}

/**
 * SQLite: the worker claims rows straight from `jobs`, with one UPDATE … RETURNING that SQLite's
 * write lock makes atomic across every process on the file. Nothing else to deliver.
 */
export function sqliteDispatch(store: Store): Dispatch {
  return {
    queue: (_kind, change) => change(store.db),
    claim: async (kinds, limit, owner, at) => (kinds.length === 0 || limit <= 0 ? [] : claimQueued(store.db, [...kinds], limit, owner, at)),
    stop: async () => undefined,
  };
}
