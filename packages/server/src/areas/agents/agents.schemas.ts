import { Type, type Static } from 'typebox';
import { DeploymentParams, Id, Nullable, PageOf, PageQuery, ref, Timestamp } from '../../shared/schemas.js';
import { DashboardFilterInput, DashboardMemberSwitcherInput, DashboardTimeGrainInput } from '../dashboards/index.js';
import { ResourceOwnerSchema } from '../workspace/index.js';

/*
 * Agents of a deployment, their chat threads, and scheduled agent tasks. The reference names the
 * routes of tasks and starter prompts (section 9) and the permissions; the shapes are this
 * product's, in the style of the neighbouring operations (docs/api/agents.md).
 */

const AgentName = Type.String({ minLength: 1, maxLength: 255, pattern: '\\S', description: 'Unique in the deployment.' });
const Members = Type.Array(Type.String({ minLength: 1, maxLength: 255 }), {
  maxItems: 200,
  description: 'The cubes and views the agent may use, by name; null: every member the caller can see.',
});
const StarterPrompts = Type.Array(Type.String({ minLength: 1, maxLength: 500 }), { maxItems: 20, description: 'Suggestions shown before a chat starts.' });

export const AgentSchema = Type.Object(
  {
    id: Id,
    deploymentId: Id,
    name: Type.String(),
    description: Nullable(Type.String()),
    instructions: Type.String(),
    members: Nullable(Type.Array(Type.String())),
    starterPrompts: Type.Array(Type.String()),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    createdBy: Nullable(ref(ResourceOwnerSchema)),
  },
  { $id: 'Agent' },
);
export type Agent = Static<typeof AgentSchema>;

export const CreateAgentBody = Type.Object(
  {
    name: AgentName,
    description: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
    instructions: Type.Optional(Type.String({ maxLength: 20_000, description: 'What the agent is told before every chat; default empty.' })),
    members: Type.Optional(Nullable(Members)),
    starterPrompts: Type.Optional(StarterPrompts),
  },
  { additionalProperties: false },
);
export type CreateAgentInput = Static<typeof CreateAgentBody>;

export const UpdateAgentBody = Type.Object(
  {
    name: Type.Optional(AgentName),
    description: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
    instructions: Type.Optional(Type.String({ maxLength: 20_000 })),
    members: Type.Optional(Nullable(Members)),
    starterPrompts: Type.Optional(StarterPrompts),
  },
  { additionalProperties: false },
);
export type UpdateAgentInput = Static<typeof UpdateAgentBody>;

export const AgentParams = Type.Object({ ...DeploymentParams.properties, agentId: Id });
export const ThreadParams = Type.Object({ ...DeploymentParams.properties, threadId: Type.String({ minLength: 1, maxLength: 64 }) });
export const TaskParams = Type.Object({ ...DeploymentParams.properties, taskId: Id });
export const AgentThreadParams = Type.Object({ ...DeploymentParams.properties, agentId: Id, threadId: Type.String({ minLength: 1, maxLength: 64 }) });

export const AskBody = Type.Object(
  { question: Type.String({ minLength: 1, maxLength: 4000, pattern: '\\S', description: 'The question, in plain language.' }) },
  { additionalProperties: false },
);

export const ListQuery = Type.Object({ ...PageQuery }, { additionalProperties: false });
export type ListInput = Static<typeof ListQuery>;

export const ThreadsQuery = Type.Object(
  { ...PageQuery, userId: Type.Optional({ ...Id, description: "Another user's threads (ChatHistoryRead: admins only); default: the caller's own." }) },
  { additionalProperties: false },
);
export type ThreadsInput = Static<typeof ThreadsQuery>;

export const AgentSuggestionsSchema = Type.Object(
  {
    items: Type.Array(Type.Object({ agentId: Id, agentName: Type.String(), prompt: Type.String() })),
  },
  { $id: 'AgentSuggestions' },
);
export type AgentSuggestions = Static<typeof AgentSuggestionsSchema>;

const ThreadFields = {
  id: Type.String({ description: 'The thread’s public id.' }),
  deploymentId: Id,
  agentId: Id,
  userId: Nullable(Id),
  embedUserId: Nullable(Id),
  title: Nullable(Type.String()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
};

export const AgentThreadSchema = Type.Object(ThreadFields, { $id: 'AgentThread' });
export type AgentThread = Static<typeof AgentThreadSchema>;

const Anything = Type.Unsafe<unknown>({});

export const AgentMessageSchema = Type.Object(
  {
    seq: Type.Integer({ minimum: 1, description: '1, 2, ... in the order the messages were added.' }),
    role: Type.String({ enum: ['user', 'assistant'] }),
    text: Type.String(),
    steps: Nullable(Type.Array(Anything, { description: 'The tool calls and their results that led to the answer.' })),
    usage: Nullable(Type.Object({}, { additionalProperties: true, description: 'The model’s token counts.' })),
    createdAt: Timestamp,
  },
  { $id: 'AgentMessage' },
);
export type AgentMessage = Static<typeof AgentMessageSchema>;

export const AgentThreadWithMessagesSchema = Type.Object(
  { ...ThreadFields, messages: Type.Array(Type.Ref('AgentMessage')) },
  { $id: 'AgentThreadWithMessages' },
);

export const AgentAnswerSchema = Type.Object(
  { thread: Type.Ref('AgentThread'), message: Type.Ref('AgentMessage') },
  { $id: 'AgentAnswer', description: 'The thread and the stored answer (its text, steps and usage).' },
);

export const TaskSchema = Type.Object(
  {
    id: Id,
    deploymentId: Id,
    agentId: Id,
    prompt: Type.String(),
    cron: Type.String({ description: 'Five fields: minute hour day-of-month month day-of-week.' }),
    timezone: Type.String(),
    active: Type.Boolean(),
    owner: Nullable(ref(ResourceOwnerSchema)),
    nextRunAt: Nullable(Type.String({ format: 'date-time', description: 'The next occurrence (UTC); null while inactive.' })),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'ScheduledTask' },
);
export type Task = Static<typeof TaskSchema>;

const Prompt = Type.String({ minLength: 1, maxLength: 4000, pattern: '\\S' });
const Cron = Type.String({
  minLength: 9,
  maxLength: 200,
  description: 'Five fields (minute hour day-of-month month day-of-week); it may fire at most hourly, so the minute is one value.',
});
const TimeZone = Type.String({ minLength: 1, maxLength: 64, description: 'An IANA zone; default UTC.' });

export const CreateTaskBody = Type.Object(
  {
    agentId: Id,
    prompt: Prompt,
    cron: Cron,
    timezone: Type.Optional(Nullable(TimeZone)),
    active: Type.Optional(Nullable(Type.Boolean({ description: 'Default true.' }))),
  },
  { additionalProperties: false },
);
export type CreateTaskInput = Static<typeof CreateTaskBody>;

export const UpdateTaskBody = Type.Object(
  {
    agentId: Type.Optional(Id),
    prompt: Type.Optional(Prompt),
    cron: Type.Optional(Cron),
    timezone: Type.Optional(TimeZone),
    active: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type UpdateTaskInput = Static<typeof UpdateTaskBody>;

export const TaskRunSchema = Type.Object(
  {
    id: Id,
    taskId: Id,
    trigger: Type.String({ enum: ['schedule', 'manual'] }),
    scheduledFor: Nullable(Type.String({ format: 'date-time', description: 'The occurrence a scheduled run is for; null for a manual run.' })),
    status: Type.String({ enum: ['queued', 'running', 'succeeded', 'failed'] }),
    jobId: Nullable(Id),
    threadId: Nullable(Type.String({ description: 'The thread the answer was written to, if any.' })),
    answer: Nullable(Type.String()),
    error: Nullable(Type.String()),
    createdAt: Timestamp,
    startedAt: Nullable(Timestamp),
    finishedAt: Nullable(Timestamp),
  },
  { $id: 'ScheduledTaskRun' },
);
export type TaskRun = Static<typeof TaskRunSchema>;

export const TaskRunsSchema = Type.Object({ items: Type.Array(Type.Ref('ScheduledTaskRun')) }, { $id: 'ScheduledTaskRuns' });

const nullable = <T extends Parameters<typeof Type.Optional>[0]>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()]));

/** The controls a viewer has applied to the dashboard, which the summarised report's query takes as the widget shows it. */
export const WidgetSummaryBody = Type.Object(
  {
    filters: nullable(Type.Array(ref(DashboardFilterInput), { maxItems: 100 })),
    timeGrains: nullable(Type.Array(ref(DashboardTimeGrainInput), { maxItems: 100 })),
    memberSwitchers: nullable(Type.Array(ref(DashboardMemberSwitcherInput), { maxItems: 100 })),
  },
  { additionalProperties: false },
);
export type WidgetSummaryInput = Static<typeof WidgetSummaryBody>;

const WidgetId = Type.String({ minLength: 1, maxLength: 128, description: 'An AI widget of the published dashboard.' });
export const WorkbookWidgetParams = Type.Object({ deploymentId: Id, workbookId: Id, widgetId: WidgetId });
export const EmbedWidgetParams = Type.Object({ publicId: Type.String({ minLength: 1, maxLength: 64 }), widgetId: WidgetId });

export const WidgetSummarySchema = Type.Object(
  {
    threadId: Type.String({ description: 'The viewer’s chat thread that holds the summary (stored on the dashboard as reference 8.G.4 says).' }),
    checksum: Type.String({ description: 'SHA-256 of the prompt, the agent and the rows summarised.' }),
    regenerated: Type.Boolean({ description: 'False: the viewer’s last summary still held (same prompt, agent and rows) and was answered without the model.' }),
    message: Type.Ref('AgentMessage'),
  },
  { $id: 'AiWidgetSummary', description: 'An AI widget’s summary for the viewer who asked.' },
);

export const agentSchemas = [
  WidgetSummarySchema,
  AgentSchema,
  PageOf('Agent'),
  AgentSuggestionsSchema,
  AgentThreadSchema,
  PageOf('AgentThread'),
  AgentMessageSchema,
  AgentThreadWithMessagesSchema,
  AgentAnswerSchema,
  TaskSchema,
  PageOf('ScheduledTask'),
  TaskRunSchema,
  TaskRunsSchema,
];
