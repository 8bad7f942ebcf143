import type { Executor, OidcTokenConfigRow } from '../../db/tables.js';

type Fields = Omit<OidcTokenConfigRow, 'id' | 'tenant_id' | 'created_at'>;

export function listConfigs(db: Executor, tenantId: number): Promise<OidcTokenConfigRow[]> {
  return db.selectFrom('oidc_token_configs').selectAll().where('tenant_id', '=', tenantId).orderBy('id').execute();
}

export function findConfig(db: Executor, tenantId: number, id: number): Promise<OidcTokenConfigRow | undefined> {
  return db.selectFrom('oidc_token_configs').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

export async function insertConfig(db: Executor, tenantId: number, fields: Fields & { created_at: string }): Promise<OidcTokenConfigRow> {
  return db.insertInto('oidc_token_configs').values({ tenant_id: tenantId, ...fields }).returningAll().executeTakeFirstOrThrow();
}

export async function updateConfig(db: Executor, tenantId: number, id: number, fields: Partial<Fields>): Promise<OidcTokenConfigRow | undefined> {
  return db.updateTable('oidc_token_configs').set(fields).where('tenant_id', '=', tenantId).where('id', '=', id).returningAll().executeTakeFirst();
}

export async function deleteConfig(db: Executor, tenantId: number, id: number): Promise<boolean> {
  const result = await db.deleteFrom('oidc_token_configs').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** The enabled configs of the tenants given: what every runtime of theirs receives. */
export function enabledConfigs(db: Executor, tenantIds: number[]): Promise<OidcTokenConfigRow[]> {
  if (tenantIds.length === 0) return Promise.resolve([]);
  return db.selectFrom('oidc_token_configs').selectAll().where('tenant_id', 'in', tenantIds).where('is_enabled', '=', 1).orderBy('id').execute();
}
