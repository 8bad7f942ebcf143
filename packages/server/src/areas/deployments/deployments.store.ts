import type { Insertable } from 'kysely';
import type { CreationStep, DeploymentRow, DeploymentTable, Executor, ReleaseChannel } from '../../db/tables.js';
import { policiesApplyingTo } from '../../access/grants.store.js';

export async function findDeployment(db: Executor, tenantId: number, id: number): Promise<DeploymentRow | undefined> {
  return db.selectFrom('deployments').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

/** Which of `ids` are deployments of this tenant. */
/** The tenant's own list of regions (JSON), when `admin tenant regions` gave it one. */
export async function findTenantRegions(db: Executor, tenantId: number): Promise<string | null | undefined> {
  const row = await db.selectFrom('tenants').select('regions').where('id', '=', tenantId).executeTakeFirst();
  return row?.regions;
}

export async function existingDeploymentIds(db: Executor, tenantId: number, ids: number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const rows = await db.selectFrom('deployments').select('id').where('tenant_id', '=', tenantId).where('id', 'in', ids).execute();
  return new Set(rows.map((r) => r.id));
}

export async function insertDeployment(db: Executor, values: Insertable<DeploymentTable>): Promise<DeploymentRow> {
  return db.insertInto('deployments').values(values).returningAll().executeTakeFirstOrThrow();
}

export interface DeploymentVisibility {
  /** Only deployments this user created or holds a grant on or inside; undefined for admins. */
  visibleTo?: number | undefined;
  /** The API key's deployments; null for every deployment. */
  scope: number[] | null;
  /** Deployments the user holds a level on that no policy row shows (what their custom roles give); with `visibleTo`. */
  alsoIds?: readonly number[] | undefined;
  /** Only deployments at one of these creation steps (reference 1.2). */
  steps?: readonly string[] | undefined;
}

/** The tenant's deployment of this name (names are unique per account, compared case-insensitively). */
export async function findDeploymentByName(db: Executor, tenantId: number, name: string): Promise<DeploymentRow | undefined> {
  return db
    .selectFrom('deployments')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where((eb) => eb(eb.fn('lower', ['name']), '=', name.toLowerCase()))
    .executeTakeFirst();
}

/** Remembers that the tenant runs `version` (reference 1.7's release history). */
export async function recordVersion(db: Executor, tenantId: number, version: string, channel: ReleaseChannel, at: string): Promise<void> {
  await db
    .insertInto('deployment_versions')
    .values({ tenant_id: tenantId, version, release_channel: channel, last_used_at: at })
    .onConflict((oc) => oc.columns(['tenant_id', 'version']).doUpdateSet({ release_channel: channel, last_used_at: at }))
    .execute();
}

export async function versionsUsedSince(db: Executor, tenantId: number, since: string): Promise<Array<{ version: string; release_channel: ReleaseChannel }>> {
  return db
    .selectFrom('deployment_versions')
    .select(['version', 'release_channel'])
    .where('tenant_id', '=', tenantId)
    .where('last_used_at', '>=', since)
    .execute();
}

/**
 * The deployments the caller may see, filtered in SQL: any grant gives at least VIEW (even a
 * VIEWER's), so every row fetched is listable, and pages and their total stay exact.
 */
function visibleDeployments(db: Executor, tenantId: number, visibility: DeploymentVisibility) {
  let query = db.selectFrom('deployments').where('tenant_id', '=', tenantId);
  if (visibility.scope !== null) query = query.where('id', 'in', visibility.scope);
  if (visibility.steps !== undefined && visibility.steps.length > 0) query = query.where('creation_step', 'in', visibility.steps as CreationStep[]);
  const userId = visibility.visibleTo;
  if (userId !== undefined) {
    const granted = (type: 'DEPLOYMENT' | 'FOLDER' | 'WORKBOOK' | 'REPORT') =>
      policiesApplyingTo(db, tenantId, userId).where('resource_type', '=', type).select('resource_id');
    // A grant on an item inside a deployment makes the deployment listable too: the user needs it
    // to reach the item, though their access to the deployment itself may be none.
    const holding = (table: 'folders' | 'workbooks' | 'reports', type: 'FOLDER' | 'WORKBOOK' | 'REPORT') =>
      db.selectFrom(table).select('deployment_id').where('tenant_id', '=', tenantId).where('id', 'in', granted(type));
    query = query.where((eb) =>
      eb.or([
        eb('created_by', '=', userId),
        eb('id', 'in', granted('DEPLOYMENT')),
        ...(visibility.alsoIds !== undefined && visibility.alsoIds.length > 0 ? [eb('id', 'in', [...visibility.alsoIds])] : []),
        eb('id', 'in', holding('folders', 'FOLDER')),
        eb('id', 'in', holding('workbooks', 'WORKBOOK')),
        eb('id', 'in', holding('reports', 'REPORT')),
      ]),
    );
  }
  return query;
}

export async function listDeployments(
  db: Executor,
  tenantId: number,
  visibility: DeploymentVisibility,
  afterId: number | undefined,
  limit: number,
  offset = 0,
): Promise<DeploymentRow[]> {
  if (visibility.scope !== null && visibility.scope.length === 0) return [];
  let query = visibleDeployments(db, tenantId, visibility).selectAll();
  if (afterId !== undefined) query = query.where('id', '>', afterId);
  query = query.orderBy('id').limit(limit);
  return (offset > 0 ? query.offset(offset) : query).execute();
}

/** How many deployments the caller may see; with `throughId`, only those up to that id (the ones before a cursor). */
export async function countDeployments(db: Executor, tenantId: number, visibility: DeploymentVisibility, throughId?: number): Promise<number> {
  if (visibility.scope !== null && visibility.scope.length === 0) return 0;
  let query = visibleDeployments(db, tenantId, visibility);
  if (throughId !== undefined) query = query.where('id', '<=', throughId);
  const row = await query.select((eb) => eb.fn.countAll<number | string>().as('total')).executeTakeFirstOrThrow();
  return Number(row.total);
}

/** The deploy settings stored as columns (migration 0010). */
export type DeploySettingsChanges = Partial<
  Pick<DeploymentRow, 'deploy_branch_name' | 'deploy_branch_read_only' | 'deploy_branch_merge_allowed' | 'deploy_project_root' | 'deploy_mode'>
>;

export type DeploymentChanges = Partial<Omit<DeploymentRow, 'id' | 'tenant_id' | 'created_at' | 'created_by'>> & { updated_at?: string };

export async function updateDeployment(db: Executor, tenantId: number, id: number, changes: DeploymentChanges): Promise<DeploymentRow | undefined> {
  return db.updateTable('deployments').set(changes).where('tenant_id', '=', tenantId).where('id', '=', id).returningAll().executeTakeFirst();
}

export async function deleteDeployment(db: Executor, tenantId: number, id: number): Promise<void> {
  await db.deleteFrom('deployments').where('tenant_id', '=', tenantId).where('id', '=', id).execute();
}
