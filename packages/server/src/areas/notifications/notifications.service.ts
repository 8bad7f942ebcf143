import type { Caller } from '../../access/caller.js';
import type { Store } from '../../db/database.js';
import type { DeploymentRow, Executor, NotificationDeliveryRecipientRow, NotificationDeliveryRow, NotificationRow } from '../../db/tables.js';
import { lockKey, serialized } from '../../db/transactions.js';
import { afterId, pageRequest, toPage } from '../../shared/pagination.js';
import { ApiError, notFound } from '../../shared/problems.js';
import { findDashboardById, findDashboardByPublicId } from '../dashboards/index.js';
import { findDeployment } from '../deployments/index.js';
import type { FieldError } from './recipients.js';
import { addRecipients, checkRecipients, removeKeys, toRecipient } from './recipients.js';
import type {
  CreateNotificationInput,
  DashboardFilterInput,
  ListNotificationsInput,
  MemberSwitcherInput,
  Notification,
  NotificationDelivery,
  NotificationRecipient,
  PageInput,
  RecipientInput,
  RemoveRecipientInput,
  TimeGrainInput,
  UpdateNotificationInput,
} from './notifications.schemas.js';
import {
  deleteNotification,
  findNotification,
  insertNotification,
  listNotifications,
  allRecipients,
  listRecipients,
  updateNotification,
  type NotificationChanges,
  type NotificationFilter,
} from './notifications.store.js';
import { activeSendNow, deliveryRecipients, findDelivery, listDeliveries } from './deliveries.store.js';
import type { NotificationScheduler } from './scheduler.js';
import { canonicalTimeZone, checkSchedule, cronOf, describeSchedule, fieldsOf, nextOccurrence, type ScheduleFields, type ScheduleType } from './schedule.js';
import { findUserByEmail } from '../users/index.js';
import { findEmbedTenant } from '../embed-tenants/index.js';
import { findEmbedUserByExternalId } from '../embed-tenants/index.js';
import { normalizeExternalId } from '../embed-tenants/index.js';

const json = <T>(text: string | null): T | null => (text === null ? null : (JSON.parse(text) as T));
const nullablePage = (input: { first?: number | null; after?: string | null }) =>
  pageRequest({ first: input.first ?? undefined, after: input.after ?? undefined });

function scheduleOf(row: NotificationRow): ScheduleFields {
  return {
    scheduleType: row.schedule_type as ScheduleType,
    minute: row.minute,
    hour: row.hour,
    dayOfWeek: row.day_of_week,
    dayOfMonth: row.day_of_month,
    customCron: row.schedule_type === 'CUSTOM' ? row.cron_expression : null,
    timezone: row.timezone,
  };
}

export function toNotification(row: NotificationRow): Notification {
  return {
    id: row.id,
    dashboardId: row.dashboard_id,
    deploymentId: row.deployment_id,
    cronExpression: row.cron_expression,
    timezone: row.timezone,
    isEnabled: row.is_enabled === 1,
    humanReadableSchedule: describeSchedule(scheduleOf(row), row.cron_expression),
    notificationEnabled: row.notification_enabled === 1,
    notificationFormat: row.notification_format,
    notificationAiSummary: row.notification_ai_summary === 1,
    filters: json(row.filters),
    timeGrains: json(row.time_grains),
    memberSwitchers: json(row.member_switchers),
    nextRunAt: row.is_enabled === 1 ? row.next_run_at : null,
  };
}

function toDelivery(row: NotificationDeliveryRow, recipients: NotificationDeliveryRecipientRow[]): NotificationDelivery {
  return {
    id: row.id,
    notificationId: row.notification_id,
    scheduledFor: row.scheduled_for,
    claimedAt: row.claimed_at,
    status: row.status,
    send: row.send === 1,
    format: row.format,
    message: row.message,
    trigger: row.trigger as NotificationDelivery['trigger'],
    jobId: row.job_id,
    finishedAt: row.finished_at,
    recipients: recipients.map((r) => ({
      type: r.type,
      userId: r.user_id,
      embedUserId: r.embed_user_id,
      email: r.email,
      status: r.status,
      attempts: r.attempts,
      lastError: r.last_error,
      updatedAt: r.updated_at,
    })),
  };
}

function invalid(errors: FieldError[], detail: string): ApiError {
  return new ApiError('VALIDATION_FAILED', detail, { errors });
}

/** `between` takes `[start, end]`; the other operators take what the schema allows. */
function checkFilters(filters: DashboardFilterInput[] | null | undefined, pointer: string): void {
  for (const [i, filter] of (filters ?? []).entries()) {
    if (filter.operator === 'between' && !(Array.isArray(filter.value) && filter.value.length === 2)) {
      throw invalid(
        [{ pointer: `${pointer}/${i}/value`, message: 'must be [start, end] for between' }],
        `Filter ${i} on ${filter.member} uses between, which takes a two-element value [start, end].`,
      );
    }
  }
}

const stored = <T>(list: T[] | null | undefined): string | null => (list == null ? null : JSON.stringify(list));

/**
 * Notifications of a deployment (reference 6): scheduled renders of one published dashboard to
 * its recipients. Every operation is an admin's. The schedule is compiled to a cron expression
 * when written, and `next_run_at` is recomputed whenever the schedule or its switch changes.
 */
export function notificationsService(
  store: Store,
  options: { embedUserLimit: number; now: () => Date; deliveries: Pick<NotificationScheduler, 'record' | 'enqueue'> },
) {
  const { db } = store;

  async function deploymentOf({ actor, access }: Caller, deploymentId: number, action: string): Promise<DeploymentRow> {
    access.requireAdmin(action);
    const row = await findDeployment(db, actor.tenantId, deploymentId);
    if (!row) throw notFound('DEPLOYMENT_NOT_FOUND', 'Deployment', deploymentId);
    return row;
  }

  async function requireNotification(executor: Executor, tenantId: number, deploymentId: number, id: number): Promise<NotificationRow> {
    const row = await findNotification(executor, tenantId, deploymentId, id);
    if (!row) throw new ApiError('NOTIFICATION_NOT_FOUND', `Deployment ${deploymentId} has no notification ${id}.`);
    return row;
  }

  /** The next occurrence after now, or null while the schedule is off. */
  function nextRun(cron: string, timezone: string, enabled: boolean): string | null {
    return enabled ? (nextOccurrence(cron, timezone, options.now())?.toISOString() ?? null) : null;
  }

  function compile(schedule: ScheduleFields): { fields: ScheduleFields; cron: string } {
    checkSchedule(schedule);
    const fields = fieldsOf(schedule);
    return { fields, cron: cronOf(fields) };
  }

  return {
    async list(caller: Caller, deploymentId: number, input: ListNotificationsInput) {
      const deployment = await deploymentOf(caller, deploymentId, 'list notifications');
      const tenantId = caller.actor.tenantId;
      if (input.dashboardId != null && input.dashboardPublicId != null) {
        throw invalid(
          [{ pointer: '/query/dashboardPublicId', message: 'cannot be combined with dashboardId' }],
          'Filter by dashboardId or by dashboardPublicId, not both.',
        );
      }
      const embedPair = input.recipientEmbedTenantName != null || input.recipientExternalId != null;
      const forms = [input.recipientUserId != null, input.recipientEmail != null, embedPair].filter(Boolean).length;
      if (forms > 1) {
        throw invalid(
          [{ pointer: '/query', message: 'holds more than one recipient filter' }],
          'Filter by one recipient at a time: recipientUserId, recipientEmail, or recipientEmbedTenantName with recipientExternalId.',
        );
      }
      if (embedPair && (input.recipientEmbedTenantName == null || input.recipientExternalId == null)) {
        const missing = input.recipientEmbedTenantName == null ? 'recipientEmbedTenantName' : 'recipientExternalId';
        throw invalid(
          [{ pointer: `/query/${missing}`, message: 'is required with the other embed recipient filter' }],
          'recipientEmbedTenantName and recipientExternalId go together: an embed user is named by both.',
        );
      }
      const page = nullablePage(input);
      const beforeId = afterId(page);
      const filter: NotificationFilter = {};
      const empty = {
        items: [] as Notification[],
        pageInfo: { startCursor: null, endCursor: null, hasNextPage: false, hasPreviousPage: page.after !== undefined },
      };
      if (input.dashboardId != null) filter.dashboardId = input.dashboardId;
      if (input.dashboardPublicId != null) {
        const dashboard = await findDashboardByPublicId(db, tenantId, input.dashboardPublicId);
        if (!dashboard || dashboard.deployment_id !== deployment.id) return empty;
        filter.dashboardId = dashboard.id;
      }
      if (input.recipientUserId != null) filter.userId = input.recipientUserId;
      if (input.recipientEmail != null) {
        const user = await findUserByEmail(db, tenantId, input.recipientEmail);
        if (!user) return empty;
        filter.userId = user.id;
      }
      if (input.recipientEmbedTenantName != null && input.recipientExternalId != null) {
        const embedTenant = await findEmbedTenant(db, tenantId, input.recipientEmbedTenantName.toLowerCase());
        const user = embedTenant && (await findEmbedUserByExternalId(db, tenantId, embedTenant.id, normalizeExternalId(input.recipientExternalId)));
        if (!user) return empty;
        filter.embedUserId = user.id;
      }
      const rows = await listNotifications(db, tenantId, deployment.id, filter, beforeId, page.first + 1);
      const { items, pageInfo } = toPage(rows, page, (r) => [r.id]);
      return { items: items.map(toNotification), pageInfo };
    },

    async get(caller: Caller, deploymentId: number, id: number): Promise<Notification> {
      const deployment = await deploymentOf(caller, deploymentId, 'view notifications');
      return toNotification(await requireNotification(db, caller.actor.tenantId, deployment.id, id));
    },

    async create(caller: Caller, deploymentId: number, input: CreateNotificationInput): Promise<Notification> {
      const deployment = await deploymentOf(caller, deploymentId, 'create notifications');
      const tenantId = caller.actor.tenantId;
      const byId = input.dashboardId != null;
      const byPublicId = input.dashboardPublicId != null;
      if (byId === byPublicId) {
        throw invalid(
          [{ pointer: '/body/dashboardId', message: 'exactly one of dashboardId and dashboardPublicId is required' }],
          'Name the dashboard with exactly one of dashboardId and dashboardPublicId.',
        );
      }
      const timezone = canonicalTimeZone(input.timezone ?? 'UTC');
      const { fields, cron } = compile({
        scheduleType: input.scheduleType,
        minute: input.minute ?? null,
        hour: input.hour ?? null,
        dayOfWeek: input.dayOfWeek ?? null,
        dayOfMonth: input.dayOfMonth ?? null,
        customCron: input.customCron ?? null,
        timezone,
      });
      checkFilters(input.filters, '/body/filters');
      const dashboard = byId
        ? await findDashboardById(db, tenantId, input.dashboardId as number)
        : await findDashboardByPublicId(db, tenantId, input.dashboardPublicId as string);
      if (!dashboard || dashboard.deployment_id !== deployment.id) {
        throw new ApiError(
          'DASHBOARD_NOT_FOUND',
          `Deployment ${deployment.id} has no published dashboard ${byId ? input.dashboardId : JSON.stringify(input.dashboardPublicId)}.`,
        );
      }
      const at = options.now().toISOString();
      const row = await insertNotification(db, {
        tenant_id: tenantId,
        deployment_id: deployment.id,
        dashboard_id: dashboard.id,
        schedule_type: fields.scheduleType,
        minute: fields.minute,
        hour: fields.hour,
        day_of_week: fields.dayOfWeek,
        day_of_month: fields.dayOfMonth,
        cron_expression: cron,
        timezone,
        is_enabled: 1,
        notification_enabled: input.notificationEnabled === false ? 0 : 1,
        notification_format: input.notificationFormat ?? 'png',
        notification_ai_summary: input.notificationAiSummary === true ? 1 : 0,
        filters: stored(input.filters),
        time_grains: stored(input.timeGrains),
        member_switchers: stored(input.memberSwitchers),
        next_run_at: nextRun(cron, timezone, true),
        created_by: caller.actor.userId,
        created_at: at,
        updated_at: at,
      });
      return toNotification(row);
    },

    /** Fields left out (or null) stay; `filters`, `timeGrains` and `memberSwitchers` sent replace the set, null clears it. */
    async update(caller: Caller, deploymentId: number, id: number, input: UpdateNotificationInput): Promise<Notification> {
      const deployment = await deploymentOf(caller, deploymentId, 'change notifications');
      const tenantId = caller.actor.tenantId;
      checkFilters(input.filters, '/body/filters');
      return serialized(store, lockKey.notification(id), async (trx) => {
        const row = await requireNotification(trx, tenantId, deployment.id, id);
        const changes: NotificationChanges = {};
        const scheduleSent = [input.scheduleType, input.minute, input.hour, input.dayOfWeek, input.dayOfMonth, input.customCron, input.timezone].some(
          (v) => v != null,
        );
        let cron = row.cron_expression;
        let timezone = row.timezone;
        if (scheduleSent) {
          const current = scheduleOf(row);
          timezone = input.timezone != null ? canonicalTimeZone(input.timezone) : row.timezone;
          const compiled = compile({
            scheduleType: input.scheduleType ?? current.scheduleType,
            minute: input.minute ?? current.minute,
            hour: input.hour ?? current.hour,
            dayOfWeek: input.dayOfWeek ?? current.dayOfWeek,
            dayOfMonth: input.dayOfMonth ?? current.dayOfMonth,
            customCron: input.customCron ?? current.customCron,
            timezone,
          });
          cron = compiled.cron;
          Object.assign(changes, {
            schedule_type: compiled.fields.scheduleType,
            minute: compiled.fields.minute,
            hour: compiled.fields.hour,
            day_of_week: compiled.fields.dayOfWeek,
            day_of_month: compiled.fields.dayOfMonth,
            cron_expression: cron,
            timezone,
          });
        }
        const enabled = input.isEnabled ?? row.is_enabled === 1;
        if (input.isEnabled != null) changes.is_enabled = enabled ? 1 : 0;
        // A new schedule, or a schedule switched back on, runs from now; one switched off has no next run.
        if (scheduleSent || (input.isEnabled != null && enabled !== (row.is_enabled === 1))) changes.next_run_at = nextRun(cron, timezone, enabled);
        if (input.notificationEnabled != null) changes.notification_enabled = input.notificationEnabled ? 1 : 0;
        if (input.notificationFormat != null) changes.notification_format = input.notificationFormat;
        if (input.notificationAiSummary != null) changes.notification_ai_summary = input.notificationAiSummary ? 1 : 0;
        if (input.filters !== undefined) changes.filters = stored(input.filters as DashboardFilterInput[] | null);
        if (input.timeGrains !== undefined) changes.time_grains = stored(input.timeGrains as TimeGrainInput[] | null);
        if (input.memberSwitchers !== undefined) changes.member_switchers = stored(input.memberSwitchers as MemberSwitcherInput[] | null);
        if (Object.keys(changes).length === 0) return toNotification(row);
        return toNotification(await updateNotification(trx, tenantId, row.id, { ...changes, updated_at: options.now().toISOString() }));
      });
    },

    async remove(caller: Caller, deploymentId: number, id: number): Promise<void> {
      const deployment = await deploymentOf(caller, deploymentId, 'delete notifications');
      await serialized(store, lockKey.notification(id), async (trx) => {
        const row = await requireNotification(trx, caller.actor.tenantId, deployment.id, id);
        await deleteNotification(trx, caller.actor.tenantId, row.id);
      });
    },

    async listRecipients(caller: Caller, deploymentId: number, id: number, input: PageInput) {
      const deployment = await deploymentOf(caller, deploymentId, 'list notification recipients');
      const row = await requireNotification(db, caller.actor.tenantId, deployment.id, id);
      const page = nullablePage(input);
      const rows = await listRecipients(db, caller.actor.tenantId, row.id, afterId(page), page.first + 1);
      const { items, pageInfo } = toPage(rows, page, (r) => [r.id]);
      return { items: items.map(toRecipient), pageInfo };
    },

    async addRecipients(
      caller: Caller,
      deploymentId: number,
      id: number,
      entries: RecipientInput[],
    ): Promise<{ createdRecipients: NotificationRecipient[]; updatedRecipients: NotificationRecipient[]; unchangedRecipients: NotificationRecipient[] }> {
      const deployment = await deploymentOf(caller, deploymentId, 'add notification recipients');
      const tenantId = caller.actor.tenantId;
      await requireNotification(db, tenantId, deployment.id, id);
      // Every entry resolves to an email, or nothing is written (reference 6.7).
      const checked = await checkRecipients(db, tenantId, entries);
      // The embed-people lock: provisioning may create users, within the account's cap.
      return serialized(store, [lockKey.embedPeople(tenantId), lockKey.notification(id)], async (trx) => {
        const row = await requireNotification(trx, tenantId, deployment.id, id);
        return addRecipients(trx, tenantId, row.id, checked, { userLimit: options.embedUserLimit, at: options.now().toISOString() });
      });
    },

    async removeRecipients(caller: Caller, deploymentId: number, id: number, entries: RemoveRecipientInput[]): Promise<void> {
      const deployment = await deploymentOf(caller, deploymentId, 'remove notification recipients');
      const tenantId = caller.actor.tenantId;
      await serialized(store, lockKey.notification(id), async (trx) => {
        const row = await requireNotification(trx, tenantId, deployment.id, id);
        await removeKeys(trx, tenantId, row.id, entries);
      });
    },

    /**
     * Extension: delivers the notification now, through the same job as a scheduled occurrence, and
     * answers the queued delivery (`trigger` SEND_NOW). The schedule does not move; a schedule
     * switched off (`isEnabled` false) still sends. Refused while mail is off for it
     * (`notificationEnabled` false) or it has no recipients. While an earlier send-now of it is
     * queued or running, that delivery is answered and nothing more is sent.
     */
    async sendNow(caller: Caller, deploymentId: number, id: number): Promise<NotificationDelivery> {
      const deployment = await deploymentOf(caller, deploymentId, 'send notifications');
      const tenantId = caller.actor.tenantId;
      // The notification's lock: two calls at once record one delivery between them.
      const { delivery, queued } = await serialized(store, lockKey.notification(id), async (trx) => {
        const row = await requireNotification(trx, tenantId, deployment.id, id);
        const active = await activeSendNow(trx, row.id);
        if (active) return { delivery: active, queued: false };
        if (row.notification_enabled !== 1) {
          throw new ApiError(
            'NOTIFICATION_SENDING_OFF',
            `Notification ${id} has sending switched off (notificationEnabled false), so sending it now would mail nobody; switch it on first.`,
          );
        }
        if ((await allRecipients(trx, tenantId, row.id)).length === 0) {
          throw new ApiError('NOTIFICATION_NO_RECIPIENTS', `Notification ${id} has no recipients; add some before sending it.`);
        }
        const at = options.now().toISOString();
        const recorded = await options.deliveries.record(trx, row, { trigger: 'SEND_NOW', scheduledFor: at, at });
        if (!recorded) throw new Error(`send-now delivery of notification ${id} was not recorded`);
        return { delivery: recorded, queued: true };
      });
      if (queued) await options.deliveries.enqueue(tenantId, delivery.id);
      const current = (await findDelivery(db, delivery.id)) ?? delivery;
      return toDelivery(current, await deliveryRecipients(db, [current.id]));
    },

    /** Extension: the notification's deliveries, newest first, each with its recipients' state. */
    async deliveries(caller: Caller, deploymentId: number, id: number, input: PageInput) {
      const deployment = await deploymentOf(caller, deploymentId, 'view notification deliveries');
      const row = await requireNotification(db, caller.actor.tenantId, deployment.id, id);
      const page = nullablePage(input);
      const rows = await listDeliveries(db, caller.actor.tenantId, row.id, afterId(page), page.first + 1);
      const { items, pageInfo } = toPage(rows, page, (r) => [r.id]);
      const byDelivery = new Map<number, NotificationDeliveryRecipientRow[]>();
      for (const r of await deliveryRecipients(
        db,
        items.map((d) => d.id),
      ))
        byDelivery.set(r.delivery_id, [...(byDelivery.get(r.delivery_id) ?? []), r]);
      return { items: items.map((d) => toDelivery(d, byDelivery.get(d.id) ?? [])), pageInfo };
    },
  };
}
export type NotificationsService = ReturnType<typeof notificationsService>;
