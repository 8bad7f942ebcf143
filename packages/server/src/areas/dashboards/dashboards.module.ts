import { defineArea } from '../../platform/index.js';
import { dashboardControlSchemas } from './controls.schemas.js';
import { dashboardsRoutes } from './dashboards.routes.js';
import { dashboardSchemas } from './dashboards.schemas.js';
import { dashboardsService } from './dashboards.service.js';

/** Dashboards: drafts, publishing, controls. */
export const dashboardsArea = defineArea('dashboards', ({ platform: { store, now } }) => {
  const dashboards = dashboardsService(store, now);
  return { services: { dashboards }, schemas: [...dashboardSchemas, ...dashboardControlSchemas], routes: () => [dashboardsRoutes(dashboards)] };
});
