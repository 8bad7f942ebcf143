import type { Executor } from '../../db/tables.js';

/** The groups a user of the account is in, by name. */
export async function userGroupNames(db: Executor, tenantId: number, userId: number): Promise<string[]> {
  const rows = await db
    .selectFrom('group_members as m')
    .innerJoin('groups as g', 'g.id', 'm.group_id')
    .select('g.name')
    .where('m.tenant_id', '=', tenantId)
    .where('m.user_id', '=', userId)
    .orderBy('g.name')
    .execute();
  return rows.map((r) => r.name);
}

/** Every attribute of the tenant, in catalog order, with its default and the user's value (null where they have none), as stored (JSON). */
export async function userAttributeValues(db: Executor, tenantId: number, userId: number) {
  return db
    .selectFrom('user_attributes as a')
    .leftJoin('user_attribute_values as v', (join) => join.onRef('v.attribute_id', '=', 'a.id').on('v.user_id', '=', userId))
    .select(['a.name', 'a.default_value', 'v.value'])
    .where('a.tenant_id', '=', tenantId)
    .orderBy('a.id')
    .execute();
}

/** Embed users with the name of their embed tenant. */
export async function embedUsersWithTenant(db: Executor, tenantId: number, embedUserIds: number[]) {
  return db
    .selectFrom('embed_users as eu')
    .innerJoin('embed_tenants as et', 'et.id', 'eu.embed_tenant_id')
    .select(['eu.id', 'et.name'])
    .where('eu.tenant_id', '=', tenantId)
    .where('eu.id', 'in', embedUserIds)
    .execute();
}

/** The global (account) groups embed users are in, by name. */
export async function globalGroupsOfEmbedUsers(db: Executor, tenantId: number, embedUserIds: number[]) {
  return db
    .selectFrom('embed_user_groups as ug')
    .innerJoin('groups as g', 'g.id', 'ug.group_id')
    .select(['ug.embed_user_id', 'g.name'])
    .where('ug.tenant_id', '=', tenantId)
    .where('ug.embed_user_id', 'in', embedUserIds)
    .orderBy('g.name')
    .execute();
}

/** The tenant groups (kind `tenant-group`) embed users are in, by their own names. */
export async function tenantGroupsOfEmbedUsers(db: Executor, tenantId: number, embedUserIds: number[]) {
  return db
    .selectFrom('embed_group_members as m')
    .innerJoin('embed_groups as g', 'g.id', 'm.embed_group_id')
    .select(['m.embed_user_id', 'g.name'])
    .where('m.tenant_id', '=', tenantId)
    .where('m.embed_user_id', 'in', embedUserIds)
    .where('g.kind', '=', 'tenant-group')
    .orderBy('g.name')
    .execute();
}

/** Embed users' own attribute values (JSON), by attribute id. */
export async function attributeValuesOfEmbedUsers(db: Executor, tenantId: number, embedUserIds: number[]) {
  return db
    .selectFrom('embed_user_attribute_values')
    .select(['embed_user_id', 'attribute_id', 'value'])
    .where('tenant_id', '=', tenantId)
    .where('embed_user_id', 'in', embedUserIds)
    .execute();
}
