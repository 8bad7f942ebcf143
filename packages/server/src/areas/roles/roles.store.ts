import { sql, type Insertable, type Updateable } from 'kysely';
import type { Executor, RoleRow, RoleTable } from '../../db/tables.js';

export async function insertRole(db: Executor, values: Insertable<RoleTable>): Promise<RoleRow> {
  return db.insertInto('roles').values(values).returningAll().executeTakeFirstOrThrow();
}

export async function findRole(db: Executor, tenantId: number, id: number): Promise<RoleRow | undefined> {
  return db.selectFrom('roles').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

export async function findRoleByName(db: Executor, tenantId: number, name: string): Promise<RoleRow | undefined> {
  return db
    .selectFrom('roles')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where(sql<string>`lower(name)`, '=', name.toLowerCase())
    .executeTakeFirst();
}

/** Newest first: ids grow with creation, so a page continues below the last id seen. */
export async function listRoles(db: Executor, tenantId: number, beforeId: number | undefined, limit: number): Promise<RoleRow[]> {
  let query = db.selectFrom('roles').selectAll().where('tenant_id', '=', tenantId);
  if (beforeId !== undefined) query = query.where('id', '<', beforeId);
  return query.orderBy('id', 'desc').limit(limit).execute();
}

export async function updateRole(db: Executor, tenantId: number, id: number, changes: Updateable<RoleTable>): Promise<void> {
  await db.updateTable('roles').set(changes).where('tenant_id', '=', tenantId).where('id', '=', id).execute();
}

/** The role's assignments go with it (cascades). */
export async function deleteRole(db: Executor, tenantId: number, id: number): Promise<boolean> {
  const result = await db.deleteFrom('roles').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Whether the assignment was new. */
export async function assignToUser(db: Executor, tenantId: number, roleId: number, userId: number, at: string): Promise<boolean> {
  const result = await db
    .insertInto('role_users')
    .values({ tenant_id: tenantId, role_id: roleId, user_id: userId, created_at: at })
    .onConflict((oc) => oc.columns(['role_id', 'user_id']).doNothing())
    .executeTakeFirst();
  return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
}

/** Whether there was an assignment to remove. */
export async function unassignFromUser(db: Executor, tenantId: number, roleId: number, userId: number): Promise<boolean> {
  const result = await db
    .deleteFrom('role_users')
    .where('tenant_id', '=', tenantId)
    .where('role_id', '=', roleId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

export async function assignToGroup(db: Executor, tenantId: number, roleId: number, groupId: number, at: string): Promise<boolean> {
  const result = await db
    .insertInto('role_groups')
    .values({ tenant_id: tenantId, role_id: roleId, group_id: groupId, created_at: at })
    .onConflict((oc) => oc.columns(['role_id', 'group_id']).doNothing())
    .executeTakeFirst();
  return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
}

export async function unassignFromGroup(db: Executor, tenantId: number, roleId: number, groupId: number): Promise<boolean> {
  const result = await db
    .deleteFrom('role_groups')
    .where('tenant_id', '=', tenantId)
    .where('role_id', '=', roleId)
    .where('group_id', '=', groupId)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}
