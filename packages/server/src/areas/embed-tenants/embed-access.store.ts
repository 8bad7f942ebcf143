import { sql } from 'kysely';
import type { EmbedGroupRow, Executor, WorkbookRow } from '../../db/tables.js';
import { ALL_EMBED_USERS_GROUP_NAME } from './names.js';

/*
 * Embed shares (reference 3.4, 3.5, 4.14): a read-only share of a workbook or a folder with a
 * system group, either an embed tenant's `system:tenant:{name}` or the account's all-embed-users
 * group. They live apart from `policies`, so no account user ever gains access through them.
 */

export type ShareTarget = { workbookId: number } | { folderId: number };

export async function findAllEmbedUsersGroup(db: Executor, tenantId: number): Promise<EmbedGroupRow | undefined> {
  return db.selectFrom('embed_groups').selectAll().where('tenant_id', '=', tenantId).where('kind', '=', 'all').executeTakeFirst();
}

/** The account's all-embed-users group, made on first use; call under the embed-people lock. */
export async function ensureAllEmbedUsersGroup(db: Executor, tenantId: number, at: string): Promise<EmbedGroupRow> {
  const found = await findAllEmbedUsersGroup(db, tenantId);
  if (found) return found;
  return db
    .insertInto('embed_groups')
    .values({
      tenant_id: tenantId,
      embed_tenant_id: null,
      kind: 'all',
      name: ALL_EMBED_USERS_GROUP_NAME,
      description: 'Every embed user of the account',
      created_at: at,
      updated_at: at,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function tenantSystemGroup(db: Executor, tenantId: number, embedTenantId: number): Promise<EmbedGroupRow | undefined> {
  return db
    .selectFrom('embed_groups')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('embed_tenant_id', '=', embedTenantId)
    .where('kind', '=', 'tenant')
    .executeTakeFirst();
}

export interface ShareRow {
  embed_group_id: number;
  kind: EmbedGroupRow['kind'];
  embed_tenant_name: string | null;
}

/** The system groups a workbook or folder itself is shared with, tenants by name. */
export async function sharesOf(db: Executor, tenantId: number, target: ShareTarget): Promise<ShareRow[]> {
  let query = db
    .selectFrom('embed_shares')
    .innerJoin('embed_groups', 'embed_groups.id', 'embed_shares.embed_group_id')
    .leftJoin('embed_tenants', 'embed_tenants.id', 'embed_groups.embed_tenant_id')
    .select(['embed_shares.embed_group_id', 'embed_groups.kind', 'embed_tenants.name as embed_tenant_name'])
    .where('embed_shares.tenant_id', '=', tenantId);
  query =
    'workbookId' in target ? query.where('embed_shares.workbook_id', '=', target.workbookId) : query.where('embed_shares.folder_id', '=', target.folderId);
  return query.orderBy('embed_tenants.name').execute();
}

/** Shares `target` with the group; sharing again changes nothing. Returns whether it was new. */
export async function addShare(db: Executor, tenantId: number, deploymentId: number, groupId: number, target: ShareTarget, at: string): Promise<boolean> {
  const values = {
    tenant_id: tenantId,
    deployment_id: deploymentId,
    embed_group_id: groupId,
    workbook_id: 'workbookId' in target ? target.workbookId : null,
    folder_id: 'folderId' in target ? target.folderId : null,
    created_at: at,
  };
  const result = await db
    .insertInto('embed_shares')
    .values(values)
    .onConflict((oc) => oc.columns('workbookId' in target ? ['workbook_id', 'embed_group_id'] : ['folder_id', 'embed_group_id']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** Returns whether there was a share to remove. */
export async function removeShare(db: Executor, tenantId: number, groupId: number, target: ShareTarget): Promise<boolean> {
  let query = db.deleteFrom('embed_shares').where('tenant_id', '=', tenantId).where('embed_group_id', '=', groupId);
  query = 'workbookId' in target ? query.where('workbook_id', '=', target.workbookId) : query.where('folder_id', '=', target.folderId);
  const result = await query.executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export type AccessSource = 'tenant' | 'allEmbedUsers' | 'folder';

/**
 * The workbooks of a deployment the groups can reach, by id, filtered by how: shared directly with
 * the tenant's group, directly with the all-embed-users group, or through a folder shared with
 * either, at any depth above the workbook. The folder subtree is one recursive query; written with
 * UNION, so a loop in bad data ends.
 */
export async function reachableWorkbooks(
  db: Executor,
  scope: { tenantId: number; deploymentId: number },
  groups: { tenant: number; all: number | null },
  sources: ReadonlySet<AccessSource>,
  afterId: number | undefined,
  limit: number,
): Promise<WorkbookRow[]> {
  const groupIds = groups.all === null ? [groups.tenant] : [groups.tenant, groups.all];
  const direct = (groupId: number) => sql<boolean>`exists (select 1 from embed_shares s where s.workbook_id = w.id and s.embed_group_id = ${groupId})`;
  const conditions = [];
  if (sources.has('tenant')) conditions.push(direct(groups.tenant));
  if (sources.has('allEmbedUsers') && groups.all !== null) conditions.push(direct(groups.all));
  if (sources.has('folder')) conditions.push(sql<boolean>`w.folder_id in (select id from shared_tree)`);
  if (conditions.length === 0) return [];
  const result = await sql<WorkbookRow>`
    with recursive shared_tree(id) as (
      select s.folder_id from embed_shares s
       where s.tenant_id = ${scope.tenantId} and s.deployment_id = ${scope.deploymentId}
         and s.folder_id is not null and s.embed_group_id in (${sql.join(groupIds)})
      union
      select f.id from folders f join shared_tree t on f.parent_id = t.id
       where f.tenant_id = ${scope.tenantId} and f.deployment_id = ${scope.deploymentId}
    )
    select w.* from workbooks w
     where w.tenant_id = ${scope.tenantId} and w.deployment_id = ${scope.deploymentId}
       and (${sql.join(conditions, sql` or `)})
       ${afterId === undefined ? sql`` : sql`and w.id > ${afterId}`}
     order by w.id
     limit ${limit}`.execute(db);
  return result.rows;
}
