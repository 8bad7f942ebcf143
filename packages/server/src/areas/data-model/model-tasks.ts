import type { WorkerPool } from '../../jobs/index.js';
import { validateModel, type ModelFile, type ModelValidation } from '../../model/index.js';

/**
 * The data model's tasks on the jobs service's worker pool: compiling a model (parsing every
 * file, checking it and building the artifact) is seconds of CPU for a big project, which on the
 * event loop would hold every request of the process meanwhile. Builds and the validate route run
 * it there.
 */

/** The name these tasks are registered under on the pool. */
export const MODEL_TASKS = 'data-model';

/** Makes these tasks runnable on `pool`; builds and validation both call it, the first registers. */
export function registerModelTasks(pool: WorkerPool): void {
  pool.register(MODEL_TASKS, new URL('./model-tasks.js', import.meta.url));
}

/** `validateModel` on a pool thread. */
export function compileModel(pool: WorkerPool, files: ModelFile[]): Promise<ModelValidation> {
  return pool.run<ModelFile[], ModelValidation>(MODEL_TASKS, 'validate', files);
}

/** The task itself, run on a pool thread. */
export function validate(files: ModelFile[]): ModelValidation {
  return validateModel(files);
}
