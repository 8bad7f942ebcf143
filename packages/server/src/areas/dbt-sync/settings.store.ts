import type { DbtSyncSettingsRow, Executor } from '../../db/tables.js';

export function findSettings(db: Executor, deploymentId: number): Promise<DbtSyncSettingsRow | undefined> {
  return db.selectFrom('dbt_sync_settings').selectAll().where('deployment_id', '=', deploymentId).executeTakeFirst();
}

export interface SettingsValues {
  repository: string;
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
