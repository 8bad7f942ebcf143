import { sql } from 'kysely';
import type { EmbedTenantRow, Executor } from '../../db/tables.js';
import { tenantSystemGroupName } from './names.js';

export type EmbedTenantWithCount = EmbedTenantRow & { user_count: number };

/** `text` as a LIKE pattern matching itself literally, anywhere in the value. */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export async function findEmbedTenant(db: Executor, tenantId: number, name: string): Promise<EmbedTenantRow | undefined> {
  return db.selectFrom('embed_tenants').selectAll().where('tenant_id', '=', tenantId).where('name', '=', name).executeTakeFirst();
}

/** Creates an embed tenant with its implicit sharing group `system:tenant:{name}`. */
export async function insertEmbedTenant(db: Executor, tenantId: number, name: string, displayName: string | null, at: string): Promise<EmbedTenantRow> {
  const row = await db
    .insertInto('embed_tenants')
    .values({ tenant_id: tenantId, name, display_name: displayName, created_at: at })
    .returningAll()
    .executeTakeFirstOrThrow();
  await db
    .insertInto('embed_groups')
    .values({
      tenant_id: tenantId,
      embed_tenant_id: row.id,
      kind: 'tenant',
      name: tenantSystemGroupName(name),
      description: null,
      created_at: at,
      updated_at: at,
    })
    .execute();
  return row;
}

/**
 * Creates the embed tenant as `insertEmbedTenant` does, unless another transaction has (or is
 * about to: the insert waits for it): then nothing is written and undefined is answered.
 */
export async function insertEmbedTenantUnlessTaken(
  db: Executor,
  tenantId: number,
  name: string,
  displayName: string | null,
  at: string,
): Promise<EmbedTenantRow | undefined> {
  const row = await db
    .insertInto('embed_tenants')
    .values({ tenant_id: tenantId, name, display_name: displayName, created_at: at })
    .onConflict((oc) => oc.columns(['tenant_id', 'name']).doNothing())
    .returningAll()
    .executeTakeFirst();
  if (row === undefined) return undefined;
  await db
    .insertInto('embed_groups')
    .values({
      tenant_id: tenantId,
      embed_tenant_id: row.id,
      kind: 'tenant',
      name: tenantSystemGroupName(name),
      description: null,
      created_at: at,
      updated_at: at,
    })
    .execute();
  return row;
}

export async function setEmbedTenantDisplayName(db: Executor, tenantId: number, id: number, displayName: string | null): Promise<void> {
  await db.updateTable('embed_tenants').set({ display_name: displayName }).where('tenant_id', '=', tenantId).where('id', '=', id).execute();
}

/** Ordered by name (unique in the account); `search` is lowercased already (names are lowercase). */
export async function listEmbedTenants(
  db: Executor,
  tenantId: number,
  search: string | undefined,
  afterName: string | undefined,
  limit: number,
): Promise<EmbedTenantWithCount[]> {
  let query = db
    .selectFrom('embed_tenants')
    .selectAll('embed_tenants')
    .select((eb) =>
      eb
        .selectFrom('embed_users')
        .select((inner) => inner.fn.countAll<number>().as('n'))
        .whereRef('embed_users.embed_tenant_id', '=', 'embed_tenants.id')
        .as('user_count'),
    )
    .where('embed_tenants.tenant_id', '=', tenantId);
  if (search !== undefined) query = query.where(sql<boolean>`embed_tenants.name like ${containsPattern(search)} escape '\\'`);
  if (afterName !== undefined) query = query.where('embed_tenants.name', '>', afterName);
  const rows = await query.orderBy('embed_tenants.name').limit(limit).execute();
  return rows.map((row) => ({ ...row, user_count: Number(row.user_count ?? 0) }));
}

/**
 * Grants and favorites on the content the tenant's users own (copies from the shared workspace,
 * 8.G.1), which the tenant's deletion takes with it by cascade: they must not outlive it.
 */
async function deleteOwnedContentGrants(db: Executor, tenantId: number, embedTenantId: number): Promise<void> {
  const owners = db.selectFrom('embed_users').select('id').where('tenant_id', '=', tenantId).where('embed_tenant_id', '=', embedTenantId);
  for (const [type, table] of [
    ['WORKBOOK', 'workbooks'],
    ['REPORT', 'reports'],
  ] as const) {
    const ids = db.selectFrom(table).select('id').where('tenant_id', '=', tenantId).where('embed_owner_id', 'in', owners);
    await db.deleteFrom('policies').where('tenant_id', '=', tenantId).where('resource_type', '=', type).where('resource_id', 'in', ids).execute();
    await db.deleteFrom('favorites').where('tenant_id', '=', tenantId).where('item_type', '=', type).where('item_id', 'in', ids).execute();
  }
}

/**
 * Deletes an embed tenant; its users, groups, memberships, attribute values, shares, attribute
 * catalog and its users' copies (migrations 0017, 0038) go with it through the foreign keys'
 * cascades, once the grants and favorites on those copies are gone.
 */
export async function deleteEmbedTenant(db: Executor, tenantId: number, id: number): Promise<void> {
  await deleteOwnedContentGrants(db, tenantId, id);
  await db.deleteFrom('embed_tenants').where('tenant_id', '=', tenantId).where('id', '=', id).execute();
}
