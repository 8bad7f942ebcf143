import { sql } from 'kysely';
import type { Executor, GroupRow } from '../../db/tables.js';

export type GroupWithCount = GroupRow & { member_count: number };
export type GroupChanges = Partial<Pick<GroupRow, 'name' | 'description' | 'updated_at'>>;
export interface MemberRow {
  id: number;
  email: string;
  first_name: string | null;
}

export async function findGroup(db: Executor, tenantId: number, id: number): Promise<GroupRow | undefined> {
  return db.selectFrom('groups').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

/** Names compare case-insensitively, matching the unique index on lower(name). */
export async function findGroupByName(db: Executor, tenantId: number, name: string): Promise<GroupRow | undefined> {
  return db
    .selectFrom('groups')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where(sql<string>`lower(name)`, '=', name.toLowerCase())
    .executeTakeFirst();
}

export async function insertGroup(db: Executor, values: Omit<GroupRow, 'id'>): Promise<GroupRow> {
  return db.insertInto('groups').values(values).returningAll().executeTakeFirstOrThrow();
}

export async function updateGroup(db: Executor, tenantId: number, id: number, changes: GroupChanges): Promise<void> {
  await db.updateTable('groups').set(changes).where('tenant_id', '=', tenantId).where('id', '=', id).execute();
}

export async function listGroups(db: Executor, tenantId: number, afterId: number | undefined, limit: number): Promise<GroupWithCount[]> {
  let query = db
    .selectFrom('groups')
    .selectAll('groups')
    .select((eb) =>
      eb
        .selectFrom('group_members')
        .select((inner) => inner.fn.countAll<number>().as('n'))
        .whereRef('group_members.group_id', '=', 'groups.id')
        .as('member_count'),
    )
    .where('groups.tenant_id', '=', tenantId);
  if (afterId !== undefined) query = query.where('groups.id', '>', afterId);
  const rows = await query.orderBy('groups.id').limit(limit).execute();
  return rows.map((row) => ({ ...row, member_count: Number(row.member_count ?? 0) }));
}

export async function listMembers(db: Executor, tenantId: number, groupId: number): Promise<MemberRow[]> {
  return db
    .selectFrom('group_members')
    .innerJoin('users', 'users.id', 'group_members.user_id')
    .select(['users.id', 'users.email', 'users.first_name'])
    .where('group_members.tenant_id', '=', tenantId)
    .where('group_members.group_id', '=', groupId)
    .orderBy('users.id')
    .execute();
}

/** Adds members, skipping those already in the group; returns how many were new. */
export async function addMembers(db: Executor, tenantId: number, groupId: number, userIds: number[], at: string): Promise<number> {
  let added = 0;
  // Chunks keep every statement well under both dialects' bound-parameter limits.
  for (let i = 0; i < userIds.length; i += 250) {
    const rows = userIds.slice(i, i + 250).map((userId) => ({ tenant_id: tenantId, group_id: groupId, user_id: userId, created_at: at }));
    const result = await db
      .insertInto('group_members')
      .values(rows)
      .onConflict((oc) => oc.columns(['group_id', 'user_id']).doNothing())
      .executeTakeFirst();
    added += Number(result.numInsertedOrUpdatedRows ?? 0);
  }
  return added;
}

/** Removes members; returns how many were in the group. */
export async function removeMembers(db: Executor, tenantId: number, groupId: number, userIds: number[]): Promise<number> {
  const result = await db
    .deleteFrom('group_members')
    .where('tenant_id', '=', tenantId)
    .where('group_id', '=', groupId)
    .where('user_id', 'in', userIds)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Deletes a group with its memberships and the policies granted to it; run inside a transaction. */
export async function deleteGroupCascade(db: Executor, tenantId: number, id: number): Promise<void> {
  await db.deleteFrom('policies').where('tenant_id', '=', tenantId).where('principal_type', '=', 'GROUP').where('principal_id', '=', id).execute();
  await db.deleteFrom('group_members').where('tenant_id', '=', tenantId).where('group_id', '=', id).execute();
  await db.deleteFrom('groups').where('tenant_id', '=', tenantId).where('id', '=', id).execute();
}
