import { timestamp, type Clock } from '../../time.js';
import type { Executor } from '../../db/tables.js';
import type { Stage, SyncPhase } from './runs.schemas.js';
import { appendLog, updateRunning } from './runs.store.js';

/** What the poll shows as done at each stage (for display only; reference 7.3). */
const PERCENT: Partial<Record<Stage, number>> = { INITIALIZING: 5, PROCESSING_MANIFEST: 25, WRITING_CUBE_FILES: 80, FINALIZING: 95, COMPLETED: 100 };

/** A failure whose message is for the user as it is (a missing manifest, a selector matching nothing). */
export class SyncFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SyncFailure';
  }
}

/**
 * A run's progress as the job moves: its stage (the poll), its phases with their durations
 * (the history), and a log line for each. Every duration comes from this process's monotonic
 * clock, started when the attempt began.
 */
export class Progress {
  readonly phases: SyncPhase[] = [];
  readonly #origin = performance.now();
  stage: Stage = 'INITIALIZING';
  failedPhase: string | null = null;

  constructor(
    private readonly db: Executor,
    readonly runId: number,
    private readonly now: Clock,
  ) {}

  elapsed(): number {
    return Math.round(performance.now() - this.#origin);
  }

  log(message: string, extra: { level?: 'info' | 'error'; phase?: string; durationMs?: number } = {}): Promise<void> {
    return appendLog(
      this.db,
      this.runId,
      { level: extra.level ?? 'info', message, phase: extra.phase ?? null, durationMs: extra.durationMs ?? null },
      timestamp(this.now),
    );
  }

  async enter(stage: Stage, message: string): Promise<void> {
    this.stage = stage;
    await updateRunning(this.db, this.runId, { stage, last_stage: stage, percent: PERCENT[stage] ?? 0, message }, timestamp(this.now));
    await this.log(message);
  }

  /** Runs one phase: its line on success closes it with its duration; a failure marks it the failed phase. */
  async phase<T>(name: string, fn: () => Promise<T>, done: (value: T) => string): Promise<T> {
    const start = performance.now();
    const startedOffsetMs = Math.round(start - this.#origin);
    try {
      const value = await fn();
      const durationMs = Math.round(performance.now() - start);
      this.phases.push({ phase: name, startedOffsetMs, durationMs, outcome: 'ok' });
      await this.log(done(value), { phase: name, durationMs });
      return value;
    } catch (error) {
      const durationMs = Math.round(performance.now() - start);
      this.phases.push({ phase: name, startedOffsetMs, durationMs, outcome: 'failed' });
      this.failedPhase = name;
      throw error;
    }
  }
}
