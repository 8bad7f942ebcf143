import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../dialect.js';
import { columnsFor } from './columns.js';

/**
 * Report deliveries (areas/report-deliveries/): a report's rows mailed as CSV on a schedule to a
 * bounded list of recipients, each sent the rows they may see.
 *
 * `report_deliveries` keep the cron expression, its zone and `next_run_at` (UTC), which the
 * due-time schedule reads through a partial index of running (not paused) rows and advances with
 * a compare-and-set, so an occurrence is claimed once across processes. `recipients` is JSON
 * text: the resolved recipients (at most 50), each a user id or an embed user id with the
 * security context kept for them; their addresses are read when a run mails.
 *
 * `report_delivery_runs` holds the 200 most recent runs of each delivery (pruned as each is
 * added); `results` is JSON text, one entry per recipient with what became of their mail.
 */
export function reportDeliveries(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<any>) {
      const { ref, table } = columnsFor(dialect);
      const tenant = (c: any) => c.notNull().references('tenants.id').onDelete('cascade');

      await table(db, 'report_deliveries')
        .addColumn('tenant_id', ref, tenant)
        .addColumn('deployment_id', ref, (c) => c.notNull().references('deployments.id').onDelete('cascade'))
        .addColumn('report_id', ref, (c) => c.notNull().references('reports.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('format', 'text', (c) => c.notNull())
        .addColumn('cron', 'text', (c) => c.notNull())
        .addColumn('timezone', 'text', (c) => c.notNull())
        .addColumn('recipients', 'text', (c) => c.notNull())
        .addColumn('paused', 'integer', (c) => c.notNull())
        .addColumn('next_run_at', 'text')
        .addColumn('created_by', ref, (c) => c.references('users.id').onDelete('set null'))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('report_deliveries_deployment').on('report_deliveries').columns(['deployment_id', 'id']).execute();
      await sql`create index report_deliveries_due on report_deliveries (next_run_at) where paused = 0`.execute(db);

      await table(db, 'report_delivery_runs')
        .addColumn('tenant_id', ref, tenant)
        .addColumn('delivery_id', ref, (c) => c.notNull().references('report_deliveries.id').onDelete('cascade'))
        .addColumn('trigger', 'text', (c) => c.notNull())
        .addColumn('scheduled_for', 'text')
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('job_id', ref)
        .addColumn('message', 'text')
        .addColumn('results', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('started_at', 'text')
        .addColumn('finished_at', 'text')
        .execute();
      await db.schema.createIndex('report_delivery_runs_history').on('report_delivery_runs').columns(['delivery_id', 'id']).execute();
    },
  };
}
