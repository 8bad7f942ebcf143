import { timestamp, type Clock } from '../../time.js';
import { randomBytes } from 'node:crypto';
import type { Caller } from '../../access/caller.js';
import type { Store } from '../../db/database.js';
import type { DeploymentRow } from '../../db/tables.js';
import type { Signature } from '../../git/objects.js';
import { RefMovedError, type Repository } from '../../git/repository.js';
import { ApiError } from '../../shared/problems.js';
import { authorizeDeployment } from '../deployments/index.js';
import { authorOf } from './authors.js';
import { branchNotFound, draftRef, isPersonalBranch } from './branch-targets.js';
import { endSession, findBranch, findFork, findSession, insertBranch, recordBranches, setSession } from './branches.store.js';
import type { CommitInput, DevBranchResponse, StartDevModeInput } from './data-model.schemas.js';
import { buildsProduction, type DeployBranchMoved } from './deploy-events.js';
import type { DeploymentRepositories } from './deployment-repositories.js';
import { integrate, MergeConflict } from './merging.js';
import { NO_UPSTREAM, type Upstream, type UpstreamOf } from './upstream.js';

/** `dev-<key id>-<parent>`: readable, and unique per credential and parent (a suffix settles the rare clash). */
async function forkName(repo: Repository, keyId: number, parent: string): Promise<string> {
  const base = `dev-${keyId}-${parent
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/\.+$/, '')
    .slice(0, 80)}`;
  if ((await repo.head(base)) === null) return base;
  return `${base}-${randomBytes(3).toString('hex')}`;
}

/** "Update a.yml, b.yml" or "Update 12 files": what a commit without a message says. */
export async function describeChanges(repo: Repository, before: string, after: string): Promise<string> {
  const old = new Map((await repo.tree(before)).map((e) => [e.path, e.sha]));
  const changed: string[] = [];
  for (const file of await repo.tree(after)) {
    if (old.get(file.path) !== file.sha) changed.push(file.path);
    old.delete(file.path);
  }
  changed.push(...old.keys());
  return changed.length <= 3 ? `Update ${changed.sort().join(', ')}` : `Update ${changed.length} files`;
}

export function conflictError(paths: string[], what: string): ApiError {
  return new ApiError('MERGE_CONFLICT', `${what}: ${paths.join(', ')} changed on both branches.`, { conflicts: paths });
}

/**
 * Dev mode (reference 2.0, 2.9, 2.10, 2.15): per credential, a personal `dev-…` branch forked
 * from a shared branch and keyed by that parent; file writes are its pending changes, and a
 * commit turns them into one commit and pushes it to the parent.
 */
export function devModeService(
  store: Store,
  repositories: DeploymentRepositories,
  deployBranchMoved: DeployBranchMoved,
  now: Clock,
  upstreamOf: UpstreamOf = NO_UPSTREAM,
) {
  return {
    async enter(caller: Caller, deploymentId: number, input: StartDevModeInput): Promise<DevBranchResponse> {
      const { row } = await authorizeDeployment(store.db, caller, deploymentId, 'SchemaUpdate');
      const parent = input.branchName ?? row.deploy_branch_name;
      if (isPersonalBranch(parent)) throw new ApiError('INVALID_BRANCH', `${JSON.stringify(parent)} is a dev-mode branch; dev mode forks a shared branch.`);
      const keyId = caller.actor.keyId;
      const name = await repositories.write(row, async (repo) => {
        const from = await repo.head(parent);
        if (from === null) throw branchNotFound(row.id, parent);
        const fork = await findFork(store.db, row.id, keyId, parent);
        if (fork && (await repo.head(fork.name)) !== null) return fork.name;
        const made = await forkName(repo, keyId, parent);
        await repo.moveRefs([{ ref: `refs/heads/${made}`, to: from, from: null }]);
        await insertBranch(store.db, { tenantId: row.tenant_id, deploymentId: row.id, name: made, parent, ownerKeyId: keyId }, timestamp(now));
        return made;
      });
      await setSession(store.db, row.tenant_id, row.id, keyId, name, timestamp(now));
      return { active: true, branchName: name, parentBranch: parent };
    },

    /** Leaving while nothing is active does nothing, and says so with `success: true` all the same. */
    async exit(caller: Caller, deploymentId: number): Promise<{ success: boolean }> {
      const { row } = await authorizeDeployment(store.db, caller, deploymentId, 'SchemaUpdate');
      await endSession(store.db, row.id, caller.actor.keyId);
      return { success: true };
    },

    async commit(caller: Caller, deploymentId: number, input: CommitInput): Promise<{ success: boolean }> {
      const { row } = await authorizeDeployment(store.db, caller, deploymentId, 'SchemaUpdate');
      const session = await findSession(store.db, row.id, caller.actor.keyId);
      if (!session) throw new ApiError('NO_DEV_MODE', `This credential has no active dev-mode branch on deployment ${row.id}; enter dev mode first.`);
      const branch = await findBranch(store.db, row.id, session.branch_name);
      if (!branch || branch.owner_key_id !== caller.actor.keyId || !isPersonalBranch(branch.name)) {
        throw new ApiError('NOT_A_DEV_BRANCH', `Branch ${JSON.stringify(session.branch_name)} is not a dev-mode branch; enter dev mode to commit.`);
      }
      const parent = branch.parent_name;
      if (parent === null) throw new ApiError('INVALID_BRANCH', `Branch ${branch.name} has no parent branch to push to.`);
      if (parent === row.deploy_branch_name && row.deploy_branch_read_only === 1) {
        throw new ApiError(
          'FORBIDDEN',
          `The deploy branch ${parent} is read-only (deployBranchReadOnly); nothing was committed. Merge into it instead, or turn the setting off.`,
        );
      }
      const author = await authorOf(store.db, caller.actor);
      const upstream = await upstreamOf(row);
      const pushed = await repositories.write(row, async (repo) => {
        await commitPending(repo, branch.name, author, input.message ?? null);
        return push(repo, row, branch.name, parent, author, input.resolveMergeConflict === true, upstream);
      });
      // The parent may be a branch pushed over git before its row was kept: it gets one before the commit is answered.
      await recordBranches(store.db, { tenantId: row.tenant_id, deploymentId: row.id }, [parent], timestamp(now));
      if (pushed !== null && buildsProduction(row, parent)) await deployBranchMoved(row, pushed, `commit from ${branch.name}`);
      if (input.exitDevMode) await endSession(store.db, row.id, caller.actor.keyId);
      return { success: true };
    },
  };
}
export type DevModeService = ReturnType<typeof devModeService>;

/** Turns the branch's pending changes into one commit on it (nothing when there are none). */
async function commitPending(repo: Repository, branch: string, author: Signature, message: string | null): Promise<void> {
  const head = await repo.head(branch);
  if (head === null) throw new ApiError('BRANCH_NOT_FOUND', `Branch ${JSON.stringify(branch)} no longer exists.`);
  const draft = await repo.resolve(draftRef(branch));
  if (draft === null) return;
  // The branch may have moved since the first pending change (a push by its owner): merge them.
  const merged = await repo.mergeTrees(head, draft);
  if (merged.conflicts.length > 0) throw conflictError(merged.conflicts, `The pending changes conflict with commits pushed to ${branch} since`);
  const moves: Array<{ ref: string; to: string | null; from: string | null }> = [{ ref: draftRef(branch), to: null, from: draft }];
  if (merged.tree !== (await repo.treeOf(head))) {
    const commit = await repo.commitTree(merged.tree, [head], author, message ?? (await describeChanges(repo, head, draft)));
    moves.unshift({ ref: `refs/heads/${branch}`, to: commit, from: head });
  }
  try {
    await repo.moveRefs(moves);
  } catch (error) {
    if (error instanceof RefMovedError)
      throw new ApiError('BRANCH_MOVED', `Branch ${branch} moved while its changes were committed; nothing was changed. Send the commit again.`);
    throw error;
  }
}

/** Brings the parent up to the dev branch; the parent's new head, or null when it already held everything. */
async function push(
  repo: Repository,
  row: DeploymentRow,
  branch: string,
  parent: string,
  author: Signature,
  preferSource: boolean,
  upstream: Upstream | null,
): Promise<string | null> {
  const source = await repo.head(branch);
  const target = await repo.head(parent);
  if (source === null || target === null) throw branchNotFound(row.id, source === null ? branch : parent);
  let result: string | null;
  try {
    result = await integrate(repo, { source, target, author, message: `Merge ${branch} into ${parent}`, preferSource });
  } catch (error) {
    if (error instanceof MergeConflict) {
      throw conflictError(
        error.paths,
        `Committed to ${branch}, but it could not be pushed to ${parent} (send the commit again with resolveMergeConflict: true to keep this branch's version)`,
      );
    }
    throw error;
  }
  if (result === null) return null;
  // A connected repository takes the parent's new head first: if it refuses, the parent stays.
  if (upstream !== null) {
    await upstream.publish(repo, parent, result).catch((error: unknown) => {
      if (error instanceof ApiError) throw new ApiError(error.code, `Committed to ${branch}, but ${parent} did not move: ${error.detail}`);
      throw error;
    });
  }
  try {
    await repo.moveRefs([{ ref: `refs/heads/${parent}`, to: result, from: target }]);
  } catch (error) {
    if (error instanceof RefMovedError)
      throw new ApiError('BRANCH_MOVED', `Committed to ${branch}, but ${parent} moved while it was pushed; send the commit again to push it.`);
    throw error;
  }
  return result;
}
