import type { DeploymentUpstreamRow, Executor } from '../../db/tables.js';

export function findUpstream(db: Executor, tenantId: number, deploymentId: number): Promise<DeploymentUpstreamRow | undefined> {
  return db.selectFrom('deployment_upstreams').selectAll().where('tenant_id', '=', tenantId).where('deployment_id', '=', deploymentId).executeTakeFirst();
}

export type UpstreamValues = Pick<DeploymentUpstreamRow, 'installation_id' | 'owner' | 'repo' | 'clone_url' | 'connected_by'>;

/** Connects the deployment, replacing an earlier connection. */
export async function saveUpstream(db: Executor, tenantId: number, deploymentId: number, values: UpstreamValues, at: string): Promise<void> {
  await db
    .insertInto('deployment_upstreams')
    .values({ tenant_id: tenantId, deployment_id: deploymentId, ...values, created_at: at, updated_at: at })
    .onConflict((oc) => oc.column('deployment_id').doUpdateSet({ ...values, updated_at: at }))
    .execute();
}
