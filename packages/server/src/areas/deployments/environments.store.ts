import type { Executor } from '../../db/tables.js';

/*
 * What a deployment's environments are made of: its branches with the staging flag on, and the
 * dev sessions on the branch their credential owns.
 */

/** The branch of a staging environment: its flag on. */
export async function findStagingBranch(db: Executor, deploymentId: number, branchId: number): Promise<{ name: string } | undefined> {
  return db
    .selectFrom('branches')
    .select('name')
    .where('deployment_id', '=', deploymentId)
    .where('id', '=', branchId)
    .where('staging_enabled', '=', 1)
    .executeTakeFirst();
}

/** The branch of a development environment: in dev mode for the credential that owns it. */
export async function findDevelopmentBranch(db: Executor, deploymentId: number, branchId: number): Promise<{ name: string } | undefined> {
  return db
    .selectFrom('dev_sessions as s')
    .innerJoin('branches as b', (join) =>
      join.onRef('b.deployment_id', '=', 's.deployment_id').onRef('b.name', '=', 's.branch_name').onRef('b.owner_key_id', '=', 's.key_id'),
    )
    .select('b.name as name')
    .where('s.deployment_id', '=', deploymentId)
    .where('b.id', '=', branchId)
    .executeTakeFirst();
}

export async function listStagingBranches(db: Executor, deploymentId: number): Promise<Array<{ id: number; name: string }>> {
  return db.selectFrom('branches').select(['id', 'name']).where('deployment_id', '=', deploymentId).where('staging_enabled', '=', 1).orderBy('id').execute();
}

/** Each development environment's branch, with the email of the user whose credential is in dev mode on it. */
export async function listDevelopmentBranches(db: Executor, deploymentId: number): Promise<Array<{ branchId: number; branch: string; email: string }>> {
  return db
    .selectFrom('dev_sessions as s')
    .innerJoin('branches as b', (join) =>
      join.onRef('b.deployment_id', '=', 's.deployment_id').onRef('b.name', '=', 's.branch_name').onRef('b.owner_key_id', '=', 's.key_id'),
    )
    .innerJoin('api_keys as k', 'k.id', 's.key_id')
    .innerJoin('users as u', 'u.id', 'k.user_id')
    .select(['b.id as branchId', 'b.name as branch', 'u.email as email'])
    .where('s.deployment_id', '=', deploymentId)
    .orderBy('b.id')
    .execute();
}
