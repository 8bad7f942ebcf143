/**
 * A thread of the worker pool (worker-pool.ts). A task names the module an area registered and
 * the function of it to call; modules are loaded once per thread and stay, so a thread keeps the
 * JIT's warmth for the next task. Under tsx (tests, scripts) a module is TypeScript, loaded
 * through tsx's API: Node 20 applies no --import loader to worker threads.
 */

export interface PoolTask {
  /** The module's URL: `.js` beside the compiled pool, `.ts` from sources. */
  module: string;
  /** An exported function taking the task's input. */
  fn: string;
  input: unknown;
}

type TaskModule = Record<string, unknown>;

const modules = new Map<string, Promise<TaskModule>>();

async function load(href: string): Promise<TaskModule> {
  if (!href.endsWith('.ts')) return (await import(href)) as TaskModule;
  const { tsImport } = await import('tsx/esm/api');
  return (await tsImport(href, import.meta.url)) as TaskModule;
}

export default async function runTask(task: PoolTask): Promise<unknown> {
  let loading = modules.get(task.module);
  if (!loading) {
    loading = load(task.module);
    modules.set(task.module, loading);
  }
  const fn = (await loading)[task.fn];
  if (typeof fn !== 'function') throw new Error(`${task.module} exports no function ${task.fn}`);
  return (fn as (input: unknown) => unknown)(task.input);
}
