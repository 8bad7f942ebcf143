import { sql } from 'kysely';
import type { Executor, JobRow, JobState } from '../db/tables.js';
import type { JobLogLine, JobRecord, ListFilter } from './types.js';

/*
 * The jobs service's queries, one statement each. A state change is a compare-and-set (its WHERE
 * names the state, owner and attempt it expects), so two workers, or a worker and a sweeper,
 * never both act on one row: the one whose statement matched nothing walks away. Single
 * statements also keep SQLite free of transactions held across awaits, which two stores on one
 * file in one process would deadlock on (each waits for the other synchronously).
 */

/** One attempt of one job, as the worker running it knows it. */
export interface Attempt {
  id: number;
  owner: string;
  attempts: number;
}

export function toRecord(row: JobRow): JobRecord {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    kind: row.kind,
    payload: JSON.parse(row.payload) as unknown,
    state: row.state,
    attempts: row.attempts,
    maxAttempts: row.max_attempts,
    result: row.result === null ? null : (JSON.parse(row.result) as unknown),
    error: row.error,
    cancelRequested: row.cancel_requested === 1,
    createdAt: row.created_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
  };
}

export function insertJob(db: Executor, job: { tenantId: number; kind: string; payload: string; maxAttempts: number; at: string }): Promise<JobRow> {
  return db
    .insertInto('jobs')
    .values({ tenant_id: job.tenantId, kind: job.kind, payload: job.payload, state: 'queued', max_attempts: job.maxAttempts, created_at: job.at })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function findJob(db: Executor, tenantId: number, id: number): Promise<JobRow | undefined> {
  return db.selectFrom('jobs').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

export function listJobs(db: Executor, tenantId: number, filter: ListFilter): Promise<JobRow[]> {
  let query = db.selectFrom('jobs').selectAll().where('tenant_id', '=', tenantId);
  if (filter.kind !== undefined) query = query.where('kind', '=', filter.kind);
  if (filter.afterId !== undefined) query = query.where('id', filter.newestFirst ? '<' : '>', filter.afterId);
  return query
    .orderBy('id', filter.newestFirst ? 'desc' : 'asc')
    .limit(filter.limit)
    .execute();
}

/** A job's log lines after `afterSeq`; none when the job is not the tenant's. */
export function readLogs(db: Executor, tenantId: number, id: number, afterSeq: number, limit: number): Promise<JobLogLine[]> {
  return db
    .selectFrom('job_logs')
    .select(['seq', 'at', 'line'])
    .where('job_id', '=', id)
    .where('seq', '>', afterSeq)
    .where((eb) => eb.exists(eb.selectFrom('jobs').select('id').where('id', '=', id).where('tenant_id', '=', tenantId)))
    .orderBy('seq')
    .limit(limit)
    .execute();
}

export async function lastLogSeq(db: Executor, jobId: number): Promise<number> {
  const row = await db
    .selectFrom('job_logs')
    .select((eb) => eb.fn.max('seq').as('seq'))
    .where('job_id', '=', jobId)
    .executeTakeFirst();
  return Number(row?.seq ?? 0);
}

/** Idempotent on (job, seq): a line from an attempt that was taken over cannot collide with the new one's. */
export async function appendLog(db: Executor, line: { jobId: number; seq: number; at: string; line: string }): Promise<void> {
  await db
    .insertInto('job_logs')
    .values({ job_id: line.jobId, seq: line.seq, at: line.at, line: line.line })
    .onConflict((oc) => oc.columns(['job_id', 'seq']).doNothing())
    .execute();
}

const running = (owner: string, at: string) => ({
  state: 'running' as const,
  attempts: sql<number>`attempts + 1`,
  owner,
  started_at: at,
  heartbeat_at: at,
});

/** SQLite: claims up to `limit` queued jobs of `kinds`, oldest first, in one statement (atomic under SQLite's write lock). */
export function claimQueued(db: Executor, kinds: string[], limit: number, owner: string, at: string): Promise<JobRow[]> {
  return db
    .updateTable('jobs')
    .set(running(owner, at))
    .where('id', 'in', db.selectFrom('jobs').select('id').where('state', '=', 'queued').where('kind', 'in', kinds).orderBy('id').limit(limit))
    .where('state', '=', 'queued')
    .returningAll()
    .execute();
}

/** PostgreSQL: claims the jobs pg-boss delivered, those still queued (a cancelled one is not). */
export function claimIds(db: Executor, ids: number[], owner: string, at: string): Promise<JobRow[]> {
  return db.updateTable('jobs').set(running(owner, at)).where('id', 'in', ids).where('state', '=', 'queued').returningAll().execute();
}

const cancelled = sql<boolean>`(cancel_requested = 1)`;

/** The attempt returned: succeeded, or cancelled if cancel was asked meanwhile. */
export function finishSucceeded(db: Executor, attempt: Attempt, result: string, at: string): Promise<JobRow | undefined> {
  return thisAttempt(db, attempt)
    .set({
      state: sql<JobState>`case when ${cancelled} then 'cancelled' else 'succeeded' end`,
      result: sql<string | null>`case when ${cancelled} then null else ${result} end`,
      error: null,
      finished_at: at,
      heartbeat_at: null,
    })
    .returningAll()
    .executeTakeFirst();
}

/**
 * The attempt threw: queued again while attempts remain, else failed (cancelled if cancel was
 * asked). `spent: false` gives the attempt back (a stop interrupted it, not the job's fault).
 * `heartbeatAt` makes it a sweeper's change, which holds only if the heartbeat is still the one it
 * saw as stale: the worker did not come back meanwhile.
 */
export function finishFailed(
  db: Executor,
  attempt: Attempt,
  error: string,
  at: string,
  options: { spent?: boolean; heartbeatAt?: string } = {},
): Promise<JobRow | undefined> {
  const spent = options.spent ?? true;
  const retry = spent ? sql<boolean>`attempts < max_attempts and not ${cancelled}` : sql<boolean>`not ${cancelled}`;
  let query = thisAttempt(db, attempt);
  if (options.heartbeatAt !== undefined) query = query.where('heartbeat_at', '=', options.heartbeatAt);
  // Every SET expression reads the row as it was before the update, on both stores.
  return query
    .set({
      state: sql<JobState>`case when ${retry} then 'queued' when ${cancelled} then 'cancelled' else 'failed' end`,
      attempts: spent ? sql<number>`attempts` : sql<number>`case when ${retry} then attempts - 1 else attempts end`,
      error: sql<string | null>`case when ${retry} or ${cancelled} then null else ${error} end`,
      finished_at: sql<string | null>`case when ${retry} then null else ${at} end`,
      owner: sql<string | null>`case when ${retry} then null else owner end`,
      heartbeat_at: null,
    })
    .returningAll()
    .executeTakeFirst();
}

function thisAttempt(db: Executor, attempt: Attempt) {
  return db
    .updateTable('jobs')
    .where('id', '=', attempt.id)
    .where('state', '=', 'running')
    .where('owner', '=', attempt.owner)
    .where('attempts', '=', attempt.attempts);
}

/** Touches this worker's running jobs; the rows returned say which it still holds and which were cancelled. */
export function beat(db: Executor, owner: string, ids: number[], at: string): Promise<Array<{ id: number; cancel_requested: number }>> {
  return db
    .updateTable('jobs')
    .set({ heartbeat_at: at })
    .where('id', 'in', ids)
    .where('state', '=', 'running')
    .where('owner', '=', owner)
    .returning(['id', 'cancel_requested'])
    .execute();
}

/** Running jobs whose heartbeat is older than `cutoff`. */
export function staleJobs(db: Executor, cutoff: string, limit: number): Promise<JobRow[]> {
  return db.selectFrom('jobs').selectAll().where('state', '=', 'running').where('heartbeat_at', '<', cutoff).orderBy('id').limit(limit).execute();
}

export const DEAD_WORKER = 'The process running this job stopped';

/** A stale job, unless its worker came back or another sweeper got there first, is queued again or failed. */
export function reclaimStale(db: Executor, stale: JobRow, at: string): Promise<JobRow | undefined> {
  if (stale.owner === null || stale.heartbeat_at === null) return Promise.resolve(undefined);
  return finishFailed(db, { id: stale.id, owner: stale.owner, attempts: stale.attempts }, DEAD_WORKER, at, { heartbeatAt: stale.heartbeat_at });
}

export function cancelQueued(db: Executor, tenantId: number, id: number, at: string): Promise<JobRow | undefined> {
  return db
    .updateTable('jobs')
    .set({ state: 'cancelled', cancel_requested: 1, finished_at: at })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('state', '=', 'queued')
    .returningAll()
    .executeTakeFirst();
}

export function requestCancel(db: Executor, tenantId: number, id: number): Promise<JobRow | undefined> {
  return db
    .updateTable('jobs')
    .set({ cancel_requested: 1 })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('state', '=', 'running')
    .returningAll()
    .executeTakeFirst();
}

/**
 * Deletes up to `limit` finished jobs (succeeded, failed, cancelled) of `kind` that finished
 * before `before`, with their logs; answers how many. For kinds that run often and whose records
 * nobody reads later.
 */
export async function deleteFinished(db: Executor, kind: string, before: string, limit: number): Promise<number> {
  const ids = db
    .selectFrom('jobs')
    .select('id')
    .where('kind', '=', kind)
    .where('state', 'in', ['succeeded', 'failed', 'cancelled'])
    .where('finished_at', '<', before)
    .orderBy('id')
    .limit(limit);
  const result = await db.deleteFrom('jobs').where('id', 'in', ids).executeTakeFirst();
  return Number(result.numDeletedRows);
}
