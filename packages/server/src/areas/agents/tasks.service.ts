import type { Caller } from '../../access/caller.js';
import type { Audit } from '../../audit/index.js';
import type { Store } from '../../db/database.js';
import type { AgentTaskRow, AgentTaskRunRow, Executor } from '../../db/tables.js';
import type { Jobs } from '../../jobs/index.js';
import { lockKey, serialized } from '../../db/transactions.js';
import { afterId, pageRequest, toPage } from '../../shared/pagination.js';
import { ApiError } from '../../shared/problems.js';
import type { Clock } from '../../time.js';
import { authorizeDeployment } from '../deployments/index.js';
import type { ResourceOwner } from '../workspace/index.js';
import { findAgent } from './agents.store.js';
import { ownersOf } from './agents.service.js';
import type { CreateTaskInput, ListInput, Task, TaskRun, UpdateTaskInput } from './agents.schemas.js';
import { canonicalTimeZone, checkHourlyCron, nextOccurrence } from '../../shared/hourly-cron.js';
import { countActiveTasks, deleteTask, findTask, insertRun, insertTask, listRuns, listTasks, updateTask, updateRun, type TaskChanges } from './tasks.store.js';

/** The job kind that runs a task once. */
export const AGENT_TASK_JOB = 'agent-task';
/** Active tasks one user may own (reference 9). */
export const ACTIVE_TASKS_PER_USER = 20;

export function toTask(row: AgentTaskRow, owners: Map<number, ResourceOwner>): Task {
  return {
    id: row.id,
    deploymentId: row.deployment_id,
    agentId: row.agent_id,
    prompt: row.prompt,
    cron: row.cron,
    timezone: row.timezone,
    active: row.active === 1,
    owner: owners.get(row.owner_id) ?? null,
    nextRunAt: row.active === 1 ? row.next_run_at : null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function toRun(row: AgentTaskRunRow): TaskRun {
  return {
    id: row.id,
    taskId: row.task_id,
    trigger: row.trigger as TaskRun['trigger'],
    scheduledFor: row.scheduled_for,
    status: row.status,
    jobId: row.job_id,
    threadId: row.thread_id,
    answer: row.answer,
    error: row.error,
    createdAt: row.created_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
  };
}

function limitReached(): ApiError {
  return new ApiError(
    'AGENT_TASK_LIMIT',
    `You already have ${ACTIVE_TASKS_PER_USER} active scheduled tasks, the most a user may have; switch one off (active: false) or delete one first.`,
  );
}

/**
 * Scheduled agent tasks (reference 9). Using an agent is DeploymentAgentRead, so any user who may
 * use the agent may schedule it; the task is its creator's, who alone changes it, admins aside.
 * Another's task is a 404 to everyone else.
 */
export function tasksService(store: Store, options: { now: Clock; audit: Audit; jobs: Jobs }) {
  const { db } = store;
  const at = () => options.now().toISOString();

  function nextRun(cron: string, timezone: string, active: boolean): string | null {
    return active ? (nextOccurrence(cron, timezone, options.now())?.toISOString() ?? null) : null;
  }

  async function requireAgent(executor: Executor, tenantId: number, deploymentId: number, agentId: number): Promise<void> {
    if (!(await findAgent(executor, tenantId, deploymentId, agentId)))
      throw new ApiError('AGENT_NOT_FOUND', `Deployment ${deploymentId} has no agent ${agentId}.`, {
        errors: [{ pointer: '/body/agentId', message: 'names no agent' }],
      });
  }

  /** The task when the caller owns it or is an admin; 404 otherwise. */
  async function requireTask(executor: Executor, caller: Caller, deploymentId: number, id: number): Promise<AgentTaskRow> {
    const row = await findTask(executor, caller.actor.tenantId, deploymentId, id);
    if (!row || (row.owner_id !== caller.actor.userId && !caller.access.isAdmin))
      throw new ApiError('AGENT_TASK_NOT_FOUND', `Deployment ${deploymentId} has no scheduled task ${id} of yours.`);
    return row;
  }

  async function view(row: AgentTaskRow): Promise<Task> {
    return toTask(row, await ownersOf(db, row.tenant_id, [row.owner_id]));
  }

  /** Inserts a run of the task (pruning to the newest 50) and enqueues its job. */
  async function enqueueRun(task: AgentTaskRow, trigger: 'schedule' | 'manual', scheduledFor: string | null, executor?: Executor): Promise<AgentTaskRunRow> {
    const add = (trx: Executor) =>
      insertRun(trx, {
        tenant_id: task.tenant_id,
        task_id: task.id,
        trigger,
        scheduled_for: scheduledFor,
        status: 'queued',
        job_id: null,
        thread_id: null,
        answer: null,
        error: null,
        created_at: at(),
        started_at: null,
        finished_at: null,
      });
    const run = executor ? await add(executor) : await serialized(store, lockKey.agentTask(task.id), add);
    return run;
  }

  async function startJob(run: AgentTaskRunRow): Promise<AgentTaskRunRow> {
    // A process that only serves requests still runs the tasks it enqueues.
    await options.jobs.start();
    const job = await options.jobs.enqueue(run.tenant_id, AGENT_TASK_JOB, { runId: run.id });
    return (await updateRun(db, run.id, { job_id: job.id })) ?? { ...run, job_id: job.id };
  }

  return {
    enqueueRun,
    startJob,

    async list(caller: Caller, deploymentId: number, input: ListInput) {
      const { row: deployment } = await authorizeDeployment(db, caller, deploymentId, 'DeploymentAgentRead', caller.snapshot);
      const page = pageRequest(input);
      const owner = caller.access.isAdmin ? null : caller.actor.userId;
      const rows = await listTasks(db, caller.actor.tenantId, deployment.id, owner, afterId(page), page.first + 1);
      const { items, pageInfo } = toPage(rows, page, (r) => [r.id]);
      const owners = await ownersOf(
        db,
        caller.actor.tenantId,
        items.map((r) => r.owner_id),
      );
      return { items: items.map((r) => toTask(r, owners)), pageInfo };
    },

    async get(caller: Caller, deploymentId: number, id: number): Promise<Task> {
      await authorizeDeployment(db, caller, deploymentId, 'DeploymentAgentRead', caller.snapshot);
      return view(await requireTask(db, caller, deploymentId, id));
    },

    async create(caller: Caller, deploymentId: number, input: CreateTaskInput): Promise<Task> {
      const { row: deployment } = await authorizeDeployment(db, caller, deploymentId, 'DeploymentAgentRead', caller.snapshot);
      const cron = checkHourlyCron(input.cron, 'a scheduled task');
      const timezone = canonicalTimeZone(input.timezone ?? 'UTC');
      const active = input.active ?? true;
      const owner = caller.actor.userId;
      const row = await serialized(store, lockKey.agentTasksOf(owner), async (trx) => {
        await requireAgent(trx, caller.actor.tenantId, deployment.id, input.agentId);
        if (active && (await countActiveTasks(trx, owner)) >= ACTIVE_TASKS_PER_USER) throw limitReached();
        const stamp = at();
        const created = await insertTask(trx, {
          tenant_id: caller.actor.tenantId,
          deployment_id: deployment.id,
          agent_id: input.agentId,
          owner_id: owner,
          prompt: input.prompt,
          cron,
          timezone,
          active: active ? 1 : 0,
          next_run_at: nextRun(cron, timezone, active),
          created_at: stamp,
          updated_at: stamp,
        });
        return created;
      });
      // After the commit: the audit log reads the tenant's setting on the store, which a SQLite transaction holds.
      await options.audit.record(caller, {
        action: 'agent-task.created',
        target: { deploymentId: deployment.id, taskId: row.id },
        details: { agentId: input.agentId, cron, active },
      });
      return view(row);
    },

    /** Fields left out stay; a new schedule, or one switched on, runs from now. */
    async update(caller: Caller, deploymentId: number, id: number, input: UpdateTaskInput): Promise<Task> {
      await authorizeDeployment(db, caller, deploymentId, 'DeploymentAgentRead', caller.snapshot);
      const cron = input.cron === undefined ? undefined : checkHourlyCron(input.cron, 'a scheduled task');
      const timezone = input.timezone === undefined ? undefined : canonicalTimeZone(input.timezone);
      const current = await requireTask(db, caller, deploymentId, id);
      // The cap is the owner's, whoever switches the task on.
      const row = await serialized(store, [lockKey.agentTasksOf(current.owner_id), lockKey.agentTask(id)], async (trx) => {
        const task = await requireTask(trx, caller, deploymentId, id);
        if (input.agentId !== undefined) await requireAgent(trx, caller.actor.tenantId, deploymentId, input.agentId);
        const active = input.active ?? task.active === 1;
        if (active && task.active !== 1 && (await countActiveTasks(trx, task.owner_id)) >= ACTIVE_TASKS_PER_USER) throw limitReached();
        const changes: TaskChanges = { updated_at: at() };
        if (input.agentId !== undefined) changes.agent_id = input.agentId;
        if (input.prompt !== undefined) changes.prompt = input.prompt;
        if (cron !== undefined) changes.cron = cron;
        if (timezone !== undefined) changes.timezone = timezone;
        if (input.active !== undefined) changes.active = active ? 1 : 0;
        const rescheduled = cron !== undefined || timezone !== undefined || active !== (task.active === 1);
        if (rescheduled) changes.next_run_at = nextRun(cron ?? task.cron, timezone ?? task.timezone, active);
        return updateTask(trx, task.id, changes);
      });
      await options.audit.record(caller, {
        action: 'agent-task.updated',
        target: { deploymentId, taskId: id },
        details: { fields: Object.keys(input).sort().join(',') },
      });
      return view(row);
    },

    async remove(caller: Caller, deploymentId: number, id: number): Promise<void> {
      await authorizeDeployment(db, caller, deploymentId, 'DeploymentAgentRead', caller.snapshot);
      await serialized(store, lockKey.agentTask(id), async (trx) => {
        const task = await requireTask(trx, caller, deploymentId, id);
        await deleteTask(trx, task.id);
      });
      await options.audit.record(caller, { action: 'agent-task.deleted', target: { deploymentId, taskId: id } });
    },

    /** Runs the task now: a run is recorded as queued and a job of kind `agent-task` runs it. */
    async runNow(caller: Caller, deploymentId: number, id: number): Promise<TaskRun> {
      await authorizeDeployment(db, caller, deploymentId, 'DeploymentAgentRead', caller.snapshot);
      const task = await requireTask(db, caller, deploymentId, id);
      const run = await enqueueRun(task, 'manual', null);
      await options.audit.record(caller, { action: 'agent-task.run', target: { deploymentId, taskId: id, runId: run.id } });
      return toRun(await startJob(run));
    },

    /** The task's runs, newest first (the 50 kept). */
    async runs(caller: Caller, deploymentId: number, id: number): Promise<{ items: TaskRun[] }> {
      await authorizeDeployment(db, caller, deploymentId, 'DeploymentAgentRead', caller.snapshot);
      const task = await requireTask(db, caller, deploymentId, id);
      return { items: (await listRuns(db, task.id)).map(toRun) };
    },
  };
}
export type TasksService = ReturnType<typeof tasksService>;
