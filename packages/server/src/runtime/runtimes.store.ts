import type { Insertable, Updateable } from 'kysely';
import type { Executor, PodStatus, RuntimeEnvironmentType, RuntimeLogRow, RuntimeLogTable, RuntimeRow, RuntimeTable } from '../db/tables.js';

/** Kysely only: the runtime service's rows (migration 0015). Times are ISO text, compared as text. */

export interface EnvironmentKey {
  tenantId: number;
  deploymentId: number;
  environmentId: string;
  type: RuntimeEnvironmentType;
  branch: string;
}

/** Makes the environment's row when it has none (a new environment's first pod, Pending). */
export async function ensureRuntime(db: Executor, key: EnvironmentKey, pod: string, at: string): Promise<void> {
  await db
    .insertInto('runtimes')
    .values({
      tenant_id: key.tenantId,
      deployment_id: key.deploymentId,
      environment_id: key.environmentId,
      type: key.type,
      branch_name: key.branch,
      pod,
      status: 'Pending',
      created_at: at,
      updated_at: at,
    })
    .onConflict((oc) => oc.columns(['deployment_id', 'environment_id']).doNothing())
    .execute();
}

/** Takes the environment for `owner` when nobody holds a live lease on it; the row, or undefined when another process holds it. */
export async function claimRuntime(
  db: Executor,
  deploymentId: number,
  environmentId: string,
  owner: string,
  leaseUntil: string,
  at: string,
): Promise<RuntimeRow | undefined> {
  return db
    .updateTable('runtimes')
    .set({ owner, lease_expires_at: leaseUntil, updated_at: at })
    .where('deployment_id', '=', deploymentId)
    .where('environment_id', '=', environmentId)
    .where((eb) => eb.or([eb('owner', 'is', null), eb('owner', '=', owner), eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<', at)]))
    .returningAll()
    .executeTakeFirst();
}

/** Extends every lease `owner` still holds; the ids it holds (a row taken over or deleted is missing). */
export async function renewLeases(db: Executor, owner: string, leaseUntil: string): Promise<Set<number>> {
  const rows = await db.updateTable('runtimes').set({ lease_expires_at: leaseUntil }).where('owner', '=', owner).returning('id').execute();
  return new Set(rows.map((r) => r.id));
}

/** Changes the row of a pod this process owns; nothing when it no longer owns it. */
export async function updateOwned(db: Executor, id: number, owner: string, changes: Updateable<RuntimeTable>): Promise<boolean> {
  const result = await db.updateTable('runtimes').set(changes).where('id', '=', id).where('owner', '=', owner).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Rows not running anywhere any more (no owner, or a lapsed lease) that still say they run. */
export async function unownedLive(db: Executor, at: string): Promise<Array<Pick<RuntimeRow, 'id' | 'deployment_id' | 'environment_id'>>> {
  return db
    .selectFrom('runtimes')
    .select(['id', 'deployment_id', 'environment_id'])
    .where('status', '<>', 'Terminated')
    .where((eb) => eb.or([eb('owner', 'is', null), eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<', at)]))
    .execute();
}

/** The environments another process holds a live lease on at `at`. */
export async function leasedElsewhere(db: Executor, owner: string, at: string): Promise<Array<{ deployment_id: number; environment_id: string }>> {
  return db.selectFrom('runtimes').select(['deployment_id', 'environment_id']).where('owner', '<>', owner).where('lease_expires_at', '>=', at).execute();
}

export async function markTerminated(db: Executor, ids: number[], at: string): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('runtimes')
    .set({ status: 'Terminated' satisfies PodStatus, ready: 0, address: null, secret: null, owner: null, lease_expires_at: null, updated_at: at })
    .where('id', 'in', ids)
    .execute();
}

export async function findRuntime(db: Executor, deploymentId: number, environmentId: string): Promise<RuntimeRow | undefined> {
  return db.selectFrom('runtimes').selectAll().where('deployment_id', '=', deploymentId).where('environment_id', '=', environmentId).executeTakeFirst();
}

export async function listRuntimes(db: Executor, tenantId: number, deploymentId: number): Promise<RuntimeRow[]> {
  return db.selectFrom('runtimes').selectAll().where('tenant_id', '=', tenantId).where('deployment_id', '=', deploymentId).orderBy('id').execute();
}

/** Records that the environment is in use now (on-demand environments run while used). */
export async function touchRuntime(db: Executor, key: EnvironmentKey, pod: string, at: string): Promise<void> {
  await db
    .insertInto('runtimes')
    .values({
      tenant_id: key.tenantId,
      deployment_id: key.deploymentId,
      environment_id: key.environmentId,
      type: key.type,
      branch_name: key.branch,
      pod,
      status: 'Terminated',
      last_used_at: at,
      created_at: at,
      updated_at: at,
    })
    .onConflict((oc) => oc.columns(['deployment_id', 'environment_id']).doUpdateSet({ last_used_at: at }))
    .execute();
}

/** On-demand environments used since `since`: the ones that should run now. */
export async function usedSince(
  db: Executor,
  since: string,
): Promise<Array<Pick<RuntimeRow, 'tenant_id' | 'deployment_id' | 'environment_id' | 'type' | 'branch_name'>>> {
  return db
    .selectFrom('runtimes')
    .select(['tenant_id', 'deployment_id', 'environment_id', 'type', 'branch_name'])
    .where('type', '<>', 'production')
    .where('last_used_at', '>=', since)
    .execute();
}

export async function insertLogs(db: Executor, rows: Array<Insertable<RuntimeLogTable>>): Promise<void> {
  if (rows.length > 0) await db.insertInto('runtime_logs').values(rows).execute();
}

/** Deletes all but the newest `keep` lines of a deployment. */
export async function trimLogs(db: Executor, deploymentId: number, keep: number): Promise<void> {
  const edge = await db
    .selectFrom('runtime_logs')
    .select('id')
    .where('deployment_id', '=', deploymentId)
    .orderBy('id', 'desc')
    .offset(keep)
    .limit(1)
    .executeTakeFirst();
  if (edge) await db.deleteFrom('runtime_logs').where('deployment_id', '=', deploymentId).where('id', '<=', edge.id).execute();
}

export interface LogFilter {
  tenantId: number;
  deploymentId: number;
  types?: RuntimeEnvironmentType[];
  pod?: string;
}

function filtered(db: Executor, filter: LogFilter) {
  let query = db.selectFrom('runtime_logs').where('tenant_id', '=', filter.tenantId).where('deployment_id', '=', filter.deploymentId);
  if (filter.types) query = query.where('environment_type', 'in', filter.types);
  if (filter.pod !== undefined) query = query.where('pod', '=', filter.pod);
  return query;
}

/** The newest `limit` lines, newest first. */
export async function tailLogs(db: Executor, filter: LogFilter, limit: number): Promise<RuntimeLogRow[]> {
  return filtered(db, filter).selectAll().orderBy('id', 'desc').limit(limit).execute();
}

/** Up to `limit` lines after line `afterId`, oldest first. */
export async function logsAfter(db: Executor, filter: LogFilter, afterId: number, limit: number): Promise<RuntimeLogRow[]> {
  return filtered(db, filter).selectAll().where('id', '>', afterId).orderBy('id').limit(limit).execute();
}

/** Whether lines older than line `id` exist. */
export async function hasLogsBefore(db: Executor, filter: LogFilter, id: number): Promise<boolean> {
  return (await filtered(db, filter).select('id').where('id', '<', id).limit(1).executeTakeFirst()) !== undefined;
}

/** The id of the deployment's newest line; 0 when it has none. */
export async function newestLogId(db: Executor, deploymentId: number): Promise<number> {
  const row = await db
    .selectFrom('runtime_logs')
    .select((eb) => eb.fn.max('id').as('id'))
    .where('deployment_id', '=', deploymentId)
    .executeTakeFirst();
  return row?.id === null || row?.id === undefined ? 0 : Number(row.id);
}

/** Deletes the rows of a branch's environments (never production's, whatever its branch). */
export async function forgetBranchRuntimes(db: Executor, deploymentId: number, branch: string): Promise<void> {
  await db.deleteFrom('runtimes').where('deployment_id', '=', deploymentId).where('branch_name', '=', branch).where('type', '<>', 'production').execute();
}

/** A runtime of the branch running or starting now. */
export async function findLiveBranchRuntime(db: Executor, deploymentId: number, branch: string): Promise<{ id: number } | undefined> {
  return db
    .selectFrom('runtimes')
    .select('id')
    .where('deployment_id', '=', deploymentId)
    .where('branch_name', '=', branch)
    .where('status', 'in', ['Running', 'Pending'])
    .executeTakeFirst();
}
