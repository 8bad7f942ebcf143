import type { BuildMode, BuildRow, BuildStatus, Executor } from '../../db/tables.js';

export async function insertBuild(
  db: Executor,
  values: { tenantId: number; deploymentId: number; branch: string; mode: BuildMode; commit: string; cause: string },
  at: string,
): Promise<BuildRow> {
  return db
    .insertInto('builds')
    .values({
      tenant_id: values.tenantId,
      deployment_id: values.deploymentId,
      branch_name: values.branch,
      mode: values.mode,
      commit_sha: values.commit,
      status: 'queued',
      cause: values.cause,
      created_at: at,
      updated_at: at,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export interface BuildChanges {
  status?: BuildStatus;
  job_id?: number;
  files_hash?: string;
  error_text?: string | null;
  cubes_count?: number | null;
  artifact?: string | null;
  started_at?: string;
  finished_at?: string | null;
}

export async function updateBuild(db: Executor, id: number, changes: BuildChanges, at: string): Promise<void> {
  await db
    .updateTable('builds')
    .set({ ...changes, updated_at: at })
    .where('id', '=', id)
    .execute();
}

/** Marks an unfinished build failed; false when it had finished meanwhile (compare-and-set on its status). */
export async function failUnfinished(db: Executor, id: number, error: string, at: string): Promise<boolean> {
  const result = await db
    .updateTable('builds')
    .set({ status: 'failed', error_text: error, finished_at: at, updated_at: at })
    .where('id', '=', id)
    .where('status', 'in', ['queued', 'building'])
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function findBuild(db: Executor, deploymentId: number, id: number): Promise<BuildRow | undefined> {
  return db.selectFrom('builds').selectAll().where('deployment_id', '=', deploymentId).where('id', '=', id).executeTakeFirst();
}

export async function findBuildById(db: Executor, id: number): Promise<BuildRow | undefined> {
  return db.selectFrom('builds').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function latestBuild(db: Executor, deploymentId: number, branch: string): Promise<BuildRow | undefined> {
  return db
    .selectFrom('builds')
    .selectAll()
    .where('deployment_id', '=', deploymentId)
    .where('branch_name', '=', branch)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** Builds of a deployment, newest first; `beforeId` continues a page. */
export async function listBuilds(db: Executor, deploymentId: number, filter: { branch?: string; beforeId?: number; limit: number }): Promise<BuildRow[]> {
  let query = db.selectFrom('builds').selectAll().where('deployment_id', '=', deploymentId);
  if (filter.branch !== undefined) query = query.where('branch_name', '=', filter.branch);
  if (filter.beforeId !== undefined) query = query.where('id', '<', filter.beforeId);
  return query.orderBy('id', 'desc').limit(filter.limit).execute();
}

/** Whether the branch has ever built successfully (the wizard's `ready` needs production to have). */
export async function hasSuccessfulBuild(db: Executor, deploymentId: number, branch: string): Promise<boolean> {
  const row = await db
    .selectFrom('builds')
    .select('id')
    .where('deployment_id', '=', deploymentId)
    .where('branch_name', '=', branch)
    .where('status', '=', 'success')
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** The branch's newest successful build: the model its environment serves, even after a later build failed. */
export async function latestSuccessfulBuild(db: Executor, deploymentId: number, branch: string): Promise<BuildRow | undefined> {
  return db
    .selectFrom('builds')
    .selectAll()
    .where('deployment_id', '=', deploymentId)
    .where('branch_name', '=', branch)
    .where('status', '=', 'success')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}
