import { policiesApplyingTo } from '../../access/grants.store.js';
import type { Executor, PolicyRow, PrincipalType, ResourceType } from '../../db/tables.js';

export interface PolicyFilter {
  principalType?: PrincipalType | undefined;
  principalId?: number | undefined;
  resourceType?: ResourceType | undefined;
  resourceId?: number | undefined;
  /** Only policies that apply to this user: granted to them or to a group they belong to. */
  appliesTo?: number | undefined;
}

export async function insertPolicy(db: Executor, values: Omit<PolicyRow, 'id'>): Promise<PolicyRow> {
  return db.insertInto('policies').values(values).returningAll().executeTakeFirstOrThrow();
}

export async function findPolicyFor(
  db: Executor,
  tenantId: number,
  principal: { type: PrincipalType; id: number },
  resource: { type: ResourceType; id: number },
): Promise<PolicyRow | undefined> {
  return db
    .selectFrom('policies')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('principal_type', '=', principal.type)
    .where('principal_id', '=', principal.id)
    .where('resource_type', '=', resource.type)
    .where('resource_id', '=', resource.id)
    .executeTakeFirst();
}

export async function listPolicies(db: Executor, tenantId: number, filter: PolicyFilter, afterId: number | undefined, limit: number): Promise<PolicyRow[]> {
  let query = filter.appliesTo === undefined ? db.selectFrom('policies').where('tenant_id', '=', tenantId) : policiesApplyingTo(db, tenantId, filter.appliesTo);
  if (filter.principalType !== undefined) query = query.where('principal_type', '=', filter.principalType);
  if (filter.principalId !== undefined) query = query.where('principal_id', '=', filter.principalId);
  if (filter.resourceType !== undefined) query = query.where('resource_type', '=', filter.resourceType);
  if (filter.resourceId !== undefined) query = query.where('resource_id', '=', filter.resourceId);
  if (afterId !== undefined) query = query.where('id', '>', afterId);
  return query.selectAll().orderBy('id').limit(limit).execute();
}

export async function deletePolicy(db: Executor, tenantId: number, id: number): Promise<boolean> {
  const result = await db.deleteFrom('policies').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Removes every policy on a resource; used when the resource itself is deleted. */
export async function deletePoliciesOn(db: Executor, tenantId: number, resource: { type: ResourceType; id: number }): Promise<void> {
  await db.deleteFrom('policies').where('tenant_id', '=', tenantId).where('resource_type', '=', resource.type).where('resource_id', '=', resource.id).execute();
}
