/**
 * Periodic work of this process: loops that look for due work every so often and claim it (a
 * notification's next occurrence, a token near expiry), besides the queued jobs they enqueue.
 * Each schedule runs on its own timer while started; a run still going when the next is due is
 * not doubled, and stopping waits for the run in hand, so nothing touches the store after it
 * closes. The timers do not keep a process alive.
 */

export interface ScheduleSpec {
  /** Names the schedule in errors; unique per jobs service. */
  name: string;
  /** Time between runs; a schedule with 0 or less never runs on its own (`runNow` still runs it). */
  everyMs: number;
  /** One pass over due work. */
  run(): Promise<unknown>;
  /** A run's error; the next run tries again. Default: a process warning. */
  onError?: (error: unknown) => void;
  /** Runs once as soon as the schedule starts, not only after the first `everyMs`; default false. */
  runAtStart?: boolean;
}

export interface ScheduleHandle {
  readonly name: string;
  /** Starts the timer (every `everyMs`, or the period given here); no-op while started. */
  start(everyMs?: number): void;
  /** Stops the timer and waits for a run in progress; `start` may be called again after. */
  stop(): Promise<void>;
  /** Runs now, unless a run is already going (then waits for that one). */
  runNow(): Promise<void>;
  readonly started: boolean;
}

export class Schedules {
  readonly #all = new Map<string, ScheduleHandle>();
  #started = false;

  add(spec: ScheduleSpec): ScheduleHandle {
    if (this.#all.has(spec.name)) throw new Error(`Schedule ${spec.name} is already registered`);
    const handle = schedule(spec);
    this.#all.set(spec.name, handle);
    // A schedule added after the others were started joins them.
    if (this.#started) handle.start();
    return handle;
  }

  start(): void {
    this.#started = true;
    for (const handle of this.#all.values()) handle.start();
  }

  async stop(): Promise<void> {
    this.#started = false;
    await Promise.all([...this.#all.values()].map((handle) => handle.stop()));
  }
}

function schedule(spec: ScheduleSpec): ScheduleHandle {
  const onError =
    spec.onError ?? ((error: unknown) => process.emitWarning(`${spec.name}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`));
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;

  const runNow = (): Promise<void> => {
    running ??= spec
      .run()
      .then(
        () => undefined,
        (error: unknown) => onError(error),
      )
      .finally(() => {
        running = null;
      });
    return running;
  };

  return {
    name: spec.name,
    get started() {
      return timer !== null;
    },
    start(everyMs = spec.everyMs) {
      if (timer !== null || everyMs <= 0) return;
      timer = setInterval(() => void runNow(), everyMs);
      // The loop alone must not keep a process alive.
      timer.unref();
      if (spec.runAtStart) void runNow();
    },
    async stop() {
      if (timer !== null) clearInterval(timer);
      timer = null;
      await running;
    },
    runNow,
  };
}
