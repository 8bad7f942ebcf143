/**
 * The due-time claim loop of rows that carry an hourly-cron schedule (`cron`, `timezone`,
 * `next_run_at`): a schedule of the jobs service that, on each tick, reads the rows whose next run
 * time has passed and claims each occurrence once across every process sharing the store. A claim
 * is one serialized transaction under the row's lock: a compare-and-set moves `next_run_at` on,
 * and only the process whose move succeeded records the occurrence; it then enqueues the
 * occurrence's job outside that transaction. A process that was away for several occurrences
 * runs the newest only. The caller says which rows are due, how one is advanced and recorded, and
 * what is enqueued; the loop knows no area.
 */
import type { Store } from '../db/database.js';
import type { Executor } from '../db/tables.js';
import { serialized } from '../db/transactions.js';
import { catchUp } from '../shared/hourly-cron.js';
import type { Clock } from '../time.js';
import type { ScheduleHandle } from './schedule.js';
import type { Jobs } from './types.js';

/** Due rows read per statement; a tick reads again while pages come back full. */
const BATCH = 100;

/** What the loop reads of a scheduled row. */
export interface DueRow {
  id: number;
  cron: string;
  timezone: string;
  /** The next occurrence; null when the schedule has none left. */
  next_run_at: string | null;
}

export interface DueClaimSpec<Row extends DueRow, Claimed> {
  /** The schedule's name (`jobs.schedule`). */
  name: string;
  /** Time between ticks. */
  everyMs: number;
  /** A tick's error; default: the jobs service's (a process warning). */
  onError?: (error: unknown) => void;
  /** The loop's clock; tests move it. */
  now: Clock;
  /** Up to `limit` rows whose next occurrence is at or before `now`, oldest first. */
  due(db: Executor, now: string, limit: number): Promise<Row[]>;
  /** The serialized-transaction lock of a row (`lockKey`). */
  lock(row: Row): string;
  /** Moves the row's next occurrence from `from` to `to` if it still is `from`: true for the one process that did. */
  advance(trx: Executor, id: number, from: string, to: string | null): Promise<boolean>;
  /** Records the claimed occurrence (scheduled for `scheduledFor`) in the claim's transaction. */
  record(trx: Executor, row: Row, scheduledFor: string): Promise<Claimed | undefined>;
  /** Hands a recorded occurrence to its job, once the claim has committed. */
  enqueue(claimed: Claimed): Promise<unknown>;
}

/** A claim loop registered with the jobs service: it starts and stops with the other schedules. */
export class DueClaims<Row extends DueRow, Claimed> {
  readonly #loop: ScheduleHandle;

  constructor(
    private readonly store: Store,
    jobs: Jobs,
    private readonly spec: DueClaimSpec<Row, Claimed>,
  ) {
    this.#loop = jobs.schedule({
      name: spec.name,
      everyMs: spec.everyMs,
      run: () => this.tick(),
      ...(spec.onError ? { onError: spec.onError } : {}),
    });
  }

  async stop(): Promise<void> {
    await this.#loop.stop();
  }

  /** Claims and enqueues what is due now; resolves with how many occurrences this call claimed. */
  async tick(): Promise<number> {
    let claimed = 0;
    for (;;) {
      const now = this.spec.now();
      const due = await this.spec.due(this.store.db, now.toISOString(), BATCH);
      for (const row of due) if (await this.#claim(row, now)) claimed += 1;
      if (due.length < BATCH) return claimed;
    }
  }

  async #claim(row: Row, now: Date): Promise<boolean> {
    if (row.next_run_at === null) return false;
    const from = row.next_run_at;
    const { latest, following } = catchUp(row.cron, row.timezone, new Date(from), now);
    const claimed = await serialized(this.store, this.spec.lock(row), async (trx) => {
      if (!(await this.spec.advance(trx, row.id, from, following?.toISOString() ?? null))) return undefined;
      return this.spec.record(trx, row, latest.toISOString());
    });
    if (claimed === undefined) return false;
    await this.spec.enqueue(claimed);
    return true;
  }
}
