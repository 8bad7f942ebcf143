import type { Mailer } from '../../mail/index.js';
import { defineArea } from '../../platform/index.js';
import { dataApiArea } from '../data-api/index.js';
import { reportDeliveriesRoutes } from './report-deliveries.routes.js';
import { MAX_ROWS, reportDeliverySchemas } from './report-deliveries.schemas.js';
import { reportDeliveriesService } from './report-deliveries.service.js';
import { ReportDeliveryScheduler } from './scheduler.js';

export interface ReportDeliveriesConfig {
  /** The process's one SMTP transport (notifications'); null: nothing is mailed, each run says so. */
  mailer: Mailer | null;
  /** The most rows one recipient's attachment holds; absent: MAX_ROWS (10,000). */
  maxRows?: number | undefined;
  /** How often due deliveries are looked for (ms); absent: 30 s. */
  tickMs?: number;
}

/**
 * Report deliveries: a report's rows mailed as CSV or XLSX on a schedule, each recipient sent the rows
 * they may see. The due-time loop is a schedule of the jobs service (tests drive it with `tick()`).
 */
export const reportDeliveriesArea = defineArea(
  'report-deliveries',
  ({ platform: { store, jobs, now, audit, onError }, use }, config: ReportDeliveriesConfig) => {
    const { dataApi } = use(dataApiArea);
    const reportDeliveries = reportDeliveriesService(store, { now, audit, jobs });
    const reportDeliveryScheduler = new ReportDeliveryScheduler(store, jobs, reportDeliveries, {
      now,
      audit,
      dataApi,
      mailer: config.mailer,
      maxRows: config.maxRows ?? MAX_ROWS,
      ...(config.tickMs !== undefined ? { tickMs: config.tickMs } : {}),
      onError: (error) => onError(error, 'report-deliveries: claiming due deliveries'),
    });
    return {
      services: { reportDeliveries, reportDeliveryScheduler },
      schemas: reportDeliverySchemas,
      routes: () => [reportDeliveriesRoutes(reportDeliveries)],
    };
  },
);
