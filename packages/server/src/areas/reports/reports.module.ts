import { defineArea } from '../../platform/index.js';
import { externalPlacementsRoutes } from './external-placements.routes.js';
import { externalPlacementSchemas } from './external-placements.schemas.js';
import { externalPlacementsService } from './external-placements.service.js';
import { placementsRoutes } from './placements.routes.js';
import { placementSchemas } from './placements.schemas.js';
import { placementsService } from './placements.service.js';
import { reportFileRoutes } from './report-file.routes.js';
import { reportFileService } from './report-file.js';
import { reportRunsRoutes, reportRunsService, type QueryRunner } from './report-runs.js';
import { reportsRoutes } from './reports.routes.js';
import { reportSchemas } from './reports.schemas.js';
import { reportsService } from './reports.service.js';

/** Reports, their runs and their placements on dashboards. `queries`: the data API, which runs them (wired at the root: it depends on this area). */
export const reportsArea = defineArea('reports', ({ platform: { store, now } }, config: { queries: QueryRunner }) => {
  const reports = reportsService(store, now);
  const reportRuns = reportRunsService(reports, config.queries);
  const placements = placementsService(store, reportRuns, now);
  const reportFile = reportFileService(store, reports);
  const externalPlacements = externalPlacementsService(store);
  return {
    services: { reports, reportRuns, placements, reportFile, externalPlacements },
    schemas: [...placementSchemas, ...reportSchemas, ...externalPlacementSchemas],
    routes: () => [
      reportsRoutes(reports),
      reportRunsRoutes(reportRuns),
      placementsRoutes(placements),
      reportFileRoutes(reportFile),
      externalPlacementsRoutes(externalPlacements),
    ],
  };
});
