import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { DeploymentParams } from '../../shared/schemas.js';
import { ListReportsQuery, ReportParams, ReportPublicIdParams, UpsertReportBody } from './reports.schemas.js';
import type { ReportsService } from './reports.service.js';

const tags = ['Reports'];
const base = '/api/v1/deployments/:deploymentId/reports';

export function reportsRoutes(service: ReportsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.put(
      `${base}/by-public-id/:publicId`,
      {
        schema: {
          operationId: 'upsertReportByPublicId',
          tags,
          summary: 'Create or update the report with this public id',
          description:
            'Creating (201) needs the EXPLORER role or above and EDIT on the folder, or on the deployment at the root; the creator gets MANAGE. ' +
            'Updating (200) needs EDIT on the report; fields left out keep their stored values and null clears one. A different `folderId` moves the report with the single move’s checks, order and errors.',
          params: ReportPublicIdParams,
          body: UpsertReportBody,
          response: { 200: Type.Ref('Report'), 201: Type.Ref('Report') },
          problems: [
            'DEPLOYMENT_NOT_FOUND',
            'FOLDER_NOT_FOUND',
            'DESTINATION_NOT_FOUND',
            'FORBIDDEN',
            'REPORT_PUBLIC_ID_TAKEN',
            'REPORT_VERSION_MISMATCH',
            'DEPLOYMENT_BUSY',
          ],
        },
      },
      async (request, reply) => {
        const { created, report } = await service.upsert(request.caller, request.params.deploymentId, request.params.publicId, request.body);
        return reply.code(created ? 201 : 200).send(report);
      },
    );

    app.get(
      `${base}/:reportId`,
      {
        schema: {
          operationId: 'getReport',
          tags,
          summary: 'Get a report (needs VIEW); records it as viewed (`lastViewedAt`)',
          params: ReportParams,
          response: { 200: Type.Ref('Report') },
          problems: ['DEPLOYMENT_NOT_FOUND', 'REPORT_NOT_FOUND', 'FORBIDDEN'],
        },
      },
      async (request) => service.get(request.caller, request.params.deploymentId, request.params.reportId),
    );

    app.get(
      base,
      {
        schema: {
          operationId: 'listReports',
          tags,
          summary: 'List the reports the caller can view, filtered and sorted, cursor-paginated',
          description:
            'Cursor pagination with `first` and `after` for every `sortBy` except `lastViewedAt`, which refuses `after` (400 CURSOR_UNAVAILABLE) and pages with `offset`. ' +
            '`data`, `count` and `pagination` are deprecated: use `items` and `pageInfo`.',
          params: DeploymentParams,
          querystring: ListReportsQuery,
          response: { 200: Type.Ref('ReportPage') },
          problems: ['DEPLOYMENT_NOT_FOUND', 'FOLDER_NOT_FOUND', 'CURSOR_UNAVAILABLE'],
        },
      },
      async (request) => service.list(request.caller, request.params.deploymentId, request.query),
    );
  };
}
