import { defineArea } from '../../platform/index.js';
import { workbooksRoutes } from './workbooks.routes.js';
import { workbooksService } from './workbooks.service.js';

/** Workbooks: the workspace items that hold reports and dashboards. */
export const workbooksArea = defineArea('workbooks', ({ platform: { store, now } }) => {
  const workbooks = workbooksService(store, now);
  return { services: { workbooks }, routes: () => [workbooksRoutes(workbooks)] };
});
