import type { Executor } from '../../db/tables.js';

/** A branch of the deployment by name: its id, and its owner's key for a dev-mode branch. */
export async function findBranch(db: Executor, deploymentId: number, name: string): Promise<{ id: number; owner_key_id: number | null } | undefined> {
  return db.selectFrom('branches').select(['id', 'owner_key_id']).where('deployment_id', '=', deploymentId).where('name', '=', name).executeTakeFirst();
}

/** The names of the user's groups, by name. */
export async function groupNamesOf(db: Executor, tenantId: number, userId: number): Promise<Array<{ name: string }>> {
  return db
    .selectFrom('group_members as m')
    .innerJoin('groups as g', 'g.id', 'm.group_id')
    .select('g.name')
    .where('m.tenant_id', '=', tenantId)
    .where('m.user_id', '=', userId)
    .orderBy('g.name')
    .execute();
}

/** Every attribute of the tenant with its default and the user's value (null where they have none), as stored (JSON). */
export async function attributeValuesOf(db: Executor, tenantId: number, userId: number) {
  return db
    .selectFrom('user_attributes as a')
    .leftJoin('user_attribute_values as v', (join) => join.onRef('v.attribute_id', '=', 'a.id').on('v.user_id', '=', userId))
    .select(['a.name', 'a.default_value', 'v.value'])
    .where('a.tenant_id', '=', tenantId)
    .execute();
}
