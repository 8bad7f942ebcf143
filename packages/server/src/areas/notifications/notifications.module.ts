import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { createMailer } from '../../mail/index.js';
import { defineArea } from '../../platform/index.js';
import { aiSettingsArea } from '../ai-settings/index.js';
import { dashboardExportsArea } from '../dashboard-exports/index.js';
import type { NotificationMailOptions } from './deliver.js';
import { notificationsRoutes } from './notifications.routes.js';
import { notificationSchemas } from './notifications.schemas.js';
import { notificationsService } from './notifications.service.js';
import { NotificationScheduler } from './scheduler.js';
import { createAccountSummariser, createSummariser } from './summary.js';

export interface NotificationsConfig {
  /** The most embed users an account may hold (recipients are checked against it). */
  embedUserLimit: number;
  /** How notifications are mailed; absent: no SMTP, nothing is mailed. */
  mail?: NotificationMailOptions;
  /** How often due occurrences are looked for (ms); absent: 10 s. */
  tickMs?: number;
  /** How long the summariser is waited for (ms); absent: the outbound default. */
  summaryTimeoutMs?: number;
}

/**
 * Notifications: scheduled renders of dashboards, mailed to their recipients. The due-time loop, a
 * schedule of the jobs service, claims each occurrence once across processes (tests drive it with `tick()`).
 */
export const notificationsArea = defineArea('notifications', ({ platform: { store, jobs, now, onError }, use }, config: NotificationsConfig) => {
  const { renderer } = use(dashboardExportsArea);
  const mail = config.mail;
  const mailer = mail?.smtp ? createMailer(mail.smtp) : null;
  const { ai } = use(aiSettingsArea);
  const fallback = mail?.summariser ? createSummariser(mail.summariser, config.summaryTimeoutMs ? { timeoutMs: config.summaryTimeoutMs } : {}) : null;
  // The account's model writes its summaries while AI is on for it; NOTIFICATION_SUMMARY_URL otherwise.
  const summariser = createAccountSummariser(async (tenantId) => {
    if (!(await ai.enabled(tenantId))) return null;
    const model = await ai.clientFor(tenantId);
    if (model === null) return null;
    return {
      client: model.client,
      maxTokensPerAnswer: model.limits.maxTokensPerAnswer,
      checkBudget: (reader) => ai.checkBudget(tenantId, reader),
      recordUsage: (reader, usage) => ai.recordUsage(tenantId, reader, usage),
    };
  }, fallback);
  const notificationScheduler = new NotificationScheduler(store, jobs, {
    now,
    delivery: { renderer, mailer, summariser, attempts: mail?.attempts ?? 3, retryBaseMs: mail?.retryBaseMs ?? 30_000 },
    owner: `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`,
    ...(config.tickMs !== undefined ? { tickMs: config.tickMs } : {}),
    onError: (error) => onError(error, 'notifications: claiming due deliveries'),
  });
  const notifications = notificationsService(store, { embedUserLimit: config.embedUserLimit, now, deliveries: notificationScheduler });
  return {
    services: { notifications, notificationScheduler, mailer, summariser },
    schemas: notificationSchemas,
    routes: () => [notificationsRoutes(notifications)],
    close: async () => {
      mailer?.close();
      await summariser?.close();
    },
  };
});
