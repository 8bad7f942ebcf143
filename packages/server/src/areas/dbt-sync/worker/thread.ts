import { Worker } from 'node:worker_threads';
import type { ModelError, ModelFile } from '../../data-model/validator/index.js';
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

/**
 * One sync's worker thread (worker.ts), alive for one run: the manifest is parsed there once,
 * then generated from and the resulting model validated, while this thread keeps serving
 * requests. A failure meant for the user comes back as SyncFailure; a worker that dies fails
 * the request in hand.
 */
export class SyncThread {
  readonly #worker = spawn();
  #next = 1;
  #pending: { id: number; resolve: (r: WorkResult) => void; reject: (e: Error) => void } | null = null;
  #dead: Error | null = null;

  constructor() {
    // The run holds the process open, not its worker: a stopping server is not kept up by one.
    this.#worker.unref();
    this.#worker.on('message', (response: WorkResponse) => {
      const pending = this.#pending;
      if (!pending || pending.id !== response.id) return;
      this.#pending = null;
      if (response.outcome === 'ok') pending.resolve(response);
      else pending.reject(response.outcome === 'failure' ? new SyncFailure(response.message) : new Error(response.message));
    });
    const die = (error: Error) => {
      this.#dead = error;
      this.#pending?.reject(error);
      this.#pending = null;
    };
    this.#worker.on('error', die);
    this.#worker.on('exit', (code) => die(new Error(`the sync's worker thread exited (${code})`)));
  }

  #ask(request: Distribute<WorkRequest>): Promise<WorkResult> {
    if (this.#dead) return Promise.reject(this.#dead);
    if (this.#pending) return Promise.reject(new Error('the sync’s worker thread is busy'));
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#pending = { id, resolve, reject };
      this.#worker.postMessage({ ...request, id });
    });
  }

  async parse(text: string): Promise<ParsedManifest> {
    const result = await this.#ask({ task: 'parse', text });
    if (result.task !== 'parse') throw new Error('unexpected answer');
    return result.value;
  }

  async generate(options: { outputPath: string; selector: ModelSelector }): Promise<WorkerGeneration> {
    const result = await this.#ask({ task: 'generate', options });
    if (result.task !== 'generate') throw new Error('unexpected answer');
    return result.value;
  }

  async validate(files: ModelFile[]): Promise<ModelError[]> {
    const result = await this.#ask({ task: 'validate', files });
    if (result.task !== 'validate') throw new Error('unexpected answer');
    return result.value;
  }

  async close(): Promise<void> {
    this.#worker.removeAllListeners('exit');
    await this.#worker.terminate();
  }
}
