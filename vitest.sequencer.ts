import fs from 'node:fs';
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Seconds each file took in a full run, by path from the repository root (`npm run test:durations` writes it). */
export const DURATIONS_FILE = path.join(import.meta.dirname, '.ci/test-durations.json');

/**
 * Starts the longest files first, so that none of them starts late and ends the run alone. Vitest
 * does this from its cache of the last run, which a fresh clone (CI) does not have: there it
 * started the largest files first, and size says little about time (a 16-test file that loads
 * Python took over two minutes). Files the cache knows keep Vitest's order (failed first, then
 * the longest); the others go by the committed durations, and a file in neither goes first.
 */
export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const cache = this.ctx.cache;
    const root = this.ctx.config.root;
    const keyOf = (spec: TestSpecification) => `${spec.project.name}:${path.relative(root, spec.moduleId)}`;
    if (files.every((spec) => cache.getFileTestResults(keyOf(spec)) !== undefined)) return super.sort(files);
    let committed: Record<string, number> = {};
    try {
      committed = JSON.parse(fs.readFileSync(DURATIONS_FILE, 'utf8')) as Record<string, number>;
    } catch {
      return super.sort(files);
    }
    const seconds = (spec: TestSpecification) => committed[path.relative(root, spec.moduleId)] ?? Number.POSITIVE_INFINITY;
    return [...files].sort((a, b) => seconds(b) - seconds(a));
  }
}
