import type { DbtSyncSettingsRow, Executor } from '../../db/tables.js';
import type { SecretColumn } from '../../secrets/index.js';

/** What the repository's access token is sealed to: copied to another deployment's row, it does not open. */
export const tokenSealedAs = (deploymentId: number) => `dbt-sync-settings:${deploymentId}:repository-token`;

/** The column of sealed values, for the secrets service's start-up check and re-encryption. */
export const dbtSyncSecretColumn: SecretColumn = {
  table: 'dbt_sync_settings',
  id: 'id',
  value: 'repository_token',
  contextColumns: ['deployment_id'],
  context: (row) => tokenSealedAs(Number(row.deployment_id)),
};

export function findSettings(db: Executor, deploymentId: number): Promise<DbtSyncSettingsRow | undefined> {
  return db.selectFrom('dbt_sync_settings').selectAll().where('deployment_id', '=', deploymentId).executeTakeFirst();
}

export interface SettingsValues {
  repository: string;
  repository_url: string | null;
  /** Sealed (tokenSealedAs), or null. */
  repository_token: string | null;
  ref: string | null;
  manifest_path: string;
  output_path: string;
  selector: string;
}

/** Writes a deployment's settings whole (the service merged them). */
export async function saveSettings(db: Executor, tenantId: number, deploymentId: number, values: SettingsValues, at: string): Promise<void> {
  await db
    .insertInto('dbt_sync_settings')
    .values({ tenant_id: tenantId, deployment_id: deploymentId, ...values, created_at: at, updated_at: at })
    .onConflict((oc) => oc.column('deployment_id').doUpdateSet({ ...values, updated_at: at }))
    .execute();
}
