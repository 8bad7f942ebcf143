import type { Executor } from '../../db/tables.js';

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

/** The global (account) groups embed users are in. */
export async function globalGroupsOfEmbedUsers(db: Executor, tenantId: number, embedUserIds: number[]) {
  return db
    .selectFrom('embed_user_groups as ug')
    .innerJoin('groups as g', 'g.id', 'ug.group_id')
    .select(['ug.embed_user_id', 'g.name'])
    .where('ug.tenant_id', '=', tenantId)
    .where('ug.embed_user_id', 'in', embedUserIds)
    .execute();
}

/** The tenant groups (kind `tenant-group`) embed users are in. */
export async function tenantGroupsOfEmbedUsers(db: Executor, tenantId: number, embedUserIds: number[]) {
  return db
    .selectFrom('embed_group_members as m')
    .innerJoin('embed_groups as g', 'g.id', 'm.embed_group_id')
    .select(['m.embed_user_id', 'g.name'])
    .where('m.tenant_id', '=', tenantId)
    .where('m.embed_user_id', 'in', embedUserIds)
    .where('g.kind', '=', 'tenant-group')
    .execute();
}

/** Embed users' attribute values (JSON), with the attribute's name. */
export async function attributeValuesOfEmbedUsers(db: Executor, tenantId: number, embedUserIds: number[]) {
  return db
    .selectFrom('embed_user_attribute_values as v')
    .innerJoin('user_attributes as a', 'a.id', 'v.attribute_id')
    .select(['v.embed_user_id', 'a.name', 'v.value'])
    .where('v.tenant_id', '=', tenantId)
    .where('v.embed_user_id', 'in', embedUserIds)
    .execute();
}
