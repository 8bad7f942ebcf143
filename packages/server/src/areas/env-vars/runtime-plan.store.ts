import type { Executor } from '../../db/tables.js';

/** The newest successful build of a deployment's branch, if any. */
export async function latestSuccessfulBuildId(db: Executor, deploymentId: number, branch: string): Promise<number | undefined> {
  const row = await db
    .selectFrom('builds')
    .select((eb) => eb.fn.max('id').as('id'))
    .where('deployment_id', '=', deploymentId)
    .where('branch_name', '=', branch)
    .where('status', '=', 'success')
    .executeTakeFirst();
  return row?.id === null || row?.id === undefined ? undefined : Number(row.id);
}

/** Every deployment whose deploy branch has a successful build, with its newest one. */
export async function productionBuilds(db: Executor) {
  return db
    .selectFrom('deployments as d')
    .innerJoin('builds as b', (join) => join.onRef('b.deployment_id', '=', 'd.id').onRef('b.branch_name', '=', 'd.deploy_branch_name'))
    .where('b.status', '=', 'success')
    .select(['d.id', 'd.tenant_id', 'd.deploy_branch_name', 'd.release_channel', 'd.release_channel_version', (eb) => eb.fn.max('b.id').as('build_id')])
    .groupBy(['d.id', 'd.tenant_id', 'd.deploy_branch_name', 'd.release_channel', 'd.release_channel_version'])
    .execute();
}

/** Every branch whose staging flag is on and that has a successful build, with its newest one. */
export async function stagingBuilds(db: Executor) {
  return db
    .selectFrom('branches as br')
    .innerJoin('deployments as d', 'd.id', 'br.deployment_id')
    .innerJoin('builds as b', (join) => join.onRef('b.deployment_id', '=', 'br.deployment_id').onRef('b.branch_name', '=', 'br.name'))
    .where('br.staging_enabled', '=', 1)
    .where('b.status', '=', 'success')
    .select([
      'br.id as branch_id',
      'br.name',
      'd.id',
      'd.tenant_id',
      'd.release_channel',
      'd.release_channel_version',
      (eb) => eb.fn.max('b.id').as('build_id'),
    ])
    .groupBy(['br.id', 'br.name', 'd.id', 'd.tenant_id', 'd.release_channel', 'd.release_channel_version'])
    .execute();
}

export async function findDeploymentVersionFields(db: Executor, deploymentId: number) {
  return db.selectFrom('deployments').select(['release_channel', 'release_channel_version']).where('id', '=', deploymentId).executeTakeFirst();
}

export async function findBranchId(db: Executor, deploymentId: number, branch: string) {
  return db.selectFrom('branches').select('id').where('deployment_id', '=', deploymentId).where('name', '=', branch).executeTakeFirst();
}

/** The commit of each build, by build id (500 ids a query). */
export async function buildCommits(db: Executor, buildIds: number[]): Promise<Map<number, string>> {
  const commits = new Map<number, string>();
  for (let i = 0; i < buildIds.length; i += 500) {
    for (const b of await db
      .selectFrom('builds')
      .select(['id', 'commit_sha'])
      .where('id', 'in', buildIds.slice(i, i + 500))
      .execute())
      commits.set(b.id, b.commit_sha);
  }
  return commits;
}

/** Each deployment's environment-variable revision, `<count>@<newest updated_at>`, for those that have any (500 ids a query). */
export async function envRevisions(db: Executor, deploymentIds: number[]): Promise<Map<number, string>> {
  const revisions = new Map<number, string>();
  for (let i = 0; i < deploymentIds.length; i += 500) {
    const rows = await db
      .selectFrom('env_vars')
      .select(['deployment_id', (eb) => eb.fn.countAll().as('n'), (eb) => eb.fn.max('updated_at').as('last')])
      .where('deployment_id', 'in', deploymentIds.slice(i, i + 500))
      .groupBy('deployment_id')
      .execute();
    for (const r of rows) revisions.set(r.deployment_id, `${Number(r.n)}@${r.last}`);
  }
  return revisions;
}

export async function buildArtifact(db: Executor, buildId: number) {
  return (await db.selectFrom('builds').select('artifact').where('id', '=', buildId).executeTakeFirstOrThrow()).artifact;
}

/** A deployment's environment variables, their values sealed. */
export async function sealedEnvVars(db: Executor, deploymentId: number) {
  return db.selectFrom('env_vars').select(['name', 'value']).where('deployment_id', '=', deploymentId).execute();
}
