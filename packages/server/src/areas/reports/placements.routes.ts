import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ReportParams } from './reports.schemas.js';
import { ConnectReportToWorkbookBody, DisconnectReportFromWorkbookBody, RefreshReportBody } from './placements.schemas.js';
import type { PlacementsService } from './placements.service.js';

const tags = ['Reports'];
const base = '/api/v1/deployments/:deploymentId/reports/:reportId';
const ADDRESSING =
  'A placement is named by `placementId`, or (for placements recorded before placements had ids) by `externalWorkbookId` plus both `sheetName` and `anchorCell`, or a `resultLocation` that names both; a target missing either matches nothing. ' +
  '`sheetId` only narrows: a placement stored under another sheet id does not match, whatever its name and anchor.';

export function placementsRoutes(service: PlacementsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.put(
      `${base}/connect-workbook`,
      {
        schema: {
          operationId: 'connectReportToWorkbook',
          tags,
          summary: 'Place the report in the caller’s spreadsheet (read access to the report is enough)',
          description:
            'Upserts one placement, so the call is idempotent per placement: the one named by `placementId` (a new one takes it as its id; without one the server assigns one), else the one in `externalWorkbookId` at the same sheet and anchor cell. ' +
            'A new `placementId` at the address of a placement without an id takes that placement over. The placement records who placed it, when, the report’s `currentQueryChecksum` as its `queryChecksum`, and `resultChecksum` as sent. ' +
            '`addressOnly` corrects the address of an existing placement (404 when none matches) and keeps its fingerprint and checksums. The report’s query, name and definition never change.',
          params: ReportParams,
          body: ConnectReportToWorkbookBody,
          response: { 200: Type.Ref('Report') },
          problems: ['DEPLOYMENT_NOT_FOUND', 'REPORT_NOT_FOUND', 'FORBIDDEN', 'PLACEMENT_NOT_FOUND', 'PLACEMENT_LIMIT_REACHED', 'UNAVAILABLE'],
        },
      },
      async (request) => service.connect(request.caller, request.params.deploymentId, request.params.reportId, request.body),
    );

    app.delete(
      `${base}/connect-workbook`,
      {
        schema: {
          operationId: 'disconnectReportFromWorkbook',
          tags,
          summary: 'Remove one placement of the report (read access to the report is enough)',
          description: `${ADDRESSING} Idempotent: a target that matches nothing succeeds and changes nothing; every other placement is untouched. The request has a JSON body.`,
          params: ReportParams,
          body: DisconnectReportFromWorkbookBody,
          response: { 200: Type.Ref('Report') },
          problems: ['DEPLOYMENT_NOT_FOUND', 'REPORT_NOT_FOUND', 'FORBIDDEN', 'UNAVAILABLE'],
        },
      },
      async (request) => service.disconnect(request.caller, request.params.deploymentId, request.params.reportId, request.body),
    );

    app.put(
      `${base}/refresh`,
      {
        schema: {
          operationId: 'refreshReport',
          tags,
          summary: 'Refresh a placement of the report: run its query as the caller and record the refresh (read access is enough)',
          description:
            `${ADDRESSING} The report’s query runs on the deployment’s runtime as the caller, with their row-level access; a query the runtime refuses (400 QUERY_REFUSED) or members the caller may not query (403) record nothing. ` +
            'Then the placement records `refreshedAt`, `refreshedByUserId`, the checksum of the query that ran as its `queryChecksum`, and `resultChecksum` as sent (null when left out). A target that matches no placement is 404 PLACEMENT_NOT_FOUND.',
          params: ReportParams,
          body: RefreshReportBody,
          response: { 200: Type.Ref('Report') },
          problems: [
            'DEPLOYMENT_NOT_FOUND',
            'REPORT_NOT_FOUND',
            'FORBIDDEN',
            'PLACEMENT_NOT_FOUND',
            'QUERY_REFUSED',
            'RUNTIME_UNAVAILABLE',
            'ENVIRONMENT_NOT_FOUND',
            'UNAVAILABLE',
          ],
        },
      },
      async (request) => service.refresh(request.caller, request.params.deploymentId, request.params.reportId, request.body),
    );
  };
}
