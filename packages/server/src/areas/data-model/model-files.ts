import type { Repository } from '../../git/repository.js';
import { isModelFile, MAX_MODEL_FILE_BYTES, type ModelFile } from '../../model/index.js';

/**
 * The model files of a commit: those below the project root (`deployProjectRoot`, '' for the
 * whole repository) that the validator reads. Paths stay repository-relative, so an error names
 * the file as the tree and git show it.
 */
export async function modelFilesAt(repo: Repository, commit: string, projectRoot: string): Promise<ModelFile[]> {
  const prefix = projectRoot === '' ? '' : `${projectRoot}/`;
  const entries = (await repo.tree(commit)).filter((e) => e.path.startsWith(prefix) && isModelFile(e.path.slice(prefix.length)));
  // A blob over the limit is never read into memory: the validator reports it by its size.
  const blobs = await repo.blobs(entries.filter((e) => e.size <= MAX_MODEL_FILE_BYTES).map((e) => e.sha));
  return entries.map((e) =>
    e.size > MAX_MODEL_FILE_BYTES ? { path: e.path, content: '', unreadBytes: e.size } : { path: e.path, content: blobs.get(e.sha)?.toString('utf8') ?? '' },
  );
}
