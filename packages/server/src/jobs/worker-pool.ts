/**
 * The process's one pool of worker threads (piscina) for CPU-heavy work: seconds of parsing,
 * generating or validating that would otherwise hold the event loop while requests wait. An area
 * registers a module of task functions under a name (shared code imports no area); a task names
 * it and the function, and its input and result cross threads by structured clone.
 *
 * The pool is small (a thread for each core but one, by default) and starts with its first task;
 * a thread idle for `idleMs` exits, and idle threads do not keep the process alive. `close()`
 * (the jobs service's `stop`) waits for tasks in hand and ends the threads; a task after it starts
 * a new pool.
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Piscina } from 'piscina';
import type { PoolTask } from './pool-thread.js';

export interface WorkerPoolOptions {
  /** Threads at most; default the available parallelism less one (this thread's), at least 1. */
  size?: number;
  /** A thread idle this long exits; default 5 minutes, so the next sync finds it warm. */
  idleMs?: number;
}

export interface WorkerPool {
  /** Makes the functions `module` exports runnable as tasks of `name`; `module` is the area's `new URL('./x.js', import.meta.url)`. Registering the same module again is no change. */
  register(name: string, module: URL): void;
  /** Runs `fn` of the module registered as `name` on a pool thread with `input`; a thrown error rejects (its message kept). */
  run<I, O>(name: string, fn: string, input: I, options?: { signal?: AbortSignal }): Promise<O>;
  /** The most threads the pool runs. */
  readonly size: number;
  close(): Promise<void>;
}

export function defaultPoolSize(): number {
  return Math.max(1, availableParallelism() - 1);
}

export function createWorkerPool(options: WorkerPoolOptions = {}): WorkerPool {
  const size = options.size ?? defaultPoolSize();
  if (!Number.isSafeInteger(size) || size < 1) throw new RangeError(`the worker pool's size must be a positive integer, not ${size}`);
  const modules = new Map<string, string>();
  let pool: Piscina | null = null;

  const current = (): Piscina =>
    (pool ??= new Piscina({
      filename: threadEntry(),
      minThreads: 0,
      maxThreads: size,
      idleTimeout: options.idleMs ?? 5 * 60_000,
      // A task waits for a free thread rather than failing.
      maxQueue: Infinity,
    }));

  return {
    size,
    register(name, module) {
      const href = sourceOrCompiled(module);
      // The same module again is no change (two services of one area may both register it).
      if (modules.has(name) && modules.get(name) !== href) throw new Error(`Worker pool tasks ${name} are already registered, from another module`);
      modules.set(name, href);
    },
    async run<I, O>(name: string, fn: string, input: I, opts: { signal?: AbortSignal } = {}): Promise<O> {
      const module = modules.get(name);
      if (module === undefined) throw new Error(`No worker pool tasks are registered as ${name}`);
      const task: PoolTask = { module, fn, input };
      return (await current().run(task, opts.signal ? { signal: opts.signal } : {})) as O;
    },
    async close() {
      const closing = pool;
      pool = null;
      await closing?.close();
    },
  };
}

/** Compiled code runs compiled task modules; sources (tsx: tests, scripts) run the TypeScript beside them. */
const FROM_SOURCE = import.meta.url.endsWith('.ts');

function sourceOrCompiled(module: URL): string {
  if (!FROM_SOURCE || !module.href.endsWith('.js')) return module.href;
  return module.href.replace(/\.js$/, '.ts');
}

/**
 * The file piscina loads in each thread. Compiled, pool-thread.js. From sources, pool-thread.ts
 * cannot be imported as it is (Node 20 gives worker threads no --import loader, and piscina
 * imports a path), so a small ES module in the temporary folder loads it through tsx's API.
 */
function threadEntry(): string {
  const thread = new URL(FROM_SOURCE ? './pool-thread.ts' : './pool-thread.js', import.meta.url);
  if (!FROM_SOURCE) return fileURLToPath(thread);
  const tsx = pathToFileURL(
    createRequire(import.meta.url)
      .resolve('tsx/esm/api')
      .replace(/\.cjs$/, '.mjs'),
  ).href;
  const source = [
    `import { tsImport } from ${JSON.stringify(tsx)};`,
    `const thread = await tsImport(${JSON.stringify(thread.href)}, ${JSON.stringify(thread.href)});`,
    'export default thread.default;',
    '',
  ].join('\n');
  const file = join(tmpdir(), `mapi-pool-thread-${createHash('sha256').update(source).digest('hex').slice(0, 16)}.mjs`);
  writeFileSync(file, source);
  return file;
}
