import { sql } from 'kysely';
import type { EmbedGroupRow, EmbedUserRow, Executor } from '../../db/tables.js';

export type EmbedGroupWithCount = EmbedGroupRow & { user_count: number };

/** A group made through 4.7 in this embed tenant; system groups are never addressed by these routes. */
export async function findTenantGroup(db: Executor, tenantId: number, embedTenantId: number, id: number): Promise<EmbedGroupWithCount | undefined> {
  const row = await db
    .selectFrom('embed_groups')
    .selectAll('embed_groups')
    .select((eb) =>
      eb
        .selectFrom('embed_group_members')
        .select((inner) => inner.fn.countAll<number>().as('n'))
        .whereRef('embed_group_members.embed_group_id', '=', 'embed_groups.id')
        .as('user_count'),
    )
    .where('tenant_id', '=', tenantId)
    .where('embed_tenant_id', '=', embedTenantId)
    .where('kind', '=', 'tenant-group')
    .where('id', '=', id)
    .executeTakeFirst();
  return row && { ...row, user_count: Number(row.user_count ?? 0) };
}

/** Any group of the embed tenant with this name, ignoring case, system groups included. */
export async function findGroupByName(db: Executor, embedTenantId: number, name: string): Promise<EmbedGroupRow | undefined> {
  return db
    .selectFrom('embed_groups')
    .selectAll()
    .where('embed_tenant_id', '=', embedTenantId)
    .where(sql<string>`lower(name)`, '=', name.toLowerCase())
    .executeTakeFirst();
}

/** Newest first (id descending), with member counts; system groups are not listed. */
export async function listTenantGroups(
  db: Executor,
  tenantId: number,
  embedTenantId: number,
  beforeId: number | undefined,
  limit: number,
): Promise<EmbedGroupWithCount[]> {
  let query = db
    .selectFrom('embed_groups')
    .selectAll('embed_groups')
    .select((eb) =>
      eb
        .selectFrom('embed_group_members')
        .select((inner) => inner.fn.countAll<number>().as('n'))
        .whereRef('embed_group_members.embed_group_id', '=', 'embed_groups.id')
        .as('user_count'),
    )
    .where('tenant_id', '=', tenantId)
    .where('embed_tenant_id', '=', embedTenantId)
    .where('kind', '=', 'tenant-group');
  if (beforeId !== undefined) query = query.where('id', '<', beforeId);
  const rows = await query.orderBy('id', 'desc').limit(limit).execute();
  return rows.map((row) => ({ ...row, user_count: Number(row.user_count ?? 0) }));
}

export async function insertTenantGroup(
  db: Executor,
  tenantId: number,
  embedTenantId: number,
  name: string,
  description: string | null,
  at: string,
): Promise<EmbedGroupRow> {
  return db
    .insertInto('embed_groups')
    .values({ tenant_id: tenantId, embed_tenant_id: embedTenantId, kind: 'tenant-group', name, description, created_at: at, updated_at: at })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function setGroupDescription(db: Executor, tenantId: number, id: number, description: string | null, at: string): Promise<void> {
  await db.updateTable('embed_groups').set({ description, updated_at: at }).where('tenant_id', '=', tenantId).where('id', '=', id).execute();
}

export async function deleteGroup(db: Executor, tenantId: number, id: number): Promise<void> {
  await db.deleteFrom('embed_groups').where('tenant_id', '=', tenantId).where('id', '=', id).execute();
}

export type MemberRow = EmbedUserRow & { membership_id: number };

/** Most recently added first (the membership's id descending). */
export async function listGroupMembers(
  db: Executor,
  tenantId: number,
  groupId: number,
  beforeMembershipId: number | undefined,
  limit: number,
): Promise<MemberRow[]> {
  let query = db
    .selectFrom('embed_group_members')
    .innerJoin('embed_users', 'embed_users.id', 'embed_group_members.embed_user_id')
    .selectAll('embed_users')
    .select('embed_group_members.id as membership_id')
    .where('embed_group_members.tenant_id', '=', tenantId)
    .where('embed_group_members.embed_group_id', '=', groupId);
  if (beforeMembershipId !== undefined) query = query.where('embed_group_members.id', '<', beforeMembershipId);
  return query.orderBy('embed_group_members.id', 'desc').limit(limit).execute();
}

export async function memberIdsOf(db: Executor, groupId: number, userIds: number[]): Promise<Set<number>> {
  if (userIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('embed_group_members')
    .select('embed_user_id')
    .where('embed_group_id', '=', groupId)
    .where('embed_user_id', 'in', userIds)
    .execute();
  return new Set(rows.map((r) => r.embed_user_id));
}

export async function removeMembers(db: Executor, tenantId: number, groupId: number, userIds: number[]): Promise<void> {
  for (let i = 0; i < userIds.length; i += 250) {
    await db
      .deleteFrom('embed_group_members')
      .where('tenant_id', '=', tenantId)
      .where('embed_group_id', '=', groupId)
      .where('embed_user_id', 'in', userIds.slice(i, i + 250))
      .execute();
  }
}
