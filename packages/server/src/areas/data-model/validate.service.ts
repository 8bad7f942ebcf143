import type { Caller } from '../../access/caller.js';
import type { Store } from '../../db/database.js';
import { ApiError } from '../../shared/problems.js';
import { authorizeDeployment } from '../deployments/index.js';
import { branchFiles, isPersonalBranch } from './branch-targets.js';
import { findSession } from './branches.store.js';
import { modeOf } from './builds.service.js';
import type { DeploymentRepositories } from './deployment-repositories.js';
import { modelFilesAt } from './model-files.js';
import { validateModel } from '../../model/index.js';
import type { WorkerPool } from '../../jobs/index.js';
import { compileModel, registerModelTasks } from './model-tasks.js';
import type { ValidationResponse } from './builds.schemas.js';

/**
 * Reference 2.19: the verdict of the validator builds use, on a branch's model as it is now (a
 * dev-mode branch with its pending changes). An invalid model is a 200 with `valid: false`.
 */
export function validateService(store: Store, repositories: DeploymentRepositories, pool?: WorkerPool) {
  // Given the jobs service's worker pool, the model compiles there, as a build's does; else here.
  if (pool) registerModelTasks(pool);
  return {
    async validate(caller: Caller, deploymentId: number, input: { branchName?: string; devMode?: boolean }): Promise<ValidationResponse> {
      const { row } = await authorizeDeployment(store.db, caller, deploymentId, 'SchemaRead');
      if (input.branchName !== undefined && input.devMode !== undefined) {
        throw new ApiError('VALIDATION_FAILED', 'branchName and devMode are mutually exclusive; send one of them, or neither for the deploy branch.', {
          errors: [{ pointer: '/query/devMode', message: 'cannot be combined with branchName' }],
        });
      }
      let branch = input.branchName ?? row.deploy_branch_name;
      if (input.devMode) {
        const session = await findSession(store.db, row.id, caller.actor.keyId);
        if (!session) throw new ApiError('NO_DEV_MODE', `This credential has no active dev-mode branch on deployment ${row.id}.`);
        branch = session.branch_name;
      }
      const repo = await repositories.open(row);
      const { commit } = await branchFiles(repo, row.id, branch, isPersonalBranch(branch));
      const files = await modelFilesAt(repo, commit, row.deploy_project_root);
      const result = pool ? await compileModel(pool, files) : validateModel(files);
      return { deploymentId: row.id, branchName: branch, mode: modeOf(row, branch), valid: result.valid, errors: result.errors, cubesCount: result.cubesCount };
    },
  };
}
export type ValidateService = ReturnType<typeof validateService>;
