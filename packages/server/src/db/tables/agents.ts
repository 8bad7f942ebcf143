import type { Generated, Selectable } from 'kysely';

// Tables of agents (migration 0035): agents, their chat threads and messages, scheduled tasks and their runs.

export interface AgentTable {
  id: Generated<number>;
  tenant_id: number;
  deployment_id: number;
  name: string;
  description: string | null;
  instructions: string;
  /** JSON array of cube and view names, or null for every member the caller can see. */
  members: string | null;
  /** JSON array of strings. */
  starter_prompts: string;
  created_by: number | null;
  created_at: string;
  updated_at: string;
}
export type AgentRow = Selectable<AgentTable>;

export interface AgentThreadTable {
  id: Generated<number>;
  /** What the API calls the thread's id: random, so one thread's id tells nothing of another's. */
  public_id: string;
  tenant_id: number;
  deployment_id: number;
  agent_id: number;
  /** The owner: a console user, or (for embedded chats) an embed user; exactly one is set. */
  user_id: number | null;
  embed_user_id: number | null;
  title: string | null;
  created_at: string;
  updated_at: string;
}
export type AgentThreadRow = Selectable<AgentThreadTable>;

export interface AgentMessageTable {
  id: Generated<number>;
  tenant_id: number;
  thread_id: number;
  /** 1, 2, ... per thread, in the order the messages were appended. */
  seq: number;
  role: string;
  text: string;
  /** JSON array: the tool calls and their results that led to the message, or null. */
  steps: string | null;
  /** JSON object: the model's token counts, or null. */
  usage: string | null;
  created_at: string;
}
export type AgentMessageRow = Selectable<AgentMessageTable>;

export interface AgentTaskTable {
  id: Generated<number>;
  tenant_id: number;
  deployment_id: number;
  agent_id: number;
  owner_id: number;
  prompt: string;
  cron: string;
  timezone: string;
  /** 1 or 0. */
  active: number;
  /** The next occurrence (UTC); null while inactive. */
  next_run_at: string | null;
  created_at: string;
  updated_at: string;
}
export type AgentTaskRow = Selectable<AgentTaskTable>;

export type AgentTaskRunStatus = 'queued' | 'running' | 'succeeded' | 'failed';

export interface AgentTaskRunTable {
  id: Generated<number>;
  tenant_id: number;
  task_id: number;
  /** `schedule` (claimed when due) or `manual` (POST …/run). */
  trigger: string;
  /** The occurrence a scheduled run is for; null for a manual run. */
  scheduled_for: string | null;
  status: AgentTaskRunStatus;
  job_id: number | null;
  /** The public id of the thread the answer was written to, if any. */
  thread_id: string | null;
  answer: string | null;
  error: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}
export type AgentTaskRunRow = Selectable<AgentTaskRunTable>;
