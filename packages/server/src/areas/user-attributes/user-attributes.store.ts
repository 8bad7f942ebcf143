import { sql } from 'kysely';
import type { Executor, UserAttributeRow } from '../../db/tables.js';

export async function listAttributes(db: Executor, tenantId: number): Promise<UserAttributeRow[]> {
  return db.selectFrom('user_attributes').selectAll().where('tenant_id', '=', tenantId).orderBy('id').execute();
}

export async function findAttribute(db: Executor, tenantId: number, id: number): Promise<UserAttributeRow | undefined> {
  return db.selectFrom('user_attributes').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

/** Names compare ignoring case, matching the unique index on lower(name). */
export async function findAttributeByName(db: Executor, tenantId: number, name: string): Promise<UserAttributeRow | undefined> {
  return db
    .selectFrom('user_attributes')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where(sql<string>`lower(name)`, '=', name.toLowerCase())
    .executeTakeFirst();
}

/*
 * Attributes and their values decide the rows a caller sees through the data API, whose caller
 * cache keeps them under the tenant's `auth_version` (areas/data-api/security-context.ts): the
 * triggers of migration 0033 bump it on every write to these tables, in the writer's transaction,
 * so a changed value or default applies to the very next query however it was written.
 */

export async function insertAttribute(db: Executor, row: Omit<UserAttributeRow, 'id'>): Promise<UserAttributeRow> {
  return db.insertInto('user_attributes').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function updateAttribute(
  db: Executor,
  tenantId: number,
  id: number,
  changes: Partial<Pick<UserAttributeRow, 'name' | 'default_value' | 'updated_at'>>,
): Promise<void> {
  await db.updateTable('user_attributes').set(changes).where('tenant_id', '=', tenantId).where('id', '=', id).execute();
}

export interface ValueRow {
  user_id: number;
  attribute_id: number;
  value: string;
}

export async function valuesOf(db: Executor, tenantId: number, userIds: number[]): Promise<ValueRow[]> {
  if (userIds.length === 0) return [];
  return db
    .selectFrom('user_attribute_values')
    .select(['user_id', 'attribute_id', 'value'])
    .where('tenant_id', '=', tenantId)
    .where('user_id', 'in', userIds)
    .orderBy('attribute_id')
    .execute();
}

export async function upsertValue(db: Executor, tenantId: number, userId: number, attributeId: number, value: string, at: string): Promise<void> {
  await db
    .insertInto('user_attribute_values')
    .values({ tenant_id: tenantId, user_id: userId, attribute_id: attributeId, value, updated_at: at })
    .onConflict((oc) => oc.columns(['user_id', 'attribute_id']).doUpdateSet({ value, updated_at: at }))
    .execute();
}

export async function deleteValues(db: Executor, tenantId: number, userId: number, attributeIds?: number[]): Promise<void> {
  let query = db.deleteFrom('user_attribute_values').where('tenant_id', '=', tenantId).where('user_id', '=', userId);
  if (attributeIds) {
    if (attributeIds.length === 0) return;
    query = query.where('attribute_id', 'in', attributeIds);
  }
  await query.execute();
}
