import type { Mailer } from '../../mail/index.js';
import { defineArea } from '../../platform/index.js';
import { embedSessionsArea } from '../embed-sessions/index.js';
import { dashboardCommentsRoutes } from './dashboard-comments.routes.js';
import { dashboardCommentSchemas } from './dashboard-comments.schemas.js';
import { dashboardCommentsService } from './dashboard-comments.service.js';
import { mentionMail } from './mention-mail.js';

export interface DashboardCommentsConfig {
  /** Where mention mails go out (notifications' transport, the one of the process); absent or null: nobody is mailed. */
  mailer?: Mailer | null;
}

/** Comments on embedded dashboards (reference 8.C): threads of an embed tenant's users on a dashboard they may open. */
export const dashboardCommentsArea = defineArea(
  'dashboard-comments',
  ({ platform: { store, jobs, audit, now, onError }, use }, config: DashboardCommentsConfig = {}) => {
    const dashboardComments = dashboardCommentsService(store, {
      embedDashboards: use(embedSessionsArea).embedDashboards,
      audit,
      now,
      notify: config.mailer ? mentionMail(store, jobs, config.mailer) : null,
      onError,
    });
    return {
      services: { dashboardComments },
      schemas: dashboardCommentSchemas,
      routes: () => [dashboardCommentsRoutes(dashboardComments)],
    };
  },
);
