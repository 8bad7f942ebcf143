import { sql } from 'kysely';
import type { Executor, NewUser, Role, UserRow, UserUpdate } from '../../db/tables.js';

export async function findUserById(db: Executor, tenantId: number, id: number): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

/** Emails compare case-insensitively, matching the unique index on lower(email). */
/** An active (not deactivated) user by email, as stored (no normalization). */
export async function findActiveUserIdByEmail(db: Executor, tenantId: number, email: string): Promise<{ id: number } | undefined> {
  return db
    .selectFrom('users')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('email', '=', email)
    .where('deactivated_at', 'is', null)
    .executeTakeFirst();
}

/** The user's first name and email: what a commit they make carries as its author. */
export async function findUserNameAndEmail(db: Executor, tenantId: number, id: number): Promise<{ first_name: string | null; email: string } | undefined> {
  return db.selectFrom('users').select(['first_name', 'email']).where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

/** When the user was deactivated (null: active); undefined when there is no such user. */
export async function findUserDeactivation(db: Executor, tenantId: number, id: number): Promise<{ deactivated_at: string | null } | undefined> {
  return db.selectFrom('users').select('deactivated_at').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

export async function findUserByEmail(db: Executor, tenantId: number, email: string): Promise<UserRow | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where(sql<string>`lower(email)`, '=', email.toLowerCase())
    .executeTakeFirst();
}

export async function insertUser(db: Executor, user: NewUser): Promise<UserRow> {
  return db.insertInto('users').values(user).returningAll().executeTakeFirstOrThrow();
}

export async function updateUser(db: Executor, tenantId: number, id: number, changes: UserUpdate): Promise<UserRow | undefined> {
  return db.updateTable('users').set(changes).where('tenant_id', '=', tenantId).where('id', '=', id).returningAll().executeTakeFirst();
}

export interface UserFilter {
  role?: Role | undefined;
  /** true: only active users; false: only deactivated ones; undefined: both. */
  active?: boolean | undefined;
}

export async function listUsers(db: Executor, tenantId: number, afterId: number | undefined, limit: number, filter: UserFilter = {}): Promise<UserRow[]> {
  let query = db.selectFrom('users').selectAll().where('tenant_id', '=', tenantId);
  if (filter.role !== undefined) query = query.where('role', '=', filter.role);
  if (filter.active !== undefined) query = query.where('deactivated_at', filter.active ? 'is' : 'is not', null);
  if (afterId !== undefined) query = query.where('id', '>', afterId);
  return query.orderBy('id').limit(limit).execute();
}

/** Which of `ids` are users of this tenant (active or not). */
export async function existingUserIds(db: Executor, tenantId: number, ids: number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const rows = await db.selectFrom('users').select('id').where('tenant_id', '=', tenantId).where('id', 'in', ids).execute();
  return new Set(rows.map((r) => r.id));
}

export async function countActiveAdmins(db: Executor, tenantId: number): Promise<number> {
  const row = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('tenant_id', '=', tenantId)
    .where('role', '=', 'ADMIN')
    .where('deactivated_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
