import { sql } from 'kysely';
import type { EmbedAttributeDefinitionRow, Executor } from '../../db/tables.js';

/*
 * An embed tenant's own user-attribute catalog (reference 4.15, creator mode): written by the
 * `userAttributeDefinitions` of creator-mode sessions, read when such a session resolves its
 * `userAttributes`, and by every embed identity of the tenant's users (security-context.ts).
 */

export type CreatorAttributeType = EmbedAttributeDefinitionRow['type'];

/** Whether `value` is of the catalog type (4.15's enum: string, number, boolean, string_array, number_array). */
export function matchesCreatorType(type: CreatorAttributeType, value: unknown): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'string_array':
      return Array.isArray(value) && value.every((v) => typeof v === 'string');
    case 'number_array':
      return Array.isArray(value) && value.every((v) => typeof v === 'number' && Number.isFinite(v));
  }
}

export async function creatorDefinitions(db: Executor, tenantId: number, embedTenantId: number): Promise<EmbedAttributeDefinitionRow[]> {
  return db
    .selectFrom('embed_attribute_definitions')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('embed_tenant_id', '=', embedTenantId)
    .orderBy('id')
    .execute();
}

/**
 * Inserts a definition unless the name is taken (a creator-mode session of the same tenant
 * defining it at the same moment, which has committed by then): undefined in that case.
 */
export async function insertCreatorDefinition(db: Executor, row: Omit<EmbedAttributeDefinitionRow, 'id'>): Promise<EmbedAttributeDefinitionRow | undefined> {
  return db
    .insertInto('embed_attribute_definitions')
    .values(row)
    .onConflict((oc) => oc.doNothing())
    .returningAll()
    .executeTakeFirst();
}

/** A tenant group (kind `tenant-group`) unless its name is taken, as `insertCreatorDefinition`. */
export async function insertTenantGroupUnlessTaken(
  db: Executor,
  tenantId: number,
  embedTenantId: number,
  name: string,
  description: string | null,
  at: string,
) {
  await db
    .insertInto('embed_groups')
    .values({ tenant_id: tenantId, embed_tenant_id: embedTenantId, kind: 'tenant-group', name, description, created_at: at, updated_at: at })
    .onConflict((oc) => oc.doNothing())
    .execute();
}

export async function updateCreatorDefinition(
  db: Executor,
  tenantId: number,
  id: number,
  changes: Partial<Pick<EmbedAttributeDefinitionRow, 'display_name' | 'default_value' | 'description' | 'updated_at'>>,
): Promise<void> {
  await db.updateTable('embed_attribute_definitions').set(changes).where('tenant_id', '=', tenantId).where('id', '=', id).execute();
}

export async function upsertCreatorValue(db: Executor, tenantId: number, embedUserId: number, definitionId: number, value: string, at: string): Promise<void> {
  await db
    .insertInto('embed_attribute_values')
    .values({ tenant_id: tenantId, embed_user_id: embedUserId, definition_id: definitionId, value, updated_at: at })
    .onConflict((oc) => oc.columns(['embed_user_id', 'definition_id']).doUpdateSet({ value, updated_at: at }))
    .execute();
}

export async function deleteCreatorValue(db: Executor, tenantId: number, embedUserId: number, definitionId: number): Promise<void> {
  await db
    .deleteFrom('embed_attribute_values')
    .where('tenant_id', '=', tenantId)
    .where('embed_user_id', '=', embedUserId)
    .where('definition_id', '=', definitionId)
    .execute();
}

/** For each embed user, their tenant's catalog (in catalog order) with their own value of each attribute, if any. */
export async function creatorCatalogsOf(
  db: Executor,
  tenantId: number,
  embedUserIds: number[],
): Promise<Array<{ embed_user_id: number; name: string; default_value: string | null; value: string | null }>> {
  if (embedUserIds.length === 0) return [];
  const { rows } = await sql<{ embed_user_id: number; name: string; default_value: string | null; value: string | null }>`
    select u.id as embed_user_id, d.name, d.default_value, v.value
      from embed_users u
      join embed_attribute_definitions d on d.embed_tenant_id = u.embed_tenant_id
      left join embed_attribute_values v on v.definition_id = d.id and v.embed_user_id = u.id
     where u.tenant_id = ${tenantId} and u.id in (${sql.join(embedUserIds)})
     order by u.id, d.id`.execute(db);
  return rows.map((r) => ({ ...r, embed_user_id: Number(r.embed_user_id) }));
}
