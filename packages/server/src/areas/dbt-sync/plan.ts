import type { Repository } from '../../git/repository.js';
import { modelFilesAt } from '../data-model/index.js';
import { isModelFile, type ModelError, type ModelFile } from '../../model/index.js';
import { isGenerated, type GeneratedFile } from './generator/index.js';

/** What a sync changes on top of the deploy branch, and whether the model it makes is valid. */
export interface SyncPlan {
  /** Repository path → new content, or null to delete a generated file whose model is gone. */
  changes: Map<string, string | null>;
  errors: ModelError[];
}

const prefixOf = (root: string) => (root === '' ? '' : `${root}/`);

/**
 * The changes that put `files` (paths from the project root) in the output folder of the commit
 * `base`: new and changed files written, generated files no longer generated deleted. Files in
 * the folder without the generated marker are hand-written and left alone. The model of `base`
 * with the changes is validated as a build would, by `validate` (the data-model validator, on the
 * sync's worker thread).
 */
export async function planSync(
  repo: Repository,
  base: string,
  projectRoot: string,
  outputPath: string,
  files: GeneratedFile[],
  validate: (model: ModelFile[]) => Promise<ModelError[]>,
): Promise<SyncPlan> {
  const prefix = prefixOf(projectRoot);
  const folder = `${prefix}${outputPath}/`;
  const inFolder = (await repo.tree(base)).filter((e) => e.path.startsWith(folder));
  const blobs = await repo.blobs(inFolder.map((e) => e.sha));
  const existing = new Map(inFolder.map((e) => [e.path, blobs.get(e.sha)?.toString('utf8') ?? '']));

  const changes = new Map<string, string | null>();
  const wanted = new Set<string>();
  for (const file of files) {
    const path = `${prefix}${file.path}`;
    wanted.add(path);
    if (existing.get(path) !== file.content) changes.set(path, file.content);
  }
  for (const [path, content] of existing) if (!wanted.has(path) && isGenerated(content)) changes.set(path, null);

  const model = new Map((await modelFilesAt(repo, base, projectRoot)).map((f) => [f.path, f.content]));
  for (const [path, content] of changes) {
    if (content === null) model.delete(path);
    else if (isModelFile(path.slice(prefix.length))) model.set(path, content);
  }
  const errors = await validate([...model].map(([path, content]) => ({ path, content })));
  return { changes, errors };
}
