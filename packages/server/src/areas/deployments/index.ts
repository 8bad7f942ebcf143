/**
 * The deployments area's public entry: what other areas may use of it. Everything else in the folder
 * is the area's own (npm run cycles enforces it).
 */
export type { Catalog } from './catalog.js';
export { authorizeDeployment } from './deployment-access.js';
export { currentVersion } from './deployment-settings.js';
export { AccessLevel } from './deployments.schemas.js';
export type { Deployment } from './deployments.schemas.js';
export { deploymentPath, toDeployment } from './deployments.service.js';
export type { DeployBranchMoved, DeploymentUrlOf, RuntimesChanged } from './deployments.service.js';
export { deleteDeployment, existingDeploymentIds, findDeployment, findDeploymentByName, insertDeployment, updateDeployment } from './deployments.store.js';
export { dataApiUrl, findEnvironment } from './environments.service.js';
export type { EnvironmentRef } from './environments.service.js';
export { deploymentsArea } from './deployments.module.js';
export { DEFAULT_CATALOG } from './catalog.js';
