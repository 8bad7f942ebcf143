import type { Clock } from '../time.js';
import type { JobState } from '../db/tables.js';
import type { ScheduleHandle, ScheduleSpec } from './schedule.js';
import type { WorkerPool } from './worker-pool.js';

export type { JobState };

/** What a job's `run` receives for one attempt. */
export interface JobContext<P> {
  /** The job's id (the `jobs` row): user-visible, e.g. a build's `buildJobId`. */
  id: number;
  tenantId: number;
  payload: P;
  /** 1 for the first attempt, 2 for the first retry, ... */
  attempt: number;
  /**
   * Appends a line to the job's log. Lines past the worker's cap (10,000 per job by default) are
   * dropped after one line saying so; a line is cut to 8,192 characters. Lines logged after the
   * attempt ended are dropped.
   */
  log(line: string): Promise<void>;
  /**
   * Aborted when the job is cancelled, when the worker stops, when `timeoutMs` passes, or when
   * another process took the job over (this one's heartbeat was lost). `signal.reason` is a
   * `JobAbort`. A job should stop soon after; the worker waits for `run` to settle.
   */
  signal: AbortSignal;
}

/** Why a running job's signal was aborted. */
export class JobAbort extends Error {
  constructor(readonly why: 'cancelled' | 'shutdown' | 'timeout' | 'lost') {
    super(
      {
        cancelled: 'The job was cancelled',
        shutdown: 'The worker is stopping',
        timeout: 'The job ran past its time limit',
        lost: 'Another process took over the job',
      }[why],
    );
    this.name = 'JobAbort';
  }
}

/** A kind of job, registered by the area that runs it. */
export interface JobKind<P, R> {
  /** Letters, digits, `_`, `.`, `-`; at most 64 characters. */
  kind: string;
  run(ctx: JobContext<P>): Promise<R>;
  /** Attempts before a failing job is `failed`; default 1. `enqueue` may say otherwise per job. */
  maxAttempts?: number;
  /** Aborts the signal after this long; the attempt then fails with a timeout error. */
  timeoutMs?: number;
}

/** A job as users see it. */
export interface JobRecord {
  id: number;
  tenantId: number;
  kind: string;
  payload: unknown;
  state: JobState;
  /** Attempts started so far. */
  attempts: number;
  maxAttempts: number;
  /** What `run` returned, once succeeded; else null. */
  result: unknown;
  /** The last attempt's error message, once failed; else null. */
  error: string | null;
  /** True once cancel was asked of a running job; it ends `cancelled`. */
  cancelRequested: boolean;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}

export interface JobLogLine {
  seq: number;
  at: string;
  line: string;
}

export interface ListFilter {
  kind?: string;
  /** Only jobs after this id in the listing's order. */
  afterId?: number;
  limit: number;
  /** Newest first (ids descending); default oldest first. */
  newestFirst?: boolean;
}

export interface Jobs {
  /** Makes a kind runnable by this worker. Kinds are registered before `start`, or later. */
  register<P, R>(kind: JobKind<P, R>): void;
  /** Records a job in state `queued`; a worker of any process sharing the store runs it. */
  enqueue<P>(tenantId: number, kind: string, payload: P, options?: { maxAttempts?: number }): Promise<JobRecord>;
  get(tenantId: number, id: number): Promise<JobRecord | undefined>;
  list(tenantId: number, filter: ListFilter): Promise<JobRecord[]>;
  logs(tenantId: number, id: number, options: { afterSeq?: number; limit: number }): Promise<JobLogLine[]>;
  /**
   * A queued job becomes `cancelled` at once and never runs; a running one has its signal aborted
   * (in whichever process runs it, within a heartbeat) and ends `cancelled`. A finished job is
   * returned unchanged. Undefined when the tenant has no such job.
   */
  cancel(tenantId: number, id: number): Promise<JobRecord | undefined>;
  /** Resolves once the job is succeeded, failed or cancelled; rejects past `timeoutMs` (default 60 s) or when there is no such job. */
  waitFor(tenantId: number, id: number, options?: { timeoutMs?: number }): Promise<JobRecord>;
  /**
   * Deletes finished jobs of `kind` (succeeded, failed or cancelled before `finishedBefore`), at
   * most `limit` (default 1,000) a call, with their logs; answers how many. For kinds that run
   * often and whose records nobody reads later (token refreshes).
   */
  prune(kind: string, finishedBefore: Date, limit?: number): Promise<number>;
  /**
   * Periodic work of this process (a loop claiming due work, which it may enqueue as jobs). It
   * runs only once `startSchedules` was called (or its handle started), apart from `runNow`, and
   * `stop` stops it, waiting for a run in progress.
   */
  schedule(spec: ScheduleSpec): ScheduleHandle;
  /**
   * Starts every schedule, and those added later. Apart from `start`: a process whose worker
   * starts with its first job (tests) runs no schedule on its own.
   */
  startSchedules(): void;
  /**
   * The process's pool of worker threads for CPU-heavy work (a job's or a request's): an area
   * registers its module of task functions, then runs them there. `stop` closes it.
   */
  readonly workers: WorkerPool;
  /** Begins working: claims queued jobs of the registered kinds, and sweeps jobs of dead processes. */
  start(): Promise<void>;
  /**
   * Stops the schedules (waiting for their runs in progress), then stops claiming, aborts running jobs' signals and waits for them (up to `stopTimeoutMs`). A job
   * that returns a value has succeeded; one that throws goes back to `queued` without spending an
   * attempt (a stop is not the job's failure); one whose cancel was requested ends `cancelled`.
   * A job still running after the wait is left to the stale sweep of another (or the next) worker.
   * Last, the worker pool's threads end.
   */
  stop(): Promise<void>;
}

export interface JobsOptions {
  /**
   * The clock of jobs' timestamps, heartbeats and the sweep that reads them; default the system's.
   * It measures whether a worker is alive, so it is real time in every process: an app whose
   * clock tests move keeps this one (services.ts).
   */
  clock?: Clock;
  /** Names this worker in `jobs.owner`; default host:pid:random. Unique per `createJobs`. */
  owner?: string;
  /** Jobs this worker runs at once; default 4. */
  concurrency?: number;
  /** How often a running job's row is touched (and checked for cancel); default 5 s. */
  heartbeatMs?: number;
  /** A running job whose heartbeat is older than this belonged to a dead process; default 30 s. */
  staleAfterMs?: number;
  /** How often this worker sweeps stale jobs; default half of `staleAfterMs`. */
  sweepMs?: number;
  /** How often this worker looks for jobs enqueued by other processes; default 1 s. */
  pollMs?: number;
  /** How long `stop` waits for running jobs; default 30 s. */
  stopTimeoutMs?: number;
  /** Threads of the worker pool for CPU-heavy work; default the available parallelism less one, at least 1. */
  workerThreads?: number;
  /** Log lines kept per job; default 10,000. */
  maxLogLines?: number;
  /** PostgreSQL: pg-boss's schema; default the store's schema + `_jobs` (`pgboss` for `public`). */
  queueSchema?: string;
  /** Errors of the background loops (a failed poll or heartbeat); they are retried on the next turn. */
  onError?: (error: unknown) => void;
  /** A job taken back from a process whose heartbeat stopped (queued again, or failed when no attempt was left); the server logs it. */
  onTakeover?: (takeover: JobTakeover) => void;
}

/** What the stale sweep did with one job of a dead process. */
export interface JobTakeover {
  jobId: number;
  kind: string;
  tenantId: number;
  /** The worker (`host:pid:random`) whose heartbeat stopped. */
  fromOwner: string;
  /** The attempt that process was running (1 for the first). */
  attempt: number;
  maxAttempts: number;
  /** `queued`: it runs again; `failed`: that was its last attempt. */
  outcome: 'queued' | 'failed' | 'cancelled';
  /** The worker that took it back. */
  byOwner: string;
  /** When the dead process last beat. */
  lastHeartbeatAt: string;
}
