import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ApiError } from '../../shared/problems.js';
import { ref } from '../../shared/schemas.js';
import { PublicIdParams } from '../dashboards/index.js';
import { EmbedPythonFilteredRunInputSchema } from './python-runs.schemas.js';
import type { PythonRunsService } from './python-runs.service.js';

/** POST /api/v1/embed/dashboard/{publicId}/python-run (reference 3.7): an embed token's route, as 4.18. */
export function pythonRunsRoutes(runs: PythonRunsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/api/v1/embed/dashboard/:publicId/python-run',
      {
        config: { credential: 'embed' },
        schema: {
          operationId: 'runEmbedPythonAnalysis',
          tags: ['Embedding'],
          summary: 'Run a report’s Python analysis over dashboard-filtered SQL (reference 3.7; an embed token)',
          description:
            'Authorized as GET /api/v1/embed/dashboard/{publicId} (404 when the session cannot see the dashboard, 403 when signed embedding is off for it). ' +
            'The code is the `pythonCode` of the published report snapshot `reportVersionId` (403 unless it is one of the dashboard’s and of `reportId`), never the caller’s. ' +
            '`sqlQuery` runs through the data API’s /v1/sql with the calling embed user’s row-level context, and its rows are handed to the code as `rows` (a list of dicts). ' +
            'The code runs in a sandbox (Pyodide, the standard library only; no network, no server files) within a time and a memory limit; its error, or why it was stopped, is `executionError`. ' +
            'Nothing is stored; successful runs are cached briefly per report, code, SQL and viewer. 403 PYTHON_ANALYSIS_DISABLED while the account’s embed settings have `pythonAnalysisEnabled` off. An API key gets 403.',
          params: PublicIdParams,
          body: ref(EmbedPythonFilteredRunInputSchema),
          response: { 200: Type.Ref('PythonAnalysisFilteredRun') },
          problems: [
            'DASHBOARD_NOT_FOUND',
            'FORBIDDEN',
            'PYTHON_ANALYSIS_DISABLED',
            'INVALID_OPERATION',
            'QUERY_REFUSED',
            'RUNTIME_UNAVAILABLE',
            'ENVIRONMENT_NOT_FOUND',
            'DEPLOYMENT_NOT_FOUND',
            'PYTHON_BUSY',
            'UNAVAILABLE',
          ],
        },
      },
      async (request) => {
        if (request.embed === null) throw new ApiError('FORBIDDEN', 'This route takes an embed token (POST /api/v1/embed/session/token), not an API key.');
        return runs.run(request.tenant, request.embed, request.params.publicId, request.body);
      },
    );
  };
}
