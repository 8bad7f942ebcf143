import { defineArea } from '../../platform/index.js';
import { dashboardControlSchemas } from './controls.schemas.js';
import { dashboardFileRoutes } from './dashboard-file.routes.js';
import { dashboardFileService } from './dashboard-file.js';
import { dashboardsRoutes } from './dashboards.routes.js';
import { dashboardSchemas } from './dashboards.schemas.js';
import { dashboardsService } from './dashboards.service.js';

/** Dashboards: drafts, publishing, controls. */
export const dashboardsArea = defineArea('dashboards', ({ platform: { store, now } }) => {
  const dashboards = dashboardsService(store, now);
  const dashboardFile = dashboardFileService(dashboards);
  return {
    services: { dashboards, dashboardFile },
    schemas: [...dashboardSchemas, ...dashboardControlSchemas],
    routes: () => [dashboardsRoutes(dashboards), dashboardFileRoutes(dashboardFile)],
  };
});
