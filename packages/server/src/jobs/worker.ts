import type { Store } from '../db/database.js';
import type { JobRow } from '../db/tables.js';
import { timestamp, type Clock } from '../time.js';
import type { Dispatch } from './dispatch.js';
import { appendLog, beat, finishFailed, finishSucceeded, lastLogSeq, reclaimStale, staleJobs, type Attempt } from './jobs.store.js';
import { JobAbort, type JobContext, type JobKind, type JobTakeover } from './types.js';

export interface WorkerSettings {
  clock: Clock;
  owner: string;
  concurrency: number;
  heartbeatMs: number;
  staleAfterMs: number;
  sweepMs: number;
  pollMs: number;
  stopTimeoutMs: number;
  maxLogLines: number;
  onError: (error: unknown) => void;
  onTakeover: (takeover: JobTakeover) => void;
}

/** A log line is cut to this many characters (8 KiB of ASCII): one runaway line cannot fill the table. */
export const MAX_LINE_CHARS = 8192;

/** One attempt running in this worker. */
interface Execution {
  attempt: Attempt;
  kind: string;
  controller: AbortController;
  /** Every reason the signal was aborted for; the first is `signal.reason`. */
  reasons: Set<JobAbort['why']>;
  /** Set once `run` settled: later log lines are dropped and the heartbeat leaves the row alone. */
  ended: boolean;
  settled: Promise<void>;
}

/**
 * Runs claimed jobs with bounded concurrency, keeps their rows' heartbeats, and sweeps the jobs of
 * workers that died. The loop wakes on enqueue and when a slot frees; `pollMs` is only for jobs
 * enqueued by other processes (and other stores in this one).
 */
export class Worker {
  readonly #running = new Map<number, Execution>();
  #started = false;
  #stopping = false;
  #filling: Promise<void> | undefined;
  #again = false;
  #timers: NodeJS.Timeout[] = [];
  #heartbeat: NodeJS.Timeout | undefined;
  #beating: Promise<void> | undefined;
  #sweeping: Promise<void> | undefined;

  constructor(
    private readonly store: Store,
    private readonly dispatch: Dispatch,
    private readonly kinds: ReadonlyMap<string, JobKind<unknown, unknown>>,
    private readonly settings: WorkerSettings,
    /** Called whenever a job's state may have changed here, for `waitFor`. */
    private readonly changed: (id: number) => void,
  ) {}

  async start(): Promise<void> {
    if (this.#started) return;
    this.#started = true;
    this.#stopping = false;
    // Jobs left running by a process that died while this one was down are taken back first.
    await this.#tick('sweep');
    this.#heartbeat = every(this.settings.heartbeatMs, () => void this.#tick('beat'));
    this.#timers = [every(this.settings.sweepMs, () => void this.#tick('sweep')), every(this.settings.pollMs, () => this.wake())];
    this.wake();
  }

  /** Claims jobs while slots are free; a call during a claim makes that claim look again. */
  wake(): void {
    if (!this.#started || this.#stopping) return;
    if (this.#filling) {
      this.#again = true;
      return;
    }
    this.#filling = this.#fill().finally(() => {
      this.#filling = undefined;
      if (this.#again) {
        this.#again = false;
        this.wake();
      }
    });
  }

  /** Aborts a job's attempt if it runs here (the heartbeat tells other processes' workers). */
  cancelled(id: number): void {
    const execution = this.#running.get(id);
    if (execution) abort(execution, 'cancelled');
  }

  async stop(): Promise<void> {
    if (!this.#started) return;
    this.#stopping = true;
    // The heartbeat keeps running while the jobs wind down; the rest stops now.
    for (const timer of this.#timers) clearInterval(timer);
    this.#timers = [];
    await this.#filling;
    await this.#sweeping;
    const executions = [...this.#running.values()];
    for (const execution of executions) abort(execution, 'shutdown');
    let timer: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<void>((resolve) => (timer = setTimeout(resolve, this.settings.stopTimeoutMs)));
    await Promise.race([Promise.all(executions.map((e) => e.settled)), gaveUp]);
    clearTimeout(timer);
    clearInterval(this.#heartbeat);
    await this.#beating;
    // Attempts still running now keep their rows `running` with a heartbeat that no longer
    // moves: another worker's sweep (or this process's next start) takes them back.
    for (const execution of this.#running.values()) execution.ended = true;
    this.#running.clear();
    this.#started = false;
  }

  async #fill(): Promise<void> {
    try {
      while (!this.#stopping) {
        const free = this.settings.concurrency - this.#running.size;
        if (free <= 0) return;
        const rows = await this.dispatch.claim([...this.kinds.keys()], free, this.settings.owner, timestamp(this.settings.clock));
        if (rows.length === 0) return;
        for (const row of rows) {
          if (this.#stopping) await this.#release(row);
          else this.#execute(row);
        }
      }
    } catch (error) {
      this.settings.onError(error);
    }
  }

  /** A job claimed as the worker began to stop goes back to the queue, its attempt not spent. */
  async #release(row: JobRow): Promise<void> {
    const attempt = { id: row.id, owner: this.settings.owner, attempts: row.attempts };
    await this.dispatch.queue(row.kind, (db) => finishFailed(db, attempt, 'The worker stopped', timestamp(this.settings.clock), { spent: false }));
  }

  #execute(row: JobRow): void {
    const kind = this.kinds.get(row.kind);
    const execution: Execution = {
      attempt: { id: row.id, owner: this.settings.owner, attempts: row.attempts },
      kind: row.kind,
      controller: new AbortController(),
      reasons: new Set(),
      ended: false,
      settled: Promise.resolve(),
    };
    // This worker may claim again a job another worker took back from it (its heartbeat was late):
    // the old attempt can no longer finish the row, and must stop.
    const previous = this.#running.get(row.id);
    if (previous) abort(previous, 'lost');
    this.#running.set(row.id, execution);
    execution.settled = (kind ? this.#attempt(row, kind, execution) : Promise.reject(new Error(`No job kind ${row.kind} is registered`)))
      .catch((error: unknown) => this.settings.onError(error))
      .finally(() => {
        execution.ended = true;
        if (this.#running.get(row.id) === execution) this.#running.delete(row.id);
        this.changed(row.id);
        this.wake();
      });
  }

  async #attempt(row: JobRow, kind: JobKind<unknown, unknown>, execution: Execution): Promise<void> {
    const { signal } = execution.controller;
    const log = await this.#logger(row.id, execution);
    const ctx: JobContext<unknown> = { id: row.id, tenantId: row.tenant_id, payload: JSON.parse(row.payload), attempt: row.attempts, log, signal };
    const limit = kind.timeoutMs === undefined ? undefined : setTimeout(() => abort(execution, 'timeout'), kind.timeoutMs);
    let outcome: { ok: true; result: string } | { ok: false; error: unknown };
    try {
      const value = await kind.run(ctx);
      outcome = { ok: true, result: JSON.stringify(value === undefined ? null : value) };
    } catch (error) {
      outcome = { ok: false, error };
    } finally {
      clearTimeout(limit);
      execution.ended = true;
    }
    const at = timestamp(this.settings.clock);
    if (outcome.ok) {
      await finishSucceeded(this.store.db, execution.attempt, outcome.result, at);
      return;
    }
    const reasons = execution.reasons;
    const message = reasons.has('timeout') ? `The job ran past its time limit of ${kind.timeoutMs} ms` : messageOf(outcome.error);
    // An attempt a stop interrupted is not the job's failure: it goes back without spending an attempt.
    const spent = !reasons.has('shutdown') || reasons.has('timeout');
    await this.dispatch.queue(row.kind, (db) => finishFailed(db, execution.attempt, message, at, { spent }));
  }

  /** `log` for one attempt: numbered after the job's earlier lines, capped per job, dropped once the attempt ended. */
  async #logger(jobId: number, execution: Execution): Promise<(line: string) => Promise<void>> {
    const max = this.settings.maxLogLines;
    let seq = await lastLogSeq(this.store.db, jobId);
    return async (line: string) => {
      if (execution.ended || seq > max) return;
      seq += 1;
      const text = seq > max ? `[log truncated: only the first ${max} lines of a job are kept]` : cut(String(line));
      await appendLog(this.store.db, { jobId, seq, at: timestamp(this.settings.clock), line: text });
    };
  }

  /** Runs one background task at a time per kind; a failure is reported and retried on the next turn. */
  #tick(what: 'beat' | 'sweep'): Promise<void> {
    const current = what === 'beat' ? this.#beating : this.#sweeping;
    if (current) return current;
    const task = (what === 'beat' ? this.#beat() : this.#sweep()).catch((error: unknown) => this.settings.onError(error));
    const done = task.finally(() => {
      if (what === 'beat') this.#beating = undefined;
      else this.#sweeping = undefined;
    });
    if (what === 'beat') this.#beating = done;
    else this.#sweeping = done;
    return done;
  }

  /** Touches this worker's running rows; a row it no longer holds, or whose cancel was asked, aborts its attempt. */
  async #beat(): Promise<void> {
    const live = [...this.#running.entries()].filter(([, e]) => !e.ended);
    if (live.length === 0) return;
    const held = new Map(
      (
        await beat(
          this.store.db,
          this.settings.owner,
          live.map(([id]) => id),
          timestamp(this.settings.clock),
        )
      ).map((r) => [r.id, r.cancel_requested]),
    );
    for (const [id, execution] of live) {
      if (execution.ended) continue;
      const cancel = held.get(id);
      if (cancel === undefined) abort(execution, 'lost');
      else if (cancel === 1) abort(execution, 'cancelled');
    }
  }

  /** Takes back the jobs of workers whose heartbeat stopped: queued again while attempts remain, else failed. */
  async #sweep(): Promise<void> {
    const cutoff = new Date(this.settings.clock().getTime() - this.settings.staleAfterMs).toISOString();
    for (const stale of await staleJobs(this.store.db, cutoff, 100)) {
      // A job this worker still runs (or is finishing) only looks stale: its event loop was held
      // up past a beat. One it owns but no longer runs (a stop that timed out, a finish whose
      // write failed) is taken back like any other.
      const mine = this.#running.get(stale.id);
      if (mine && stale.owner === this.settings.owner && mine.attempt.attempts === stale.attempts) continue;
      const after = await this.dispatch.queue(stale.kind, (db) => reclaimStale(db, stale, timestamp(this.settings.clock)));
      if (after) {
        this.changed(after.id);
        this.settings.onTakeover({
          jobId: stale.id,
          kind: stale.kind,
          tenantId: stale.tenant_id,
          fromOwner: stale.owner ?? '',
          attempt: stale.attempts,
          maxAttempts: stale.max_attempts,
          outcome: after.state === 'queued' ? 'queued' : after.state === 'cancelled' ? 'cancelled' : 'failed',
          byOwner: this.settings.owner,
          lastHeartbeatAt: stale.heartbeat_at ?? '',
        });
      }
    }
    this.wake();
  }
}

/** A timer that does not keep the process alive: a worker alone must not (a CLI that enqueued and is done). */
function every(ms: number, fn: () => void): NodeJS.Timeout {
  const timer = setInterval(fn, ms);
  timer.unref();
  return timer;
}

function abort(execution: Execution, why: JobAbort['why']): void {
  if (execution.ended || execution.reasons.has(why)) return;
  execution.reasons.add(why);
  if (!execution.controller.signal.aborted) execution.controller.abort(new JobAbort(why));
}

function messageOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return cut(message || 'The job failed');
}

/** Cuts to MAX_LINE_CHARS, never between the two halves of a surrogate pair. */
function cut(text: string): string {
  if (text.length <= MAX_LINE_CHARS) return text;
  let end = MAX_LINE_CHARS - 1;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}…`;
}
