import { Worker } from 'node:worker_threads';
import type { ModelError, ModelFile } from '../../../model/index.js';
import type { ModelSelector } from '../generator/index.js';
import { SyncFailure } from '../progress.js';
import type { ParsedManifest, WorkerGeneration, WorkRequest, WorkResponse, WorkResult } from './protocol.js';

/** The worker's file: compiled JavaScript beside this module, or its TypeScript source (tests, through tsx). */
const FROM_SOURCE = import.meta.url.endsWith('.ts');
const ENTRY = new URL(FROM_SOURCE ? './worker.ts' : './worker.js', import.meta.url);

function spawn(): Worker {
  if (!FROM_SOURCE) return new Worker(ENTRY);
  // Node 20 does not apply --import loaders to worker threads: the source is loaded through tsx's API.
  const href = JSON.stringify(ENTRY.href);
  return new Worker(`import('tsx/esm/api').then(({ tsImport }) => tsImport(${href}, ${href}))`, { eval: true });
}

type Distribute<T> = T extends unknown ? Omit<T, 'id'> : never;
type Pending = { resolve: (r: WorkResult) => void; reject: (e: Error) => void };

/**
 * The process's one worker thread for syncs (worker.ts), started with the first sync and kept:
 * a thread started per run would load and compile the generator and the validator again each
 * time and run them without the JIT's warmth, about doubling a big sync. Runs take turns on it.
 * Idle, it does not keep the process alive; one that dies fails the requests in hand, and the
 * next request starts another.
 */
class SharedWorker {
  #worker: Worker | null = null;
  #pending = new Map<number, Pending>();
  #next = 1;

  #current(): Worker {
    if (this.#worker) return this.#worker;
    const worker = spawn();
    worker.on('message', (response: WorkResponse) => {
      const pending = this.#pending.get(response.id);
      if (!pending) return;
      this.#pending.delete(response.id);
      if (this.#pending.size === 0) worker.unref();
      if (response.outcome === 'ok') pending.resolve(response);
      else pending.reject(response.outcome === 'failure' ? new SyncFailure(response.message) : new Error(response.message));
    });
    const died = (error: Error) => {
      if (this.#worker !== worker) return;
      this.#worker = null;
      const pending = [...this.#pending.values()];
      this.#pending.clear();
      for (const p of pending) p.reject(error);
    };
    worker.on('error', died);
    worker.on('exit', (code) => died(new Error(`the syncs' worker thread exited (${code})`)));
    this.#worker = worker;
    return worker;
  }

  ask(request: Distribute<WorkRequest>): Promise<WorkResult> {
    const worker = this.#current();
    const id = this.#next++;
    // Held open while it has work in hand (a script awaits it), not while idle (a server stopping).
    worker.ref();
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      worker.postMessage({ ...request, id });
    });
  }
}

const shared = new SharedWorker();
let sessions = 0;

/**
 * One run's use of the worker thread: the manifest is parsed there once, then generated from
 * and the resulting model validated, while this thread keeps serving requests. A failure meant
 * for the user comes back as SyncFailure. `close` drops the run's manifest there.
 */
export class SyncThread {
  readonly #session = ++sessions;

  async parse(text: string): Promise<ParsedManifest> {
    const result = await shared.ask({ session: this.#session, task: 'parse', text });
    if (result.task !== 'parse') throw new Error('unexpected answer');
    return result.value;
  }

  async generate(options: { outputPath: string; selector: ModelSelector }): Promise<WorkerGeneration> {
    const result = await shared.ask({ session: this.#session, task: 'generate', options });
    if (result.task !== 'generate') throw new Error('unexpected answer');
    return result.value;
  }

  async validate(files: ModelFile[]): Promise<ModelError[]> {
    const result = await shared.ask({ session: this.#session, task: 'validate', files });
    if (result.task !== 'validate') throw new Error('unexpected answer');
    return result.value;
  }

  async close(): Promise<void> {
    // A worker that died took the manifest with it.
    await shared.ask({ session: this.#session, task: 'end' }).catch(() => undefined);
  }
}
