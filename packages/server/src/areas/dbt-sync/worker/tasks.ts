import { validateModel, type ModelError } from '../../../model/index.js';
import { checkManifest, generateCubes, NothingSelected, type Manifest } from '../generator/index.js';
import type { EndInput, GenerateInput, Outcome, ParsedManifest, ParseInput, ValidateInput, WorkerGeneration } from './protocol.js';

/**
 * The syncs' tasks, run on the jobs service's worker pool: parsing, checking and generating from
 * a manifest, and validating the model the generated files make, are seconds of CPU for a big
 * project. There they hold a pool thread, not the server's event loop.
 */

class Failure extends Error {}

/**
 * Manifests this thread parsed, by run, until that run's generation takes it: the usual run
 * parses once. A few at most, since a run cancelled between the two leaves its own behind.
 */
const manifests = new Map<number, Manifest>();
const KEPT = 2;

function parseText(text: string): Manifest {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new Failure(`The manifest is not valid JSON: ${(error as Error).message}`);
  }
  const checked = checkManifest(value);
  if (!checked.manifest)
    throw new Failure(`The manifest is not a dbt manifest the sync can read: ${checked.problems.map((p) => `${p.pointer || '/'} ${p.message}`).join('; ')}.`);
  return checked.manifest;
}

function outcome<T>(work: () => T): Outcome<T> {
  try {
    return { ok: true, value: work() };
  } catch (error) {
    if (error instanceof Failure) return { ok: false, failure: error.message };
    throw error;
  }
}

export function parse(input: ParseInput): Outcome<ParsedManifest> {
  return outcome(() => {
    const manifest = parseText(input.text);
    manifests.set(input.session, manifest);
    for (const session of manifests.keys()) if (manifests.size > KEPT) manifests.delete(session);
    return { dbtVersion: manifest.metadata.dbt_version ?? null, nodes: Object.keys(manifest.nodes).length };
  });
}

export function generate(input: GenerateInput): Outcome<WorkerGeneration> {
  return outcome(() => {
    const manifest = manifests.get(input.session) ?? parseText(input.text);
    manifests.delete(input.session);
    try {
      const generation = generateCubes(manifest, input.options);
      return { files: generation.files, cubeCount: generation.cubes.length, stats: generation.stats };
    } catch (error) {
      if (error instanceof NothingSelected) throw new Failure(`${error.message} Nothing was generated or deleted.`);
      throw error;
    }
  });
}

export function validate(input: ValidateInput): Outcome<ModelError[]> {
  return outcome(() => validateModel(input.files).errors);
}

export function end(input: EndInput): Outcome<null> {
  manifests.delete(input.session);
  return { ok: true, value: null };
}
