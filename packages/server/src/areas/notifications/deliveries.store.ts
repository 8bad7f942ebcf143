import { sql } from 'kysely';
import type { Executor, NotificationDeliveryRecipientRow, NotificationDeliveryRow, NotificationRow } from '../../db/tables.js';

/*
 * Deliveries (migration 0027): one row per claimed occurrence of a schedule, and the state of
 * each of its recipients. A claim is exclusive three times over: the notification's `next_run_at`
 * moves by compare-and-set, the delivery's insert meets the unique (notification, scheduled_for)
 * key, and the job that runs it takes it from `pending` by compare-and-set.
 */

export type DeliveryStatus = 'pending' | 'running' | 'succeeded' | 'failed';
/** What started a delivery: an occurrence of the schedule, or …/send-now. */
export type DeliveryTrigger = 'SCHEDULE' | 'SEND_NOW';
export type RecipientStatus = 'pending' | 'sent' | 'failed' | 'skipped';

/** Enabled notifications whose next occurrence is at or before `at`, soonest first. */
export async function dueNotifications(db: Executor, at: string, limit: number): Promise<NotificationRow[]> {
  return db
    .selectFrom('notifications')
    .selectAll()
    .where('is_enabled', '=', 1)
    .where('next_run_at', '<=', at)
    .orderBy('next_run_at')
    .orderBy('id')
    .limit(limit)
    .execute();
}

/** Moves `next_run_at` on from the value this process read; false when another process (or an update) moved it first. */
export async function advanceSchedule(db: Executor, id: number, from: string, to: string | null): Promise<boolean> {
  const result = await db
    .updateTable('notifications')
    .set({ next_run_at: to })
    .where('id', '=', id)
    .where('next_run_at', '=', from)
    .where('is_enabled', '=', 1)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * The delivery's row; for an occurrence of the schedule, undefined when it was claimed before (the
 * unique key, which covers scheduled rows only).
 */
export async function insertDelivery(
  db: Executor,
  values: Omit<NotificationDeliveryRow, 'id' | 'trigger'> & { trigger: DeliveryTrigger },
): Promise<NotificationDeliveryRow | undefined> {
  return db
    .insertInto('notification_deliveries')
    .values(values)
    .onConflict((oc) => oc.columns(['notification_id', 'scheduled_for']).where('trigger', '=', sql.lit('SCHEDULE')).doNothing())
    .returningAll()
    .executeTakeFirst();
}

/**
 * The notification's send-now delivery still pending or running, if any (one click sends once). One
 * whose job is over without finishing it (its process died) no longer counts, so it blocks nothing.
 */
export async function activeSendNow(db: Executor, notificationId: number): Promise<NotificationDeliveryRow | undefined> {
  return db
    .selectFrom('notification_deliveries')
    .selectAll()
    .where('notification_id', '=', notificationId)
    .where('trigger', '=', 'SEND_NOW')
    .where('status', 'in', ['pending', 'running'])
    .where((eb) =>
      eb.or([
        eb('job_id', 'is', null),
        eb.exists(
          eb.selectFrom('jobs').select('jobs.id').whereRef('jobs.id', '=', 'notification_deliveries.job_id').where('jobs.state', 'in', ['queued', 'running']),
        ),
      ]),
    )
    .orderBy('id', 'desc')
    .executeTakeFirst();
}

export async function insertDeliveryRecipients(
  db: Executor,
  rows: Array<Omit<NotificationDeliveryRecipientRow, 'id' | 'attempts' | 'render_data'>>,
): Promise<void> {
  // A few hundred rows a statement keeps every statement under SQLite's bound-parameter limit.
  for (let i = 0; i < rows.length; i += 200)
    await db
      .insertInto('notification_delivery_recipients')
      .values(rows.slice(i, i + 200))
      .execute();
}

export async function setDeliveryJob(db: Executor, id: number, jobId: number): Promise<void> {
  await db.updateTable('notification_deliveries').set({ job_id: jobId }).where('id', '=', id).where('status', '=', 'pending').execute();
}

/** Claimed deliveries no job took yet, claimed before `before`: their process stopped between the claim and the enqueue. */
export async function orphanedDeliveries(db: Executor, before: string, limit: number): Promise<NotificationDeliveryRow[]> {
  return db
    .selectFrom('notification_deliveries')
    .selectAll()
    .where('status', '=', 'pending')
    .where('claimed_at', '<', before)
    .where((eb) =>
      eb.or([
        eb('job_id', 'is', null),
        eb.not(
          eb.exists(
            eb.selectFrom('jobs').select('jobs.id').whereRef('jobs.id', '=', 'notification_deliveries.job_id').where('jobs.state', 'in', ['queued', 'running']),
          ),
        ),
      ]),
    )
    .orderBy('id')
    .limit(limit)
    .execute();
}

/** The job `jobId` takes the delivery from `pending`; undefined when another job took it (or it is gone). */
export async function startDelivery(db: Executor, id: number, jobId: number): Promise<NotificationDeliveryRow | undefined> {
  return db
    .updateTable('notification_deliveries')
    .set({ status: 'running', job_id: jobId })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .returningAll()
    .executeTakeFirst();
}

export async function finishDelivery(db: Executor, id: number, status: 'succeeded' | 'failed', message: string | null, at: string): Promise<void> {
  await db.updateTable('notification_deliveries').set({ status, message, finished_at: at }).where('id', '=', id).execute();
}

export async function deliveryRecipients(db: Executor, deliveryIds: number[]): Promise<NotificationDeliveryRecipientRow[]> {
  if (deliveryIds.length === 0) return [];
  return db.selectFrom('notification_delivery_recipients').selectAll().where('delivery_id', 'in', deliveryIds).orderBy('delivery_id').orderBy('id').execute();
}

/** Records one attempt's outcome for one recipient of a delivery. */
export async function recordRecipient(
  db: Executor,
  deliveryId: number,
  id: number,
  status: RecipientStatus,
  lastError: string | null,
  attempted: boolean,
  at: string,
): Promise<void> {
  await db
    .updateTable('notification_delivery_recipients')
    .set({ status, last_error: lastError, updated_at: at, ...(attempted ? { attempts: sql<number>`attempts + 1` } : {}) })
    .where('delivery_id', '=', deliveryId)
    .where('id', '=', id)
    .execute();
}

/** A notification's deliveries, newest first, before `beforeId` when given. */
export async function listDeliveries(
  db: Executor,
  tenantId: number,
  notificationId: number,
  beforeId: number | undefined,
  limit: number,
): Promise<NotificationDeliveryRow[]> {
  let query = db.selectFrom('notification_deliveries').selectAll().where('tenant_id', '=', tenantId).where('notification_id', '=', notificationId);
  if (beforeId !== undefined) query = query.where('id', '<', beforeId);
  return query.orderBy('id', 'desc').limit(limit).execute();
}

export async function findDelivery(db: Executor, id: number): Promise<NotificationDeliveryRow | undefined> {
  return db.selectFrom('notification_deliveries').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function setRenderData(db: Executor, deliveryId: number, id: number, data: string): Promise<void> {
  await db.updateTable('notification_delivery_recipients').set({ render_data: data }).where('delivery_id', '=', deliveryId).where('id', '=', id).execute();
}

/**
 * The data of the latest earlier render kept for each of these recipients of a notification
 * (keyed `user_id:embed_user_id`), from deliveries before `deliveryId`.
 */
export async function previousRenderData(db: Executor, notificationId: number, deliveryId: number): Promise<Map<string, string>> {
  const rows = await db
    .selectFrom('notification_delivery_recipients as r')
    .innerJoin('notification_deliveries as d', 'd.id', 'r.delivery_id')
    .select(['r.user_id', 'r.embed_user_id', 'r.render_data'])
    .where('d.notification_id', '=', notificationId)
    .where('d.id', '<', deliveryId)
    .where('r.render_data', 'is not', null)
    .orderBy('d.id', 'desc')
    .limit(1000)
    .execute();
  const out = new Map<string, string>();
  for (const r of rows) if (!out.has(`${r.user_id}:${r.embed_user_id}`)) out.set(`${r.user_id}:${r.embed_user_id}`, r.render_data as string);
  return out;
}
