import type { ModelError, ModelFile } from '../../../model/index.js';
import type { GeneratedFile, Generation, ModelSelector } from '../generator/index.js';

/**
 * The syncs' tasks on the worker pool (tasks.ts). `session` is one run's: the manifest a thread
 * parsed is kept there under it for the run's generation.
 */
export interface ParseInput {
  session: number;
  text: string;
}

export interface GenerateInput {
  session: number;
  /** Parsed again on a thread that does not hold the session's manifest (the pool has several). */
  text: string;
  options: { outputPath: string; selector: ModelSelector };
}

export interface ValidateInput {
  files: ModelFile[];
}

export interface EndInput {
  session: number;
}

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

export type { ModelError };

/** A task's answer: its value, or a failure whose message is for the user as it is (a manifest that is not JSON, a selector matching nothing). An unexpected error rejects. */
export type Outcome<T> = { ok: true; value: T } | { ok: false; failure: string };
