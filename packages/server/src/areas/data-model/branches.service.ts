import { timestamp, type Clock } from '../../time.js';
import type { Caller } from '../../access/caller.js';
import type { Store } from '../../db/database.js';
import type { BranchRow, DeploymentRow } from '../../db/tables.js';
import { isValidBranchName } from '../../git/refs.js';
import { RefMovedError, type Repository } from '../../git/repository.js';
import { afterId, pageRequest, toPage } from '../../shared/pagination.js';
import { ApiError } from '../../shared/problems.js';
import type { PageInfo } from '../../shared/schemas.js';
import { authorizeDeployment } from '../deployments/index.js';
import { authorOf } from './authors.js';
import { branchNotFound, draftRef, isPersonalBranch, namedOrActive } from './branch-targets.js';
import { branchRows, findBranch, findBranchById, forgetBranch, insertBranch, setSession, setStaging } from './branches.store.js';
import type {
  BranchResponse,
  CreateBranchInput,
  DeleteBranchInput,
  DevBranchResponse,
  MergeInput,
  MergeResponse,
  MergeToDefaultInput,
  PullInput,
  StagingInput,
} from './data-model.schemas.js';
import { buildsProduction, type DeployBranchMoved } from './deploy-events.js';
import type { DeploymentRepositories } from './deployment-repositories.js';
import { conflictError } from './dev-mode.service.js';
import { integrate, MergeConflict } from './merging.js';
import { NO_UPSTREAM, type UpstreamOf } from './upstream.js';

function toBranch(row: BranchRow, head: string | undefined): BranchResponse {
  return { id: row.id, name: row.name, parentBranch: row.parent_name, lastHash: head ?? null, isStagingEnvironmentEnabled: row.staging_enabled === 1 };
}

/** Rows for every branch git has; a branch pushed over git gets its row (no parent) the first time it is listed. */
async function adoptBranches(store: Store, row: DeploymentRow, heads: Map<string, string>, now: Clock): Promise<BranchRow[]> {
  const rows = await branchRows(store.db, row.id);
  const known = new Set(rows.map((r) => r.name));
  let adopted = false;
  for (const name of [...heads.keys()].sort()) {
    if (known.has(name)) continue;
    await insertBranch(store.db, { tenantId: row.tenant_id, deploymentId: row.id, name, parent: null, ownerKeyId: null }, timestamp(now));
    adopted = true;
  }
  return adopted ? branchRows(store.db, row.id) : rows;
}

/** Deletes a branch's ref and its pending changes; false when it no longer exists. */
async function deleteRefs(repo: Repository, name: string): Promise<boolean> {
  const head = await repo.head(name);
  if (head === null) return false;
  const draft = await repo.resolve(draftRef(name));
  try {
    await repo.moveRefs([{ ref: `refs/heads/${name}`, to: null, from: head }, ...(draft === null ? [] : [{ ref: draftRef(name), to: null, from: draft }])]);
  } catch (error) {
    if (error instanceof RefMovedError)
      throw new ApiError('BRANCH_MOVED', `Branch ${name} moved while it was being deleted; nothing was deleted. Send the request again.`);
    throw error;
  }
  return true;
}

/**
 * Branches (reference 2.11-2.14, 2.16-2.18): shared branches made through the API or pushed over
 * git, personal dev-mode branches, and real git merges between them.
 */
/** Builds a branch's head unless it is built or building (its staging environment needs a build to run). */
export type EnsureBuilt = (row: DeploymentRow, branch: string, commit: string, cause: string) => Promise<void>;

/** A branch is gone: its environment's runtime stops and its pod is no longer listed. */
export type BranchRemoved = (deploymentId: number, branch: string) => Promise<void>;

export function branchesService(
  store: Store,
  repositories: DeploymentRepositories,
  deployBranchMoved: DeployBranchMoved,
  now: Clock,
  ensureBuilt: EnsureBuilt = async () => undefined,
  branchRemoved: BranchRemoved = async () => undefined,
  upstreamOf: UpstreamOf = NO_UPSTREAM,
) {
  /** Removes a branch and its row (children re-parented, sessions moved); 404 when unknown, 400 for the deploy branch. */
  async function removeBranch(row: DeploymentRow, name: string): Promise<void> {
    if (name === row.deploy_branch_name) throw new ApiError('INVALID_BRANCH', `${name} is the deploy branch of deployment ${row.id}; it cannot be deleted.`);
    const known = await findBranch(store.db, row.id, name);
    const deleted = await repositories.write(row, (repo) => deleteRefs(repo, name));
    if (!deleted) throw branchNotFound(row.id, name);
    await forgetBranch(store.db, row.id, name, known?.parent_name ?? null, row.deploy_branch_name, isPersonalBranch(name), timestamp(now));
    await branchRemoved(row.id, name);
  }

  /** Merges `source` into `target` under the repository's lock; the target's new head, or null when it held everything. */
  async function mergeInto(row: DeploymentRow, caller: Caller, source: string, target: string, message: string, squash: boolean): Promise<string | null> {
    const author = await authorOf(store.db, caller.actor);
    const upstream = await upstreamOf(row);
    const moved = await repositories.write(row, async (repo) => {
      const from = await repo.head(source);
      const into = await repo.head(target);
      if (from === null) throw branchNotFound(row.id, source);
      if (into === null) throw branchNotFound(row.id, target);
      let result: string | null;
      try {
        result = await integrate(repo, { source: from, target: into, author, message, squash });
      } catch (error) {
        if (error instanceof MergeConflict) throw conflictError(error.paths, `Nothing was merged from ${source} into ${target}`);
        throw error;
      }
      if (result === null) return null;
      // A connected repository takes the merge first: if it refuses, nothing moves here either.
      await upstream?.publish(repo, target, result);
      try {
        await repo.moveRefs([{ ref: `refs/heads/${target}`, to: result, from: into }]);
      } catch (error) {
        if (error instanceof RefMovedError)
          throw new ApiError('BRANCH_MOVED', `${target} moved while ${source} was merged into it; nothing was merged. Send the request again.`);
        throw error;
      }
      return result;
    });
    if (moved !== null && buildsProduction(row, target)) await deployBranchMoved(row, moved, `merge of ${source}`);
    return moved;
  }

  async function sourceBranch(caller: Caller, row: DeploymentRow, input: { branchId?: number | null; branchName?: string | null }): Promise<string> {
    const name = await namedOrActive(store.db, caller, row, input);
    if (name === null)
      throw new ApiError('NO_DEV_MODE', 'Name the branch to merge (branchId or branchName); this credential has no active branch on the deployment.');
    return name;
  }

  return {
    async list(
      caller: Caller,
      deploymentId: number,
      input: { first?: number; after?: string },
    ): Promise<{ items: BranchResponse[]; data: BranchResponse[]; pageInfo: PageInfo }> {
      const { row } = await authorizeDeployment(store.db, caller, deploymentId, 'SchemaRead');
      const heads = await (await repositories.open(row)).branches();
      const page = pageRequest(input);
      const after = afterId(page);
      // Rows of branches whose ref is gone (deleted by someone else a moment ago) are not listed.
      const rows = (await adoptBranches(store, row, heads, now)).filter((r) => heads.has(r.name) && (after === undefined || r.id > after));
      const { items, pageInfo } = toPage(rows.slice(0, page.first + 1), page, (r) => [r.id]);
      const branches = items.map((r) => toBranch(r, heads.get(r.name)));
      return { items: branches, data: branches, pageInfo };
    },

    async create(caller: Caller, deploymentId: number, input: CreateBranchInput): Promise<DevBranchResponse> {
      const { row } = await authorizeDeployment(store.db, caller, deploymentId, 'SchemaUpdate');
      if (!(await isValidBranchName(input.name))) {
        throw new ApiError('VALIDATION_FAILED', `${JSON.stringify(input.name)} is not a branch name git accepts.`, {
          errors: [{ pointer: '/body/name', message: 'is not a valid git branch name' }],
        });
      }
      if (isPersonalBranch(input.name))
        throw new ApiError('INVALID_BRANCH', 'Names starting with dev- are kept for dev-mode branches; enter dev mode to get one.');
      const from = input.from ?? row.deploy_branch_name;
      // Rows in the order the branches came to be: the ones git has already, then this one.
      await adoptBranches(store, row, await (await repositories.open(row)).branches(), now);
      const upstream = await upstreamOf(row);
      await repositories.write(row, async (repo) => {
        const head = await repo.head(from);
        if (head === null) throw branchNotFound(row.id, from);
        if ((await repo.head(input.name)) !== null)
          throw new ApiError('BRANCH_EXISTS', `Deployment ${row.id} already has a branch ${JSON.stringify(input.name)}.`);
        // Shared branches live on the connected repository too (a branch it has already must hold no more than `from`).
        await upstream?.publish(repo, input.name, head);
        try {
          await repo.moveRefs([{ ref: `refs/heads/${input.name}`, to: head, from: null }]);
        } catch (error) {
          if (error instanceof RefMovedError)
            throw new ApiError(
              'BRANCH_EXISTS',
              `Deployment ${row.id} already has a branch ${JSON.stringify(input.name)} (or one whose name is a prefix of it).`,
            );
          throw error;
        }
      });
      await insertBranch(store.db, { tenantId: row.tenant_id, deploymentId: row.id, name: input.name, parent: from, ownerKeyId: null }, timestamp(now));
      if (input.activate) await setSession(store.db, row.tenant_id, row.id, caller.actor.keyId, input.name, timestamp(now));
      return { active: input.activate === true, branchName: input.name, parentBranch: from };
    },

    async remove(caller: Caller, deploymentId: number, input: DeleteBranchInput): Promise<{ success: boolean }> {
      const { row } = await authorizeDeployment(store.db, caller, deploymentId, 'SchemaUpdate');
      if (input.removeOnUpstream === true && input.branchName !== row.deploy_branch_name) {
        const upstream = await upstreamOf(row);
        if (upstream !== null) {
          // Known here first (an unknown branch is 404 and the host is not touched), then gone there, then here.
          if ((await (await repositories.open(row)).head(input.branchName)) === null) throw branchNotFound(row.id, input.branchName);
          await repositories.write(row, (repo) => upstream.remove(repo, input.branchName));
        }
      }
      await removeBranch(row, input.branchName);
      return { success: true };
    },

    async staging(caller: Caller, deploymentId: number, input: StagingInput): Promise<{ data: BranchResponse }> {
      const { row } = await authorizeDeployment(store.db, caller, deploymentId, 'SchemaUpdate');
      if (input.branchId == null && input.branchName == null)
        throw new ApiError('VALIDATION_FAILED', 'Name the branch with branchId or branchName.', {
          errors: [{ pointer: '/body', message: 'needs branchId or branchName' }],
        });
      let name = input.branchName ?? '';
      if (input.branchId != null) {
        const byId = await findBranchById(store.db, row.id, input.branchId);
        if (!byId) throw branchNotFound(row.id, input.branchId);
        name = byId.name;
      }
      const head = await (await repositories.open(row)).head(name);
      if (head === null) throw branchNotFound(row.id, name);
      if (name === row.deploy_branch_name || isPersonalBranch(name)) {
        throw new ApiError(
          'INVALID_BRANCH',
          `${name} is ${name === row.deploy_branch_name ? 'the deploy branch' : 'a personal dev-mode branch'}; only shared branches have staging environments.`,
        );
      }
      // A branch pushed over git gets its row here if the list has not made it yet.
      const branch =
        (await findBranch(store.db, row.id, name)) ??
        (await insertBranch(store.db, { tenantId: row.tenant_id, deploymentId: row.id, name, parent: null, ownerKeyId: null }, timestamp(now)));
      await setStaging(store.db, row.id, name, input.enabled);
      // Switched on, the staging environment runs at once: on the branch's newest build, made now if need be.
      if (input.enabled) await ensureBuilt(row, name, head, 'staging environment switched on');
      return { data: toBranch({ ...branch, staging_enabled: input.enabled ? 1 : 0 }, head) };
    },

    /**
     * Reference 2.16: the branch's newest state from the connected repository. New commits there
     * fast-forward the branch; when both sides have commits, they are merged and the merge goes
     * back to the repository first. A build starts only when the branch moved: production for the
     * deploy branch (not in CLI mode), the branch's own environment for another. Without a
     * connected repository there is nothing to fetch and nothing is built.
     */
    async pull(caller: Caller, deploymentId: number, input: PullInput): Promise<{ buildTriggered: boolean }> {
      const { row } = await authorizeDeployment(store.db, caller, deploymentId, 'SchemaUpdate');
      const name = input.branchName;
      const upstream = await upstreamOf(row);
      if (upstream === null) {
        if ((await (await repositories.open(row)).head(name)) === null) throw branchNotFound(row.id, name);
        return { buildTriggered: false };
      }
      if (isPersonalBranch(name)) throw new ApiError('INVALID_BRANCH', `${name} is a personal dev-mode branch; those are not on ${upstream.name}.`);
      const author = await authorOf(store.db, caller.actor);
      const moved = await repositories.write(row, async (repo) => {
        const fetched = await upstream.fetch(repo, name);
        if (fetched === null) throw new ApiError('UPSTREAM_BRANCH_NOT_FOUND', `${upstream.name} has no branch ${JSON.stringify(name)}.`);
        const local = await repo.head(name);
        let next: string | null;
        if (local === null) next = fetched;
        else {
          try {
            next = await integrate(repo, { source: fetched, target: local, author, message: `Merge ${name} of ${upstream.name}` });
          } catch (error) {
            if (error instanceof MergeConflict) throw conflictError(error.paths, `Nothing was pulled: ${name} here and on ${upstream.name} both changed`);
            throw error;
          }
          // A merge commit is new to the repository too: it takes it first.
          if (next !== null && next !== fetched) await upstream.publish(repo, name, next);
        }
        if (next === null) return null;
        try {
          await repo.moveRefs([{ ref: `refs/heads/${name}`, to: next, from: local }]);
        } catch (error) {
          if (error instanceof RefMovedError)
            throw new ApiError('BRANCH_MOVED', `${name} moved while it was pulled; nothing was changed. Send the request again.`);
          throw error;
        }
        return next;
      });
      if (moved === null) return { buildTriggered: false };
      if ((await findBranch(store.db, row.id, name)) === undefined)
        await insertBranch(store.db, { tenantId: row.tenant_id, deploymentId: row.id, name, parent: null, ownerKeyId: null }, timestamp(now));
      if (name === row.deploy_branch_name) {
        if (!buildsProduction(row, name)) return { buildTriggered: false };
        await deployBranchMoved(row, moved, `pull from ${upstream.name}`);
        return { buildTriggered: true };
      }
      await ensureBuilt(row, name, moved, `pull from ${upstream.name}`);
      return { buildTriggered: true };
    },

    async merge(caller: Caller, deploymentId: number, input: MergeInput): Promise<MergeResponse> {
      const { row } = await authorizeDeployment(store.db, caller, deploymentId, 'SchemaUpdate');
      const source = await sourceBranch(caller, row, input);
      const known = await findBranch(store.db, row.id, source);
      const parent = known?.parent_name ?? null;
      if (parent === null) throw new ApiError('INVALID_BRANCH', `Branch ${JSON.stringify(source)} has no parent branch; merge it with merge-to-default.`);
      if (parent === row.deploy_branch_name && row.deploy_branch_merge_allowed !== 1) {
        throw new ApiError('FORBIDDEN', `Merges into the deploy branch ${parent} are turned off (deployBranchMergeAllowed).`);
      }
      const merged = await mergeInto(row, caller, source, parent, input.message ?? `Merge ${source} into ${parent}`, input.squashCommits === true);
      let branchDeleted = false;
      if (input.deleteBranch) {
        await removeBranch(row, source);
        branchDeleted = true;
      }
      if (input.switchToParentBranch) await setSession(store.db, row.tenant_id, row.id, caller.actor.keyId, parent, timestamp(now));
      return { merged: merged !== null, branchDeleted };
    },

    async mergeToDefault(caller: Caller, deploymentId: number, input: MergeToDefaultInput): Promise<MergeResponse> {
      const { row } = await authorizeDeployment(store.db, caller, deploymentId, 'SchemaUpdate');
      if (row.deploy_branch_merge_allowed !== 1)
        throw new ApiError('FORBIDDEN', `Merges into the deploy branch ${row.deploy_branch_name} are turned off (deployBranchMergeAllowed).`);
      const source = await sourceBranch(caller, row, input);
      if (source === row.deploy_branch_name) throw new ApiError('INVALID_BRANCH', `${source} is the deploy branch itself.`);
      const merged = await mergeInto(row, caller, source, row.deploy_branch_name, input.message, false);
      let branchDeleted = false;
      if (input.removeBranchAfterMerge === true) {
        await removeBranch(row, source);
        branchDeleted = true;
      }
      return { merged: merged !== null, branchDeleted };
    },
  };
}
export type BranchesService = ReturnType<typeof branchesService>;
