import type { Caller } from '../../access/caller.js';
import type { BranchRow, DeploymentRow, Executor } from '../../db/tables.js';
import type { Repository, TreeEntry } from '../../git/repository.js';
import { ApiError } from '../../shared/problems.js';
import { findBranch, findBranchById, findSession } from './branches.store.js';

/** Pending (uncommitted) dev-mode changes of a branch live as a commit on this ref of the server's own. */
export const draftRef = (branch: string) => `refs/mapi/drafts/${branch}`;

/** Personal dev-mode branches are named `dev-…` (reference 2.0). */
export const isPersonalBranch = (name: string) => name.startsWith('dev-');

export function branchNotFound(deploymentId: number, name: string | number): ApiError {
  return new ApiError('BRANCH_NOT_FOUND', `Deployment ${deploymentId} has no branch ${typeof name === 'number' ? `with id ${name}` : JSON.stringify(name)}.`);
}

/** The branch named by id or name, or the credential's active one when neither is given (null: none is active). */
export async function namedOrActive(
  db: Executor,
  caller: Caller,
  row: DeploymentRow,
  input: { branchId?: number | null; branchName?: string | null },
): Promise<string | null> {
  if (input.branchId != null) {
    const found = await findBranchById(db, row.id, input.branchId);
    if (!found) throw branchNotFound(row.id, input.branchId);
    return found.name;
  }
  if (input.branchName != null) return input.branchName;
  return (await findSession(db, row.id, caller.actor.keyId))?.branch_name ?? null;
}

/**
 * The branch a file write lands on (reference 2.0): a personal `dev-…` branch of this credential,
 * named or active. Any other branch is refused with a message naming it.
 */
export async function writableBranch(
  db: Executor,
  caller: Caller,
  row: DeploymentRow,
  input: { branchId?: number | null; branchName?: string | null },
): Promise<BranchRow> {
  const name = await namedOrActive(db, caller, row, input);
  if (name === null) {
    throw new ApiError(
      'NO_DEV_MODE',
      `This credential has no active dev-mode branch on deployment ${row.id}; enter dev mode first (POST /build/api/v1/deployments/${row.id}/dev-mode) or name a dev-mode branch.`,
    );
  }
  const branch = await findBranch(db, row.id, name);
  if (!branch || branch.owner_key_id === null || !isPersonalBranch(name)) {
    throw new ApiError(
      'NOT_A_DEV_BRANCH',
      `Branch ${JSON.stringify(name)} is not a dev-mode branch; file writes land only on a personal dev-… branch (enter dev mode to get one).`,
    );
  }
  if (branch.owner_key_id !== caller.actor.keyId) {
    throw new ApiError('FORBIDDEN', `Branch ${JSON.stringify(name)} is another credential's dev-mode branch; enter dev mode to get your own.`);
  }
  return branch;
}

/** A branch's files: its head, or with `pending` its head plus the uncommitted dev-mode changes. */
export async function branchFiles(repo: Repository, deploymentId: number, branch: string, pending: boolean): Promise<{ commit: string; files: TreeEntry[] }> {
  const head = await repo.head(branch);
  if (head === null) throw branchNotFound(deploymentId, branch);
  const commit = (pending ? await repo.resolve(draftRef(branch)) : null) ?? head;
  return { commit, files: await repo.tree(commit) };
}
