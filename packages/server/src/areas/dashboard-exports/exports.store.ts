import type { DashboardExportRow, DashboardExportTable, Executor } from '../../db/tables.js';
import type { Insertable } from 'kysely';

/** Dashboard exports (migration 0028): Kysely only. */

export async function insertExport(db: Executor, row: Insertable<DashboardExportTable>): Promise<DashboardExportRow> {
  return db.insertInto('dashboard_exports').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function findExport(db: Executor, tenantId: number, publicId: string): Promise<DashboardExportRow | undefined> {
  return db.selectFrom('dashboard_exports').selectAll().where('tenant_id', '=', tenantId).where('public_id', '=', publicId).executeTakeFirst();
}

export async function findExportById(db: Executor, id: number): Promise<DashboardExportRow | undefined> {
  return db.selectFrom('dashboard_exports').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Exports of `identity` still rendering (not expired): the per-identity limit counts them. */
export async function runningCount(db: Executor, tenantId: number, identity: string, at: string): Promise<number> {
  const row = await db
    .selectFrom('dashboard_exports')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('tenant_id', '=', tenantId)
    .where('identity', '=', identity)
    .where('status', 'in', ['pending', 'processing'])
    .where('expires_at', '>', at)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function setJob(db: Executor, id: number, jobId: number): Promise<void> {
  await db.updateTable('dashboard_exports').set({ job_id: jobId }).where('id', '=', id).execute();
}

/** Moves a pending export to processing; false when it is no longer pending (expired and gone, or taken). */
export async function markProcessing(db: Executor, id: number, at: string): Promise<boolean> {
  const res = await db
    .updateTable('dashboard_exports')
    .set({ status: 'processing', updated_at: at })
    .where('id', '=', id)
    .where('status', 'in', ['pending', 'processing'])
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

export async function markCompleted(db: Executor, id: number, contentType: string, content: Buffer, at: string): Promise<void> {
  await db.updateTable('dashboard_exports').set({ status: 'completed', content_type: contentType, content, updated_at: at }).where('id', '=', id).execute();
}

export async function markFailed(db: Executor, id: number, error: string, at: string): Promise<void> {
  await db.updateTable('dashboard_exports').set({ status: 'failed', error, updated_at: at }).where('id', '=', id).where('status', '!=', 'completed').execute();
}

/** Drops the tenant's exports past their expiry, files included. */
export async function deleteExpired(db: Executor, tenantId: number, at: string): Promise<void> {
  await db.deleteFrom('dashboard_exports').where('tenant_id', '=', tenantId).where('expires_at', '<=', at).execute();
}
