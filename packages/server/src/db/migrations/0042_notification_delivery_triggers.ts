import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * `notification_deliveries.trigger`: what started a delivery, `SCHEDULE` (an occurrence the
 * scheduler claimed; every existing row) or `SEND_NOW` (…/send-now). The unique key that makes a
 * claim exclusive covers scheduled rows only: a send-now delivery is for no occurrence, and two of
 * them may be asked for in the same millisecond.
 */
export function notificationDeliveryTriggers(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .alterTable('notification_deliveries')
        .addColumn('trigger', 'text', (column) => column.notNull().defaultTo('SCHEDULE'))
        .execute();
      await db.schema.dropIndex('notification_deliveries_occurrence').execute();
      await sql`create unique index notification_deliveries_occurrence on notification_deliveries (notification_id, scheduled_for) where "trigger" = 'SCHEDULE'`.execute(
        db,
      );
      // The send-now question: is one of this notification's send-now deliveries still pending or running.
      await sql`create index notification_deliveries_send_now on notification_deliveries (notification_id) where "trigger" = 'SEND_NOW' and status in ('pending', 'running')`.execute(
        db,
      );
    },
  };
}
