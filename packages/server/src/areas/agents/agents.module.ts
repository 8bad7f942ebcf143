import { defineArea } from '../../platform/index.js';
import { agentsRoutes } from './agents.routes.js';
import { agentSchemas } from './agents.schemas.js';
import { agentsService } from './agents.service.js';
import { AgentTaskScheduler, noModelRunner, type AgentTaskRunner } from './task-scheduler.js';
import { tasksService } from './tasks.service.js';

export interface AgentsConfig {
  /** Runs one scheduled task (the answering loop); absent: every run fails with "No model provider is configured". */
  runner?: AgentTaskRunner;
  /** How often due tasks are looked for (ms); absent: 30 s. */
  tickMs?: number;
}

/**
 * Agents of a deployment: the agents, their chat threads (stored here; the answering loop writes
 * them through `agents`), starter prompts and scheduled agent tasks, whose due-time loop is a
 * schedule of the jobs service that claims each occurrence once across processes.
 */
export const agentsArea = defineArea('agents', ({ platform: { store, jobs, now, audit, onError } }, config: AgentsConfig = {}) => {
  const agents = agentsService(store, { now, audit });
  const agentTasks = tasksService(store, { now, audit, jobs });
  const agentTaskScheduler = new AgentTaskScheduler(store, jobs, agentTasks, {
    now,
    audit,
    runner: config.runner ?? noModelRunner,
    ...(config.tickMs !== undefined ? { tickMs: config.tickMs } : {}),
    onError: (error) => onError(error, 'agents: claiming due scheduled tasks'),
  });
  return {
    services: { agents, agentTasks, agentTaskScheduler },
    schemas: agentSchemas,
    routes: () => [agentsRoutes(agents, agentTasks)],
  };
});
