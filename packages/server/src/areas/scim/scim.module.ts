import { defineArea } from '../../platform/index.js';
import { scimBaseUrl } from './scim.base-url.js';
import { scimProblemDialect } from './scim.errors.js';
import { scimRoutes } from './scim.routes.js';
import { scimSchemas } from './scim.schemas.js';
import { scimService } from './scim.service.js';

/** SCIM 2.0 provisioning of users and groups, answering errors in SCIM's own schema. */
export const scimArea = defineArea('scim', ({ platform: { store, now } }) => {
  const scim = scimService(store, now);
  return {
    services: { scim },
    schemas: scimSchemas,
    problemDialects: [scimProblemDialect],
    routes: ({ baseDomain, publicUrl }) => [scimRoutes(scim, scimBaseUrl(store.db, { baseDomain, publicUrl }))],
  };
});
