import type { Store } from '../../db/database.js';
import type { DeploymentRow } from '../../db/tables.js';
import type { Secrets } from '../../secrets/index.js';
import type { DesiredRuntime, Planner, PodFiles } from '../../runtime/index.js';
import type { EnvironmentKey } from '../../runtime/runtimes.store.js';
import { envVarContext } from './env-vars.store.js';
import type { Catalog } from '../deployments/index.js';
import { currentVersion } from '../deployments/index.js';

type VersionFields = Pick<DeploymentRow, 'release_channel' | 'release_channel_version'>;

/**
 * What runs (reference 1.17, 2.0, 2.14): every deployment's production environment once its
 * deploy branch has a successful build; the staging environment of each shared branch whose
 * staging flag is on; and the on-demand environments used within the idle time (a branch's
 * staging environment with the flag off, the development environments of dev mode), each on its
 * branch's newest successful build. A staging environment with its flag on runs at all times:
 * that is what the flag is for (2.14 "stays active at all times"); the others suspend when idle.
 */
export function runtimePlanner(
  store: Store,
  secrets: Secrets,
  catalog: Catalog,
  /** Files each environment receives (workload-identity tokens), keyed `<deploymentId>/<environmentId>`. */
  filesFor: (targets: Array<{ tenantId: number; deploymentId: number; environmentId: string }>) => Promise<Map<string, PodFiles>> = async () => new Map(),
): Planner {
  const { db } = store;
  const version = (row: VersionFields) => currentVersion(row as DeploymentRow, catalog);

  async function latestSuccess(deploymentId: number, branch: string): Promise<number | undefined> {
    const row = await db
      .selectFrom('builds')
      .select((eb) => eb.fn.max('id').as('id'))
      .where('deployment_id', '=', deploymentId)
      .where('branch_name', '=', branch)
      .where('status', '=', 'success')
      .executeTakeFirst();
    return row?.id === null || row?.id === undefined ? undefined : Number(row.id);
  }

  return async (used: EnvironmentKey[]): Promise<DesiredRuntime[]> => {
    const planned: Array<EnvironmentKey & { buildId: number; versionOf: VersionFields }> = [];
    const production = await db
      .selectFrom('deployments as d')
      .innerJoin('builds as b', (join) => join.onRef('b.deployment_id', '=', 'd.id').onRef('b.branch_name', '=', 'd.deploy_branch_name'))
      .where('b.status', '=', 'success')
      .select(['d.id', 'd.tenant_id', 'd.deploy_branch_name', 'd.release_channel', 'd.release_channel_version', (eb) => eb.fn.max('b.id').as('build_id')])
      .groupBy(['d.id', 'd.tenant_id', 'd.deploy_branch_name', 'd.release_channel', 'd.release_channel_version'])
      .execute();
    for (const r of production) {
      planned.push({ tenantId: r.tenant_id, deploymentId: r.id, environmentId: 'production', type: 'production', branch: r.deploy_branch_name, buildId: Number(r.build_id), versionOf: r });
    }
    const staging = await db
      .selectFrom('branches as br')
      .innerJoin('deployments as d', 'd.id', 'br.deployment_id')
      .innerJoin('builds as b', (join) => join.onRef('b.deployment_id', '=', 'br.deployment_id').onRef('b.branch_name', '=', 'br.name'))
      .where('br.staging_enabled', '=', 1)
      .where('b.status', '=', 'success')
      .select(['br.id as branch_id', 'br.name', 'd.id', 'd.tenant_id', 'd.release_channel', 'd.release_channel_version', (eb) => eb.fn.max('b.id').as('build_id')])
      .groupBy(['br.id', 'br.name', 'd.id', 'd.tenant_id', 'd.release_channel', 'd.release_channel_version'])
      .execute();
    const seen = new Set<string>();
    for (const r of staging) {
      const environmentId = `staging-${r.branch_id}`;
      seen.add(`${r.id}/${environmentId}`);
      planned.push({ tenantId: r.tenant_id, deploymentId: r.id, environmentId, type: 'staging', branch: r.name, buildId: Number(r.build_id), versionOf: r });
    }
    for (const key of used) {
      if (seen.has(`${key.deploymentId}/${key.environmentId}`)) continue;
      const deployment = await db.selectFrom('deployments').select(['release_channel', 'release_channel_version']).where('id', '=', key.deploymentId).executeTakeFirst();
      // A branch deleted since its last use runs no more (its builds outlive it).
      const branch = await db.selectFrom('branches').select('id').where('deployment_id', '=', key.deploymentId).where('name', '=', key.branch).executeTakeFirst();
      const buildId = deployment && branch ? await latestSuccess(key.deploymentId, key.branch) : undefined;
      if (deployment && buildId !== undefined) planned.push({ ...key, buildId, versionOf: deployment });
    }
    if (planned.length === 0) return [];

    const commits = new Map<number, string>();
    const buildIds = [...new Set(planned.map((p) => p.buildId))];
    for (let i = 0; i < buildIds.length; i += 500) {
      for (const b of await db.selectFrom('builds').select(['id', 'commit_sha']).where('id', 'in', buildIds.slice(i, i + 500)).execute()) commits.set(b.id, b.commit_sha);
    }
    const revisions = new Map<number, string>();
    const deploymentIds = [...new Set(planned.map((p) => p.deploymentId))];
    for (let i = 0; i < deploymentIds.length; i += 500) {
      const rows = await db
        .selectFrom('env_vars')
        .select(['deployment_id', (eb) => eb.fn.countAll().as('n'), (eb) => eb.fn.max('updated_at').as('last')])
        .where('deployment_id', 'in', deploymentIds.slice(i, i + 500))
        .groupBy('deployment_id')
        .execute();
      for (const r of rows) revisions.set(r.deployment_id, `${Number(r.n)}@${r.last}`);
    }

    const files = await filesFor(planned);
    return planned.map(({ versionOf, ...p }) => ({
      ...p,
      ...(files.has(`${p.deploymentId}/${p.environmentId}`) ? { files: files.get(`${p.deploymentId}/${p.environmentId}`)! } : {}),
      commit: commits.get(p.buildId) ?? '',
      version: version(versionOf),
      envRevision: revisions.get(p.deploymentId) ?? '0',
      async load() {
        const build = await db.selectFrom('builds').select('artifact').where('id', '=', p.buildId).executeTakeFirstOrThrow();
        const vars = await db.selectFrom('env_vars').select(['name', 'value']).where('deployment_id', '=', p.deploymentId).execute();
        const env = Object.fromEntries(vars.map((v) => [v.name, secrets.open(v.value, envVarContext(p.deploymentId, v.name))]));
        return { artifact: build.artifact ?? '{"cubes":[],"views":[]}', env };
      },
    }));
  };
}
