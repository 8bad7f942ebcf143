import { sql } from 'kysely';
import { bumpAuthVersion } from '../../cache/tenant-cache.js';
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
 * cache keeps them under the tenant's `auth_version` (areas/data-api/security-context.ts): every
 * write here bumps it, so a changed value or default applies to the very next query.
 */

export async function insertAttribute(db: Executor, row: Omit<UserAttributeRow, 'id'>): Promise<UserAttributeRow> {
  const inserted = await db.insertInto('user_attributes').values(row).returningAll().executeTakeFirstOrThrow();
  await bumpAuthVersion(db, row.tenant_id);
  return inserted;
}

export async function updateAttribute(db: Executor, tenantId: number, id: number, changes: Partial<Pick<UserAttributeRow, 'name' | 'default_value' | 'updated_at'>>): Promise<void> {
  await db.updateTable('user_attributes').set(changes).where('tenant_id', '=', tenantId).where('id', '=', id).execute();
  await bumpAuthVersion(db, tenantId);
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

/** One value written; the caller bumps the tenant's version after its last write (`valuesWritten`). */
export async function upsertValue(db: Executor, tenantId: number, userId: number, attributeId: number, value: string, at: string): Promise<void> {
  await db
    .insertInto('user_attribute_values')
    .values({ tenant_id: tenantId, user_id: userId, attribute_id: attributeId, value, updated_at: at })
    .onConflict((oc) => oc.columns(['user_id', 'attribute_id']).doUpdateSet({ value, updated_at: at }))
    .execute();
}

/** Values removed; the caller bumps the tenant's version after its last write (`valuesWritten`). */
export async function deleteValues(db: Executor, tenantId: number, userId: number, attributeIds?: number[]): Promise<void> {
  let query = db.deleteFrom('user_attribute_values').where('tenant_id', '=', tenantId).where('user_id', '=', userId);
  if (attributeIds) {
    if (attributeIds.length === 0) return;
    query = query.where('attribute_id', 'in', attributeIds);
  }
  await query.execute();
}

/** After the last value a transaction writes: the data API's cached contexts of the tenant are read again. */
export async function valuesWritten(db: Executor, tenantId: number): Promise<void> {
  await bumpAuthVersion(db, tenantId);
}
