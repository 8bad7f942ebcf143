import type { Executor } from '../../db/tables.js';

/**
 * A batch of the tenant's audit events for its usage data, in id order after `after`: those past
 * `last` (the newest the usage file holds) and those since `since` (committed out of id order).
 */
export async function usageEventsAfter(db: Executor, tenantId: number, after: number, last: number, since: string, limit: number) {
  return db
    .selectFrom('audit_events')
    .select(['id', 'occurred_at', 'action', 'actor_user_id', 'actor_email', 'credential_kind', 'method', 'route', 'status'])
    .where('tenant_id', '=', tenantId)
    .where('id', '>', after)
    .where((eb) => eb.or([eb('id', '>', last), eb('occurred_at', '>=', since)]))
    .orderBy('id')
    .limit(limit)
    .execute();
}
