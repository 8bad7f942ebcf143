import { sql } from 'kysely';
import type { Dialect } from '../../db/dialect.js';
import type { EnvVarRow, Executor } from '../../db/tables.js';
import type { SecretColumn } from '../../secrets/index.js';

/** What a value is bound to when encrypted: copied to another deployment or name, it does not decrypt. */
export function envVarContext(deploymentId: number, name: string): string {
  return `env-var:${deploymentId}:${name}`;
}

/** The column of sealed values, for the secrets service's start-up check and re-encryption. */
export const envVarSecretColumn: SecretColumn = {
  table: 'env_vars',
  id: 'id',
  value: 'value',
  contextColumns: ['deployment_id', 'name'],
  context: (row) => envVarContext(Number(row.deployment_id), String(row.name)),
};

// Byte order in both stores: PostgreSQL's default collation would order names differently from SQLite.
const byName = (dialect: Dialect) => (dialect === 'postgres' ? sql<string>`name collate "C"` : sql<string>`name`);

/** A page of a deployment's variables in name order, after `afterName`. */
export async function listEnvVars(
  db: Executor,
  dialect: Dialect,
  tenantId: number,
  deploymentId: number,
  afterName: string | undefined,
  limit: number,
): Promise<EnvVarRow[]> {
  let query = db.selectFrom('env_vars').selectAll().where('tenant_id', '=', tenantId).where('deployment_id', '=', deploymentId);
  if (afterName !== undefined) query = query.where(byName(dialect), '>', afterName);
  return query.orderBy(byName(dialect)).limit(limit).execute();
}

/** Which of `names` the deployment already has. */
export async function existingNames(db: Executor, tenantId: number, deploymentId: number, names: string[]): Promise<Set<string>> {
  if (names.length === 0) return new Set();
  const rows = await db
    .selectFrom('env_vars')
    .select('name')
    .where('tenant_id', '=', tenantId)
    .where('deployment_id', '=', deploymentId)
    .where('name', 'in', names)
    .execute();
  return new Set(rows.map((r) => r.name));
}

/** The sealed values of those of `names` the deployment has. */
export async function sealedValues(db: Executor, tenantId: number, deploymentId: number, names: string[]): Promise<Array<{ name: string; value: string }>> {
  return db
    .selectFrom('env_vars')
    .select(['name', 'value'])
    .where('tenant_id', '=', tenantId)
    .where('deployment_id', '=', deploymentId)
    .where('name', 'in', names)
    .execute();
}

/** Creates or overwrites each variable by name, in one statement. */
export async function upsertEnvVars(
  db: Executor,
  tenantId: number,
  deploymentId: number,
  values: Array<{ name: string; value: string }>,
  at: string,
): Promise<void> {
  await db
    .insertInto('env_vars')
    .values(values.map((v) => ({ tenant_id: tenantId, deployment_id: deploymentId, name: v.name, value: v.value, created_at: at, updated_at: at })))
    .onConflict((oc) =>
      oc.columns(['deployment_id', 'name']).doUpdateSet((eb) => ({
        value: eb.ref('excluded.value'),
        updated_at: eb.ref('excluded.updated_at'),
      })),
    )
    .execute();
}

/** Removes one variable; false when the deployment has none of that name. */
export async function deleteEnvVar(db: Executor, tenantId: number, deploymentId: number, name: string): Promise<boolean> {
  const result = await db
    .deleteFrom('env_vars')
    .where('tenant_id', '=', tenantId)
    .where('deployment_id', '=', deploymentId)
    .where('name', '=', name)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
