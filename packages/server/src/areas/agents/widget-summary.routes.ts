import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { ApiError } from '../../shared/problems.js';
import { Type } from 'typebox';
import { EmbedWidgetParams, WidgetSummaryBody, WorkbookWidgetParams, type WidgetSummaryInput } from './agents.schemas.js';
import type { Asker } from './answer.js';
import type { WidgetSummaries } from './widget-summary.js';

const PROBLEMS = [
  'FORBIDDEN',
  'DEPLOYMENT_NOT_FOUND',
  'WORKBOOK_NOT_FOUND',
  'DASHBOARD_NOT_FOUND',
  'WIDGET_NOT_FOUND',
  'AGENT_NOT_FOUND',
  'VALIDATION_FAILED',
  'AI_BUDGET_EXCEEDED',
  'AI_PROVIDER_UNAVAILABLE',
  'AI_NOT_CONFIGURED',
  'RUNTIME_UNAVAILABLE',
] as const;

const HOW =
  'The widget’s `config` says what to summarise: `prompt` (else a plain summary), `reportId` (a report published with the dashboard: its query runs with the caller’s own rows and the controls sent) and `agentId` (else the deployment’s first agent). ' +
  'The summary is a chat thread of the caller’s, answered as the caller; the dashboard keeps its thread id and checksum (reference 8.G.4). When the caller’s last summary of the widget has the same checksum, it is answered again without the model (`regenerated: false`).';

function controlsOf(body: WidgetSummaryInput | undefined) {
  return { filters: body?.filters ?? null, timeGrains: body?.timeGrains ?? null, memberSwitchers: body?.memberSwitchers ?? null };
}

/** A signal aborted when the client goes away, so a summary nobody waits for stops calling the model. */
function goneSignal(reply: FastifyReply): AbortSignal {
  const gone = new AbortController();
  reply.raw.on('close', () => {
    if (!reply.raw.writableEnded) gone.abort(new Error('The client closed the connection.'));
  });
  return gone.signal;
}

/** AI widgets summarised at view time: a console user's route under the workbook, an embed session's under the embedded dashboard. */
export function widgetSummaryRoutes(summaries: WidgetSummaries): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/api/v1/deployments/:deploymentId/workbooks/:workbookId/dashboard/ai-widgets/:widgetId/summary',
      {
        schema: {
          operationId: 'summarizeDashboardAiWidget',
          extension: true,
          tags: ['Agents'],
          summary: 'Extension: the summary of an AI widget of the workbook’s published dashboard, for the caller',
          description: `Needs VIEW on the workbook and AI on for the account. ${HOW}`,
          params: WorkbookWidgetParams,
          body: Type.Optional(WidgetSummaryBody),
          response: { 200: Type.Ref('AiWidgetSummary') },
          problems: [...PROBLEMS],
        },
      },
      async (request, reply) => {
        const asker: Asker = { kind: 'user', caller: request.caller };
        const { deploymentId, workbookId, widgetId } = request.params;
        return summaries.summarize(asker, { deploymentId, workbookId }, widgetId, controlsOf(request.body), goneSignal(reply));
      },
    );

    app.post(
      '/api/v1/embed/dashboard/:publicId/ai-widgets/:widgetId/summary',
      {
        config: { credential: 'embed' },
        schema: {
          operationId: 'summarizeEmbedDashboardAiWidget',
          extension: true,
          tags: ['Embedding'],
          summary: 'Extension: the summary of an AI widget of an embedded dashboard, for the embed session’s user',
          description: `An embed token (API keys get 403) of a session that may see the dashboard (reference 4.18) and allows AI (\`allowAi\`, 403 otherwise). With \`showAiWidgets: false\` a stored summary still answers, and one that would have to be made afresh is a 403. ${HOW}`,
          params: EmbedWidgetParams,
          body: Type.Optional(WidgetSummaryBody),
          response: { 200: Type.Ref('AiWidgetSummary') },
          problems: [...PROBLEMS],
        },
      },
      async (request, reply) => {
        if (request.embed === null) throw new ApiError('FORBIDDEN', 'This route takes an embed token (POST /api/v1/embed/session/token), not an API key.');
        const asker: Asker = { kind: 'embed', tenant: request.tenant, principal: request.embed };
        return summaries.summarize(asker, { publicId: request.params.publicId }, request.params.widgetId, controlsOf(request.body), goneSignal(reply));
      },
    );
  };
}
