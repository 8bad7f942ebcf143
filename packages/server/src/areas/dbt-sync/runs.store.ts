import { sql, type Updateable } from 'kysely';
import type { DbtSyncLogRow, DbtSyncRunRow, DbtSyncRunTable, DbtSyncStatus, Executor } from '../../db/tables.js';

export type NewRun = Omit<DbtSyncRunRow, 'id' | 'percent' | 'updated_at'>;

export function insertRun(db: Executor, run: NewRun, at: string): Promise<DbtSyncRunRow> {
  return db
    .insertInto('dbt_sync_runs')
    .values({ ...run, updated_at: at })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function findRun(db: Executor, deploymentId: number, publicId: string): Promise<DbtSyncRunRow | undefined> {
  return db.selectFrom('dbt_sync_runs').selectAll().where('deployment_id', '=', deploymentId).where('public_id', '=', publicId).executeTakeFirst();
}

export function findRunById(db: Executor, id: number): Promise<DbtSyncRunRow | undefined> {
  return db.selectFrom('dbt_sync_runs').selectAll().where('id', '=', id).executeTakeFirst();
}

export function runningRun(db: Executor, deploymentId: number): Promise<DbtSyncRunRow | undefined> {
  return db.selectFrom('dbt_sync_runs').selectAll().where('deployment_id', '=', deploymentId).where('status', '=', 'RUNNING').executeTakeFirst();
}

/** Changes a run that is still running; false when it had ended meanwhile (compare-and-set on its status). */
export async function updateRunning(db: Executor, id: number, changes: Updateable<DbtSyncRunTable>, at: string): Promise<boolean> {
  const result = await db
    .updateTable('dbt_sync_runs')
    .set({ ...changes, updated_at: at })
    .where('id', '=', id)
    .where('status', '=', 'RUNNING')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function updateRun(db: Executor, id: number, changes: Updateable<DbtSyncRunTable>, at: string): Promise<void> {
  await db
    .updateTable('dbt_sync_runs')
    .set({ ...changes, updated_at: at })
    .where('id', '=', id)
    .execute();
}

/** A deployment's runs, newest first; `beforeId` continues a page. */
export function listRuns(
  db: Executor,
  deploymentId: number,
  filter: { status?: DbtSyncStatus; trigger?: string; beforeId?: number; limit: number },
): Promise<DbtSyncRunRow[]> {
  let query = db.selectFrom('dbt_sync_runs').selectAll().where('deployment_id', '=', deploymentId);
  if (filter.status !== undefined) query = query.where('status', '=', filter.status);
  if (filter.trigger !== undefined) query = query.where('trigger', '=', filter.trigger);
  if (filter.beforeId !== undefined) query = query.where('id', '<', filter.beforeId);
  return query.orderBy('id', 'desc').limit(filter.limit).execute();
}

/** Drops the generated files of `output: files` runs once their hour is over (reference 7.7). */
export async function dropExpiredFiles(db: Executor, deploymentId: number, at: string): Promise<void> {
  await db
    .updateTable('dbt_sync_runs')
    .set({ files: null })
    .where('deployment_id', '=', deploymentId)
    .where('files_expire_at', '<', at)
    .where('files', 'is not', null)
    .execute();
}

export interface LogLine {
  level: 'info' | 'error';
  message: string;
  phase?: string | null;
  durationMs?: number | null;
}

/** Appends a line after the run's last; numbered in the same statement, so two writers never take one number. */
export async function appendLog(db: Executor, runId: number, line: LogLine, at: string): Promise<void> {
  const next = sql<number>`(select coalesce(max(seq), 0) + 1 from dbt_sync_logs where run_id = ${runId})`;
  await db
    .insertInto('dbt_sync_logs')
    .values({
      run_id: runId,
      seq: next,
      at,
      level: line.level,
      stream: 'system',
      message: line.message,
      phase: line.phase ?? null,
      duration_ms: line.durationMs ?? null,
    })
    .execute();
}

export function readLogs(db: Executor, runId: number, afterSeq: number, limit: number): Promise<DbtSyncLogRow[]> {
  return db.selectFrom('dbt_sync_logs').selectAll().where('run_id', '=', runId).where('seq', '>', afterSeq).orderBy('seq').limit(limit).execute();
}
