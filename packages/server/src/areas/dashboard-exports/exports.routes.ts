import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { DashboardExportsService } from './exports.service.js';
import { DeploymentParams, DownloadQuery, ExportParams, StartDashboardExportInput } from './exports.schemas.js';

const tags = ['Dashboard exports'];

/** Reference 8.A: start an export, poll it, download its file. */
export function dashboardExportsRoutes(service: DashboardExportsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/api/v1/deployments/:deploymentId/dashboard-exports',
      {
        schema: {
          operationId: 'startDashboardExport',
          tags,
          summary: 'Render a published dashboard to PNG or PDF (reference 8.A.1; MANAGE on its workbook, `renderAs` admin)',
          description:
            'Accepted at once: the render runs as a background job with the caller’s own row-level context, or that of `renderAs`; poll the status with the `jobId`. ' +
            'Exactly one of `dashboardId` and `dashboardPublicId`. The job and its file are dropped at `expiresAt`, 5 minutes after submission. ' +
            '403 while the account restricts data downloads (`restrictDataDownload`), or when an embed subject’s tenant has no share of the workbook; ' +
            '404 for a dashboard not in this deployment or an unknown or deactivated `renderAs` user; 429 when as many exports as allowed (3 by default) are rendering for the identity rendered as. ' +
            'An embed subject’s `groups`, `userAttributes` and `securityContext` apply to this render only; `userAttributes` follows the rules of every write of attribute values (each name once, 400 USER_ATTRIBUTES_NOT_FOUND for a name that is no attribute, a value of its attribute’s type).',
          params: DeploymentParams,
          body: StartDashboardExportInput,
          response: { 200: Type.Ref('StartDashboardExportResponse') },
          problems: [
            'VALIDATION_FAILED',
            'DEPLOYMENT_NOT_FOUND',
            'DASHBOARD_NOT_FOUND',
            'USER_NOT_FOUND',
            'USER_ATTRIBUTES_NOT_FOUND',
            'FORBIDDEN',
            'DATA_DOWNLOAD_RESTRICTED',
            'DASHBOARD_EXPORT_LIMIT',
          ],
        },
      },
      async (request) => service.start(request.caller, request.params.deploymentId, request.body),
    );

    app.get(
      '/api/v1/deployments/:deploymentId/dashboard-exports/:jobId',
      {
        schema: {
          operationId: 'getDashboardExport',
          tags,
          summary: 'The status of an export (reference 8.A.2; its submitter only)',
          description:
            '`pending` and `processing`: keep polling. `contentType` once `completed`; `error` once `failed`. 404 once expired, or for another user’s export.',
          params: ExportParams,
          response: { 200: Type.Ref('DashboardExportStatus') },
          problems: ['DASHBOARD_EXPORT_NOT_FOUND'],
        },
      },
      async (request) => service.status(request.caller, request.params.deploymentId, request.params.jobId),
    );

    app.get(
      '/api/v1/deployments/:deploymentId/dashboard-exports/:jobId/download',
      {
        schema: {
          operationId: 'downloadDashboardExport',
          tags,
          summary: 'Download an export’s file (reference 8.A.3; its submitter only)',
          description:
            'The PNG or PDF as an attachment, named `dashboard.<ext>` or `<filename>.<ext>`; the extension follows the format. 409 while rendering, 422 after a failure (submit a new export), 404 once expired or for another user’s export.',
          params: ExportParams,
          querystring: DownloadQuery,
          response: {
            200: {
              description: 'The rendered file.',
              content: { 'image/png': { schema: { type: 'string', format: 'binary' } }, 'application/pdf': { schema: { type: 'string', format: 'binary' } } },
            },
          },
          problems: ['DASHBOARD_EXPORT_NOT_FOUND', 'DASHBOARD_EXPORT_RENDERING', 'DASHBOARD_EXPORT_FAILED'],
        },
      },
      async (request, reply) => {
        const file = await service.download(request.caller, request.params.deploymentId, request.params.jobId);
        const name = `${request.query.filename ?? 'dashboard'}.${file.extension}`;
        return (
          reply
            .type(file.contentType)
            .header('content-disposition', `attachment; filename="${name.replace(/[^\x20-\x7e]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(name)}`)
            // The schema documents a binary body; Fastify sends a Buffer as it is, without serializing it.
            .send(file.content as unknown as string)
        );
      },
    );
  };
}
