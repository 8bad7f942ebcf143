import type { Access, Executor, ResourceType } from '../db/tables.js';

/** Every policy that applies to a user: granted to them, or to a group they belong to. One query. */
export async function grantsOfUser(
  db: Executor,
  tenantId: number,
  userId: number,
): Promise<Array<{ resource_type: ResourceType; resource_id: number; access: Access }>> {
  return db
    .selectFrom('policies')
    .select(['resource_type', 'resource_id', 'access'])
    .where('tenant_id', '=', tenantId)
    .where((eb) =>
      eb.or([
        eb.and([eb('principal_type', '=', 'USER'), eb('principal_id', '=', userId)]),
        eb.and([
          eb('principal_type', '=', 'GROUP'),
          eb(
            'principal_id',
            'in',
            eb.selectFrom('group_members').select('group_id').where('tenant_id', '=', tenantId).where('user_id', '=', userId),
          ),
        ]),
      ]),
    )
    .execute();
}
