import { sql, type Expression, type SqlBool } from 'kysely';
import type { Executor } from '../../db/tables.js';
import type { ItemTable, Visibility } from '../workspace/index.js';
import { findAllEmbedUsersGroup, tenantSystemGroup } from './embed-access.store.js';
import { findEmbedTenant } from './embed-tenants.store.js';

/**
 * The shared workspace of an embed tenant in one deployment (reference 8.F), as the condition a
 * row must meet: what is shared with the all-embed-users group or the tenant's
 * `system:tenant:{name}` group, everything below a shared folder, and the folders above a shared
 * item (so that it can be reached), but nothing else beside them. The same for every user of the
 * tenant: tenant groups and users play no part.
 */
export async function sharedWorkspaceVisibility(
  db: Executor,
  scope: { tenantId: number; deploymentId: number },
  embedTenantName: string | null,
): Promise<Visibility> {
  const groupIds: number[] = [];
  const all = await findAllEmbedUsersGroup(db, scope.tenantId);
  if (all) groupIds.push(all.id);
  const embedTenant = embedTenantName === null ? undefined : await findEmbedTenant(db, scope.tenantId, embedTenantName);
  const own = embedTenant && (await tenantSystemGroup(db, scope.tenantId, embedTenant.id));
  if (own) groupIds.push(own.id);
  const base = { everything: false, userId: 0, deploymentId: scope.deploymentId, granted: { FOLDER: [], WORKBOOK: [], REPORT: [] } };
  if (groupIds.length === 0) return { ...base, rows: () => sql<SqlBool>`1 = 0` };

  const shares = (column: 'folder_id' | 'workbook_id') =>
    sql`select s.${sql.ref(column)} from embed_shares s
         where s.tenant_id = ${scope.tenantId} and s.deployment_id = ${scope.deploymentId}
           and s.${sql.ref(column)} is not null and s.embed_group_id in (${sql.join(groupIds)})`;
  // Every folder at or below a shared folder (UNION: a loop in bad data ends).
  const sharedTree = sql<number>`(with recursive shared_tree(id) as (
      ${shares('folder_id')}
      union
      select f.id from folders f join shared_tree t on f.parent_id = t.id
       where f.tenant_id = ${scope.tenantId} and f.deployment_id = ${scope.deploymentId}
    ) select id from shared_tree)`;
  // Every folder above a shared folder or a shared workbook.
  const above = sql<number>`(with recursive above(id) as (
      select f.parent_id from folders f where f.id in (${shares('folder_id')}) and f.parent_id is not null
      union
      select w.folder_id from workbooks w where w.id in (${shares('workbook_id')}) and w.folder_id is not null
      union
      select f.parent_id from folders f join above a on f.id = a.id
       where f.parent_id is not null and f.tenant_id = ${scope.tenantId} and f.deployment_id = ${scope.deploymentId}
    ) select id from above)`;
  const rows = (table: ItemTable): Expression<SqlBool> => {
    const col = (name: string) => sql.ref(`${table}.${name}`);
    if (table === 'folders') return sql<SqlBool>`(${col('id')} in ${sharedTree} or ${col('id')} in ${above})`;
    if (table === 'workbooks') return sql<SqlBool>`(${col('id')} in (${shares('workbook_id')}) or ${col('folder_id')} in ${sharedTree})`;
    return sql<SqlBool>`${col('folder_id')} in ${sharedTree}`;
  };
  return { ...base, rows };
}
