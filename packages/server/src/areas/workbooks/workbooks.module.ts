import { defineArea } from '../../platform/index.js';
import { promotionsRoutes } from './promotions.routes.js';
import { promotionSchemas } from './promotions.schemas.js';
import { promotionsService } from './promotions.service.js';
import { workbooksRoutes } from './workbooks.routes.js';
import { workbooksService } from './workbooks.service.js';

/** Workbooks: the workspace items that hold reports and dashboards, and their promotion to other deployments. */
export const workbooksArea = defineArea('workbooks', ({ platform: { store, now, audit } }) => {
  const workbooks = workbooksService(store, now);
  const promotions = promotionsService(store, now, audit);
  return {
    services: { workbooks, promotions },
    schemas: promotionSchemas,
    routes: () => [workbooksRoutes(workbooks), promotionsRoutes(promotions)],
  };
});
