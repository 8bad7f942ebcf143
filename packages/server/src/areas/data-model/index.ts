/**
 * The data-model area's public entry: what other areas may use of it. Everything else in the folder
 * is the area's own (npm run cycles enforces it).
 */
export { SERVER_AUTHOR, authorOf } from './authors.js';
export { isPersonalBranch } from './branch-targets.js';
export { insertBranch, recordBranches } from './branches.store.js';
export type { BuildsService } from './builds.service.js';
export { hasSuccessfulBuild, latestBuild, latestSuccessfulBuild } from './builds.store.js';
export type { DeployBranchMoved } from './deploy-events.js';
export type { DeploymentRepositories } from './deployment-repositories.js';
export { modelFilesAt } from './model-files.js';
export { STARTER_MODEL, STARTER_MODEL_PATH } from './starter-model.js';
export { upstreamRef } from './upstream.js';
export type { Upstream } from './upstream.js';
export { dataModelArea } from './data-model.module.js';
