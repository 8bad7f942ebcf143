import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { DeploymentParams } from '../../shared/schemas.js';
import type { NotificationsService } from './notifications.service.js';
import {
  AddRecipientsBody,
  CreateNotificationBody,
  ListNotificationsQuery,
  NotificationParams,
  PageQuery,
  RemoveRecipientsBody,
  UpdateNotificationBody,
} from './notifications.schemas.js';

const tags = ['Notifications'];
const base = '/api/v1/deployments/:deploymentId/notifications';
const COMMON = ['FORBIDDEN', 'DEPLOYMENT_NOT_FOUND'] as const;

/** Reference 6: a deployment's scheduled dashboard deliveries and their recipients (admin only). */
export function notificationsRoutes(service: NotificationsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      base,
      {
        schema: {
          operationId: 'listNotifications',
          tags,
          summary: "List a deployment's notifications, newest first, by dashboard or recipient (reference 6.1; admin)",
          description:
            'At most one of `dashboardId` and `dashboardPublicId`, and one recipient form: `recipientUserId`, `recipientEmail`, or `recipientEmbedTenantName` with `recipientExternalId`. A filter naming nobody matches nothing.',
          params: DeploymentParams,
          querystring: ListNotificationsQuery,
          response: { 200: Type.Ref('NotificationDtoPage') },
          problems: [...COMMON, 'INVALID_CURSOR'],
        },
      },
      async (request) => service.list(request.caller, request.params.deploymentId, request.query),
    );

    app.post(
      base,
      {
        schema: {
          operationId: 'createNotification',
          tags,
          summary: 'Schedule deliveries of a published dashboard (reference 6.2; admin)',
          description:
            'Required per `scheduleType`: HOURLY `minute`; DAILY `minute`, `hour`; WEEKLY adds `dayOfWeek`; MONTHLY adds `dayOfMonth`; CUSTOM `customCron` (five fields). `timezone` is an IANA zone (default UTC). Format `png` by default. The new notification is on and has no recipients.',
          params: DeploymentParams,
          body: CreateNotificationBody,
          response: { 200: Type.Ref('NotificationDto') },
          problems: [...COMMON, 'KEY_SCOPE_FORBIDDEN', 'DASHBOARD_NOT_FOUND'],
        },
      },
      async (request) => service.create(request.caller, request.params.deploymentId, request.body),
    );

    app.get(
      `${base}/:id`,
      {
        schema: {
          operationId: 'getNotification',
          tags,
          summary: 'Get a notification (reference 6.3; admin)',
          params: NotificationParams,
          response: { 200: Type.Ref('NotificationDto') },
          problems: [...COMMON, 'NOTIFICATION_NOT_FOUND'],
        },
      },
      async (request) => service.get(request.caller, request.params.deploymentId, request.params.id),
    );

    app.put(
      `${base}/:id`,
      {
        schema: {
          operationId: 'updateNotification',
          tags,
          summary: 'Change a notification (reference 6.4; admin): fields left out stay; filters, timeGrains and memberSwitchers sent replace the set',
          params: NotificationParams,
          body: UpdateNotificationBody,
          response: { 200: Type.Ref('NotificationDto') },
          problems: [...COMMON, 'KEY_SCOPE_FORBIDDEN', 'NOTIFICATION_NOT_FOUND'],
        },
      },
      async (request) => service.update(request.caller, request.params.deploymentId, request.params.id, request.body),
    );

    app.delete(
      `${base}/:id`,
      {
        schema: {
          operationId: 'deleteNotification',
          tags,
          summary: 'Delete a notification with its recipients and delivery history (reference 6.5; admin)',
          params: NotificationParams,
          response: { 204: Type.Null({ description: 'Deleted' }) },
          problems: [...COMMON, 'KEY_SCOPE_FORBIDDEN', 'NOTIFICATION_NOT_FOUND'],
        },
      },
      async (request, reply) => {
        await service.remove(request.caller, request.params.deploymentId, request.params.id);
        return reply.code(204).send(null);
      },
    );

    app.get(
      `${base}/:id/recipients`,
      {
        schema: {
          operationId: 'listNotificationRecipients',
          tags,
          summary: "List a notification's recipients, newest first (reference 6.6; admin)",
          params: NotificationParams,
          querystring: PageQuery,
          response: { 200: Type.Ref('NotificationRecipientPage') },
          problems: [...COMMON, 'NOTIFICATION_NOT_FOUND', 'INVALID_CURSOR'],
        },
      },
      async (request) => service.listRecipients(request.caller, request.params.deploymentId, request.params.id, request.query),
    );

    app.post(
      `${base}/:id/recipients`,
      {
        schema: {
          operationId: 'addNotificationRecipients',
          tags,
          summary: 'Add 1-1000 recipients (reference 6.7; admin); idempotent; unknown embed users are provisioned',
          description:
            'SLACK is not supported yet (400). Every recipient must resolve to an email, or the whole request is refused before anything is written (400): an embed user needs `email` or an email-shaped `externalId`.',
          params: NotificationParams,
          body: AddRecipientsBody,
          response: { 200: Type.Ref('AddNotificationRecipientsResponse') },
          problems: [...COMMON, 'KEY_SCOPE_FORBIDDEN', 'NOTIFICATION_NOT_FOUND', 'GROUPS_NOT_FOUND', 'USER_ATTRIBUTES_NOT_FOUND', 'EMBED_USER_LIMIT'],
        },
      },
      async (request) => service.addRecipients(request.caller, request.params.deploymentId, request.params.id, request.body.recipients),
    );

    app.delete(
      `${base}/:id/recipients`,
      {
        schema: {
          operationId: 'removeNotificationRecipients',
          tags,
          summary: 'Remove 1-1000 recipients (reference 6.8; admin); ones not subscribed are skipped',
          params: NotificationParams,
          body: RemoveRecipientsBody,
          response: { 204: Type.Null({ description: 'Removed (or were not recipients)' }) },
          problems: [...COMMON, 'KEY_SCOPE_FORBIDDEN', 'NOTIFICATION_NOT_FOUND'],
        },
      },
      async (request, reply) => {
        await service.removeRecipients(request.caller, request.params.deploymentId, request.params.id, request.body.recipients);
        return reply.code(204).send(null);
      },
    );

    app.post(
      `${base}/:id/send-now`,
      {
        config: { optionalBody: true },
        schema: {
          operationId: 'sendNotificationNow',
          extension: true,
          tags,
          summary:
            'Extension: deliver a notification now (admin): answers the queued delivery (`trigger` SEND_NOW); the same job as a scheduled occurrence mails it',
          description:
            'Every recipient gets what a scheduled occurrence would send them (their own render, the same retries), and the delivery joins …/deliveries. The schedule does not move, and a notification whose schedule is off (`isEnabled` false) still sends. Refused with 409 while `notificationEnabled` is false (NOTIFICATION_SENDING_OFF) or it has no recipients (NOTIFICATION_NO_RECIPIENTS). While an earlier send-now of the notification is queued or running, that delivery is answered and nothing more is sent. Follow it in …/deliveries or the job by `jobId`.',
          params: NotificationParams,
          response: { 202: Type.Ref('NotificationDelivery') },
          problems: [...COMMON, 'KEY_SCOPE_FORBIDDEN', 'NOTIFICATION_NOT_FOUND', 'NOTIFICATION_SENDING_OFF', 'NOTIFICATION_NO_RECIPIENTS'],
        },
      },
      async (request, reply) => reply.code(202).send(await service.sendNow(request.caller, request.params.deploymentId, request.params.id)),
    );

    app.get(
      `${base}/:id/deliveries`,
      {
        schema: {
          operationId: 'listNotificationDeliveries',
          extension: true,
          tags,
          summary: "Extension: a notification's deliveries, newest first, with each recipient's state, attempts and last error (admin)",
          params: NotificationParams,
          querystring: PageQuery,
          response: { 200: Type.Ref('NotificationDeliveryPage') },
          problems: [...COMMON, 'NOTIFICATION_NOT_FOUND', 'INVALID_CURSOR'],
        },
      },
      async (request) => service.deliveries(request.caller, request.params.deploymentId, request.params.id, request.query),
    );
  };
}
