import { defineArea } from '../../platform/index.js';
import { createRenderer, type Viewer } from '../../render/index.js';
import { ApiError } from '../../shared/problems.js';
import { findPublishedInDeployment } from '../dashboards/index.js';
import { dataApiArea, type DataApiGrant } from '../data-api/index.js';
import { registerExportJob } from './export-job.js';
import { dashboardExportsRoutes } from './exports.routes.js';
import { dashboardExportSchemas } from './exports.schemas.js';
import { dashboardExportsService } from './exports.service.js';

/** Dashboard exports rendering at once per identity rendered as, unless configured (reference 8.A's 429). */
export const DEFAULT_EXPORTS_PER_IDENTITY = 3;

/** Whose rows a render's queries return, as the data API's grant: a user's own context, or an embed user's whole one. */
function grantOf(viewer: Viewer): DataApiGrant {
  if ('context' in viewer) return { scopes: ['sql-runner'], userId: 0, securityContext: viewer.context.securityContext, context: viewer.context };
  return { scopes: null, userId: viewer.userId, securityContext: viewer.securityContext ?? {} };
}

/**
 * Dashboards rendered to PNG and PDF: exports, and (through `renderer`) each notification
 * recipient's render, each query as its viewer. `fontsDir`: where the DejaVu fonts are;
 * `exportsPerIdentity`: exports rendering at once per identity.
 */
export const dashboardExportsArea = defineArea(
  'dashboard-exports',
  ({ platform: { store, jobs, now }, use }, config: { fontsDir?: string; exportsPerIdentity?: number }) => {
    const { dataApi } = use(dataApiArea);
    const renderer = createRenderer({
      findPublished: (tenantId, deploymentId, ref) => findPublishedInDeployment(store.db, tenantId, deploymentId, ref),
      run: async (tenant, deploymentId, viewer, request) => {
        const answer = await dataApi.runAs(tenant, deploymentId, grantOf(viewer), request);
        return { rows: answer.data, annotation: answer.annotation };
      },
      isRefusal: (error) => error instanceof ApiError && (error.code === 'QUERY_REFUSED' || error.code === 'FORBIDDEN'),
      ...(config.fontsDir ? { fontsDir: config.fontsDir } : {}),
      // PNG and PDF are made off the event loop.
      pool: jobs.workers,
    });
    registerExportJob(store, jobs, renderer, now);
    const dashboardExports = dashboardExportsService(store, { jobs, now, concurrentPerIdentity: config.exportsPerIdentity ?? DEFAULT_EXPORTS_PER_IDENTITY });
    return { services: { renderer, dashboardExports }, schemas: dashboardExportSchemas, routes: () => [dashboardExportsRoutes(dashboardExports)] };
  },
);
