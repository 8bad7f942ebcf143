import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/*
 * Python runs in Pyodide (CPython compiled to WebAssembly, its standard library only), one child
 * process per run. A process is loaded ahead of time (loading takes seconds), handed one run, and
 * killed after it, so no run sees another's state. The walls, outermost first: the process runs
 * under Node's permission model (it may read Pyodide's files and its own program, nothing else; no
 * file writes, no child processes, no workers), with an empty environment and an empty working
 * directory; inside it (sandbox/python-worker.mjs) every road from Python to JavaScript is taken
 * away before it says it is ready, and the JavaScript it would lead to holds nothing that leads
 * out. This side enforces the time and memory limits by killing it.
 */

/** The worker's program: plain JavaScript beside `src` and `dist`, so both find it at the same place. */
export const WORKER_FILE = fileURLToPath(new URL('../../sandbox/python-worker.mjs', import.meta.url));

/** Pyodide's files (the WebAssembly module, the standard library) as its npm package ships them. */
export const PYODIDE_DIR = path.dirname(createRequire(import.meta.url).resolve('pyodide/package.json')) + path.sep;

/**
 * What a caller is told of a worker that died: the last line of its stderr when that is a short
 * message, with any host path replaced; never a line of the runtime's minified source (a crash
 * inside Pyodide prints one) or where the server is installed.
 */
export function crashReason(stderr: string): string | null {
  const last = stderr.trim().split('\n').filter(Boolean).pop();
  if (last === undefined) return null;
  const line = last.replace(/(?:file:\/\/)?\/[^\s'"():,]+/g, '<path>').trim();
  return line.length <= 200 ? line : null;
}

/**
 * Node's permission model: what the worker process may do. Without an --allow-* flag for them,
 * file writes, child processes, worker threads, native addons and WASI are refused; file reads
 * are allowed for Pyodide's directory and the worker's program only. Node 20 calls the switch
 * --experimental-permission, Node 22 and later --permission.
 */
export function permissionFlags(): string[] {
  const major = Number(process.versions.node.split('.')[0]);
  return [major >= 22 ? '--permission' : '--experimental-permission', `--allow-fs-read=${PYODIDE_DIR}`, `--allow-fs-read=${WORKER_FILE}`];
}

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

/** The sandbox was closed (the server is stopping) before the run could finish; nothing it did is kept. */
export class SandboxClosedError extends Error {
  constructor() {
    super('The Python sandbox is closed.');
    this.name = 'SandboxClosedError';
  }
}

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

/** How much of a worker process's own stderr is kept: enough to tell why it died (V8's out-of-memory report). */
const STDERR_TAIL = 4_096;

type WorkerMessage =
  | { type: 'ready' }
  | { type: 'memory'; bytes: number }
  | { type: 'done'; stdout: string; stderr: string; executionError: string | null; outputJson: string | null };
type WorkerEvent = WorkerMessage | { type: 'exit'; outOfMemory: boolean; why: string | null };

/** A worker process that is loading or loaded, not yet given a run. */
interface Pending {
  child: ChildProcess;
  ready: Promise<void>;
  /** What the worker sends next, once it is ready (the run's outcome or a memory report). */
  next: (handler: (event: WorkerEvent) => void) => void;
}

export class PythonSandbox {
  private readonly idle: Pending[] = [];
  /** Every worker process alive, loading, idle or running: `close` and the server's exit kill them all. */
  private readonly children = new Set<ChildProcess>();
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  private closed = false;
  private readonly outputLimit: number;
  /** The workers' working directory: made empty and read-only, so it holds nothing of the server's. */
  private emptyDir: string | null = null;
  /** A server that exits without `close` (a crash, process.exit) still takes its workers with it. */
  private readonly killAll = () => {
    for (const child of this.children) child.kill('SIGKILL');
  };

  constructor(private readonly options: PythonSandboxOptions) {
    this.outputLimit = options.outputLimit ?? 1_000_000;
  }

  /** Runs `code` with `rows` bound to the name `rows`; the run's `output` variable, else its last expression, is the output. */
  async run(code: string, rows: unknown[]): Promise<PythonResult> {
    if (this.closed) throw new SandboxClosedError();
    await this.turn();
    try {
      // Closed while it waited its turn: no process may start after `close` has killed them all.
      if (this.closed) throw new SandboxClosedError();
      const pending = this.idle.shift() ?? this.start();
      this.refill();
      // Killed by `close` mid-run (or while its worker still loaded): that is the server
      // stopping, not the code failing.
      const result = await this.execute(pending, code, JSON.stringify(rows)).catch((error: unknown) => {
        throw this.closed ? new SandboxClosedError() : error;
      });
      if (this.closed) throw new SandboxClosedError();
      return result;
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

  /** Runs that have their turn now (running, or about to start on a worker). */
  busy(): number {
    return this.running;
  }

  /** Process ids of the worker processes alive now (tests check that none outlives `close`). */
  pids(): number[] {
    return [...this.children].map((child) => child.pid).filter((pid): pid is number => pid !== undefined);
  }

  /** Kills every worker process at once (busy ones too) and waits for them to be gone. */
  async close(): Promise<void> {
    this.closed = true;
    this.idle.splice(0);
    const children = [...this.children];
    const gone = children.map((child) => {
      if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
      // Held by the event loop until it is gone, or a server with nothing else left would exit first.
      child.ref();
      return new Promise<void>((resolve) => child.once('exit', () => resolve()));
    });
    this.killAll();
    await Promise.all(gone);
    process.off('exit', this.killAll);
    if (this.emptyDir) fs.rmSync(this.emptyDir, { recursive: true, force: true });
    this.emptyDir = null;
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

  private workingDir(): string {
    if (!this.emptyDir) {
      this.emptyDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mapi-python-'));
      fs.chmodSync(this.emptyDir, 0o555);
    }
    return this.emptyDir;
  }

  private start(): Pending {
    const { memoryMb, timeoutMs } = this.options;
    if (this.children.size === 0) process.on('exit', this.killAll);
    const child = fork(WORKER_FILE, [PYODIDE_DIR, String(memoryMb * 1_048_576), String(this.outputLimit), String(timeoutMs)], {
      // Only these flags: not the server's own (a loader, an inspector), whatever they are.
      execArgv: [...permissionFlags(), `--max-old-space-size=${memoryMb}`, '--no-warnings'],
      // Nothing of the server's: no variables (fork adds only the IPC channel's own), no directory.
      env: {},
      cwd: this.workingDir(),
      // Pyodide's messages while it loads are not the run's output (the run's go through its
      // handlers); stderr is kept in part, to tell a JavaScript heap that ran out from other deaths.
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      serialization: 'json',
    });
    this.children.add(child);
    // An idle pool does not keep the server's event loop alive.
    child.unref();
    child.channel?.unref();
    let stderrTail = '';
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      stderrTail = (stderrTail + chunk).slice(-STDERR_TAIL);
    });
    (child.stderr as { unref?: () => void } | null)?.unref?.();

    let handler: ((event: WorkerEvent) => void) | null = null;
    const queued: WorkerEvent[] = [];
    const deliver = (event: WorkerEvent) => (handler ? handler(event) : queued.push(event));
    const ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`Python did not load within ${LOAD_TIMEOUT_MS / 1000} s.`));
        child.kill('SIGKILL');
      }, LOAD_TIMEOUT_MS);
      let loaded = false;
      child.on('message', (message: WorkerMessage) => {
        if (!loaded && message.type === 'ready') {
          loaded = true;
          clearTimeout(timer);
          resolve();
        } else deliver(message);
      });
      child.on('error', () => {
        // A process that could not start or be signalled: its exit (or the load timeout) says so.
      });
      child.on('exit', () => {
        this.children.delete(child);
        if (this.children.size === 0) process.off('exit', this.killAll);
      });
      // 'close' rather than 'exit': its stderr has been read to the end by then.
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        const why = crashReason(stderrTail) ?? (signal ? `killed by ${signal}` : `exit code ${code}`);
        if (!loaded) reject(new Error(`The Python worker stopped while it loaded: ${why}`));
        deliver({ type: 'exit', outOfMemory: /heap out of memory|Reached heap limit/i.test(stderrTail), why: code === 0 ? null : why });
      });
    });
    return {
      child,
      ready,
      next: (h) => {
        handler = h;
        for (const event of queued.splice(0)) h(event);
      },
    };
  }

  private async execute(pending: Pending, code: string, rowsJson: string): Promise<PythonResult> {
    await pending.ready;
    const { child } = pending;
    const { timeoutMs, memoryMb } = this.options;
    const stopped = (why: string): PythonResult => ({ stdout: '', stderr: '', executionError: why, outputData: null });
    return new Promise<PythonResult>((resolve) => {
      let settled = false;
      const finish = (result: PythonResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        // Never reused: whatever the code left behind goes with the process.
        child.kill('SIGKILL');
        resolve(result);
      };
      const timer = setTimeout(() => finish(stopped(`The analysis ran longer than ${formatSeconds(timeoutMs)} and was stopped.`)), timeoutMs);
      const tooLarge = stopped(`The analysis used more than ${memoryMb} MB of memory and was stopped.`);
      pending.next((event) => {
        if (event.type === 'memory') finish(tooLarge);
        else if (event.type === 'done') {
          finish({
            stdout: event.stdout,
            stderr: event.stderr,
            executionError: event.executionError,
            outputData: event.outputJson === null ? null : JSON.parse(event.outputJson),
          });
        } else if (event.type === 'exit') {
          finish(event.outOfMemory ? tooLarge : stopped(`The Python sandbox stopped unexpectedly${event.why ? `: ${event.why}` : ''}.`));
        }
      });
      child.send({ code, rowsJson }, (error) => {
        if (error) finish(stopped(`The Python sandbox stopped unexpectedly: ${error.message}.`));
      });
    });
  }
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}
