import { defineArea } from '../../platform/index.js';
import { envVarsRoutes } from './env-vars.routes.js';
import { envVarSchemas } from './env-vars.schemas.js';
import { envVarsService } from './env-vars.service.js';

/** Deployments' environment variables: their data sources, checked against the server's own cluster, and what a change restarts. */
export const envVarsArea = defineArea('env-vars', ({ platform: { store, secrets, runtime, audit, now } }) => {
  const { ownCluster, allowSocketSources } = runtime.options;
  const envVars = envVarsService(store, secrets, now, () => runtime.reconcile(), { ownCluster, allowSocketSources }, audit);
  return { services: { envVars }, schemas: envVarSchemas, routes: () => [envVarsRoutes(envVars)] };
});
