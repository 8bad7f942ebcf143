import type { WorkerPool } from '../../../jobs/index.js';
import type { ModelError, ModelFile } from '../../../model/index.js';
import type { ModelSelector } from '../generator/index.js';
import { SyncFailure } from '../progress.js';
import type { EndInput, GenerateInput, Outcome, ParsedManifest, ParseInput, ValidateInput, WorkerGeneration } from './protocol.js';

/** The name the syncs' tasks (tasks.ts) are registered under on the jobs service's worker pool. */
export const SYNC_TASKS = 'dbt-sync';

/** Makes the syncs' tasks runnable on `pool`; once per pool, by the syncs' service. */
export function registerSyncTasks(pool: WorkerPool): void {
  pool.register(SYNC_TASKS, new URL('./tasks.js', import.meta.url));
}

let sessions = 0;

/**
 * One run's use of the worker pool: the manifest is parsed there, then generated from and the
 * resulting model validated, while this thread keeps serving requests. A failure meant for the
 * user comes back as SyncFailure. `close` drops the run's manifest there.
 */
export class SyncThread {
  readonly #session = ++sessions;
  #text = '';

  constructor(private readonly pool: WorkerPool) {}

  async #ask<I, T>(fn: string, input: I): Promise<T> {
    const outcome = await this.pool.run<I, Outcome<T>>(SYNC_TASKS, fn, input);
    if (!outcome.ok) throw new SyncFailure(outcome.failure);
    return outcome.value;
  }

  parse(text: string): Promise<ParsedManifest> {
    this.#text = text;
    return this.#ask<ParseInput, ParsedManifest>('parse', { session: this.#session, text });
  }

  generate(options: { outputPath: string; selector: ModelSelector }): Promise<WorkerGeneration> {
    return this.#ask<GenerateInput, WorkerGeneration>('generate', { session: this.#session, text: this.#text, options });
  }

  validate(files: ModelFile[]): Promise<ModelError[]> {
    return this.#ask<ValidateInput, ModelError[]>('validate', { files });
  }

  async close(): Promise<void> {
    this.#text = '';
    // Dropped at generation in the usual run; a run stopped before it leaves its manifest here.
    await this.#ask<EndInput, null>('end', { session: this.#session }).catch(() => undefined);
  }
}
