/**
 * Background jobs: status, logs, cancel and retry, for whichever area needs them (data-model
 * builds first). The service knows no area: an area registers a kind with its `run`, enqueues
 * jobs of it per tenant, and reads their records and logs.
 *
 * The `jobs` and `job_logs` tables (migration 0009) are the truth users see, on both stores.
 * What differs is how a queued job reaches a worker:
 * - SQLite (embedded): in-process. A worker claims queued rows with one UPDATE … RETURNING, which
 *   SQLite's write lock makes atomic across every process on the file; it wakes on enqueue, and
 *   polls slowly for jobs other processes enqueued.
 * - PostgreSQL: pg-boss 10 in its own schema (the store's schema + `_jobs`, or `pgboss` beside
 *   `public`), so any process sharing the database runs jobs. A row and its pg-boss job are
 *   written in one transaction; a worker's fetch, its claim of the rows and the deletion of the
 *   pg-boss jobs commit together (pg-boss-dispatch.ts).
 *
 * A process killed mid-job (kill -9) leaves the job failed or re-run, never running: a running
 * job's row carries the worker's heartbeat (every `heartbeatMs`), and every worker sweeps
 * (at start and every `sweepMs`) rows whose heartbeat is older than `staleAfterMs`: queued again
 * while attempts remain, else failed with "The process running this job stopped". Each change is
 * a compare-and-set on the row's state, owner, attempt and heartbeat, so two sweepers, or a sweeper
 * and a worker that was only slow, never both act. A job is taken back within about
 * `staleAfterMs + sweepMs` of its worker's death (45 s by default). The same heartbeat reads
 * `cancel_requested`, so a cancel reaches a job running in another process within `heartbeatMs`.
 *
 * @example
 * const jobs = createJobs(store);
 * jobs.register({ kind: 'build', maxAttempts: 2, async run({ payload, log, signal }) { await log('compiling'); return { ok: true }; } });
 * await jobs.start();
 * const job = await jobs.enqueue(tenantId, 'build', { deploymentId: 7 });
 * const done = await jobs.waitFor(tenantId, job.id);
 * await jobs.stop(); // before store.close()
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Store } from '../db/database.js';
import { systemClock, timestamp } from '../time.js';
import { sqliteDispatch } from './dispatch.js';
import { cancelQueued, deleteFinished, findJob, insertJob, listJobs, readLogs, requestCancel, toRecord } from './jobs.store.js';
import { pgBossDispatch } from './pg-boss-dispatch.js';
import type { JobKind, Jobs, JobsOptions, JobState, JobTakeover } from './types.js';
import { Changes } from './changes.js';
import { Worker } from './worker.js';
import { Schedules } from './schedule.js';
import { createWorkerPool } from './worker-pool.js';

export { JobAbort } from './types.js';
export type { ScheduleHandle, ScheduleSpec } from './schedule.js';
export { DueClaims, type DueClaimSpec, type DueRow } from './due-claims.js';
export type { WorkerPool, WorkerPoolOptions } from './worker-pool.js';
export { createWorkerPool, defaultPoolSize } from './worker-pool.js';
export type { JobContext, JobKind, JobLogLine, JobRecord, Jobs, JobsOptions, JobState, JobTakeover, ListFilter } from './types.js';
export { DEAD_WORKER } from './jobs.store.js';

const KIND = /^[A-Za-z0-9_.-]{1,64}$/;
const FINAL: ReadonlySet<JobState> = new Set(['succeeded', 'failed', 'cancelled']);

/**
 * The jobs service over `store`. It works only once started; a process may also just enqueue and
 * read. Call `stop()` before closing the store.
 */
export function createJobs(store: Store, options: JobsOptions = {}): Jobs {
  const settings = settingsOf(options);
  const kinds = new Map<string, JobKind<unknown, unknown>>();
  const dispatch = store.dialect === 'postgres' ? pgBossDispatch(store, { schema: options.queueSchema, onError: settings.onError }) : sqliteDispatch(store);
  const changes = new Changes();
  const worker = new Worker(store, dispatch, kinds, settings, (id) => changes.notify(id));
  const schedules = new Schedules();
  const workers = createWorkerPool(options.workerThreads !== undefined ? { size: options.workerThreads } : {});

  return {
    register(kind) {
      if (!KIND.test(kind.kind)) throw new Error(`Job kind ${JSON.stringify(kind.kind)} must be 1 to 64 letters, digits, '_', '.' or '-'`);
      if (kinds.has(kind.kind)) throw new Error(`Job kind ${kind.kind} is already registered`);
      if (kind.maxAttempts !== undefined) positive('maxAttempts', kind.maxAttempts);
      kinds.set(kind.kind, kind as JobKind<unknown, unknown>);
      worker.wake();
    },

    async enqueue(tenantId, kind, payload, opts = {}) {
      if (!KIND.test(kind)) throw new Error(`Job kind ${JSON.stringify(kind)} must be 1 to 64 letters, digits, '_', '.' or '-'`);
      // The process that enqueues need not run the kind: the registered default applies when it does.
      const maxAttempts = positive('maxAttempts', opts.maxAttempts ?? kinds.get(kind)?.maxAttempts ?? 1);
      const text = JSON.stringify(payload === undefined ? null : payload);
      const row = await dispatch.queue(kind, (db) => insertJob(db, { tenantId, kind, payload: text, maxAttempts, at: timestamp(settings.clock) }));
      if (!row) throw new Error('The job was not recorded');
      worker.wake();
      return toRecord(row);
    },

    async get(tenantId, id) {
      const row = await findJob(store.db, tenantId, id);
      return row && toRecord(row);
    },

    async list(tenantId, filter) {
      positive('limit', filter.limit);
      return (await listJobs(store.db, tenantId, filter)).map(toRecord);
    },

    async logs(tenantId, id, opts) {
      positive('limit', opts.limit);
      return readLogs(store.db, tenantId, id, opts.afterSeq ?? 0, opts.limit);
    },

    async cancel(tenantId, id) {
      // A job can move between queued and running while we look (claimed, or queued for a retry):
      // each step is a compare-and-set, tried again until one holds or the job is finished.
      for (;;) {
        const queued = await cancelQueued(store.db, tenantId, id, timestamp(settings.clock));
        if (queued) {
          changes.notify(id);
          return toRecord(queued);
        }
        const running = await requestCancel(store.db, tenantId, id);
        if (running) {
          worker.cancelled(id);
          return toRecord(running);
        }
        const row = await findJob(store.db, tenantId, id);
        if (!row || FINAL.has(row.state)) return row && toRecord(row);
      }
    },

    async waitFor(tenantId, id, opts = {}) {
      const timeoutMs = opts.timeoutMs ?? 60_000;
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        // Listening before reading, so a change between the read and the wait is not missed.
        const change = changes.next(id);
        try {
          const row = await findJob(store.db, tenantId, id);
          if (!row) throw new Error(`There is no job ${id}`);
          if (FINAL.has(row.state)) return toRecord(row);
          const left = deadline - Date.now();
          if (left <= 0) throw new Error(`Job ${id} is still ${row.state} after ${timeoutMs} ms`);
          // Another process (or store) may finish it: its change is seen by reading again.
          await change.within(Math.min(left, WAIT_POLL_MS));
        } finally {
          change.cancel();
        }
      }
    },

    async prune(kind, finishedBefore, limit = 1_000) {
      return deleteFinished(store.db, kind, finishedBefore.toISOString(), positive('limit', limit));
    },

    schedule: (spec) => schedules.add(spec),

    startSchedules: () => schedules.start(),

    workers,

    start: () => worker.start(),

    async stop() {
      // A schedule's run may enqueue: it ends before the worker does.
      await schedules.stop();
      await worker.stop();
      await dispatch.stop();
      // After the jobs, which may have had tasks on it.
      await workers.close();
    },
  };
}

/** How often `waitFor` reads a job that changes elsewhere (in this process, a change wakes it at once). */
const WAIT_POLL_MS = 100;

function settingsOf(options: JobsOptions) {
  const heartbeatMs = positive('heartbeatMs', options.heartbeatMs ?? 5_000);
  const staleAfterMs = positive('staleAfterMs', options.staleAfterMs ?? 30_000);
  // A live worker misses a beat or two under load; only a longer silence means it died.
  if (staleAfterMs < 2 * heartbeatMs) throw new Error('staleAfterMs must be at least twice heartbeatMs');
  return {
    clock: options.clock ?? systemClock,
    owner: options.owner ?? `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`,
    concurrency: positive('concurrency', options.concurrency ?? 4),
    heartbeatMs,
    staleAfterMs,
    sweepMs: positive('sweepMs', options.sweepMs ?? Math.ceil(staleAfterMs / 2)),
    pollMs: positive('pollMs', options.pollMs ?? 1_000),
    stopTimeoutMs: positive('stopTimeoutMs', options.stopTimeoutMs ?? 30_000),
    maxLogLines: positive('maxLogLines', options.maxLogLines ?? 10_000),
    onError: options.onError ?? ((error: unknown) => process.emitWarning(`jobs: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`)),
    onTakeover: options.onTakeover ?? ((t: JobTakeover) => process.emitWarning(takeoverMessage(t))),
  };
}

function positive(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer, not ${value}`);
  return value;
}

/** One line for an operator: which job, from which process, at which attempt, and what became of it. */
export function takeoverMessage(t: JobTakeover): string {
  const became = t.outcome === 'queued' ? 'queued it again' : t.outcome === 'failed' ? 'failed it (no attempt left)' : 'ended it (cancel was asked)';
  return `jobs: took back ${t.kind} job ${t.jobId} (tenant ${t.tenantId}) from ${t.fromOwner}, silent since ${t.lastHeartbeatAt}, at attempt ${t.attempt} of ${t.maxAttempts}; ${became}`;
}
