import type { Executor } from '../../db/tables.js';

/** A branch of the deployment by name: its id, and its owner's key for a dev-mode branch. */
export async function findBranch(db: Executor, deploymentId: number, name: string): Promise<{ id: number; owner_key_id: number | null } | undefined> {
  return db.selectFrom('branches').select(['id', 'owner_key_id']).where('deployment_id', '=', deploymentId).where('name', '=', name).executeTakeFirst();
}
