import type { DeploymentRow } from '../../db/tables.js';

/**
 * Told when the deploy branch of a deployment moved through the API or a push: production builds
 * from it (except in `deployMode: cli`, where only uploads deploy; reference 2.0). The builds of
 * this area listen; the callers only report.
 */
export type { DeployBranchMoved } from '../deployments/index.js';

/** Whether a move of `branch` should build production. */
export function buildsProduction(row: DeploymentRow, branch: string): boolean {
  return branch === row.deploy_branch_name && row.deploy_mode !== 'cli';
}
