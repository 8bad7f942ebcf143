import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { OutgoingHttpHeaders } from 'node:http';
import { Type } from 'typebox';
import { ApiError, PROBLEMS, problemType } from '../../shared/problems.js';
import { DeploymentParams } from '../../shared/schemas.js';
import {
  AgentParams,
  AgentThreadParams,
  AskBody,
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
import { problemOf, type AnswerEvent, type AnswersService, type Asker } from './answer.js';
import type { TasksService } from './tasks.service.js';

const tags = ['Agents'];
const base = '/api/v1/deployments/:deploymentId';
const COMMON = ['FORBIDDEN', 'DEPLOYMENT_NOT_FOUND'] as const;
const READ = 'Needs DeploymentAgentRead: VIEW on the deployment, any role.';
const WRITE = 'Needs AgentUpdate: EDIT on the deployment and the role DEVELOPER or above.';
const EMBED =
  'An embed token of this deployment works too (as `Bearer`), while its session allows AI (`allowAi`: the session’s, else the account’s embed settings, else the AI settings’ `enabled`); 403 otherwise.';

/** The `text/event-stream` answer of the thread routes, described in the OpenAPI document (docs/api/agents.md, "Answers"). */
const EVENTS = [
  'Server-Sent Events, each `event: <name>` and one `data: <json>` line:',
  '`thread` `{threadId, seq}` first (the question’s seq);',
  '`step` one of `{kind: "members", members: [{name, title, type, cube}]}`, `{kind: "query", query}`, `{kind: "rows", columns, rows (at most 100), total, truncated}`, `{kind: "chart", spec}` (Vega-Lite, its data inline), `{kind: "refused", tool, detail}`, `{kind: "saved", what: "report" | "dashboard-draft", id, name}` (a report or a workbook’s dashboard draft saved as the caller);',
  '`text` `{delta}`;',
  '`done` `{message, usage: {promptTokens, completionTokens}}` last;',
  'or, when the answer fails after it began, `error` with the problem details object, last.',
].join(' ');

const ASK_PROBLEMS = [
  ...COMMON,
  'KEY_SCOPE_FORBIDDEN',
  'AGENT_NOT_FOUND',
  'AI_BUDGET_EXCEEDED',
  'AI_PROVIDER_UNAVAILABLE',
  'AI_NOT_CONFIGURED',
  'RUNTIME_UNAVAILABLE',
] as const;

/** Who asks: the request's caller, or its embed session. */
function askerOf(request: FastifyRequest): Asker {
  return request.embed ? { kind: 'embed', tenant: request.tenant, principal: request.embed } : { kind: 'user', caller: request.caller };
}

/**
 * Answers a question on a thread route: as Server-Sent Events when the client accepts
 * `text/event-stream`, else as JSON once complete. Nothing is written before the answer's first
 * event, so a refusal or a provider that fails at once is an ordinary problem response; after
 * that, a failure is the stream's last event, `error`. A client that goes away aborts the model call.
 */
async function answer(
  answers: AnswersService,
  request: FastifyRequest,
  reply: FastifyReply,
  params: { deploymentId: number; agentId: number; threadId: string | null },
) {
  const question = (request.body as { question: string }).question;
  const stream = (request.headers.accept ?? '').includes('text/event-stream');
  const gone = new AbortController();
  reply.raw.on('close', () => {
    if (!reply.raw.writableEnded) gone.abort(new Error('The client closed the connection.'));
  });
  let open = false;
  const write = (event: string, data: unknown) => {
    // One event per write, sent at once: JSON never holds a raw line break, so `data` is one line.
    if (!reply.raw.destroyed) reply.raw.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  };
  const emit = (event: AnswerEvent) => {
    if (!stream) return;
    if (!open) {
      open = true;
      reply.hijack();
      reply.raw.writeHead(200, {
        ...(reply.getHeaders() as OutgoingHttpHeaders),
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        'x-accel-buffering': 'no',
      });
      reply.raw.flushHeaders();
    }
    write(event.event, event.data);
  };
  try {
    const result = await answers.ask(askerOf(request), { ...params, question, signal: gone.signal }, emit);
    if (!open) return result;
  } catch (error) {
    // Nobody is left to answer: the connection is closed, not a failure to report.
    if (!open && gone.signal.aborted) {
      reply.hijack();
      reply.raw.destroy();
      return reply;
    }
    if (!open) throw error;
    const { code, detail } = problemOf(error);
    const { status, title } = PROBLEMS[code];
    write('error', { type: problemType(code), title, status, detail, code, message: detail, requestId: request.id });
    if (code === 'INTERNAL' && !gone.signal.aborted) request.log.error({ err: error }, 'an answer failed after it began');
  }
  reply.raw.end();
  return reply;
}

/** A deployment's agents, their chat threads, starter prompts (reference 9) and scheduled agent tasks (reference 9). */
export function agentsRoutes(agents: AgentsService, tasks: TasksService, answers: AnswersService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      `${base}/agents`,
      {
        schema: {
          operationId: 'listAgents',
          extension: true,
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
          extension: true,
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
          extension: true,
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
          extension: true,
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
          extension: true,
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
        config: { credential: 'embed' },
        schema: {
          operationId: 'listAgentThreads',
          extension: true,
          tags,
          summary: "Extension: the caller's chat threads with an agent, newest first",
          description: `${READ} \`userId\` lists another user's threads: admins only (ChatHistoryRead). ${EMBED} An embed session lists its own threads.`,
          params: AgentParams,
          querystring: ThreadsQuery,
          response: { 200: Type.Ref('AgentThreadPage') },
          problems: [...COMMON, 'AGENT_NOT_FOUND', 'INVALID_CURSOR'],
        },
      },
      async (request) => {
        const { deploymentId, agentId } = request.params;
        if (request.embed === null) return agents.threads(request.caller, deploymentId, agentId, request.query);
        if (request.query.userId !== undefined) throw new ApiError('FORBIDDEN', "An embed session lists only its own threads; userId is for admins' API keys.");
        const owner = await answers.embedOwner(request.embed, deploymentId);
        return agents.threadsOf(request.embed.tenantId, deploymentId, agentId, owner, { first: request.query.first, after: request.query.after });
      },
    );

    app.post(
      `${base}/agents/:agentId/threads`,
      {
        config: { credential: 'embed' },
        schema: {
          operationId: 'askAgent',
          extension: true,
          tags,
          summary: 'Extension: ask an agent a question in a new chat thread; the answer streams as Server-Sent Events with Accept: text/event-stream',
          description: `${READ} ${EMBED} Every query runs as the caller, with their own access. Without \`Accept: text/event-stream\` the answer comes as JSON once complete. ${EVENTS}`,
          params: AgentParams,
          body: AskBody,
          response: {
            200: {
              description: 'The answer: JSON once complete, or a stream of events.',
              content: {
                'application/json': { schema: Type.Ref('AgentAnswer') },
                'text/event-stream': { schema: { type: 'string', description: EVENTS } },
              },
            },
          },
          problems: [...ASK_PROBLEMS],
        },
      },
      async (request, reply) => answer(answers, request, reply, { ...request.params, threadId: null }),
    );

    app.post(
      `${base}/agents/:agentId/threads/:threadId/messages`,
      {
        config: { credential: 'embed' },
        schema: {
          operationId: 'continueAgentThread',
          extension: true,
          tags,
          summary: 'Extension: ask a follow-up question in one of your chat threads; streams as askAgent does',
          description: `${READ} ${EMBED} The thread must be the caller’s own (404 otherwise, admins included). ${EVENTS}`,
          params: AgentThreadParams,
          body: AskBody,
          response: {
            200: {
              description: 'The answer: JSON once complete, or a stream of events.',
              content: {
                'application/json': { schema: Type.Ref('AgentAnswer') },
                'text/event-stream': { schema: { type: 'string', description: EVENTS } },
              },
            },
          },
          problems: [...ASK_PROBLEMS, 'AGENT_THREAD_NOT_FOUND'],
        },
      },
      async (request, reply) => answer(answers, request, reply, request.params),
    );

    app.get(
      `${base}/threads/:threadId`,
      {
        config: { credential: 'embed' },
        schema: {
          operationId: 'getAgentThread',
          extension: true,
          tags,
          summary: 'Extension: a chat thread with its messages and their steps',
          description: `${READ} Another user's thread is a 404, except to admins (ChatHistoryRead). ${EMBED} An embed session reads its own threads.`,
          params: ThreadParams,
          response: { 200: Type.Ref('AgentThreadWithMessages') },
          problems: [...COMMON, 'AGENT_THREAD_NOT_FOUND'],
        },
      },
      async (request) => {
        const { deploymentId, threadId } = request.params;
        if (request.embed === null) return agents.thread(request.caller, deploymentId, threadId);
        return agents.threadOf(request.embed.tenantId, deploymentId, await answers.embedOwner(request.embed, deploymentId), threadId);
      },
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
