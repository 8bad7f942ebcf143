import type { Caller } from '../../access/caller.js';
import { requireUnscopedKey } from '../../access/key-scope.js';
import { deploymentsIn } from '../../access/levels.js';
import type { Store } from '../../db/database.js';
import type { Access, DeploymentRow, ReleaseChannel } from '../../db/tables.js';
import { lockKey, serialized } from '../../db/transactions.js';
import { isValidBranchName } from '../../git/refs.js';
import { decodeCursor, encodeCursor, legacyPage, offsetPaging, positionalPage, positionalWindow } from '../../shared/pagination.js';
import { ApiError, notFound } from '../../shared/problems.js';
import type { PageInfo } from '../../shared/schemas.js';
import { timestamp, type Clock } from '../../time.js';
import { normalizeProjectRoot } from '../../shared/model-paths.js';
import type { Actor } from '../../access/caller.js';
import type { Executor } from '../../db/tables.js';
import { newestIn, type Catalog, type RegionEntry } from './catalog.js';
import { authorizeDeployment } from './deployment-access.js';
import { applySettings, currentVersion, settingsOf } from './deployment-settings.js';
import type {
  CreateDeploymentInput,
  Deployment,
  DeploymentSettings,
  DeploymentVersion,
  ListDeploymentsInput,
  UpdateDeploymentInput,
} from './deployments.schemas.js';
import {
  countDeployments,
  deleteDeployment,
  findDeployment,
  findDeploymentByName,
  findTenantRegions,
  insertDeployment,
  listDeployments,
  recordVersion,
  updateDeployment,
  versionsUsedSince,
  type DeploymentChanges,
  type DeploySettingsChanges,
} from './deployments.store.js';

/**
 * The origin of a tenant (areas/tenants/tenant-origin.ts). A deployment is reached at
 * `<origin>/deployments/<id>`: path-based, so no wildcard certificate is needed.
 */
export type DeploymentUrlOf = (tenant: { id: number; slug: string }) => Promise<string>;

export const deploymentPath = (origin: string, id: number) => `${origin}/deployments/${id}`;

/** Reference 1.0 `Deployment` of a row, with this product's `createdAt`, `updatedAt` and `access` beside it. */
export function toDeployment(row: DeploymentRow, access: Access | null, origin: string): Deployment {
  return {
    id: row.id,
    name: row.name,
    deploymentUrl: deploymentPath(origin, row.id),
    creationStep: row.creation_step,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    access,
  };
}

/** How far back a tenant's release history reaches in `GET …/versions` (reference 1.7). */
const HISTORY_MS = 183 * 24 * 60 * 60 * 1000;

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
  return changes;
}

function nameTaken(name: string): ApiError {
  return new ApiError('DEPLOYMENT_NAME_TAKEN', `A deployment named ${JSON.stringify(name)} already exists in this account; deployment names are unique.`, {
    errors: [{ pointer: '/body/name', message: 'is taken' }],
  });
}

/**
 * Tells the runtimes that what should run may have changed (a deployment deleted, a version or
 * variables changed), so this process reconciles now rather than at its next tick.
 */
export type RuntimesChanged = () => Promise<void>;

/** Tells the builds that a deploy branch moved (the data-model area's, given at the composition root). */
export type DeployBranchMoved = (row: DeploymentRow, commit: string, cause: string) => Promise<void>;

/** A deployment's git repository as deployments use it: its branches' heads. */
export interface DeploymentRepository {
  head(branch: string): Promise<string | null>;
}

/** The deployments' repositories (the data-model area's, given at the composition root). */
export interface DeploymentRepositoryHost {
  /** Creates the deployment's repository, its first commit by `actor`. */
  create(row: DeploymentRow, actor: Actor): Promise<DeploymentRepository>;
  open(row: DeploymentRow): Promise<DeploymentRepository>;
  remove(id: number): Promise<void>;
}

/** What other areas delete with a deployment, in its transaction (the policies granted on it, its items'). */
export type DeploymentDeleted = (trx: Executor, tenantId: number, deploymentId: number) => Promise<void>;

export function deploymentsService(
  store: Store,
  repositories: DeploymentRepositoryHost,
  deployBranchMoved: DeployBranchMoved,
  catalog: Catalog,
  urlOf: DeploymentUrlOf,
  now: Clock,
  runtimesChanged: RuntimesChanged = async () => undefined,
  onDelete: DeploymentDeleted[] = [],
) {
  const { db } = store;

  /** The regions this tenant may use: the configured ones, limited by the tenant's own list when it has one (`admin tenant regions`). */
  async function regionsOf(tenantId: number): Promise<RegionEntry[]> {
    const regions = await findTenantRegions(db, tenantId);
    if (!regions) return catalog.regions;
    const allowed = new Set(JSON.parse(regions) as string[]);
    return catalog.regions.filter((r) => allowed.has(r.name));
  }

  function regionRefused(region: string, offered: RegionEntry[]): ApiError {
    return new ApiError(
      'VALIDATION_FAILED',
      `Region ${JSON.stringify(region)} is not offered to this account; it may use ${offered.map((r) => r.name).join(', ') || 'no region'} (GET /api/v1/regions).`,
      {
        errors: [{ pointer: '/body/region', message: 'is not a region of this account' }],
      },
    );
  }

  /** Versions this tenant may pick (reference 1.7): each channel's newest, and what it ran in the last six months. */
  async function offered(tenantId: number): Promise<Array<{ version: string; channel: ReleaseChannel }>> {
    const seen = new Map<string, ReleaseChannel>();
    for (const channel of ['release', 'latest'] as const) seen.set(`${channel}:${newestIn(catalog, channel)}`, channel);
    for (const used of await versionsUsedSince(db, tenantId, new Date(Date.now() - HISTORY_MS).toISOString()))
      seen.set(`${used.release_channel}:${used.version}`, used.release_channel);
    return [...seen].map(([key, channel]) => ({ version: key.slice(channel.length + 1), channel }));
  }

  return {
    /** Reference 1.1 (`DeploymentCreate`: role DEVELOPER or above). The starter project and its first build come with it. */
    async create(caller: Caller, input: CreateDeploymentInput): Promise<Deployment> {
      const { actor } = caller;
      if (actor.role !== 'ADMIN' && actor.role !== 'DEVELOPER')
        throw new ApiError('FORBIDDEN', `Creating a deployment needs the role DEVELOPER or above; you are ${actor.role}.`);
      requireUnscopedKey(actor.scope, 'create a deployment');
      const offeredRegions = await regionsOf(actor.tenantId);
      const region = input.region ?? offeredRegions[0]?.name;
      if (region === undefined || !offeredRegions.some((r) => r.name === region)) throw regionRefused(region ?? '', offeredRegions);
      const at = timestamp(now);
      // Names are unique per account; the tenant's lock keeps two creations of one name apart.
      const row = await serialized(store, lockKey.deploymentNames(actor.tenantId), async (trx) => {
        if (await findDeploymentByName(trx, actor.tenantId, input.name)) throw nameTaken(input.name);
        return insertDeployment(trx, {
          tenant_id: actor.tenantId,
          name: input.name,
          settings: '{}',
          created_by: actor.userId,
          created_at: at,
          updated_at: at,
          creation_step: input.creationStep ?? 'project',
          cloud_provider: input.cloudProvider ?? 'platform',
          is_managed: input.isManaged === false ? 0 : 1,
          region,
          target_platform: input.targetPlatform ?? 'process',
          creation_method: input.creationMethod ?? 'platform',
          deploy_mode: input.deployMode ?? 'git',
        });
      });
      await recordVersion(db, actor.tenantId, currentVersion(row, catalog), row.release_channel, at);
      let head: string | null;
      try {
        head = await (await repositories.create(row, actor)).head(row.deploy_branch_name);
      } catch (error) {
        // No deployment without its repository.
        await deleteDeployment(db, actor.tenantId, row.id);
        throw error;
      }
      // The first build: the starter model (nothing for a deployment that connects a git host).
      if (head !== null) await deployBranchMoved(row, head, 'creation of the deployment');
      return toDeployment(row, 'MANAGE', await urlOf(caller.tenant));
    },

    /** Reference 1.2: the deployments the caller can view (and, for a scoped key, in its scope). */
    async list({ actor, access, tenant }: Caller, input: ListDeploymentsInput) {
      const { page, offset } = offsetPaging(input);
      const visibility = {
        visibleTo: access.isAdmin ? undefined : actor.userId,
        scope: actor.scope,
        steps: input.creationStep,
        alsoIds: access.isAdmin ? undefined : deploymentsIn(await access.grants()),
      };
      let afterId: number | undefined;
      if (page.after !== undefined) {
        const [id] = decodeCursor(page.after, 1);
        if (typeof id !== 'number' || !Number.isSafeInteger(id)) throw new ApiError('INVALID_CURSOR', 'The `after` cursor was not issued by this list.');
        afterId = id;
      }
      const rows = await listDeployments(db, actor.tenantId, visibility, afterId, page.first + 1, offset);
      const total = await countDeployments(db, actor.tenantId, visibility);
      // The deprecated `pagination.offset` is how many deployments come before this page, a cursor's too.
      const before = afterId === undefined ? offset : await countDeployments(db, actor.tenantId, visibility, afterId);
      const pageRows = rows.slice(0, page.first);
      const items: Deployment[] = [];
      const origin = pageRows.length > 0 ? await urlOf(tenant) : '';
      for (const row of pageRows) {
        // Null for a deployment listed only because of grants on items inside it.
        items.push(toDeployment(row, await access.level({ deploymentId: row.id, chain: [], createdBy: row.created_by }), origin));
      }
      const first = pageRows[0];
      const last = pageRows[pageRows.length - 1];
      const pageInfo = {
        startCursor: first ? encodeCursor([first.id]) : null,
        endCursor: last ? encodeCursor([last.id]) : null,
        hasNextPage: rows.length > page.first,
        hasPreviousPage: page.after !== undefined || offset > 0,
      };
      return legacyPage({ items, pageInfo }, total, { offset: before, limit: page.first });
    },

    /** Reference 1.3. Also answers, with `access: null`, a caller whose grants are only on items inside it, as the list does. */
    async get(caller: Caller, id: number): Promise<Deployment> {
      const { actor, access } = caller;
      const row = await findDeployment(db, actor.tenantId, id);
      if (row && !access.isAdmin) {
        const level = await access.level({ deploymentId: row.id, chain: [], createdBy: row.created_by });
        const listed = level === null && (await listDeployments(db, actor.tenantId, { visibleTo: actor.userId, scope: [id] }, undefined, 1)).length > 0;
        if (listed) return toDeployment(row, null, await urlOf(caller.tenant));
      }
      const authorized = await authorizeDeployment(db, caller, id, 'DeploymentRead');
      return toDeployment(authorized.row, authorized.level, await urlOf(caller.tenant));
    },

    /** Reference 1.6 (`DeploymentRead`). */
    async settings(caller: Caller, id: number): Promise<DeploymentSettings> {
      const { row } = await authorizeDeployment(db, caller, id, 'DeploymentRead');
      return settingsOf(row, deploymentPath(await urlOf(caller.tenant), row.id), catalog);
    },

    /** Reference 1.4 (`DeploymentUpdate`): a partial merge, answered with the settings after it. */
    async update(caller: Caller, id: number, input: UpdateDeploymentInput): Promise<DeploymentSettings> {
      const { row: before } = await authorizeDeployment(db, caller, id, 'DeploymentUpdate');
      const tenantId = caller.actor.tenantId;
      const deploy = await deployChanges(input, async (name) => (await (await repositories.open(before)).head(name)) !== null);
      if (input.region != null) {
        const offeredRegions = await regionsOf(tenantId);
        if (!offeredRegions.some((r) => r.name === input.region)) throw regionRefused(input.region, offeredRegions);
      }
      const choices = await offered(tenantId);
      const at = timestamp(now);
      // Read, merged and written back under the deployment's lock: concurrent patches keep each other's keys.
      const row = await serialized(store, [lockKey.deployment(id), lockKey.deploymentNames(tenantId)], async (trx) => {
        const current = await findDeployment(trx, tenantId, id);
        if (!current) return undefined;
        const changes: DeploymentChanges = {
          ...deploy,
          ...applySettings(current, input, catalog, (channel) => choices.filter((c) => c.channel === channel).map((c) => c.version)),
        };
        if (changes.name !== undefined && changes.name !== current.name) {
          const other = await findDeploymentByName(trx, tenantId, changes.name);
          if (other && other.id !== id) throw nameTaken(changes.name);
        }
        if (Object.keys(changes).length === 0) return current;
        return updateDeployment(trx, tenantId, id, { ...changes, updated_at: at });
      });
      if (!row) throw notFound('DEPLOYMENT_NOT_FOUND', 'Deployment', id);
      await recordVersion(db, tenantId, currentVersion(row, catalog), row.release_channel, at);
      // A new version restarts the runtimes on it.
      if (currentVersion(row, catalog) !== currentVersion(before, catalog)) void runtimesChanged();
      return settingsOf(row, deploymentPath(await urlOf(caller.tenant), row.id), catalog);
    },

    /** Reference 1.5 (`DeploymentDelete`): the deployment, the policies granted on it, its builds and its repository. */
    async remove(caller: Caller, id: number): Promise<{ success: boolean }> {
      await authorizeDeployment(db, caller, id, 'DeploymentDelete');
      const tenantId = caller.actor.tenantId;
      // The lock keeps a policy being granted on this deployment from outliving it.
      await serialized(store, lockKey.deployment(id), async (trx) => {
        for (const deleted of onDelete) await deleted(trx, tenantId, id);
        await deleteDeployment(trx, tenantId, id);
      });
      // Its pods stop before the answer (on this process; others notice the rows gone within a tick).
      await runtimesChanged();
      await repositories.remove(id);
      return { success: true };
    },

    /** Reference 1.7 (`DeploymentRead`): each channel's newest version and the tenant's recent ones; the current one marked. */
    async versions(caller: Caller, id: number, input: { first?: number; after?: string }): Promise<{ items: DeploymentVersion[]; pageInfo: PageInfo }> {
      const { row } = await authorizeDeployment(db, caller, id, 'DeploymentRead');
      const current = currentVersion(row, catalog);
      const all = (await offered(row.tenant_id))
        .map(({ version, channel }) => ({
          releaseChannelVersion: version,
          version,
          releaseChannel: channel,
          isLatestInChannel: version === newestIn(catalog, channel),
          isCurrent: version === current && channel === row.release_channel,
        }))
        .sort((a, b) =>
          a.releaseChannel === b.releaseChannel
            ? b.version.localeCompare(a.version, 'en', { numeric: true })
            : a.releaseChannel.localeCompare(b.releaseChannel),
        );
      return positionalPage(all, positionalWindow(input));
    },

    /** Reference 1.15 (any key): the configured regions; `data` the whole list, `items` a page of it. */
    async regions(caller: Caller, input: { first?: number; after?: string }) {
      const data = (await regionsOf(caller.actor.tenantId)).map((r) => ({ ...r, isPublic: true, isDedicated: false, isHybrid: false, useAiEngineer: false }));
      return { ...positionalPage(data, positionalWindow(input)), data };
    },
  };
}
export type DeploymentsService = ReturnType<typeof deploymentsService>;
