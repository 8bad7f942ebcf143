import type { Executor, OidcTokenConfigRow } from '../../db/tables.js';

type Fields = Omit<OidcTokenConfigRow, 'id' | 'tenant_id' | 'created_at'>;

export function listConfigs(db: Executor, tenantId: number): Promise<OidcTokenConfigRow[]> {
  return db.selectFrom('oidc_token_configs').selectAll().where('tenant_id', '=', tenantId).orderBy('id').execute();
}

export function findConfig(db: Executor, tenantId: number, id: number): Promise<OidcTokenConfigRow | undefined> {
  return db.selectFrom('oidc_token_configs').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

export async function insertConfig(db: Executor, tenantId: number, fields: Fields & { created_at: string }): Promise<OidcTokenConfigRow> {
  return db
    .insertInto('oidc_token_configs')
    .values({ tenant_id: tenantId, ...fields })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function updateConfig(db: Executor, tenantId: number, id: number, fields: Partial<Fields>): Promise<OidcTokenConfigRow | undefined> {
  return db.updateTable('oidc_token_configs').set(fields).where('tenant_id', '=', tenantId).where('id', '=', id).returningAll().executeTakeFirst();
}

export async function deleteConfig(db: Executor, tenantId: number, id: number): Promise<boolean> {
  const result = await db.deleteFrom('oidc_token_configs').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** An enabled config of the tenant owning one of the deployments asked about, with what its tokens need. */
export type DeploymentConfigRow = OidcTokenConfigRow & {
  deployment_id: number;
  region: string;
  tenant_slug: string;
  account_settings: string | null;
  tenant_created_at: string;
};

/**
 * Every enabled config of the tenants owning `deploymentIds`, once per deployment, with the
 * deployment's region and the tenant's slug and stored settings: what a runtime tick needs, in one
 * statement however many environments run. Deployments without configs give no rows.
 */
export function enabledConfigsOfDeployments(db: Executor, deploymentIds: number[]): Promise<DeploymentConfigRow[]> {
  if (deploymentIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('deployments as d')
    .innerJoin('tenants as t', 't.id', 'd.tenant_id')
    .innerJoin('oidc_token_configs as c', 'c.tenant_id', 'd.tenant_id')
    .selectAll('c')
    .select(['d.id as deployment_id', 'd.region', 't.slug as tenant_slug', 't.account_settings', 't.created_at as tenant_created_at'])
    .where('d.id', 'in', deploymentIds)
    .where('c.is_enabled', '=', 1)
    .orderBy('c.id')
    .execute();
}
