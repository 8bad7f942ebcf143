import type { Executor } from '../db/tables.js';

/**
 * Policies granted to the user or to any group they belong to, as a query to refine. Access
 * checks, the policies list and the deployments list all start here, so what a user can see
 * listed matches what they can do.
 */
export function policiesApplyingTo(db: Executor, tenantId: number, userId: number) {
  return db
    .selectFrom('policies')
    .where('tenant_id', '=', tenantId)
    .where((eb) =>
      eb.or([
        eb.and([eb('principal_type', '=', 'USER'), eb('principal_id', '=', userId)]),
        eb.and([
          eb('principal_type', '=', 'GROUP'),
          eb('principal_id', 'in', eb.selectFrom('group_members').select('group_id').where('tenant_id', '=', tenantId).where('user_id', '=', userId)),
        ]),
      ]),
    );
}
