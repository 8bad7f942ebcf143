import type { Executor, NotificationRecipientRow, NotificationRow, NotificationTable } from '../../db/tables.js';

/*
 * The notifications and their recipients (migration 0027). Every read is bounded by the tenant
 * and the deployment of the path, so another deployment's notification is simply not found.
 */

export type NewNotification = Omit<NotificationTable, 'id'>;
export type NotificationChanges = Partial<Omit<NotificationTable, 'id' | 'tenant_id' | 'deployment_id' | 'dashboard_id' | 'created_by' | 'created_at'>>;

export async function insertNotification(db: Executor, values: NewNotification): Promise<NotificationRow> {
  return db.insertInto('notifications').values(values).returningAll().executeTakeFirstOrThrow();
}

/** A notification by its id alone (the scheduler's, whose delivery names it). */
export async function findNotificationById(db: Executor, id: number): Promise<NotificationRow | undefined> {
  return db.selectFrom('notifications').selectAll().where('id', '=', id).executeTakeFirst();
}

/** An embed user of the embed tenant, by id. */
export async function findEmbedUserInTenant(db: Executor, tenantId: number, embedTenantId: number, id: number): Promise<{ id: number } | undefined> {
  return db
    .selectFrom('embed_users')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('embed_tenant_id', '=', embedTenantId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** The tenant a delivery runs for: its id and slug. */
export async function findTenantOf(db: Executor, tenantId: number): Promise<{ id: number; slug: string }> {
  return db.selectFrom('tenants').select(['id', 'slug']).where('id', '=', tenantId).executeTakeFirstOrThrow();
}

export async function findNotification(db: Executor, tenantId: number, deploymentId: number, id: number): Promise<NotificationRow | undefined> {
  return db
    .selectFrom('notifications')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('deployment_id', '=', deploymentId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function updateNotification(db: Executor, tenantId: number, id: number, changes: NotificationChanges): Promise<NotificationRow> {
  return db.updateTable('notifications').set(changes).where('tenant_id', '=', tenantId).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

export async function deleteNotification(db: Executor, tenantId: number, id: number): Promise<void> {
  await db.deleteFrom('notifications').where('tenant_id', '=', tenantId).where('id', '=', id).execute();
}

export interface NotificationFilter {
  dashboardId?: number;
  /** Notifications with this console user among their recipients. */
  userId?: number;
  /** Notifications with this embed user among their recipients. */
  embedUserId?: number;
}

/** A deployment's notifications, newest first, before `beforeId` when given. */
export async function listNotifications(
  db: Executor,
  tenantId: number,
  deploymentId: number,
  filter: NotificationFilter,
  beforeId: number | undefined,
  limit: number,
): Promise<NotificationRow[]> {
  let query = db.selectFrom('notifications as n').selectAll('n').where('n.tenant_id', '=', tenantId).where('n.deployment_id', '=', deploymentId);
  if (filter.dashboardId !== undefined) query = query.where('n.dashboard_id', '=', filter.dashboardId);
  if (filter.userId !== undefined) {
    const userId = filter.userId;
    query = query.where((eb) =>
      eb.exists(eb.selectFrom('notification_recipients as r').select('r.id').whereRef('r.notification_id', '=', 'n.id').where('r.user_id', '=', userId)),
    );
  }
  if (filter.embedUserId !== undefined) {
    const embedUserId = filter.embedUserId;
    query = query.where((eb) =>
      eb.exists(
        eb.selectFrom('notification_recipients as r').select('r.id').whereRef('r.notification_id', '=', 'n.id').where('r.embed_user_id', '=', embedUserId),
      ),
    );
  }
  if (beforeId !== undefined) query = query.where('n.id', '<', beforeId);
  return query.orderBy('n.id', 'desc').limit(limit).execute();
}

/** A recipient with what the API shows of the person it names. */
export interface RecipientView extends NotificationRecipientRow {
  user_email: string | null;
  embed_email: string | null;
  embed_username: string | null;
  embed_external_id: string | null;
  embed_tenant_name: string | null;
}

function recipientsQuery(db: Executor, tenantId: number, notificationId: number) {
  return db
    .selectFrom('notification_recipients as r')
    .leftJoin('users as u', 'u.id', 'r.user_id')
    .leftJoin('embed_users as eu', 'eu.id', 'r.embed_user_id')
    .leftJoin('embed_tenants as et', 'et.id', 'eu.embed_tenant_id')
    .selectAll('r')
    .select([
      'u.email as user_email',
      'eu.email as embed_email',
      'eu.username as embed_username',
      'eu.external_id as embed_external_id',
      'et.name as embed_tenant_name',
    ])
    .where('r.tenant_id', '=', tenantId)
    .where('r.notification_id', '=', notificationId);
}

/** A notification's recipients, newest first, before `beforeId` when given. */
export async function listRecipients(
  db: Executor,
  tenantId: number,
  notificationId: number,
  beforeId: number | undefined,
  limit: number,
): Promise<RecipientView[]> {
  let query = recipientsQuery(db, tenantId, notificationId);
  if (beforeId !== undefined) query = query.where('r.id', '<', beforeId);
  return query.orderBy('r.id', 'desc').limit(limit).execute();
}

/** Every recipient of a notification, oldest first (a delivery's list). */
export async function allRecipients(db: Executor, tenantId: number, notificationId: number): Promise<RecipientView[]> {
  return recipientsQuery(db, tenantId, notificationId).orderBy('r.id').execute();
}

export async function recipientsByKeys(db: Executor, notificationId: number, keys: string[]): Promise<Map<string, NotificationRecipientRow>> {
  if (keys.length === 0) return new Map();
  const rows = await db
    .selectFrom('notification_recipients')
    .selectAll()
    .where('notification_id', '=', notificationId)
    .where('recipient_key', 'in', keys)
    .execute();
  return new Map(rows.map((r) => [r.recipient_key, r]));
}

export async function insertRecipient(db: Executor, values: Omit<NotificationRecipientRow, 'id'>): Promise<NotificationRecipientRow> {
  return db.insertInto('notification_recipients').values(values).returningAll().executeTakeFirstOrThrow();
}

export async function setRecipientSecurityContext(db: Executor, id: number, securityContext: string | null, at: string): Promise<void> {
  await db.updateTable('notification_recipients').set({ security_context: securityContext, updated_at: at }).where('id', '=', id).execute();
}

export async function deleteRecipientsByKeys(db: Executor, tenantId: number, notificationId: number, keys: string[]): Promise<void> {
  if (keys.length === 0) return;
  await db
    .deleteFrom('notification_recipients')
    .where('tenant_id', '=', tenantId)
    .where('notification_id', '=', notificationId)
    .where('recipient_key', 'in', keys)
    .execute();
}

export async function recipientViewsByIds(db: Executor, tenantId: number, notificationId: number, ids: number[]): Promise<Map<number, RecipientView>> {
  if (ids.length === 0) return new Map();
  const rows = await recipientsQuery(db, tenantId, notificationId).where('r.id', 'in', ids).execute();
  return new Map(rows.map((r) => [r.id, r]));
}
