import type { Signature } from '../../git/objects.js';
import type { Repository } from '../../git/repository.js';

/** Both branches changed the same paths; nothing was merged. */
export class MergeConflict extends Error {
  constructor(readonly paths: string[]) {
    super(`conflicting paths: ${paths.join(', ')}`);
    this.name = 'MergeConflict';
  }
}

export interface Integration {
  /** Source and target branch heads. */
  source: string;
  target: string;
  author: Signature;
  message: string;
  /** One commit with the merged tree and the target as its only parent, instead of a merge commit. */
  squash?: boolean;
  /** Keep the source's version of each conflicting path instead of failing (reference 2.15 `resolveMergeConflict`). */
  preferSource?: boolean;
}

/**
 * The commit the target branch should move to so that it holds the source's changes, or null
 * when it holds them already (by history, or by content). A target the source has not diverged from is fast-forwarded
 * (unless squashing); otherwise git merges the two three ways. Refs are not moved here: the
 * caller moves the target from `target` to the result, so a target that moved meanwhile fails.
 */
export async function integrate(repo: Repository, job: Integration): Promise<string | null> {
  if (await repo.isAncestor(job.source, job.target)) return null;
  if (!job.squash && (await repo.isAncestor(job.target, job.source))) return job.source;
  const merged = await repo.mergeTrees(job.target, job.source);
  let tree = merged.tree;
  if (merged.conflicts.length > 0) {
    if (!job.preferSource) throw new MergeConflict(merged.conflicts);
    const sourceFiles = new Map((await repo.tree(job.source)).map((e) => [e.path, e.sha]));
    tree = await repo.withEntries(tree, new Map(merged.conflicts.map((path) => [path, sourceFiles.get(path) ?? null])));
  }
  // Nothing to bring over (say, a branch merged before with squash): no empty merge commit.
  if (tree === (await repo.treeOf(job.target))) return null;
  return repo.commitTree(tree, job.squash ? [job.target] : [job.target, job.source], job.author, job.message);
}
