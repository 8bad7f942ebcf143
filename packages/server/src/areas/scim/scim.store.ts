import { sql, type RawBuilder } from 'kysely';
import type { Executor, GroupRow, UserRow } from '../../db/tables.js';

/** Kysely queries over the SCIM tables and the REST tables they extend; nothing else. */

export type ScimUserRow = UserRow & { document: string };
export type ScimGroupRow = GroupRow & { document: string };

export interface ListQuery {
  where?: RawBuilder<unknown> | undefined;
  /** Sort key; ties and the default order fall back to the id, so pages are stable. */
  sort?: { expr: RawBuilder<unknown>; descending: boolean } | undefined;
  offset: number;
  limit: number;
}

function users(db: Executor, tenantId: number) {
  return db.selectFrom('users').innerJoin('scim_users', 'scim_users.user_id', 'users.id').where('users.tenant_id', '=', tenantId);
}

export async function findScimUser(db: Executor, tenantId: number, id: number): Promise<ScimUserRow | undefined> {
  return users(db, tenantId).selectAll('users').select('scim_users.document').where('users.id', '=', id).executeTakeFirst();
}

export async function listScimUsers(db: Executor, tenantId: number, q: ListQuery): Promise<{ rows: ScimUserRow[]; total: number }> {
  let base = users(db, tenantId);
  if (q.where) base = base.where(q.where as never);
  const counted = await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  // An offset past the total reads nothing, and one past the stores' integer range would fail.
  if (q.limit === 0 || q.offset >= Number(counted.n)) return { rows: [], total: Number(counted.n) };
  let query = base.selectAll('users').select('scim_users.document');
  if (q.sort) {
    // Unassigned values sort last in both directions and in both databases.
    query = query.orderBy(sql`case when ${q.sort.expr} is null then 1 else 0 end`).orderBy(q.sort.expr, q.sort.descending ? 'desc' : 'asc');
  }
  const rows = await query.orderBy('users.id').offset(q.offset).limit(q.limit).execute();
  return { rows, total: Number(counted.n) };
}

export async function upsertScimUser(db: Executor, tenantId: number, userId: number, document: string, at: string): Promise<void> {
  await db
    .insertInto('scim_users')
    .values({ user_id: userId, tenant_id: tenantId, document, created_at: at })
    .onConflict((oc) => oc.column('user_id').doUpdateSet({ document }))
    .execute();
}

export async function deleteScimUser(db: Executor, tenantId: number, userId: number): Promise<void> {
  await db.deleteFrom('scim_users').where('tenant_id', '=', tenantId).where('user_id', '=', userId).execute();
}

function groups(db: Executor, tenantId: number) {
  return db.selectFrom('groups').innerJoin('scim_groups', 'scim_groups.group_id', 'groups.id').where('groups.tenant_id', '=', tenantId);
}

export async function findScimGroup(db: Executor, tenantId: number, id: number): Promise<ScimGroupRow | undefined> {
  return groups(db, tenantId).selectAll('groups').select('scim_groups.document').where('groups.id', '=', id).executeTakeFirst();
}

export async function listScimGroups(db: Executor, tenantId: number, q: ListQuery): Promise<{ rows: ScimGroupRow[]; total: number }> {
  let base = groups(db, tenantId);
  if (q.where) base = base.where(q.where as never);
  const counted = await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  if (q.limit === 0 || q.offset >= Number(counted.n)) return { rows: [], total: Number(counted.n) };
  let query = base.selectAll('groups').select('scim_groups.document');
  if (q.sort) {
    query = query.orderBy(sql`case when ${q.sort.expr} is null then 1 else 0 end`).orderBy(q.sort.expr, q.sort.descending ? 'desc' : 'asc');
  }
  const rows = await query.orderBy('groups.id').offset(q.offset).limit(q.limit).execute();
  return { rows, total: Number(counted.n) };
}

export async function upsertScimGroup(db: Executor, tenantId: number, groupId: number, document: string, at: string): Promise<void> {
  await db
    .insertInto('scim_groups')
    .values({ group_id: groupId, tenant_id: tenantId, document, created_at: at })
    .onConflict((oc) => oc.column('group_id').doUpdateSet({ document }))
    .execute();
}

export interface ScimMemberRow {
  group_id: number;
  user_id: number;
  email: string;
  document: string;
}

/** Members of these groups that SCIM manages: the only users a SCIM client can see. */
export async function scimMembersOf(db: Executor, tenantId: number, groupIds: number[]): Promise<ScimMemberRow[]> {
  if (groupIds.length === 0) return [];
  return db
    .selectFrom('group_members')
    .innerJoin('users', 'users.id', 'group_members.user_id')
    .innerJoin('scim_users', 'scim_users.user_id', 'group_members.user_id')
    .select(['group_members.group_id', 'group_members.user_id', 'users.email', 'scim_users.document'])
    .where('group_members.tenant_id', '=', tenantId)
    .where('group_members.group_id', 'in', groupIds)
    .orderBy('group_members.user_id')
    .execute();
}

/** SCIM-managed groups these users belong to, for the read-only `groups` attribute of a User. */
export async function scimGroupsOf(db: Executor, tenantId: number, userIds: number[]): Promise<Array<{ user_id: number; group_id: number; name: string }>> {
  if (userIds.length === 0) return [];
  return db
    .selectFrom('group_members')
    .innerJoin('groups', 'groups.id', 'group_members.group_id')
    .innerJoin('scim_groups', 'scim_groups.group_id', 'group_members.group_id')
    .select(['group_members.user_id', 'group_members.group_id', 'groups.name'])
    .where('group_members.tenant_id', '=', tenantId)
    .where('group_members.user_id', 'in', userIds)
    .orderBy('group_members.group_id')
    .execute();
}

/** Which of `ids` are SCIM-managed users of this tenant. */
export async function existingScimUserIds(db: Executor, tenantId: number, ids: number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const rows = await db.selectFrom('scim_users').select('user_id').where('tenant_id', '=', tenantId).where('user_id', 'in', ids).execute();
  return new Set(rows.map((r) => r.user_id));
}

/** Removes a user from every group, as SCIM deletion does. */
export async function removeFromAllGroups(db: Executor, tenantId: number, userId: number): Promise<number[]> {
  const rows = await db.selectFrom('group_members').select('group_id').where('tenant_id', '=', tenantId).where('user_id', '=', userId).execute();
  await db.deleteFrom('group_members').where('tenant_id', '=', tenantId).where('user_id', '=', userId).execute();
  return rows.map((r) => r.group_id);
}
