import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Caller } from '../../access/caller.js';
import { ApiError } from '../../shared/problems.js';
import type { Report } from './reports.schemas.js';
import type { ReportsService } from './reports.service.js';

/**
 * Running a report (extension): its `sqlQuery` through the data API's `/v1/sql`, else the query in
 * its `spec` (`{query: {...}}`) through `/v1/load`, as the caller, on the deployment's production
 * runtime. The one call that refreshes, exports, deliveries and embedded dashboards build on.
 */
/** Runs a query on a deployment's production runtime as the caller: the data API's, given at the composition root. */
export interface QueryRunner {
  run(
    caller: Caller,
    deploymentId: number,
    request: { sql: string } | { query: unknown },
  ): Promise<{ data: Array<Record<string, unknown>>; annotation: Record<string, unknown> }>;
}

export function reportRunsService(reports: ReportsService, dataApi: QueryRunner) {
  /** Runs a report already read (with VIEW checked) by the caller: its query as it stands. */
  async function runContent(caller: Caller, deploymentId: number, report: Pick<Report, 'id' | 'sqlQuery' | 'spec'>) {
    if (report.sqlQuery) return dataApi.run(caller, deploymentId, { sql: report.sqlQuery });
    const spec = report.spec;
    const query = typeof spec === 'object' && spec !== null && 'query' in spec ? (spec as { query: unknown }).query : undefined;
    if (query !== undefined && query !== null) return dataApi.run(caller, deploymentId, { query });
    throw new ApiError('QUERY_REFUSED', `Report ${report.id} has neither an sqlQuery nor a spec with a query to run.`);
  }

  return {
    async run(caller: Caller, deploymentId: number, reportId: number) {
      return runContent(caller, deploymentId, await reports.get(caller, deploymentId, reportId));
    },
    runContent,
  };
}
export type ReportRunsService = ReturnType<typeof reportRunsService>;

export function reportRunsRoutes(runs: ReportRunsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/api/v1/deployments/:deploymentId/reports/:reportId/run',
      {
        config: { optionalBody: true },
        schema: {
          operationId: 'runReport',
          extension: true,
          tags: ['Reports'],
          summary: 'Run a report’s query on the deployment’s runtime, as the caller (extension; VIEW on the report)',
          description:
            'Runs the report’s `sqlQuery` (SQL over cubes and views, through the data API’s `/v1/sql`), else the semantic query in `spec.query` (through `/v1/load`), with the caller’s row-level access. Answers the rows keyed by column or member name and their annotation. A query the runtime refuses is 400 `QUERY_REFUSED` with its reason; members the model’s access policies keep from the caller are 403.',
          params: Type.Object({
            deploymentId: Type.Integer({ minimum: 1, maximum: 2 ** 53 - 1 }),
            reportId: Type.Integer({ minimum: 1, maximum: 2 ** 53 - 1 }),
          }),
          response: {
            200: Type.Object({ data: Type.Array(Type.Record(Type.String(), Type.Unknown())), annotation: Type.Record(Type.String(), Type.Unknown()) }),
          },
          problems: ['DEPLOYMENT_NOT_FOUND', 'REPORT_NOT_FOUND', 'FORBIDDEN', 'QUERY_REFUSED', 'RUNTIME_UNAVAILABLE', 'ENVIRONMENT_NOT_FOUND'],
        },
      },
      async (request) => runs.run(request.caller, request.params.deploymentId, request.params.reportId),
    );
  };
}
