import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { AiWidgetThreadBody, AllowEmbedBody, PublicIdParams, PublishBody, SaveDraftBody, VersionsQuery, WorkbookParams } from './dashboards.schemas.js';
import type { DashboardsService } from './dashboards.service.js';

const tags = ['Dashboards'];
const base = '/api/v1/deployments/:deploymentId/workbooks/:workbookId';

export function dashboardsRoutes(service: DashboardsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.put(
      `${base}/dashboard`,
      {
        schema: {
          operationId: 'saveDashboardDraft',
          tags,
          summary: 'Save the workbook’s dashboard draft (needs EDIT)',
          description:
            'Replaces the draft (null clears it). Widgets without an `id` get one; `FIELD` widgets are accepted; widget ids are unique. Answers the draft as stored and the published config.',
          params: WorkbookParams,
          body: SaveDraftBody,
          response: { 200: Type.Ref('DashboardDraftResponse') },
          problems: ['DEPLOYMENT_NOT_FOUND', 'WORKBOOK_NOT_FOUND', 'FORBIDDEN', 'DEPLOYMENT_BUSY'],
        },
      },
      async (request) => service.saveDraft(request.caller, request.params.deploymentId, request.params.workbookId, request.body),
    );

    app.post(
      `${base}/publish`,
      {
        // No body publishes the saved draft.
        config: { optionalBody: true },
        schema: {
          operationId: 'publishDashboard',
          tags,
          summary: 'Publish the workbook’s dashboard as a new version (needs EDIT)',
          description:
            'Publishes `config`, or the saved draft when it is left out, as the next version: the version before it becomes `archived`, and the reports its widgets show (`config.reportId`) are frozen as `reportSnapshots` (VIEW on each needed). ' +
            'Every widget needs an `id` of at most 128 characters; a `FIELD` widget is a 400 naming it. The `publicId` stays the same across versions; `allowEmbed` belongs to the dashboard and is kept unless the body sets it (off on a first publication).',
          params: WorkbookParams,
          body: PublishBody,
          response: { 200: Type.Ref('Dashboard') },
          problems: ['DEPLOYMENT_NOT_FOUND', 'WORKBOOK_NOT_FOUND', 'FORBIDDEN', 'DEPLOYMENT_BUSY'],
        },
      },
      async (request) => service.publish(request.caller, request.params.deploymentId, request.params.workbookId, request.body ?? {}),
    );

    app.get(
      `${base}/dashboard/versions`,
      {
        schema: {
          operationId: 'listDashboardVersions',
          extension: true,
          tags,
          summary: 'The published versions of the workbook’s dashboard, newest first (extension; needs VIEW)',
          description:
            'Each item is a Dashboard: the current version is `published`, earlier ones `archived`. Empty before the first publication. Cursor paging with `first`/`after`.',
          params: WorkbookParams,
          querystring: VersionsQuery,
          response: { 200: Type.Ref('DashboardPage') },
          problems: ['DEPLOYMENT_NOT_FOUND', 'WORKBOOK_NOT_FOUND', 'FORBIDDEN', 'INVALID_CURSOR'],
        },
      },
      async (request) => service.versions(request.caller, request.params.deploymentId, request.params.workbookId, request.query),
    );

    app.post(
      `${base}/dashboard/ai-widget-thread`,
      {
        schema: {
          operationId: 'setDashboardAiWidgetThread',
          tags,
          summary: 'Store an AI-widget thread on the published dashboard (reference 8.G.4; needs VIEW)',
          description:
            'Stores only the thread id and the checksum for the widget, never the summary text, so a reload shows the regenerated result. ' +
            'Read-only viewers may: VIEW on the workbook suffices. 404 when the workbook has no published dashboard, or its published config no widget of this id. ' +
            'The Dashboard answered lists the stored threads in `aiWidgetThreads` (an extension).',
          params: WorkbookParams,
          body: AiWidgetThreadBody,
          response: { 200: Type.Ref('Dashboard') },
          problems: ['DEPLOYMENT_NOT_FOUND', 'WORKBOOK_NOT_FOUND', 'FORBIDDEN', 'DASHBOARD_NOT_FOUND', 'WIDGET_NOT_FOUND', 'DEPLOYMENT_BUSY'],
        },
      },
      async (request) => service.setAiWidgetThread(request.caller, request.params.deploymentId, request.params.workbookId, request.body),
    );

    app.patch(
      '/api/v1/embed/dashboard/:publicId',
      {
        schema: {
          operationId: 'setDashboardAllowEmbed',
          tags: ['Embedding'],
          summary: 'Switch signed embedding on or off for a dashboard (admin)',
          description:
            'With the switch off, signed embed sessions get 403 for this dashboard; dashboards shared with all embed users are not affected (reference 3.6). A key scoped to other deployments than the dashboard’s gets 403.',
          params: PublicIdParams,
          body: AllowEmbedBody,
          response: { 200: Type.Ref('DashboardAllowEmbed') },
          problems: ['DASHBOARD_NOT_FOUND', 'FORBIDDEN', 'KEY_SCOPE_FORBIDDEN', 'DEPLOYMENT_BUSY'],
        },
      },
      async (request) => service.setAllowEmbedByPublicId(request.caller, request.params.publicId, request.body.allowEmbed),
    );
  };
}
