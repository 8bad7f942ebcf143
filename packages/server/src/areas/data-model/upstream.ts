import type { DeploymentRow } from '../../db/tables.js';
import type { Repository } from '../../git/repository.js';

/**
 * The repository a deployment is connected to on its git host (reference 2.20), as this area
 * uses it: shared branches are pulled from it (2.16), every move of one made here is pushed to
 * it before the branch moves here (commits, merges, new branches), and a branch delete may
 * delete it there too (2.13 `removeOnUpstream`). Personal `dev-…` branches never leave. The
 * git-host area implements it; this area knows no host.
 */
export interface Upstream {
  /** How messages name it: `owner/repo`. */
  readonly name: string;
  /** Fetches the branch into `refs/upstream/<branch>`; its commit, or null when the upstream has no such branch. */
  fetch(repo: Repository, branch: string): Promise<string | null>;
  /** Moves the upstream's branch to `commit` (fast-forward only); an ApiError 409 when the upstream has commits this deployment lacks. */
  publish(repo: Repository, branch: string, commit: string): Promise<void>;
  /** Deletes the upstream's branch (one it does not have counts as deleted). */
  remove(repo: Repository, branch: string): Promise<void>;
}

/** The deployment's upstream, or null when it is not connected. */
export type UpstreamOf = (row: DeploymentRow) => Promise<Upstream | null>;

export const NO_UPSTREAM: UpstreamOf = async () => null;

/** Where a fetched upstream branch is kept in the deployment's repository. */
export const upstreamRef = (branch: string) => `refs/upstream/${branch}`;
