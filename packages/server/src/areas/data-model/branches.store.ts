import type { BranchRow, DevSessionRow, Executor } from '../../db/tables.js';

/** Personal dev-mode branches of one credential on a deployment (the only `dev-…` branches it may push to). */
export async function devBranchesOf(db: Executor, deploymentId: number, keyId: number): Promise<string[]> {
  const rows = await db.selectFrom('branches').select('name').where('deployment_id', '=', deploymentId).where('owner_key_id', '=', keyId).execute();
  return rows.map((r) => r.name);
}

export async function findBranch(db: Executor, deploymentId: number, name: string): Promise<BranchRow | undefined> {
  return db.selectFrom('branches').selectAll().where('deployment_id', '=', deploymentId).where('name', '=', name).executeTakeFirst();
}

export async function findBranchById(db: Executor, deploymentId: number, id: number): Promise<BranchRow | undefined> {
  return db.selectFrom('branches').selectAll().where('deployment_id', '=', deploymentId).where('id', '=', id).executeTakeFirst();
}

export async function branchRows(db: Executor, deploymentId: number): Promise<BranchRow[]> {
  return db.selectFrom('branches').selectAll().where('deployment_id', '=', deploymentId).orderBy('id').execute();
}

/** The credential's fork of `parent`, made when it entered dev mode on it (reference 2.0, "Forks are keyed by their parent"). */
export async function findFork(db: Executor, deploymentId: number, keyId: number, parent: string): Promise<BranchRow | undefined> {
  return db
    .selectFrom('branches')
    .selectAll()
    .where('deployment_id', '=', deploymentId)
    .where('owner_key_id', '=', keyId)
    .where('parent_name', '=', parent)
    .orderBy('id')
    .executeTakeFirst();
}

export interface NewBranch {
  tenantId: number;
  deploymentId: number;
  name: string;
  parent: string | null;
  ownerKeyId: number | null;
}

/** Records a branch; a row for the name already there (a branch pushed over git, then adopted) is kept. */
export async function insertBranch(db: Executor, branch: NewBranch, at: string): Promise<BranchRow> {
  await db
    .insertInto('branches')
    .values({
      tenant_id: branch.tenantId,
      deployment_id: branch.deploymentId,
      name: branch.name,
      parent_name: branch.parent,
      owner_key_id: branch.ownerKeyId,
      created_at: at,
    })
    .onConflict((oc) => oc.columns(['deployment_id', 'name']).doNothing())
    .execute();
  return (await findBranch(db, branch.deploymentId, branch.name)) as BranchRow;
}

/**
 * Rows for branches git has, made by the request that gave git them (a push, an upload or a
 * commit onto a branch pushed before): every route and server process reads a branch's row, so
 * it is there before that request is answered. Rows already there are kept as they are.
 */
export async function recordBranches(db: Executor, deployment: { tenantId: number; deploymentId: number }, names: string[], at: string): Promise<void> {
  if (names.length === 0) return;
  await db
    .insertInto('branches')
    .values(
      [...new Set(names)].sort().map((name) => ({
        tenant_id: deployment.tenantId,
        deployment_id: deployment.deploymentId,
        name,
        parent_name: null,
        owner_key_id: null,
        created_at: at,
      })),
    )
    .onConflict((oc) => oc.columns(['deployment_id', 'name']).doNothing())
    .execute();
}

export async function setStaging(db: Executor, deploymentId: number, name: string, enabled: boolean): Promise<void> {
  await db
    .updateTable('branches')
    .set({ staging_enabled: enabled ? 1 : 0 })
    .where('deployment_id', '=', deploymentId)
    .where('name', '=', name)
    .execute();
}

/**
 * Forgets a deleted branch (reference 2.13): its children take its parent, sessions on a personal
 * branch end, and sessions that had a shared branch open fall back to the deploy branch.
 */
export async function forgetBranch(
  db: Executor,
  deploymentId: number,
  name: string,
  parent: string | null,
  deployBranch: string,
  personal: boolean,
  at: string,
): Promise<void> {
  await db.updateTable('branches').set({ parent_name: parent }).where('deployment_id', '=', deploymentId).where('parent_name', '=', name).execute();
  await db.deleteFrom('branches').where('deployment_id', '=', deploymentId).where('name', '=', name).execute();
  if (personal) await db.deleteFrom('dev_sessions').where('deployment_id', '=', deploymentId).where('branch_name', '=', name).execute();
  else
    await db
      .updateTable('dev_sessions')
      .set({ branch_name: deployBranch, updated_at: at })
      .where('deployment_id', '=', deploymentId)
      .where('branch_name', '=', name)
      .execute();
}

export async function findSession(db: Executor, deploymentId: number, keyId: number): Promise<DevSessionRow | undefined> {
  return db.selectFrom('dev_sessions').selectAll().where('deployment_id', '=', deploymentId).where('key_id', '=', keyId).executeTakeFirst();
}

/** Points the credential's session at `branch` (each credential has at most one). */
export async function setSession(db: Executor, tenantId: number, deploymentId: number, keyId: number, branch: string, at: string): Promise<void> {
  await db
    .insertInto('dev_sessions')
    .values({ tenant_id: tenantId, deployment_id: deploymentId, key_id: keyId, branch_name: branch, updated_at: at })
    .onConflict((oc) => oc.columns(['deployment_id', 'key_id']).doUpdateSet({ branch_name: branch, updated_at: at }))
    .execute();
}

export async function endSession(db: Executor, deploymentId: number, keyId: number): Promise<boolean> {
  const result = await db.deleteFrom('dev_sessions').where('deployment_id', '=', deploymentId).where('key_id', '=', keyId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
