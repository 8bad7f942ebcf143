import type { Executor, ReportDeliveryRow, ReportDeliveryRunRow, ReportDeliveryRunTable, ReportDeliveryTable } from '../../db/tables.js';

/* Report deliveries and their runs (migration 0039). */

/** How many runs of a delivery are kept: older ones are pruned as each is added. */
export const RUNS_KEPT = 200;

export type DeliveryChanges = Partial<Omit<ReportDeliveryTable, 'id' | 'tenant_id' | 'deployment_id' | 'report_id' | 'created_by' | 'created_at'>>;

export async function insertDelivery(db: Executor, values: Omit<ReportDeliveryTable, 'id'>): Promise<ReportDeliveryRow> {
  return db.insertInto('report_deliveries').values(values).returningAll().executeTakeFirstOrThrow();
}

export async function findDelivery(db: Executor, tenantId: number, deploymentId: number, id: number): Promise<ReportDeliveryRow | undefined> {
  return db
    .selectFrom('report_deliveries')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('deployment_id', '=', deploymentId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function findDeliveryById(db: Executor, id: number): Promise<ReportDeliveryRow | undefined> {
  return db.selectFrom('report_deliveries').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function updateDelivery(db: Executor, id: number, changes: DeliveryChanges): Promise<ReportDeliveryRow> {
  return db.updateTable('report_deliveries').set(changes).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

export async function deleteDelivery(db: Executor, id: number): Promise<void> {
  await db.deleteFrom('report_deliveries').where('id', '=', id).execute();
}

/** A deployment's deliveries (one report's when given), newest first. */
export async function listDeliveries(
  db: Executor,
  tenantId: number,
  deploymentId: number,
  reportId: number | null,
  beforeId: number | undefined,
  limit: number,
) {
  let query = db.selectFrom('report_deliveries').selectAll().where('tenant_id', '=', tenantId).where('deployment_id', '=', deploymentId);
  if (reportId !== null) query = query.where('report_id', '=', reportId);
  if (beforeId !== undefined) query = query.where('id', '<', beforeId);
  return query.orderBy('id', 'desc').limit(limit).execute();
}

/** Running deliveries whose next occurrence has come. */
export async function dueDeliveries(db: Executor, now: string, limit: number): Promise<ReportDeliveryRow[]> {
  return db.selectFrom('report_deliveries').selectAll().where('paused', '=', 0).where('next_run_at', '<=', now).orderBy('next_run_at').limit(limit).execute();
}

/** Moves a delivery's next occurrence on if it still is `from`: true for the one process that did. */
export async function advanceDelivery(db: Executor, id: number, from: string, to: string | null): Promise<boolean> {
  const result = await db.updateTable('report_deliveries').set({ next_run_at: to }).where('id', '=', id).where('next_run_at', '=', from).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Adds a run and prunes the delivery's runs to the newest RUNS_KEPT; the caller holds the delivery's lock. */
export async function insertRun(db: Executor, values: Omit<ReportDeliveryRunTable, 'id'>): Promise<ReportDeliveryRunRow> {
  const row = await db.insertInto('report_delivery_runs').values(values).returningAll().executeTakeFirstOrThrow();
  const keep = await db
    .selectFrom('report_delivery_runs')
    .select('id')
    .where('delivery_id', '=', values.delivery_id)
    .orderBy('id', 'desc')
    .limit(1)
    .offset(RUNS_KEPT - 1)
    .executeTakeFirst();
  if (keep) await db.deleteFrom('report_delivery_runs').where('delivery_id', '=', values.delivery_id).where('id', '<', keep.id).execute();
  return row;
}

export async function findRun(db: Executor, id: number): Promise<ReportDeliveryRunRow | undefined> {
  return db.selectFrom('report_delivery_runs').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function updateRun(
  db: Executor,
  id: number,
  changes: Partial<Omit<ReportDeliveryRunTable, 'id' | 'tenant_id' | 'delivery_id'>>,
): Promise<ReportDeliveryRunRow | undefined> {
  return db.updateTable('report_delivery_runs').set(changes).where('id', '=', id).returningAll().executeTakeFirst();
}

/** Starts a queued run: undefined when it is not queued (already taken, or pruned). */
export async function startRun(db: Executor, id: number, at: string): Promise<ReportDeliveryRunRow | undefined> {
  return db
    .updateTable('report_delivery_runs')
    .set({ status: 'running', started_at: at })
    .where('id', '=', id)
    .where('status', '=', 'queued')
    .returningAll()
    .executeTakeFirst();
}

/** A delivery's runs, newest first, a page at a time. */
export async function listRuns(db: Executor, deliveryId: number, beforeId: number | undefined, limit: number): Promise<ReportDeliveryRunRow[]> {
  let query = db.selectFrom('report_delivery_runs').selectAll().where('delivery_id', '=', deliveryId);
  if (beforeId !== undefined) query = query.where('id', '<', beforeId);
  return query.orderBy('id', 'desc').limit(limit).execute();
}

/** The report a delivery mails, when it is in the deployment. */
export async function findReport(db: Executor, tenantId: number, deploymentId: number, reportId: number) {
  return db
    .selectFrom('reports')
    .select(['id', 'name', 'title', 'sql_query', 'spec'])
    .where('tenant_id', '=', tenantId)
    .where('deployment_id', '=', deploymentId)
    .where('id', '=', reportId)
    .executeTakeFirst();
}

/** The addresses and state of console users, by id. */
export async function usersByIds(db: Executor, tenantId: number, ids: number[]) {
  if (ids.length === 0) return [];
  return db.selectFrom('users').select(['id', 'email', 'deactivated_at']).where('tenant_id', '=', tenantId).where('id', 'in', ids).execute();
}

/** Embed users with their embed tenant's name, by id. */
export async function embedUsersByIds(db: Executor, tenantId: number, ids: number[]) {
  if (ids.length === 0) return [];
  return db
    .selectFrom('embed_users')
    .innerJoin('embed_tenants', 'embed_tenants.id', 'embed_users.embed_tenant_id')
    .select(['embed_users.id as id', 'embed_users.email as email', 'embed_users.external_id as external_id', 'embed_tenants.name as tenant_name'])
    .where('embed_users.tenant_id', '=', tenantId)
    .where('embed_users.id', 'in', ids)
    .execute();
}
