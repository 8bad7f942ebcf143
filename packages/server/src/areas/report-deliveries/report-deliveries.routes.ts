import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { DeploymentParams } from '../../shared/schemas.js';
import {
  CreateReportDeliveryBody,
  ListReportDeliveriesQuery,
  MAX_RECIPIENTS,
  MAX_ROWS,
  ReportDeliveryParams,
  RunsQuery,
  UpdateReportDeliveryBody,
} from './report-deliveries.schemas.js';
import type { ReportDeliveriesService } from './report-deliveries.service.js';

const tags = ['Report deliveries'];
const base = '/api/v1/deployments/:deploymentId/report-deliveries';
const COMMON = ['FORBIDDEN', 'DEPLOYMENT_NOT_FOUND'] as const;
const WRITE = [...COMMON, 'KEY_SCOPE_FORBIDDEN'] as const;
const ADMIN = 'Admins only, as for notifications: a delivery mails rows as other people see them.';
const RECIPIENTS =
  `1-${MAX_RECIPIENTS} recipients: USER by \`userId\` or \`email\` (an active user), EMBED_USER by \`embedTenantName\` and \`externalId\` (an existing embed user mailable at its address or email-shaped externalId; optional \`securityContext\`). ` +
  `Each is mailed the report's rows as they may see them (their row-level security), at most ${MAX_ROWS} rows. ` +
  '`cron` is five fields firing at most hourly; `timezone` an IANA zone (default UTC). `format` is `csv` (default) or `xlsx`.';

/** Report deliveries (extension, reference 9 names them): a report's rows mailed as CSV or XLSX on a schedule. */
export function reportDeliveriesRoutes(service: ReportDeliveriesService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      base,
      {
        schema: {
          operationId: 'listReportDeliveries',
          extension: true,
          tags,
          summary: "Extension: list a deployment's report deliveries, newest first, optionally of one report (admin)",
          description: ADMIN,
          params: DeploymentParams,
          querystring: ListReportDeliveriesQuery,
          response: { 200: Type.Ref('ReportDeliveryPage') },
          problems: [...COMMON, 'INVALID_CURSOR'],
        },
      },
      async (request) => service.list(request.caller, request.params.deploymentId, request.query),
    );

    app.post(
      base,
      {
        schema: {
          operationId: 'createReportDelivery',
          extension: true,
          tags,
          summary: "Extension: schedule mailings of a report's rows as CSV or XLSX (admin)",
          description: `${ADMIN} ${RECIPIENTS} A recipient that names nobody is a 404 and nothing is written.`,
          params: DeploymentParams,
          body: CreateReportDeliveryBody,
          response: { 200: Type.Ref('ReportDelivery') },
          problems: [...WRITE, 'REPORT_NOT_FOUND', 'USER_NOT_FOUND', 'EMBED_USER_NOT_FOUND'],
        },
      },
      async (request) => service.create(request.caller, request.params.deploymentId, request.body),
    );

    app.get(
      `${base}/:deliveryId`,
      {
        schema: {
          operationId: 'getReportDelivery',
          extension: true,
          tags,
          summary: 'Extension: get a report delivery (admin)',
          description: ADMIN,
          params: ReportDeliveryParams,
          response: { 200: Type.Ref('ReportDelivery') },
          problems: [...COMMON, 'REPORT_DELIVERY_NOT_FOUND'],
        },
      },
      async (request) => service.get(request.caller, request.params.deploymentId, request.params.deliveryId),
    );

    app.put(
      `${base}/:deliveryId`,
      {
        schema: {
          operationId: 'updateReportDelivery',
          extension: true,
          tags,
          summary: 'Extension: change a report delivery (admin): fields left out stay; recipients sent replace the list',
          description: `${ADMIN} ${RECIPIENTS} A new schedule runs from now. Pausing is POST …/pause.`,
          params: ReportDeliveryParams,
          body: UpdateReportDeliveryBody,
          response: { 200: Type.Ref('ReportDelivery') },
          problems: [...WRITE, 'REPORT_DELIVERY_NOT_FOUND', 'USER_NOT_FOUND', 'EMBED_USER_NOT_FOUND'],
        },
      },
      async (request) => service.update(request.caller, request.params.deploymentId, request.params.deliveryId, request.body),
    );

    app.delete(
      `${base}/:deliveryId`,
      {
        schema: {
          operationId: 'deleteReportDelivery',
          extension: true,
          tags,
          summary: 'Extension: delete a report delivery with its run history (admin)',
          description: ADMIN,
          params: ReportDeliveryParams,
          response: { 204: Type.Null({ description: 'Deleted' }) },
          problems: [...WRITE, 'REPORT_DELIVERY_NOT_FOUND'],
        },
      },
      async (request, reply) => {
        await service.remove(request.caller, request.params.deploymentId, request.params.deliveryId);
        return reply.code(204).send(null);
      },
    );

    app.post(
      `${base}/:deliveryId/pause`,
      {
        config: { optionalBody: true },
        schema: {
          operationId: 'pauseReportDelivery',
          extension: true,
          tags,
          summary: 'Extension: pause a report delivery (admin); idempotent: pausing a paused delivery changes nothing',
          description: `${ADMIN} A paused delivery's schedule does not fire; running it now still works.`,
          params: ReportDeliveryParams,
          response: { 200: Type.Ref('ReportDelivery') },
          problems: [...WRITE, 'REPORT_DELIVERY_NOT_FOUND'],
        },
      },
      async (request) => service.pause(request.caller, request.params.deploymentId, request.params.deliveryId),
    );

    app.post(
      `${base}/:deliveryId/resume`,
      {
        config: { optionalBody: true },
        schema: {
          operationId: 'resumeReportDelivery',
          extension: true,
          tags,
          summary: 'Extension: resume a paused report delivery (admin); idempotent',
          description: `${ADMIN} The schedule runs from now: occurrences missed while paused are not made up.`,
          params: ReportDeliveryParams,
          response: { 200: Type.Ref('ReportDelivery') },
          problems: [...WRITE, 'REPORT_DELIVERY_NOT_FOUND'],
        },
      },
      async (request) => service.resume(request.caller, request.params.deploymentId, request.params.deliveryId),
    );

    app.post(
      `${base}/:deliveryId/run`,
      {
        config: { optionalBody: true },
        schema: {
          operationId: 'runReportDelivery',
          extension: true,
          tags,
          summary: 'Extension: run a report delivery now (admin): answers the queued run; a `report-delivery` job mails it',
          description: `${ADMIN} Works while paused. Follow the run in …/runs or the job by \`jobId\`.`,
          params: ReportDeliveryParams,
          response: { 202: Type.Ref('ReportDeliveryRun') },
          problems: [...WRITE, 'REPORT_DELIVERY_NOT_FOUND'],
        },
      },
      async (request, reply) => reply.code(202).send(await service.runNow(request.caller, request.params.deploymentId, request.params.deliveryId)),
    );

    app.get(
      `${base}/:deliveryId/runs`,
      {
        schema: {
          operationId: 'listReportDeliveryRuns',
          extension: true,
          tags,
          summary: "Extension: a report delivery's runs, newest first, with each recipient's outcome (admin; the newest 200 are kept)",
          description: ADMIN,
          params: ReportDeliveryParams,
          querystring: RunsQuery,
          response: { 200: Type.Ref('ReportDeliveryRunPage') },
          problems: [...COMMON, 'REPORT_DELIVERY_NOT_FOUND', 'INVALID_CURSOR'],
        },
      },
      async (request) => service.runs(request.caller, request.params.deploymentId, request.params.deliveryId, request.query),
    );
  };
}
