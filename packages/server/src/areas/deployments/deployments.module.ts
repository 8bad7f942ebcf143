import { defineArea } from '../../platform/index.js';
import type { Catalog } from './catalog.js';
import { deploymentsRoutes } from './deployments.routes.js';
import { deploymentSchemas } from './deployments.schemas.js';
import { deploymentsService, type DeployBranchMoved, type DeploymentDeleted, type DeploymentRepositoryHost } from './deployments.service.js';
import { environmentsService } from './environments.service.js';
import { podSchemas, podsRoutes } from './pods.routes.js';
import { podsService } from './pods.service.js';
import { setupRoutes, setupSchemas } from './setup.routes.js';
import { setupService } from './setup.service.js';

export interface DeploymentsConfig {
  /** Runtime versions and regions offered. */
  catalog: Catalog;
  /** Where the SQL API listens, once it does; null: off. */
  sqlApiPort: () => number | null;
  /** The deployments' repositories, their builds and what goes with a deleted deployment: other areas', wired at the root (they depend on this one). */
  repositories: DeploymentRepositoryHost;
  deployBranchMoved: DeployBranchMoved;
  onDelete: DeploymentDeleted[];
}

/** Deployments: their settings, setup steps, environments and pods. */
export const deploymentsArea = defineArea('deployments', ({ platform: { store, originOf, runtime, now } }, config: DeploymentsConfig) => {
  const deployments = deploymentsService(
    store,
    config.repositories,
    config.deployBranchMoved,
    config.catalog,
    originOf,
    now,
    () => runtime.reconcile(),
    config.onDelete,
  );
  const setup = setupService(store, originOf, now);
  const environments = environmentsService(store, originOf, config.sqlApiPort);
  const pods = podsService(store, runtime);
  return {
    services: { deployments, setup, environments, pods },
    schemas: [...deploymentSchemas, ...setupSchemas, ...podSchemas],
    routes: () => [deploymentsRoutes(deployments), setupRoutes(setup, environments), podsRoutes(pods)],
  };
});
