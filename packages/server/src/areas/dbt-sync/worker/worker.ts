import { parentPort } from 'node:worker_threads';
import { validateModel } from '../../../model/index.js';
import { checkManifest, generateCubes, NothingSelected, type Manifest } from '../generator/index.js';
import type { WorkRequest, WorkResponse, WorkResult } from './protocol.js';

/**
 * The syncs' worker thread: parsing, checking and generating from a manifest, and validating the
 * model the generated files make, are seconds of CPU for a big project. Here they hold this
 * thread, not the server's event loop. Each run's parsed manifest stays here, under its session,
 * until the run ends, so it crosses threads once, as text.
 */

class Failure extends Error {}

const manifests = new Map<number, Manifest>();

function parse(text: string): Manifest {
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

function perform(request: WorkRequest): WorkResult {
  switch (request.task) {
    case 'parse': {
      const manifest = parse(request.text);
      manifests.set(request.session, manifest);
      return { task: 'parse', value: { dbtVersion: manifest.metadata.dbt_version ?? null, nodes: Object.keys(manifest.nodes).length } };
    }
    case 'generate': {
      const manifest = manifests.get(request.session);
      if (!manifest) throw new Error('generate before parse');
      try {
        const generation = generateCubes(manifest, request.options);
        return { task: 'generate', value: { files: generation.files, cubeCount: generation.cubes.length, stats: generation.stats } };
      } catch (error) {
        if (error instanceof NothingSelected) throw new Failure(`${error.message} Nothing was generated or deleted.`);
        throw error;
      }
    }
    case 'validate':
      return { task: 'validate', value: validateModel(request.files).errors };
    case 'end':
      manifests.delete(request.session);
      return { task: 'end', value: null };
  }
}

parentPort?.on('message', (request: WorkRequest) => {
  let response: WorkResponse;
  try {
    response = { id: request.id, outcome: 'ok', ...perform(request) };
  } catch (error) {
    response = { id: request.id, outcome: error instanceof Failure ? 'failure' : 'error', message: (error as Error).message };
  }
  parentPort?.postMessage(response);
});
