import { unwrap } from './errors.js';
import { DEFAULT_PAGE_SIZE, paginate, type ListOptions, type RawClient } from './pagination.js';
import type {
  Agent,
  AgentAnswer,
  AgentSuggestion,
  AgentThread,
  AgentThreadWithMessages,
  AiSettings,
  AiUsage,
  CreateAgentInput,
  CreateScheduledTaskInput,
  ScheduledTask,
  ScheduledTaskRun,
  UpdateAgentInput,
  UpdateAiSettingsInput,
  UpdateScheduledTaskInput,
} from './types.js';

type Signal = { signal?: AbortSignal };

/** A deployment's agents, their starter prompts and the caller's chat threads with them. */
export interface Agents {
  /** Newest first. */
  list(deploymentId: number, options?: ListOptions): AsyncIterable<Agent>;
  get(deploymentId: number, agentId: number, options?: Signal): Promise<Agent>;
  /** Needs EDIT on the deployment and the role DEVELOPER or above; the name is unique in the deployment (409). */
  create(deploymentId: number, input: CreateAgentInput, options?: Signal): Promise<Agent>;
  /** Fields left out stay. */
  update(deploymentId: number, agentId: number, input: UpdateAgentInput, options?: Signal): Promise<Agent>;
  /** Deletes the agent with its threads and scheduled tasks. */
  delete(deploymentId: number, agentId: number, options?: Signal): Promise<void>;
  /** The starter prompts of every agent the caller may use, agent by agent (oldest agent first). */
  suggestions(deploymentId: number, options?: Signal): Promise<AgentSuggestion[]>;
  /** The caller's threads with an agent (`userId`: another user's, admins only), newest first. */
  threads(deploymentId: number, agentId: number, query?: { userId?: number }, options?: ListOptions): AsyncIterable<AgentThread>;
  /**
   * Asks a question (in `threadId`'s thread, else a new one) and waits for the whole answer: the
   * thread and the stored message. `chat` streams the same answer as it is written.
   */
  ask(deploymentId: number, agentId: number, question: string, options?: Signal & { threadId?: string }): Promise<AgentAnswer>;
  /** A thread with its messages in order. */
  thread(deploymentId: number, threadId: string, options?: Signal): Promise<AgentThreadWithMessages>;
}

/** Scheduled agent tasks: the caller's own (an admin's: everyone's), and their runs (reference 9). */
export interface ScheduledTasks {
  /** Newest first. */
  list(deploymentId: number, options?: ListOptions): AsyncIterable<ScheduledTask>;
  get(deploymentId: number, taskId: number, options?: Signal): Promise<ScheduledTask>;
  /** `cron` may fire at most hourly; at most 20 active tasks per user (409 past that). */
  create(deploymentId: number, input: CreateScheduledTaskInput, options?: Signal): Promise<ScheduledTask>;
  /** Fields left out stay. */
  update(deploymentId: number, taskId: number, input: UpdateScheduledTaskInput, options?: Signal): Promise<ScheduledTask>;
  delete(deploymentId: number, taskId: number, options?: Signal): Promise<void>;
  /** Runs the task now: the run, queued, with the id of the job that runs it. */
  run(deploymentId: number, taskId: number, options?: Signal): Promise<ScheduledTaskRun>;
  /** The task's runs, newest first (the 50 most recent are kept). */
  runs(deploymentId: number, taskId: number, options?: Signal): Promise<ScheduledTaskRun[]>;
}

/** The account's AI settings and usage (admin). */
export interface Ai {
  /** The settings with defaults applied. */
  settings(options?: Signal): Promise<AiSettings>;
  /** A merge of the keys sent (needs an unscoped key); answers every setting after the change. */
  updateSettings(input: UpdateAiSettingsInput, options?: Signal): Promise<AiSettings>;
  /** Tokens and answers per user and embed user in `month` (`YYYY-MM`, UTC; default the current one). */
  usage(query?: { month?: string }, options?: Signal): Promise<AiUsage>;
}

const withSignal = (signal: AbortSignal | undefined) => (signal ? { signal } : {});
const AGENTS = '/api/v1/deployments/{deploymentId}/agents' as const;
const AGENT = '/api/v1/deployments/{deploymentId}/agents/{agentId}' as const;
const TASKS = '/api/v1/deployments/{deploymentId}/scheduled-tasks' as const;
const TASK = '/api/v1/deployments/{deploymentId}/scheduled-tasks/{taskId}' as const;

export function createAgents(api: RawClient): { agents: Agents; scheduledTasks: ScheduledTasks; ai: Ai } {
  const agents: Agents = {
    list: (deploymentId, { signal } = {}) =>
      paginate(async (after) =>
        unwrap(await api.GET(AGENTS, { params: { path: { deploymentId }, query: { first: DEFAULT_PAGE_SIZE, after } }, ...withSignal(signal) })),
      ),
    get: async (deploymentId, agentId, { signal } = {}) => unwrap(await api.GET(AGENT, { params: { path: { deploymentId, agentId } }, ...withSignal(signal) })),
    create: async (deploymentId, input, { signal } = {}) =>
      unwrap(await api.POST(AGENTS, { params: { path: { deploymentId } }, body: input, ...withSignal(signal) })),
    update: async (deploymentId, agentId, input, { signal } = {}) =>
      unwrap(await api.PUT(AGENT, { params: { path: { deploymentId, agentId } }, body: input, ...withSignal(signal) })),
    async delete(deploymentId, agentId, { signal } = {}) {
      unwrap(await api.DELETE(AGENT, { params: { path: { deploymentId, agentId } }, ...withSignal(signal) }));
    },
    suggestions: async (deploymentId, { signal } = {}) =>
      unwrap(await api.GET('/api/v1/deployments/{deploymentId}/agent-suggestions', { params: { path: { deploymentId } }, ...withSignal(signal) })).items,
    threads: (deploymentId, agentId, query, { signal } = {}) =>
      paginate(async (after) =>
        unwrap(
          await api.GET(`${AGENT}/threads`, {
            params: { path: { deploymentId, agentId }, query: { ...query, first: DEFAULT_PAGE_SIZE, after } },
            ...withSignal(signal),
          }),
        ),
      ),
    async ask(deploymentId, agentId, question, { signal, threadId } = {}) {
      // Without `Accept: text/event-stream` the server answers JSON once the answer is complete.
      const answer =
        threadId === undefined
          ? unwrap(await api.POST(`${AGENT}/threads`, { params: { path: { deploymentId, agentId } }, body: { question }, ...withSignal(signal) }))
          : unwrap(
              await api.POST(`${AGENT}/threads/{threadId}/messages`, {
                params: { path: { deploymentId, agentId, threadId } },
                body: { question },
                ...withSignal(signal),
              }),
            );
      return answer as AgentAnswer;
    },
    thread: async (deploymentId, threadId, { signal } = {}) =>
      unwrap(await api.GET('/api/v1/deployments/{deploymentId}/threads/{threadId}', { params: { path: { deploymentId, threadId } }, ...withSignal(signal) })),
  };
  const scheduledTasks: ScheduledTasks = {
    list: (deploymentId, { signal } = {}) =>
      paginate(async (after) =>
        unwrap(await api.GET(TASKS, { params: { path: { deploymentId }, query: { first: DEFAULT_PAGE_SIZE, after } }, ...withSignal(signal) })),
      ),
    get: async (deploymentId, taskId, { signal } = {}) => unwrap(await api.GET(TASK, { params: { path: { deploymentId, taskId } }, ...withSignal(signal) })),
    create: async (deploymentId, input, { signal } = {}) =>
      unwrap(await api.POST(TASKS, { params: { path: { deploymentId } }, body: input, ...withSignal(signal) })),
    update: async (deploymentId, taskId, input, { signal } = {}) =>
      unwrap(await api.PUT(TASK, { params: { path: { deploymentId, taskId } }, body: input, ...withSignal(signal) })),
    async delete(deploymentId, taskId, { signal } = {}) {
      unwrap(await api.DELETE(TASK, { params: { path: { deploymentId, taskId } }, ...withSignal(signal) }));
    },
    run: async (deploymentId, taskId, { signal } = {}) =>
      unwrap(await api.POST(`${TASK}/run`, { params: { path: { deploymentId, taskId } }, ...withSignal(signal) })),
    runs: async (deploymentId, taskId, { signal } = {}) =>
      unwrap(await api.GET(`${TASK}/runs`, { params: { path: { deploymentId, taskId } }, ...withSignal(signal) })).items,
  };
  const ai: Ai = {
    settings: async ({ signal } = {}) => unwrap(await api.GET('/api/v1/ai/settings', { ...withSignal(signal) })),
    updateSettings: async (input, { signal } = {}) => unwrap(await api.PUT('/api/v1/ai/settings', { body: input, ...withSignal(signal) })),
    usage: async (query = {}, { signal } = {}) => unwrap(await api.GET('/api/v1/ai/usage', { params: { query }, ...withSignal(signal) })),
  };
  return { agents, scheduledTasks, ai };
}
