import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { DeploymentParams } from '../../shared/schemas.js';
import {
  AgentParams,
  CreateAgentBody,
  CreateTaskBody,
  ListQuery,
  TaskParams,
  ThreadParams,
  ThreadsQuery,
  UpdateAgentBody,
  UpdateTaskBody,
} from './agents.schemas.js';
import type { AgentsService } from './agents.service.js';
import type { TasksService } from './tasks.service.js';

const tags = ['Agents'];
const base = '/api/v1/deployments/:deploymentId';
const COMMON = ['FORBIDDEN', 'DEPLOYMENT_NOT_FOUND'] as const;
const READ = 'Needs DeploymentAgentRead: VIEW on the deployment, any role.';
const WRITE = 'Needs AgentUpdate: EDIT on the deployment and the role DEVELOPER or above.';

/** A deployment's agents, their chat threads, starter prompts (reference 9) and scheduled agent tasks (reference 9). */
export function agentsRoutes(agents: AgentsService, tasks: TasksService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      `${base}/agents`,
      {
        schema: {
          operationId: 'listAgents',
          tags,
          summary: "Extension: list a deployment's agents, newest first",
          description: READ,
          params: DeploymentParams,
          querystring: ListQuery,
          response: { 200: Type.Ref('AgentPage') },
          problems: [...COMMON, 'INVALID_CURSOR'],
        },
      },
      async (request) => agents.list(request.caller, request.params.deploymentId, request.query),
    );

    app.post(
      `${base}/agents`,
      {
        schema: {
          operationId: 'createAgent',
          tags,
          summary: 'Extension: create an agent',
          description: `${WRITE} The name is unique in the deployment (409). \`members\` null or left out: every member the caller can see.`,
          params: DeploymentParams,
          body: CreateAgentBody,
          response: { 200: Type.Ref('Agent') },
          problems: [...COMMON, 'KEY_SCOPE_FORBIDDEN', 'AGENT_NAME_TAKEN', 'DEPLOYMENT_BUSY'],
        },
      },
      async (request) => agents.create(request.caller, request.params.deploymentId, request.body),
    );

    app.get(
      `${base}/agents/:agentId`,
      {
        schema: {
          operationId: 'getAgent',
          tags,
          summary: 'Extension: get an agent',
          description: READ,
          params: AgentParams,
          response: { 200: Type.Ref('Agent') },
          problems: [...COMMON, 'AGENT_NOT_FOUND'],
        },
      },
      async (request) => agents.get(request.caller, request.params.deploymentId, request.params.agentId),
    );

    app.put(
      `${base}/agents/:agentId`,
      {
        schema: {
          operationId: 'updateAgent',
          tags,
          summary: 'Extension: change an agent; fields left out stay',
          description: WRITE,
          params: AgentParams,
          body: UpdateAgentBody,
          response: { 200: Type.Ref('Agent') },
          problems: [...COMMON, 'KEY_SCOPE_FORBIDDEN', 'AGENT_NOT_FOUND', 'AGENT_NAME_TAKEN', 'DEPLOYMENT_BUSY'],
        },
      },
      async (request) => agents.update(request.caller, request.params.deploymentId, request.params.agentId, request.body),
    );

    app.delete(
      `${base}/agents/:agentId`,
      {
        schema: {
          operationId: 'deleteAgent',
          tags,
          summary: 'Extension: delete an agent with its chat threads and scheduled tasks',
          description: WRITE,
          params: AgentParams,
          response: { 204: Type.Null({ description: 'Deleted' }) },
          problems: [...COMMON, 'KEY_SCOPE_FORBIDDEN', 'AGENT_NOT_FOUND', 'DEPLOYMENT_BUSY'],
        },
      },
      async (request, reply) => {
        await agents.remove(request.caller, request.params.deploymentId, request.params.agentId);
        return reply.code(204).send(null);
      },
    );

    app.get(
      `${base}/agent-suggestions`,
      {
        schema: {
          operationId: 'listAgentSuggestions',
          tags,
          summary: 'Agent starter prompts: those of the agents the caller may use (reference 9)',
          description: READ,
          params: DeploymentParams,
          response: { 200: Type.Ref('AgentSuggestions') },
          problems: [...COMMON],
        },
      },
      async (request) => agents.suggestions(request.caller, request.params.deploymentId),
    );

    app.get(
      `${base}/agents/:agentId/threads`,
      {
        schema: {
          operationId: 'listAgentThreads',
          tags,
          summary: "Extension: the caller's chat threads with an agent, newest first",
          description: `${READ} \`userId\` lists another user's threads: admins only (ChatHistoryRead).`,
          params: AgentParams,
          querystring: ThreadsQuery,
          response: { 200: Type.Ref('AgentThreadPage') },
          problems: [...COMMON, 'AGENT_NOT_FOUND', 'INVALID_CURSOR'],
        },
      },
      async (request) => agents.threads(request.caller, request.params.deploymentId, request.params.agentId, request.query),
    );

    app.get(
      `${base}/threads/:threadId`,
      {
        schema: {
          operationId: 'getAgentThread',
          tags,
          summary: 'Extension: a chat thread with its messages and their steps',
          description: `${READ} Another user's thread is a 404, except to admins (ChatHistoryRead).`,
          params: ThreadParams,
          response: { 200: Type.Ref('AgentThreadWithMessages') },
          problems: [...COMMON, 'AGENT_THREAD_NOT_FOUND'],
        },
      },
      async (request) => agents.thread(request.caller, request.params.deploymentId, request.params.threadId),
    );

    const TASK = `${READ} A task is its creator's: another user's is a 404, except to admins, who see and change every task.`;

    app.get(
      `${base}/scheduled-tasks`,
      {
        schema: {
          operationId: 'listScheduledTasks',
          tags,
          summary: "Scheduled agent tasks: the caller's (an admin's: all) in the deployment, newest first (reference 9)",
          description: READ,
          params: DeploymentParams,
          querystring: ListQuery,
          response: { 200: Type.Ref('ScheduledTaskPage') },
          problems: [...COMMON, 'INVALID_CURSOR'],
        },
      },
      async (request) => tasks.list(request.caller, request.params.deploymentId, request.query),
    );

    app.post(
      `${base}/scheduled-tasks`,
      {
        schema: {
          operationId: 'createScheduledTask',
          tags,
          summary: 'Schedule an agent task (reference 9)',
          description:
            `${READ} \`cron\` is five fields and may fire at most hourly (its minute is one value; 400 otherwise); \`timezone\` an IANA zone (default UTC). ` +
            'A user may have at most 20 active tasks: one more is a 409.',
          params: DeploymentParams,
          body: CreateTaskBody,
          response: { 200: Type.Ref('ScheduledTask') },
          problems: [...COMMON, 'KEY_SCOPE_FORBIDDEN', 'AGENT_NOT_FOUND', 'AGENT_TASK_LIMIT', 'DEPLOYMENT_BUSY'],
        },
      },
      async (request) => tasks.create(request.caller, request.params.deploymentId, request.body),
    );

    app.get(
      `${base}/scheduled-tasks/:taskId`,
      {
        schema: {
          operationId: 'getScheduledTask',
          tags,
          summary: 'Get a scheduled agent task (reference 9)',
          description: TASK,
          params: TaskParams,
          response: { 200: Type.Ref('ScheduledTask') },
          problems: [...COMMON, 'AGENT_TASK_NOT_FOUND'],
        },
      },
      async (request) => tasks.get(request.caller, request.params.deploymentId, request.params.taskId),
    );

    app.put(
      `${base}/scheduled-tasks/:taskId`,
      {
        schema: {
          operationId: 'updateScheduledTask',
          tags,
          summary: 'Change a scheduled agent task; fields left out stay (reference 9)',
          description: `${TASK} Switching a task on counts against its owner's 20 active tasks (409).`,
          params: TaskParams,
          body: UpdateTaskBody,
          response: { 200: Type.Ref('ScheduledTask') },
          problems: [...COMMON, 'KEY_SCOPE_FORBIDDEN', 'AGENT_TASK_NOT_FOUND', 'AGENT_NOT_FOUND', 'AGENT_TASK_LIMIT', 'DEPLOYMENT_BUSY'],
        },
      },
      async (request) => tasks.update(request.caller, request.params.deploymentId, request.params.taskId, request.body),
    );

    app.delete(
      `${base}/scheduled-tasks/:taskId`,
      {
        schema: {
          operationId: 'deleteScheduledTask',
          tags,
          summary: 'Delete a scheduled agent task with its runs (reference 9)',
          description: TASK,
          params: TaskParams,
          response: { 204: Type.Null({ description: 'Deleted' }) },
          problems: [...COMMON, 'KEY_SCOPE_FORBIDDEN', 'AGENT_TASK_NOT_FOUND', 'DEPLOYMENT_BUSY'],
        },
      },
      async (request, reply) => {
        await tasks.remove(request.caller, request.params.deploymentId, request.params.taskId);
        return reply.code(204).send(null);
      },
    );

    app.post(
      `${base}/scheduled-tasks/:taskId/run`,
      {
        config: { optionalBody: true },
        schema: {
          operationId: 'runScheduledTask',
          tags,
          summary: 'Run a scheduled agent task now (reference 9)',
          description: `${TASK} Answers the run, queued, with the id of the job that runs it.`,
          params: TaskParams,
          response: { 202: Type.Ref('ScheduledTaskRun') },
          problems: [...COMMON, 'KEY_SCOPE_FORBIDDEN', 'AGENT_TASK_NOT_FOUND', 'DEPLOYMENT_BUSY'],
        },
      },
      async (request, reply) => reply.code(202).send(await tasks.runNow(request.caller, request.params.deploymentId, request.params.taskId)),
    );

    app.get(
      `${base}/scheduled-tasks/:taskId/runs`,
      {
        schema: {
          operationId: 'listScheduledTaskRuns',
          tags,
          summary: "A scheduled agent task's runs, newest first; only the 50 most recent are kept (reference 9)",
          description: TASK,
          params: TaskParams,
          response: { 200: Type.Ref('ScheduledTaskRuns') },
          problems: [...COMMON, 'AGENT_TASK_NOT_FOUND'],
        },
      },
      async (request) => tasks.runs(request.caller, request.params.deploymentId, request.params.taskId),
    );
  };
}
