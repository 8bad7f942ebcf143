import { createHash } from 'node:crypto';
import type { Caller } from '../../access/caller.js';
import type { Executor } from '../../db/tables.js';
import { snapshotQuery } from '../../render/widgets.js';
import type { DashboardControls } from '../../render/types.js';
import { ApiError } from '../../shared/problems.js';
import { embedSettings } from '../account/index.js';
import type { DataApiService } from '../data-api/index.js';
import type { EmbedPrincipal } from '../embed-sessions/index.js';
import { findWidget } from '../dashboards/index.js';
import type { Dashboard } from '../workspace/index.js';
import type { AgentMessage } from './agents.schemas.js';
import { ownedBy, type AgentsService } from './agents.service.js';
import type { AnswersService, Asker } from './answer.js';

/**
 * AI widgets of a published dashboard, summarised when a viewer looks at them (reference 8.G.4,
 * 4.15 `showAiWidgets`). An AI widget's `config` says what to summarise: `prompt` (what to say
 * about the data; a plain summary when absent), `reportId` (one of the dashboard's reports, whose
 * published snapshot runs with the viewer's own rows and the dashboard's controls) and `agentId`
 * (the agent that answers; the deployment's first agent when absent).
 *
 * The summary is an agent thread of the viewer's, written by the answering loop as the viewer, so
 * it can only say what the viewer could query. The dashboard keeps just the thread id and a
 * checksum of the prompt, agent and rows (8.G.4): a viewer whose rows and prompt are unchanged
 * since their own last summary gets that summary again without a model call; anything else is
 * answered afresh and stored. Another viewer's stored thread is never shown: it is theirs.
 */

/** Rows of the widget's report the model is given, and the bytes of their JSON at most. */
const SUMMARY_ROWS = 200;
const SUMMARY_BYTES = 16_000;
const DEFAULT_PROMPT = 'Summarise what this data shows in two or three sentences for someone looking at the dashboard: the main figures, trends and outliers.';

export interface WidgetSummary {
  threadId: string;
  checksum: string;
  /** False when the viewer's last summary still held (same prompt, agent and rows) and was answered again without the model. */
  regenerated: boolean;
  message: AgentMessage;
}

export interface WidgetSummaryDeps {
  db: Executor;
  agents: AgentsService;
  answers: AnswersService;
  dataApi: DataApiService;
  /** The published dashboard of a workbook for a console user: VIEW on the workbook checked. */
  publishedForUser: (caller: Caller, deploymentId: number, workbookId: number) => Promise<Dashboard>;
  /** The published dashboard an embed session may see (reference 4.18's rules). */
  publishedForEmbed: (principal: EmbedPrincipal, publicId: string) => Promise<Dashboard>;
  storeThread: (tenantId: number, workbookId: number, widgetId: string, thread: { threadId: string; checksum: string }) => Promise<unknown>;
}

/** Which dashboard: a workbook's, for a console user; a public id, for an embed session. */
export type WidgetRef = { workbookId: number; deploymentId: number } | { publicId: string };

type Config = Record<string, unknown>;

function rowsForModel(rows: Array<Record<string, unknown>>): string {
  let shown = rows.slice(0, SUMMARY_ROWS);
  let json = JSON.stringify(shown);
  while (json.length > SUMMARY_BYTES && shown.length > 1) {
    shown = shown.slice(0, Math.ceil(shown.length / 2));
    json = JSON.stringify(shown);
  }
  return shown.length < rows.length ? `${json}\n(${shown.length} of ${rows.length} rows shown)` : json;
}

export function widgetSummaries(deps: WidgetSummaryDeps) {
  const { agents, answers, dataApi } = deps;

  /** Whether the asker may have a summary answered afresh: an embed session's `showAiWidgets` (its own, else the account's), default yes. */
  async function mayRegenerate(asker: Asker): Promise<boolean> {
    if (asker.kind === 'user') return true;
    const pinned = asker.principal.claims.settings.showAiWidgets;
    if (typeof pinned === 'boolean') return pinned;
    return (await embedSettings(deps.db, asker.principal.tenantId)).showAiWidgets !== false;
  }

  async function dashboardFor(asker: Asker, ref: WidgetRef): Promise<Dashboard> {
    if (asker.kind === 'embed') {
      if (!('publicId' in ref))
        throw new ApiError(
          'FORBIDDEN',
          'An embed token summarises AI widgets of an embedded dashboard: POST /api/v1/embed/dashboard/{publicId}/ai-widgets/{widgetId}/summary.',
        );
      return deps.publishedForEmbed(asker.principal, ref.publicId);
    }
    if ('publicId' in ref) throw new ApiError('FORBIDDEN', 'This route takes an embed token (POST /api/v1/embed/session/token), not an API key.');
    return deps.publishedForUser(asker.caller, ref.deploymentId, ref.workbookId);
  }

  return {
    async summarize(asker: Asker, ref: WidgetRef, widgetId: string, controls: DashboardControls, signal?: AbortSignal): Promise<WidgetSummary> {
      // Access first: another tenant's or an unseen dashboard is a 404 whether or not AI is on.
      const dashboard = await dashboardFor(asker, ref);
      await answers.requireAi(asker);
      const widget = findWidget(dashboard.config.widgets ?? [], widgetId);
      if (!widget || widget.type !== 'AI')
        throw new ApiError('WIDGET_NOT_FOUND', `The published dashboard "${dashboard.publicId}" has no AI widget ${JSON.stringify(widgetId)}.`);
      const config = (typeof widget.config === 'object' && widget.config !== null ? widget.config : {}) as Config;
      const tenantId = asker.kind === 'user' ? asker.caller.actor.tenantId : asker.principal.tenantId;

      const agentId = typeof config.agentId === 'number' ? config.agentId : await agents.firstAgentId(tenantId, dashboard.deploymentId);
      if (agentId === null)
        throw new ApiError(
          'AGENT_NOT_FOUND',
          `AI widget ${JSON.stringify(widgetId)} names no agent and deployment ${dashboard.deploymentId} has none to answer it.`,
        );
      const prompt = typeof config.prompt === 'string' && config.prompt.trim() !== '' ? config.prompt.trim() : DEFAULT_PROMPT;

      // The rows the viewer sees: the widget's report, as published, with the dashboard's controls.
      let data: { title: string; rows: Array<Record<string, unknown>> } | null = null;
      if (typeof config.reportId === 'number') {
        const snapshot = dashboard.reportSnapshots.find((s) => s.reportId === config.reportId);
        if (!snapshot)
          throw new ApiError(
            'VALIDATION_FAILED',
            `AI widget ${JSON.stringify(widgetId)} summarises report ${config.reportId}, which was not published with this dashboard.`,
          );
        const request = snapshotQuery(snapshot, controls);
        if (request) {
          const result =
            asker.kind === 'user'
              ? await dataApi.run(asker.caller, dashboard.deploymentId, request)
              : await dataApi.runForEmbed(asker.tenant, asker.principal, request);
          data = { title: snapshot.title ?? snapshot.name ?? `report ${snapshot.reportId}`, rows: result.data };
        }
      }

      const checksum = createHash('sha256')
        .update(JSON.stringify({ agentId, prompt, rows: data?.rows ?? null }))
        .digest('hex');
      const stored = dashboard.aiWidgetThreads?.[widgetId];
      const owner = asker.kind === 'user' ? { userId: asker.caller.actor.userId } : await answers.embedOwner(asker.principal, dashboard.deploymentId);
      if (stored && stored.checksum === checksum) {
        const thread = await agents.findThread(stored.threadId);
        if (thread && thread.tenantId === tenantId && ownedBy({ user_id: thread.userId, embed_user_id: thread.embedUserId }, owner)) {
          const last = (await agents.messages(thread.id)).findLast((m) => m.role === 'assistant' && (m.usage as { failed?: boolean } | null)?.failed !== true);
          if (last) return { threadId: thread.id, checksum, regenerated: false, message: last };
        }
      }
      if (!(await mayRegenerate(asker)))
        throw new ApiError('FORBIDDEN', 'This embed session may not regenerate AI widgets (showAiWidgets is false); summaries stored before still render.');

      const question = data
        ? `${prompt}\n\nThe widget shows "${data.title}". Its rows (JSON):\n${rowsForModel(data.rows)}`
        : `${prompt}\n\n(This widget has no report: use the tools to find what to summarise.)`;
      const { thread, message } = await answers.ask(
        asker,
        { deploymentId: dashboard.deploymentId, agentId, threadId: null, question, ...(signal ? { signal } : {}) },
        () => undefined,
      );
      await deps.storeThread(tenantId, dashboard.workbookId, widgetId, { threadId: thread.id, checksum });
      return { threadId: thread.id, checksum, regenerated: true, message };
    },
  };
}
export type WidgetSummaries = ReturnType<typeof widgetSummaries>;
