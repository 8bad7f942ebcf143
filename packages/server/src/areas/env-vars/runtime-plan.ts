import type { Store } from '../../db/database.js';
import type { DeploymentRow } from '../../db/tables.js';
import type { Secrets } from '../../secrets/index.js';
import type { DesiredRuntime, Planner, PodFiles } from '../../runtime/index.js';
import type { EnvironmentKey } from '../../runtime/index.js';
import { envVarContext } from './env-vars.store.js';
import {
  buildArtifact,
  buildCommits,
  envRevisions,
  findBranchId,
  findDeploymentVersionFields,
  latestSuccessfulBuildId,
  productionBuilds,
  sealedEnvVars,
  stagingBuilds,
} from './runtime-plan.store.js';
import type { Catalog } from '../deployments/index.js';
import { currentVersion } from '../deployments/index.js';
import { environmentKey, productionEnvironment, stagingEnvironment } from '../../runtime/environments.js';

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

  return async (used: EnvironmentKey[]): Promise<DesiredRuntime[]> => {
    const planned: Array<EnvironmentKey & { buildId: number; versionOf: VersionFields }> = [];
    const production = await productionBuilds(db);
    for (const r of production) {
      const key = environmentKey({ tenantId: r.tenant_id, deploymentId: r.id }, productionEnvironment(r.deploy_branch_name));
      planned.push({ ...key, buildId: Number(r.build_id), versionOf: r });
    }
    const staging = await stagingBuilds(db);
    const seen = new Set<string>();
    for (const r of staging) {
      const key = environmentKey({ tenantId: r.tenant_id, deploymentId: r.id }, stagingEnvironment({ id: r.branch_id, name: r.name }));
      seen.add(`${r.id}/${key.environmentId}`);
      planned.push({ ...key, buildId: Number(r.build_id), versionOf: r });
    }
    for (const key of used) {
      if (seen.has(`${key.deploymentId}/${key.environmentId}`)) continue;
      const deployment = await findDeploymentVersionFields(db, key.deploymentId);
      // A branch deleted since its last use runs no more (its builds outlive it).
      const branch = await findBranchId(db, key.deploymentId, key.branch);
      const buildId = deployment && branch ? await latestSuccessfulBuildId(db, key.deploymentId, key.branch) : undefined;
      if (deployment && buildId !== undefined) planned.push({ ...key, buildId, versionOf: deployment });
    }
    if (planned.length === 0) return [];

    const commits = await buildCommits(db, [...new Set(planned.map((p) => p.buildId))]);
    const revisions = await envRevisions(db, [...new Set(planned.map((p) => p.deploymentId))]);

    const files = await filesFor(planned);
    return planned.map(({ versionOf, ...p }) => ({
      ...p,
      ...(files.has(`${p.deploymentId}/${p.environmentId}`) ? { files: files.get(`${p.deploymentId}/${p.environmentId}`)! } : {}),
      commit: commits.get(p.buildId) ?? '',
      version: version(versionOf),
      envRevision: revisions.get(p.deploymentId) ?? '0',
      async load() {
        const artifact = await buildArtifact(db, p.buildId);
        const vars = await sealedEnvVars(db, p.deploymentId);
        const env = Object.fromEntries(vars.map((v) => [v.name, secrets.open(v.value, envVarContext(p.deploymentId, v.name))]));
        return { artifact: artifact ?? '{"cubes":[],"views":[]}', env };
      },
    }));
  };
}
