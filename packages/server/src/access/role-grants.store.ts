import type { Executor } from '../db/tables.js';
import type { RolePolicy } from './custom-roles.js';

/**
 * The policies of every custom role a user holds, directly or through a group they belong to,
 * one array per role. One query; the roles area writes the rows and the JSON.
 */
export async function rolePoliciesOfUser(db: Executor, tenantId: number, userId: number): Promise<RolePolicy[][]> {
  const rows = await db
    .selectFrom('roles')
    .select('policies')
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
    )
    .execute();
  return rows.map((r) => JSON.parse(r.policies) as RolePolicy[]);
}

/** The ids of the tenant's deployments: what a role's `All` names today. */
export async function deploymentIdsOf(db: Executor, tenantId: number): Promise<number[]> {
  const rows = await db.selectFrom('deployments').select('id').where('tenant_id', '=', tenantId).execute();
  return rows.map((r) => r.id);
}
