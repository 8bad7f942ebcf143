import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../dialect.js';
import { columnsFor } from './columns.js';

/**
 * Notifications (areas/notifications/, reference 6): scheduled deliveries of one published
 * dashboard to its recipients.
 *
 * `notifications` keeps the schedule as it was asked for (type and fields) beside the cron
 * expression compiled from it, and `next_run_at`, the next occurrence in UTC, which the scheduler
 * reads through a partial index of enabled rows. `filters`, `time_grains` and `member_switchers`
 * are JSON text (null when never set).
 *
 * `notification_recipients`: one row per recipient, keyed per notification by `recipient_key`
 * (`user:<id>`, `embed-user:<id>`, `slack:<channel>`), so adding one twice finds the row.
 *
 * `notification_deliveries`: one row per claimed occurrence. The unique (notification,
 * scheduled_for) key is what makes a claim exclusive across processes: the second insert of the
 * same occurrence fails, whichever process tries it. `notification_delivery_recipients` holds the
 * per-recipient state of one delivery (pending, attempts, last error).
 */
export function notifications(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<any>) {
      const { ref, table } = columnsFor(dialect);
      const tenant = (c: any) => c.notNull().references('tenants.id').onDelete('cascade');

      await table(db, 'notifications')
        .addColumn('tenant_id', ref, tenant)
        .addColumn('deployment_id', ref, (c) => c.notNull().references('deployments.id').onDelete('cascade'))
        .addColumn('dashboard_id', ref, (c) => c.notNull().references('dashboards.id').onDelete('cascade'))
        .addColumn('schedule_type', 'text', (c) => c.notNull())
        .addColumn('minute', 'integer')
        .addColumn('hour', 'integer')
        .addColumn('day_of_week', 'integer')
        .addColumn('day_of_month', 'integer')
        .addColumn('cron_expression', 'text', (c) => c.notNull())
        .addColumn('timezone', 'text', (c) => c.notNull())
        .addColumn('is_enabled', 'integer', (c) => c.notNull())
        .addColumn('notification_enabled', 'integer', (c) => c.notNull())
        .addColumn('notification_format', 'text', (c) => c.notNull())
        .addColumn('notification_ai_summary', 'integer', (c) => c.notNull())
        .addColumn('filters', 'text')
        .addColumn('time_grains', 'text')
        .addColumn('member_switchers', 'text')
        .addColumn('next_run_at', 'text')
        .addColumn('created_by', ref)
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      // A deployment's list, newest first.
      await db.schema.createIndex('notifications_deployment').on('notifications').columns(['deployment_id', 'id']).execute();
      await db.schema.createIndex('notifications_dashboard').on('notifications').columns(['dashboard_id']).execute();
      // The scheduler's question: which enabled notifications are due.
      await sql`create index notifications_due on notifications (next_run_at) where is_enabled = 1`.execute(db);

      await table(db, 'notification_recipients')
        .addColumn('tenant_id', ref, tenant)
        .addColumn('notification_id', ref, (c) => c.notNull().references('notifications.id').onDelete('cascade'))
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('recipient_key', 'text', (c) => c.notNull())
        .addColumn('user_id', ref, (c) => c.references('users.id').onDelete('cascade'))
        .addColumn('embed_user_id', ref, (c) => c.references('embed_users.id').onDelete('cascade'))
        .addColumn('channel_id', 'text')
        .addColumn('channel_name', 'text')
        // JSON object: the embed recipient's security context for rendering, or null.
        .addColumn('security_context', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('notification_recipients_key').on('notification_recipients').columns(['notification_id', 'recipient_key']).unique().execute();
      // The list filters by recipient: a user's or an embed user's notifications.
      await db.schema.createIndex('notification_recipients_user').on('notification_recipients').columns(['user_id']).execute();
      await db.schema.createIndex('notification_recipients_embed_user').on('notification_recipients').columns(['embed_user_id']).execute();

      await table(db, 'notification_deliveries')
        .addColumn('tenant_id', ref, tenant)
        .addColumn('notification_id', ref, (c) => c.notNull().references('notifications.id').onDelete('cascade'))
        .addColumn('scheduled_for', 'text', (c) => c.notNull())
        .addColumn('claimed_at', 'text', (c) => c.notNull())
        .addColumn('claimed_by', 'text', (c) => c.notNull())
        .addColumn('job_id', ref)
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('send', 'integer', (c) => c.notNull())
        .addColumn('format', 'text', (c) => c.notNull())
        .addColumn('message', 'text')
        .addColumn('finished_at', 'text')
        .execute();
      await db.schema
        .createIndex('notification_deliveries_occurrence')
        .on('notification_deliveries')
        .columns(['notification_id', 'scheduled_for'])
        .unique()
        .execute();
      // The history, newest first.
      await db.schema.createIndex('notification_deliveries_history').on('notification_deliveries').columns(['notification_id', 'id']).execute();

      await table(db, 'notification_delivery_recipients')
        .addColumn('tenant_id', ref, tenant)
        .addColumn('delivery_id', ref, (c) => c.notNull().references('notification_deliveries.id').onDelete('cascade'))
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('user_id', ref)
        .addColumn('embed_user_id', ref)
        .addColumn('email', 'text')
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('last_error', 'text')
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('notification_delivery_recipients_delivery').on('notification_delivery_recipients').columns(['delivery_id', 'id']).execute();
    },
  };
}
