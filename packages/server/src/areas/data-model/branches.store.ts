import type { BranchRow, Executor } from '../../db/tables.js';

/** Personal dev-mode branches of one credential on a deployment (the only `dev-…` branches it may push to). */
export async function devBranchesOf(db: Executor, deploymentId: number, keyId: number): Promise<string[]> {
  const rows = await db.selectFrom('branches').select('name').where('deployment_id', '=', deploymentId).where('owner_key_id', '=', keyId).execute();
  return rows.map((r) => r.name);
}

export async function findBranch(db: Executor, deploymentId: number, name: string): Promise<BranchRow | undefined> {
  return db.selectFrom('branches').selectAll().where('deployment_id', '=', deploymentId).where('name', '=', name).executeTakeFirst();
}
