import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

/*
 * Python runs in Pyodide (CPython compiled to WebAssembly, its standard library only), one worker
 * thread per run. A worker is loaded ahead of time (loading takes seconds), handed one run, and
 * terminated after it, so no run sees another's state. The worker itself
 * (sandbox/python-worker.mjs) takes away everything that leads out of it before it says it is
 * ready; this side enforces the time and memory limits by terminating it.
 */

/** The worker's program: plain JavaScript beside `src` and `dist`, so both find it at the same place. */
const WORKER_FILE = fileURLToPath(new URL('../../sandbox/python-worker.mjs', import.meta.url));

/** Pyodide's files (the WebAssembly module, the standard library) as its npm package ships them. */
const PYODIDE_DIR = path.dirname(createRequire(import.meta.url).resolve('pyodide/package.json')) + path.sep;

export interface PythonSandboxOptions {
  /** Workers kept loaded and waiting for a run (PYTHON_POOL_SIZE); 0: each run loads its own. */
  poolSize: number;
  /** Runs at once (PYTHON_CONCURRENCY); more wait their turn. */
  concurrency: number;
  /** Runs that may wait their turn (PYTHON_QUEUE_LIMIT); one more is refused with SandboxBusyError. Default 32. */
  queueLimit?: number;
  /** How long the code may run (PYTHON_TIMEOUT_MS), not counting the load. */
  timeoutMs: number;
  /** Memory a run may use (PYTHON_MEMORY_MB): the WebAssembly memory, and separately the worker's JavaScript heap. */
  memoryMb: number;
  /** The most characters kept of stdout and of stderr each, and of the output as JSON. */
  outputLimit?: number;
}

export const DEFAULT_PYTHON_OPTIONS: PythonSandboxOptions = { poolSize: 2, concurrency: 2, timeoutMs: 10_000, memoryMb: 256, queueLimit: 32 };

/**
 * Every run slot is taken and the queue is full: a burst is refused at once rather than piling up
 * requests (and their memory) that would only time out in the queue.
 */
export class SandboxBusyError extends Error {
  constructor(readonly queued: number) {
    super(`${queued} Python runs are already waiting`);
    this.name = 'SandboxBusyError';
  }
}

/** What a run produced. `executionError` is the code's error (its traceback), or why it was stopped; null when it ran through. */
export interface PythonResult {
  stdout: string;
  stderr: string;
  executionError: string | null;
  outputData: unknown;
}

/** How long a worker may take to load Pyodide before it is given up on. */
const LOAD_TIMEOUT_MS = 60_000;

type WorkerMessage = { type: 'ready' } | { type: 'memory'; bytes: number } | { type: 'done'; stdout: string; stderr: string; executionError: string | null; outputJson: string | null };

/** A worker that is loading or loaded, not yet given a run. */
interface Pending {
  worker: Worker;
  ready: Promise<void>;
  /** What the worker sends next, once it is ready (the run's outcome or a memory report). */
  next: (handler: (message: WorkerMessage | { type: 'exit'; error: Error | null }) => void) => void;
}

export class PythonSandbox {
  private readonly idle: Pending[] = [];
  /** Workers running a run now, terminated by `close` too. */
  private readonly busy = new Set<Worker>();
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  private closed = false;
  private readonly outputLimit: number;

  constructor(private readonly options: PythonSandboxOptions) {
    this.outputLimit = options.outputLimit ?? 1_000_000;
  }

  /** Runs `code` with `rows` bound to the name `rows`; the run's `output` variable, else its last expression, is the output. */
  async run(code: string, rows: unknown[]): Promise<PythonResult> {
    if (this.closed) throw new Error('The Python sandbox is closed.');
    await this.turn();
    try {
      const pending = this.idle.shift() ?? this.start();
      this.refill();
      return await this.execute(pending, code, JSON.stringify(rows));
    } finally {
      this.running -= 1;
      this.waiting.shift()?.();
    }
  }

  /** Loads the pool's workers now rather than on the first run (a server that offers Python analysis). */
  warm(): void {
    this.refill();
  }

  /** Resolves once every pooled worker has loaded (the benchmark times runs on loaded workers only). */
  async ready(): Promise<void> {
    await Promise.allSettled(this.idle.map((p) => p.ready));
  }

  async close(): Promise<void> {
    this.closed = true;
    const workers = [...this.idle.splice(0).map((p) => p.worker), ...this.busy];
    await Promise.all(workers.map((worker) => worker.terminate()));
  }

  private turn(): Promise<void> {
    if (this.running < this.options.concurrency) {
      this.running += 1;
      return Promise.resolve();
    }
    if (this.waiting.length >= (this.options.queueLimit ?? 32)) return Promise.reject(new SandboxBusyError(this.waiting.length));
    return new Promise((resolve) => {
      this.waiting.push(() => {
        this.running += 1;
        resolve();
      });
    });
  }

  private refill(): void {
    while (!this.closed && this.idle.length < this.options.poolSize) {
      const pending = this.start();
      this.idle.push(pending);
      // A pooled worker that dies before it is used is replaced by the next run's refill.
      pending.ready.catch(() => {
        const at = this.idle.indexOf(pending);
        if (at !== -1) this.idle.splice(at, 1);
      });
    }
  }

  private start(): Pending {
    const memoryMb = this.options.memoryMb;
    const worker = new Worker(WORKER_FILE, {
      workerData: { indexURL: PYODIDE_DIR, memoryLimitBytes: memoryMb * 1_048_576, outputLimitBytes: this.outputLimit },
      resourceLimits: { maxOldGenerationSizeMb: memoryMb, maxYoungGenerationSizeMb: Math.min(32, memoryMb), stackSizeMb: 4 },
      // Pyodide's own messages while it loads are not the run's output (the run's go through its handlers).
      stdout: true,
      stderr: true,
      env: {},
    });
    worker.unref();
    let handler: ((message: WorkerMessage | { type: 'exit'; error: Error | null }) => void) | null = null;
    const queued: Array<WorkerMessage | { type: 'exit'; error: Error | null }> = [];
    const deliver = (message: WorkerMessage | { type: 'exit'; error: Error | null }) => (handler ? handler(message) : queued.push(message));
    let failed: Error | null = null;
    const ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`Python did not load within ${LOAD_TIMEOUT_MS / 1000} s.`));
        void worker.terminate();
      }, LOAD_TIMEOUT_MS);
      let loaded = false;
      worker.on('message', (message: WorkerMessage) => {
        if (!loaded && message.type === 'ready') {
          loaded = true;
          clearTimeout(timer);
          resolve();
        } else deliver(message);
      });
      worker.on('error', (error) => {
        failed = error;
      });
      worker.on('exit', () => {
        clearTimeout(timer);
        if (!loaded) reject(failed ?? new Error('The Python worker stopped while it loaded.'));
        deliver({ type: 'exit', error: failed });
      });
    });
    // Drain the worker's own output so it never blocks on a full pipe.
    worker.stdout.resume();
    worker.stderr.resume();
    return {
      worker,
      ready,
      next: (h) => {
        handler = h;
        for (const message of queued.splice(0)) h(message);
      },
    };
  }

  private async execute(pending: Pending, code: string, rowsJson: string): Promise<PythonResult> {
    await pending.ready;
    const { worker } = pending;
    this.busy.add(worker);
    worker.once('exit', () => this.busy.delete(worker));
    const { timeoutMs, memoryMb } = this.options;
    const stopped = (why: string): PythonResult => ({ stdout: '', stderr: '', executionError: why, outputData: null });
    return new Promise<PythonResult>((resolve) => {
      let settled = false;
      const finish = (result: PythonResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        // Never reused: whatever the code left behind goes with the worker.
        void worker.terminate();
        resolve(result);
      };
      const timer = setTimeout(() => finish(stopped(`The analysis ran longer than ${formatSeconds(timeoutMs)} and was stopped.`)), timeoutMs);
      const tooLarge = stopped(`The analysis used more than ${memoryMb} MB of memory and was stopped.`);
      pending.next((message) => {
        if (message.type === 'memory') finish(tooLarge);
        else if (message.type === 'done') {
          finish({ stdout: message.stdout, stderr: message.stderr, executionError: message.executionError, outputData: message.outputJson === null ? null : JSON.parse(message.outputJson) });
        } else if (message.type === 'exit') {
          const outOfMemory = (message.error as { code?: string } | null)?.code === 'ERR_WORKER_OUT_OF_MEMORY';
          finish(outOfMemory ? tooLarge : stopped(`The Python sandbox stopped unexpectedly${message.error ? `: ${message.error.message}` : ''}.`));
        }
      });
      worker.postMessage({ code, rowsJson });
    });
  }
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}
