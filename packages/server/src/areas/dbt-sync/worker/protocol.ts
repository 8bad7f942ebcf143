import type { ModelError, ModelFile } from '../../../model/index.js';
import type { GeneratedFile, Generation, ModelSelector } from '../generator/index.js';

/**
 * What the syncs' worker thread is asked to do, answered in order. `session` is one run's: the
 * manifest it parsed is kept under it until `end`.
 */
export type WorkRequest =
  | { id: number; session: number; task: 'parse'; text: string }
  | { id: number; session: number; task: 'generate'; options: { outputPath: string; selector: ModelSelector } }
  | { id: number; session: number; task: 'validate'; files: ModelFile[] }
  | { id: number; session: number; task: 'end' };

export interface ParsedManifest {
  dbtVersion: string | null;
  nodes: number;
}

/** A generation as the job needs it: the files, not the cube objects they were written from. */
export interface WorkerGeneration {
  files: GeneratedFile[];
  cubeCount: number;
  stats: Generation['stats'];
}

export type WorkResult =
  | { task: 'parse'; value: ParsedManifest }
  | { task: 'generate'; value: WorkerGeneration }
  | { task: 'validate'; value: ModelError[] }
  | { task: 'end'; value: null };

/**
 * The answer to a request: its result, a failure whose message is for the user as it is (a
 * manifest that is not JSON, a selector matching nothing), or an unexpected error.
 */
export type WorkResponse =
  ({ id: number; outcome: 'ok' } & WorkResult) | { id: number; outcome: 'failure'; message: string } | { id: number; outcome: 'error'; message: string };
