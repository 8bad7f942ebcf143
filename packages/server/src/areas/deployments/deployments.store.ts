import type { DeploymentRow, Executor } from '../../db/tables.js';

export async function findDeployment(db: Executor, tenantId: number, id: number): Promise<DeploymentRow | undefined> {
  return db.selectFrom('deployments').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

/** Which of `ids` are deployments of this tenant. */
export async function existingDeploymentIds(db: Executor, tenantId: number, ids: number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const rows = await db.selectFrom('deployments').select('id').where('tenant_id', '=', tenantId).where('id', 'in', ids).execute();
  return new Set(rows.map((r) => r.id));
}
