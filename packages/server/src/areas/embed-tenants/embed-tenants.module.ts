import { defineArea } from '../../platform/index.js';
import { publishedDashboardSwitch } from './dashboard-embed.js';
import { embedAccessRoutes } from './embed-access.routes.js';
import { embedAccessSchemas } from './embed-access.schemas.js';
import { embedAccessService } from './embed-access.service.js';
import { embedGroupsRoutes } from './embed-groups.routes.js';
import { embedGroupSchemas } from './embed-groups.schemas.js';
import { embedGroupsService } from './embed-groups.service.js';
import { embedTenantsRoutes } from './embed-tenants.routes.js';
import { embedTenantSchemas } from './embed-tenants.schemas.js';
import { embedTenantsService } from './embed-tenants.service.js';

/** Embed tenants, their groups and users, and what of the workspace they may open. `embedUserLimit`: the most embed users an account may hold. */
export const embedTenantsArea = defineArea('embed-tenants', ({ platform: { store, now } }, config: { embedUserLimit: number }) => {
  const people = { userLimit: config.embedUserLimit };
  const embedTenants = embedTenantsService(store, people, now);
  const embedGroups = embedGroupsService(store, people, now);
  const embedAccess = embedAccessService(store, publishedDashboardSwitch, now);
  return {
    services: { embedTenants, embedGroups, embedAccess },
    schemas: [...embedTenantSchemas, ...embedGroupSchemas, ...embedAccessSchemas],
    routes: () => [embedTenantsRoutes(embedTenants), embedGroupsRoutes(embedGroups), embedAccessRoutes(embedAccess)],
  };
});
