import type { Caller } from '../../access/caller.js';
import type { Mailer } from '../../mail/index.js';
import { defineArea } from '../../platform/index.js';
import { aiSettingsArea } from '../ai-settings/index.js';
import { dashboardsArea, findPublishedInDeployment } from '../dashboards/index.js';
import { dataApiArea } from '../data-api/index.js';
import { embedSessionsArea } from '../embed-sessions/index.js';
import { ApiError } from '../../shared/problems.js';
import { reportsArea } from '../reports/index.js';
import { workbooksArea } from '../workbooks/index.js';
import { agentsRoutes } from './agents.routes.js';
import { widgetSummaryRoutes } from './widget-summary.routes.js';
import { agentSchemas } from './agents.schemas.js';
import { agentsService } from './agents.service.js';
import { answersService } from './answer.js';
import { chartChecker } from './chart.js';
import { taskRunner } from './task-runner.js';
import { AgentTaskScheduler, noModelRunner, type AgentTaskRunner } from './task-scheduler.js';
import { tasksService } from './tasks.service.js';
import { widgetSummaries } from './widget-summary.js';

export interface AgentsConfig {
  /** Runs one scheduled task; absent: the answering loop as the task's owner when `callerFor` is given, else every run fails with "No model provider is configured". */
  runner?: AgentTaskRunner;
  /** The caller of a user of a tenant, as if they had sent a request (the composition root's): whom a scheduled task runs as. */
  callerFor?: (tenantId: number, userId: number, credentialKind?: string) => Promise<Caller>;
  /** Where a scheduled task's answer is mailed to its owner; absent or null: not mailed. */
  mailer?: Mailer | null;
  /** How often due tasks are looked for (ms); absent: 30 s. */
  tickMs?: number;
}

/**
 * Agents of a deployment: the agents, their chat threads (written by the answering loop, answer.ts),
 * starter prompts and scheduled agent tasks, whose due-time loop is a schedule of the jobs service
 * that claims each occurrence once across processes.
 */
export const agentsArea = defineArea('agents', ({ platform: { store, jobs, now, audit, onError }, use }, config: AgentsConfig = {}) => {
  const agents = agentsService(store, { now, audit });
  const { ai } = use(aiSettingsArea);
  const { dataApi } = use(dataApiArea);
  const { reports } = use(reportsArea);
  const { dashboards } = use(dashboardsArea);
  const { workbooks } = use(workbooksArea);
  const answers = answersService({
    db: store.db,
    audit,
    agents,
    ai,
    dataApi,
    checkChart: chartChecker(jobs.workers),
    ...(config.callerFor ? { callerFor: config.callerFor } : {}),
    authoring: {
      createReport: async (caller, deploymentId, publicId, input) => (await reports.upsert(caller, deploymentId, publicId, input)).report,
      saveDraft: (caller, deploymentId, workbookId, input) => dashboards.saveDraft(caller, deploymentId, workbookId, input),
      workbook: (caller, deploymentId, workbookId) => workbooks.get(caller, deploymentId, workbookId),
    },
  });
  const { embedDashboards } = use(embedSessionsArea);
  const summaries = widgetSummaries({
    db: store.db,
    agents,
    answers,
    dataApi,
    publishedForUser: async (caller, deploymentId, workbookId) => {
      await workbooks.get(caller, deploymentId, workbookId);
      const dashboard = await findPublishedInDeployment(store.db, caller.actor.tenantId, deploymentId, { workbookId });
      if (!dashboard) throw new ApiError('DASHBOARD_NOT_FOUND', `Workbook ${workbookId} has no published dashboard.`);
      return dashboard;
    },
    publishedForEmbed: (principal, publicId) => embedDashboards.get(principal, publicId),
    storeThread: (tenantId, workbookId, widgetId, thread) => dashboards.storeAiWidgetThread(tenantId, workbookId, widgetId, thread),
  });
  const agentTasks = tasksService(store, { now, audit, jobs });
  const runner =
    config.runner ?? (config.callerFor ? taskRunner({ answers, callerFor: config.callerFor, mailer: config.mailer ?? null, onError }) : noModelRunner);
  const agentTaskScheduler = new AgentTaskScheduler(store, jobs, agentTasks, {
    now,
    audit,
    runner,
    ...(config.tickMs !== undefined ? { tickMs: config.tickMs } : {}),
    onError: (error) => onError(error, 'agents: claiming due scheduled tasks'),
  });
  return {
    services: { agents, agentTasks, agentTaskScheduler, answers, summaries },
    schemas: agentSchemas,
    routes: () => [agentsRoutes(agents, agentTasks, answers), widgetSummaryRoutes(summaries)],
  };
});
