import type { AgentTaskRow, AgentTaskRunRow, AgentTaskRunTable, AgentTaskTable, Executor } from '../../db/tables.js';

/* Scheduled agent tasks and their runs (migration 0035). */

/** How many runs of a task are kept (reference 9): older ones are pruned as each is added. */
export const RUNS_KEPT = 50;

export type TaskChanges = Partial<Pick<AgentTaskTable, 'agent_id' | 'prompt' | 'cron' | 'timezone' | 'active' | 'next_run_at' | 'updated_at'>>;

export async function insertTask(db: Executor, values: Omit<AgentTaskTable, 'id'>): Promise<AgentTaskRow> {
  return db.insertInto('agent_tasks').values(values).returningAll().executeTakeFirstOrThrow();
}

export async function findTask(db: Executor, tenantId: number, deploymentId: number, id: number): Promise<AgentTaskRow | undefined> {
  return db
    .selectFrom('agent_tasks')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('deployment_id', '=', deploymentId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function findTaskById(db: Executor, id: number): Promise<AgentTaskRow | undefined> {
  return db.selectFrom('agent_tasks').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function updateTask(db: Executor, id: number, changes: TaskChanges): Promise<AgentTaskRow> {
  return db.updateTable('agent_tasks').set(changes).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

export async function deleteTask(db: Executor, id: number): Promise<void> {
  await db.deleteFrom('agent_tasks').where('id', '=', id).execute();
}

/** The active tasks a user owns, across the account. */
export async function countActiveTasks(db: Executor, ownerId: number): Promise<number> {
  const row = await db
    .selectFrom('agent_tasks')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('owner_id', '=', ownerId)
    .where('active', '=', 1)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** A deployment's tasks (one owner's when given), newest first. */
export async function listTasks(db: Executor, tenantId: number, deploymentId: number, ownerId: number | null, beforeId: number | undefined, limit: number) {
  let query = db.selectFrom('agent_tasks').selectAll().where('tenant_id', '=', tenantId).where('deployment_id', '=', deploymentId);
  if (ownerId !== null) query = query.where('owner_id', '=', ownerId);
  if (beforeId !== undefined) query = query.where('id', '<', beforeId);
  return query.orderBy('id', 'desc').limit(limit).execute();
}

/** Active tasks whose next occurrence has come. */
export async function dueTasks(db: Executor, now: string, limit: number): Promise<AgentTaskRow[]> {
  return db.selectFrom('agent_tasks').selectAll().where('active', '=', 1).where('next_run_at', '<=', now).orderBy('next_run_at').limit(limit).execute();
}

/** Moves a task's next occurrence on if it still is `from`: true for the one process that did. */
export async function advanceTask(db: Executor, id: number, from: string, to: string | null): Promise<boolean> {
  const result = await db.updateTable('agent_tasks').set({ next_run_at: to }).where('id', '=', id).where('next_run_at', '=', from).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Adds a run and prunes the task's runs to the newest RUNS_KEPT; the caller holds the task's lock. */
export async function insertRun(db: Executor, values: Omit<AgentTaskRunTable, 'id'>): Promise<AgentTaskRunRow> {
  const row = await db.insertInto('agent_task_runs').values(values).returningAll().executeTakeFirstOrThrow();
  const keep = await db
    .selectFrom('agent_task_runs')
    .select('id')
    .where('task_id', '=', values.task_id)
    .orderBy('id', 'desc')
    .limit(1)
    .offset(RUNS_KEPT - 1)
    .executeTakeFirst();
  if (keep) await db.deleteFrom('agent_task_runs').where('task_id', '=', values.task_id).where('id', '<', keep.id).execute();
  return row;
}

export async function findRun(db: Executor, id: number): Promise<AgentTaskRunRow | undefined> {
  return db.selectFrom('agent_task_runs').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function updateRun(
  db: Executor,
  id: number,
  changes: Partial<Omit<AgentTaskRunTable, 'id' | 'tenant_id' | 'task_id'>>,
): Promise<AgentTaskRunRow | undefined> {
  return db.updateTable('agent_task_runs').set(changes).where('id', '=', id).returningAll().executeTakeFirst();
}

/** Starts a queued run: undefined when it is not queued (already taken, or pruned). */
export async function startRun(db: Executor, id: number, at: string): Promise<AgentTaskRunRow | undefined> {
  return db
    .updateTable('agent_task_runs')
    .set({ status: 'running', started_at: at })
    .where('id', '=', id)
    .where('status', '=', 'queued')
    .returningAll()
    .executeTakeFirst();
}

/** A task's runs, newest first. */
export async function listRuns(db: Executor, taskId: number): Promise<AgentTaskRunRow[]> {
  return db.selectFrom('agent_task_runs').selectAll().where('task_id', '=', taskId).orderBy('id', 'desc').limit(RUNS_KEPT).execute();
}
