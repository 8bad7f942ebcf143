import { exclusive, lockKey } from '../../db/transactions.js';
import { Repositories } from '../../git/repositories.js';
import { timestamp } from '../../time.js';
import { defineArea } from '../../platform/index.js';
import { branchesRoutes } from './branches.routes.js';
import { branchesService } from './branches.service.js';
import { recordBranches } from './branches.store.js';
import { buildsRoutes } from './builds.routes.js';
import { buildSchemas } from './builds.schemas.js';
import { buildsService } from './builds.service.js';
import { commitsRoutes } from './commits.routes.js';
import { commitSchemas } from './commits.schemas.js';
import { commitsService } from './commits.service.js';
import { dataModelSchemas } from './data-model.schemas.js';
import { buildsProduction, type DeployBranchMoved } from './deploy-events.js';
import { DeploymentRepositories } from './deployment-repositories.js';
import { devModeService } from './dev-mode.service.js';
import { filesRoutes } from './files.routes.js';
import { filesService } from './files.service.js';
import { gitHttpRoutes } from './git-http.routes.js';
import { gitHttpService } from './git-http.service.js';
import type { UpstreamOf } from './upstream.js';
import { uploadsRoutes } from './uploads.routes.js';
import { uploadSchemas } from './uploads.schemas.js';
import { uploadsService } from './uploads.service.js';
import { validateService } from './validate.service.js';

export interface DataModelConfig {
  /** Where deployments' git repositories live (REPOSITORIES_DIR). */
  repositoriesDir: string;
  /** A deployment's upstream repository on the git host, if it is connected to one (the git-host area's, wired at the root: it depends on this one). */
  upstreamOf: UpstreamOf;
}

/**
 * The data model in git: each deployment's repository (files, commits, branches, uploads, git's
 * smart HTTP), development mode, and the builds that check a model before a runtime serves it.
 */
export const dataModelArea = defineArea('data-model', ({ platform: { store, jobs, runtime, now } }, config: DataModelConfig) => {
  const repositories = new DeploymentRepositories(new Repositories(config.repositoriesDir, (id, fn) => exclusive(store, lockKey.repository(id), fn)));
  // The runtimes reconcile when a build succeeds.
  const builds = buildsService(store, repositories, jobs, now, () => runtime.reconcile());
  // Production builds from the deploy branch whenever it moves.
  const deployBranchMoved: DeployBranchMoved = async (row, commit, cause) => {
    await builds.enqueue(row, row.deploy_branch_name, commit, cause);
  };
  // Models compile on the jobs service's worker pool, off the event loop, for builds and for validation alike.
  const validation = validateService(store, repositories, jobs.workers);
  const uploads = uploadsService(store, repositories, builds, now);
  const commits = commitsService(store, repositories);
  const gitHttp = gitHttpService(store, repositories, async (row, changed) => {
    await recordBranches(store.db, { tenantId: row.tenant_id, deploymentId: row.id }, [...changed.keys()], timestamp(now));
    const head = changed.get(row.deploy_branch_name);
    if (head !== undefined && buildsProduction(row, row.deploy_branch_name)) await deployBranchMoved(row, head, 'push');
  });
  const files = filesService(store, repositories);
  const devMode = devModeService(store, repositories, deployBranchMoved, now, config.upstreamOf);
  const branches = branchesService(
    store,
    repositories,
    deployBranchMoved,
    now,
    (row, branch, commit, cause) => builds.ensureBuilt(row, branch, commit, cause),
    (deploymentId, branch) => runtime.forget(deploymentId, branch),
    config.upstreamOf,
  );
  return {
    services: { repositories, builds, deployBranchMoved, validation, uploads, commits, gitHttp, files, devMode, branches },
    schemas: [...commitSchemas, ...dataModelSchemas, ...buildSchemas, ...uploadSchemas],
    routes: () => [
      commitsRoutes(commits),
      gitHttpRoutes(gitHttp),
      filesRoutes(files),
      branchesRoutes(devMode, branches),
      buildsRoutes(builds, validation),
      uploadsRoutes(uploads),
    ],
  };
});
