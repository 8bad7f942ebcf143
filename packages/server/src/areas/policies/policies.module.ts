import { defineArea } from '../../platform/index.js';
import { policiesRoutes } from './policies.routes.js';
import { policySchemas } from './policies.schemas.js';
import { policiesService } from './policies.service.js';

/** Access policies granted on deployments, folders and items. */
export const policiesArea = defineArea('policies', ({ platform: { store, now } }) => {
  const policies = policiesService(store, now);
  return { services: { policies }, schemas: policySchemas, routes: () => [policiesRoutes(policies)] };
});
