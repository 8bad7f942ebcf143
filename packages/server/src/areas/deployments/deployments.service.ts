import type { Caller } from '../../access/caller.js';
import { atLeast } from '../../access/levels.js';
import type { Store } from '../../db/database.js';
import type { Access, Db, DeploymentRow, Executor } from '../../db/tables.js';
import { lockKey, serialized } from '../../db/transactions.js';
import { afterId, legacyPage, pageRequest, toPage } from '../../shared/pagination.js';
import { ApiError, notFound } from '../../shared/problems.js';
import { now } from '../../time.js';
import { deletePoliciesOn } from '../policies/policies.store.js';
import { deleteItemPoliciesOf } from '../workspace/items.store.js';
import type { CreateDeploymentInput, Deployment, DeploymentSettings, ListDeploymentsInput, UpdateDeploymentInput } from './deployments.schemas.js';
import { countDeployments, deleteDeployment, findDeployment, insertDeployment, listDeployments, updateDeployment, type DeploymentChanges, type DeploySettingsChanges } from './deployments.store.js';
import { mergePatch, parseSettings, withoutSecrets, type JsonObject } from './settings.js';
import type { DeploymentRepositories } from '../data-model/deployment-repositories.js';
import type { DeployBranchMoved } from '../data-model/deploy-events.js';
import { authorOf } from '../data-model/authors.js';
import { normalizeProjectRoot } from '../data-model/paths.js';
import { isValidBranchName } from '../../git/refs.js';

export function toDeployment(row: DeploymentRow, access: Access | null): Deployment {
  return { id: row.id, name: row.name, createdAt: row.created_at, updatedAt: row.updated_at, access };
}

const VERB: Record<Access, string> = { VIEW: 'view', EDIT: 'edit', MANAGE: 'manage' };

/** 404 when the deployment is not in the caller's tenant, then 403 when the caller's access is below `need`. */
async function authorize(db: Db, { actor, access }: Caller, id: number, need: Access): Promise<{ row: DeploymentRow; level: Access }> {
  const row = await findDeployment(db, actor.tenantId, id);
  if (!row) throw notFound('DEPLOYMENT_NOT_FOUND', 'Deployment', id);
  const level = await access.level({ deploymentId: row.id, chain: [], createdBy: row.created_by });
  if (level === null || !atLeast(level, need)) {
    const have = level === null ? 'no access' : `${level} access`;
    throw new ApiError('FORBIDDEN', `You need ${need} access to ${VERB[need]} deployment ${id}; you have ${have}.`);
  }
  return { row, level };
}

/** The deploy settings a PUT names (null or absent: unchanged), checked before anything is written. */
async function deployChanges(input: UpdateDeploymentInput, branchExists: (name: string) => Promise<boolean>): Promise<DeploySettingsChanges> {
  const changes: DeploySettingsChanges = {};
  if (input.deployBranchName != null) {
    const name = input.deployBranchName;
    if (!(await isValidBranchName(name)) || !(await branchExists(name))) {
      throw new ApiError('VALIDATION_FAILED', `deployBranchName ${JSON.stringify(name)} is not a branch of this deployment's repository; create it first.`, {
        errors: [{ pointer: '/body/deployBranchName', message: 'is not a branch of the repository' }],
      });
    }
    changes.deploy_branch_name = name;
  }
  if (input.deployBranchReadOnly != null) changes.deploy_branch_read_only = input.deployBranchReadOnly ? 1 : 0;
  if (input.deployBranchMergeAllowed != null) changes.deploy_branch_merge_allowed = input.deployBranchMergeAllowed ? 1 : 0;
  if (input.deployProjectRoot != null) changes.deploy_project_root = normalizeProjectRoot(input.deployProjectRoot, '/body/deployProjectRoot');
  if (input.deployMode != null) changes.deploy_mode = input.deployMode;
  return changes;
}

/** Renames and merges settings on the row as it is now, inside the caller's transaction. */
async function applyUpdate(trx: Executor, tenantId: number, id: number, input: UpdateDeploymentInput, deploy: DeploySettingsChanges): Promise<DeploymentRow | undefined> {
  const current = await findDeployment(trx, tenantId, id);
  if (!current || (input.name === undefined && input.settings === undefined && Object.keys(deploy).length === 0)) return current;
  const changes: DeploymentChanges = { ...deploy, updated_at: now() };
  if (input.name !== undefined) changes.name = input.name;
  if (input.settings !== undefined) changes.settings = JSON.stringify(mergePatch(parseSettings(current.settings), input.settings) as JsonObject);
  return updateDeployment(trx, tenantId, id, changes);
}

/** The settings of the reference this product stores as columns, beside the free-form ones. */
export function settingsOf(row: DeploymentRow): DeploymentSettings {
  return {
    ...(withoutSecrets(parseSettings(row.settings)) as JsonObject),
    deployBranchName: row.deploy_branch_name,
    deployBranchReadOnly: row.deploy_branch_read_only === 1,
    deployBranchMergeAllowed: row.deploy_branch_merge_allowed === 1,
    deployProjectRoot: row.deploy_project_root,
    deployMode: row.deploy_mode,
  };
}

export function deploymentsService(store: Store, repositories: DeploymentRepositories, deployBranchMoved: DeployBranchMoved) {
  const { db } = store;
  return {
    async create(caller: Caller, input: CreateDeploymentInput): Promise<Deployment> {
      caller.access.requireAccountAdmin('create a deployment');
      const at = now();
      const row = await insertDeployment(db, {
        tenant_id: caller.actor.tenantId,
        name: input.name,
        settings: '{}',
        created_by: caller.actor.userId,
        created_at: at,
        updated_at: at,
      });
      let head: string | null;
      try {
        head = await (await repositories.create(row, await authorOf(db, caller.actor))).head(row.deploy_branch_name);
      } catch (error) {
        // No deployment without its repository.
        await deleteDeployment(db, caller.actor.tenantId, row.id);
        throw error;
      }
      // The first build: the starter model (nothing for a deployment that connects a git host).
      if (head !== null) await deployBranchMoved(row, head, 'creation of the deployment');
      return toDeployment(row, 'MANAGE');
    },

    /** Deployments the caller has at least VIEW on and, for a scoped key, within its scope. */
    async list({ actor, access }: Caller, input: ListDeploymentsInput) {
      const page = pageRequest(input);
      const visibility = { visibleTo: access.isAdmin ? undefined : actor.userId, scope: actor.scope };
      const rows = await listDeployments(db, actor.tenantId, visibility, afterId(page), page.first + 1);
      const total = await countDeployments(db, actor.tenantId, visibility);
      const { items: pageRows, pageInfo } = toPage(rows, page, (r) => [r.id]);
      const items: Deployment[] = [];
      for (const row of pageRows) {
        // Null for a deployment listed only because of grants on items inside it.
        items.push(toDeployment(row, await access.level({ deploymentId: row.id, chain: [], createdBy: row.created_by })));
      }
      return legacyPage({ items, pageInfo }, total);
    },

    /** Also answers, with `access: null`, a caller whose grants are only on items inside it, as the list does. */
    async get(caller: Caller, id: number): Promise<Deployment> {
      const { actor, access } = caller;
      const row = await findDeployment(db, actor.tenantId, id);
      if (row && !access.isAdmin) {
        const level = await access.level({ deploymentId: row.id, chain: [], createdBy: row.created_by });
        const listed = level === null && (await listDeployments(db, actor.tenantId, { visibleTo: actor.userId, scope: [id] }, undefined, 1)).length > 0;
        if (listed) return toDeployment(row, null);
      }
      const authorized = await authorize(db, caller, id, 'VIEW');
      return toDeployment(authorized.row, authorized.level);
    },

    async settings(caller: Caller, id: number): Promise<DeploymentSettings> {
      const { row } = await authorize(db, caller, id, 'VIEW');
      return settingsOf(row);
    },

    async update(caller: Caller, id: number, input: UpdateDeploymentInput): Promise<Deployment> {
      // Grants load before the transaction: SQLite has one connection, which the transaction holds.
      const { row: before, level } = await authorize(db, caller, id, 'MANAGE');
      const deploy = await deployChanges(input, async (name) => (await (await repositories.open(before)).head(name)) !== null);
      // Settings are read, merged and written back; concurrent patches must not drop each other's keys.
      const row = await serialized(store, lockKey.deployment(id), (trx) => applyUpdate(trx, caller.actor.tenantId, id, input, deploy));
      if (!row) throw notFound('DEPLOYMENT_NOT_FOUND', 'Deployment', id);
      return toDeployment(row, level);
    },

    /** Removes the deployment and the policies granted on it, together or not at all. */
    async remove(caller: Caller, id: number): Promise<void> {
      await authorize(db, caller, id, 'MANAGE');
      const tenantId = caller.actor.tenantId;
      // The lock keeps a policy being granted on this deployment from outliving it.
      await serialized(store, lockKey.deployment(id), async (trx) => {
        await deletePoliciesOn(trx, tenantId, { type: 'DEPLOYMENT', id });
        await deleteItemPoliciesOf(trx, tenantId, id);
        await deleteDeployment(trx, tenantId, id);
      });
      await repositories.remove(id);
    },
  };
}
export type DeploymentsService = ReturnType<typeof deploymentsService>;
