import type { Repository } from '../../git/repository.js';
import { isModelFile, type ModelFile } from './validator/index.js';

/**
 * The model files of a commit: those below the project root (`deployProjectRoot`, '' for the
 * whole repository) that the validator reads. Paths stay repository-relative, so an error names
 * the file as the tree and git show it.
 */
export async function modelFilesAt(repo: Repository, commit: string, projectRoot: string): Promise<ModelFile[]> {
  const prefix = projectRoot === '' ? '' : `${projectRoot}/`;
  const entries = (await repo.tree(commit)).filter((e) => e.path.startsWith(prefix) && isModelFile(e.path.slice(prefix.length)));
  const blobs = await repo.blobs(entries.map((e) => e.sha));
  return entries.map((e) => ({ path: e.path, content: blobs.get(e.sha)?.toString('utf8') ?? '' }));
}
