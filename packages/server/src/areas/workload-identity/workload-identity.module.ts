import { jwksRoutes, type WorkloadIssuer } from '../../http/jwks.routes.js';
import { defineArea } from '../../platform/index.js';
import { ApiError } from '../../shared/problems.js';
import { tenantSettings } from '../account/index.js';
import { oidcTokenConfigsRoutes } from './oidc-token-configs.routes.js';
import { oidcTokenConfigSchemas } from './oidc-token-configs.schemas.js';
import { oidcTokenConfigsService } from './oidc-token-configs.service.js';

/** Workload identity: the tenant as an OIDC issuer of tokens its environments present to other clouds, and their configurations. */
export const workloadIdentityArea = defineArea('workload-identity', ({ platform: { store, signing, tenantCache, originOf, now } }) => {
  const oidcTokenConfigs = oidcTokenConfigsService(store, now);
  // The tenant is the OIDC issuer of its workload tokens only while its `oidcEnabled` is on (reference 5.14).
  // Read through the tenant's snapshot: a settings write bumps auth_version, so switching it off is
  // seen by every process on its next request, and unauthenticated discovery traffic costs one statement.
  const workloadIssuer: WorkloadIssuer = async (tenant) => {
    if (!(await tenantSettings(store.db, tenant.id, await tenantCache.snapshot(tenant.id))).oidcEnabled) {
      throw new ApiError(
        'ROUTE_NOT_FOUND',
        'This tenant is not an OIDC issuer: an admin turns workload identity on with PUT /api/v1/tenant/settings {"oidcEnabled": true}.',
      );
    }
    return originOf(tenant);
  };
  return {
    services: { oidcTokenConfigs },
    schemas: oidcTokenConfigSchemas,
    routes: ({ resolveTenant }) => [jwksRoutes(signing, resolveTenant, workloadIssuer), oidcTokenConfigsRoutes(oidcTokenConfigs)],
  };
});
