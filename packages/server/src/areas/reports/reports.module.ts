import { defineArea } from '../../platform/index.js';
import { placementsRoutes } from './placements.routes.js';
import { placementSchemas } from './placements.schemas.js';
import { placementsService } from './placements.service.js';
import { reportRunsRoutes, reportRunsService, type QueryRunner } from './report-runs.js';
import { reportsRoutes } from './reports.routes.js';
import { reportSchemas } from './reports.schemas.js';
import { reportsService } from './reports.service.js';

/** Reports, their runs and their placements on dashboards. `queries`: the data API, which runs them (wired at the root: it depends on this area). */
export const reportsArea = defineArea('reports', ({ platform: { store, now } }, config: { queries: QueryRunner }) => {
  const reports = reportsService(store, now);
  const reportRuns = reportRunsService(reports, config.queries);
  const placements = placementsService(store, reportRuns, now);
  return {
    services: { reports, reportRuns, placements },
    schemas: [...placementSchemas, ...reportSchemas],
    routes: () => [reportsRoutes(reports), reportRunsRoutes(reportRuns), placementsRoutes(placements)],
  };
});
