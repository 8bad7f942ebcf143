import { sql } from 'kysely';
import type { Access, Executor, ResourceType } from '../db/tables.js';
import { policiesApplyingTo } from './grants.store.js';
import type { RolePolicy } from './custom-roles.js';

/** The roles a user holds, directly or through a group they belong to, as a query to refine. */
function rolesHeldBy(db: Executor, tenantId: number, userId: number) {
  return db
    .selectFrom('roles')
    .where('tenant_id', '=', tenantId)
    .where((eb) =>
      eb.or([
        eb('id', 'in', eb.selectFrom('role_users').select('role_id').where('tenant_id', '=', tenantId).where('user_id', '=', userId)),
        eb(
          'id',
          'in',
          eb
            .selectFrom('role_groups')
            .select('role_id')
            .where('tenant_id', '=', tenantId)
            .where('group_id', 'in', eb.selectFrom('group_members').select('group_id').where('tenant_id', '=', tenantId).where('user_id', '=', userId)),
        ),
      ]),
    );
}

/**
 * Everything a user holds beyond their built-in role: the policies granted to them or their
 * groups, and the policies of every custom role they hold (one array per role). One statement,
 * since every request of a user who is not an admin reads both.
 */
export async function heldByUser(
  db: Executor,
  tenantId: number,
  userId: number,
): Promise<{ grants: Array<{ resource_type: ResourceType; resource_id: number; access: Access }>; rolePolicies: RolePolicy[][] }> {
  const rows = await policiesApplyingTo(db, tenantId, userId)
    .select(['resource_type', 'resource_id', 'access', sql<string | null>`null`.as('role_policies')])
    .unionAll(
      rolesHeldBy(db, tenantId, userId).select([
        sql<ResourceType>`null`.as('resource_type'),
        sql<number>`null`.as('resource_id'),
        sql<Access>`null`.as('access'),
        'policies as role_policies',
      ]),
    )
    .execute();
  const grants: Array<{ resource_type: ResourceType; resource_id: number; access: Access }> = [];
  const rolePolicies: RolePolicy[][] = [];
  for (const row of rows) {
    if (row.role_policies !== null) rolePolicies.push(JSON.parse(row.role_policies) as RolePolicy[]);
    else grants.push({ resource_type: row.resource_type, resource_id: row.resource_id, access: row.access });
  }
  return { grants, rolePolicies };
}

/** The ids of the tenant's deployments: what a role's `All` names today. */
export async function deploymentIdsOf(db: Executor, tenantId: number): Promise<number[]> {
  const rows = await db.selectFrom('deployments').select('id').where('tenant_id', '=', tenantId).execute();
  return rows.map((r) => r.id);
}
