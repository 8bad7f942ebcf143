import { sql } from 'kysely';
import type { EmbedGroupRow, Executor, GroupRow } from '../../db/tables.js';

/*
 * What an embed user belongs to and carries: the account's global groups, the embed tenant's own
 * groups, and attribute values. Each "set" replaces exactly the named kind and nothing else.
 */

/** The account's groups by name, ignoring case (the unique index of groups is on lower(name)). */
export async function globalGroupsByName(db: Executor, tenantId: number, names: string[]): Promise<GroupRow[]> {
  if (names.length === 0) return [];
  return db
    .selectFrom('groups')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where(
      sql<string>`lower(name)`,
      'in',
      names.map((n) => n.toLowerCase()),
    )
    .execute();
}

export async function globalGroupNamesOf(db: Executor, tenantId: number, embedUserId: number): Promise<string[]> {
  const rows = await db
    .selectFrom('embed_user_groups')
    .innerJoin('groups', 'groups.id', 'embed_user_groups.group_id')
    .select('groups.name')
    .where('embed_user_groups.tenant_id', '=', tenantId)
    .where('embed_user_groups.embed_user_id', '=', embedUserId)
    .orderBy('groups.name')
    .execute();
  return rows.map((r) => r.name);
}

export async function setGlobalGroups(db: Executor, tenantId: number, embedUserId: number, groupIds: number[], at: string): Promise<void> {
  await db.deleteFrom('embed_user_groups').where('tenant_id', '=', tenantId).where('embed_user_id', '=', embedUserId).execute();
  if (groupIds.length === 0) return;
  await db
    .insertInto('embed_user_groups')
    .values(groupIds.map((groupId) => ({ tenant_id: tenantId, embed_user_id: embedUserId, group_id: groupId, created_at: at })))
    .execute();
}

/** Groups made through 4.7 in one embed tenant, by name ignoring case; never the system groups. */
export async function tenantGroupsByName(db: Executor, tenantId: number, embedTenantId: number, names: string[]): Promise<EmbedGroupRow[]> {
  if (names.length === 0) return [];
  return db
    .selectFrom('embed_groups')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('embed_tenant_id', '=', embedTenantId)
    .where('kind', '=', 'tenant-group')
    .where(
      sql<string>`lower(name)`,
      'in',
      names.map((n) => n.toLowerCase()),
    )
    .execute();
}

/**
 * Makes the user's tenant-group memberships exactly `groupIds`: memberships kept are not
 * re-added, so their place in "most recently added first" (4.11) does not move.
 */
export async function setTenantGroups(db: Executor, tenantId: number, embedUserId: number, groupIds: number[], at: string): Promise<void> {
  let stale = db.deleteFrom('embed_group_members').where('tenant_id', '=', tenantId).where('embed_user_id', '=', embedUserId);
  if (groupIds.length > 0) stale = stale.where('embed_group_id', 'not in', groupIds);
  await stale.execute();
  await addMemberships(
    db,
    tenantId,
    groupIds.map((groupId) => ({ groupId, userId: embedUserId })),
    at,
  );
}

/** Adds memberships, skipping those that exist; returns the pairs that were new. */
export async function addMemberships(db: Executor, tenantId: number, pairs: Array<{ groupId: number; userId: number }>, at: string): Promise<number> {
  let added = 0;
  // Rows take ids in the order of VALUES, so members added together list newest first in reverse
  // request order; chunks keep each statement under both dialects' bound-parameter limits.
  for (let i = 0; i < pairs.length; i += 250) {
    const rows = pairs
      .slice(i, i + 250)
      .map(({ groupId, userId }) => ({ tenant_id: tenantId, embed_group_id: groupId, embed_user_id: userId, created_at: at }));
    const result = await db
      .insertInto('embed_group_members')
      .values(rows)
      .onConflict((oc) => oc.columns(['embed_group_id', 'embed_user_id']).doNothing())
      .executeTakeFirst();
    added += Number(result.numInsertedOrUpdatedRows ?? 0);
  }
  return added;
}

export async function attributeValuesOf(db: Executor, tenantId: number, embedUserId: number): Promise<Array<{ attribute_id: number; value: string }>> {
  return db
    .selectFrom('embed_user_attribute_values')
    .select(['attribute_id', 'value'])
    .where('tenant_id', '=', tenantId)
    .where('embed_user_id', '=', embedUserId)
    .execute();
}

export async function upsertAttributeValue(db: Executor, tenantId: number, embedUserId: number, attributeId: number, value: string, at: string): Promise<void> {
  await db
    .insertInto('embed_user_attribute_values')
    .values({ tenant_id: tenantId, embed_user_id: embedUserId, attribute_id: attributeId, value, updated_at: at })
    .onConflict((oc) => oc.columns(['embed_user_id', 'attribute_id']).doUpdateSet({ value, updated_at: at }))
    .execute();
}

export async function deleteAttributeValue(db: Executor, tenantId: number, embedUserId: number, attributeId: number): Promise<void> {
  await db
    .deleteFrom('embed_user_attribute_values')
    .where('tenant_id', '=', tenantId)
    .where('embed_user_id', '=', embedUserId)
    .where('attribute_id', '=', attributeId)
    .execute();
}
