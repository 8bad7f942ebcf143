import type { Kysely, Migration } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * The data a delivery's render showed each recipient (JSON, bounded), kept so that the next
 * delivery to the same recipient can say what changed since (`notificationAiSummary`).
 */
export function deliveryRenderData(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('notification_delivery_recipients').addColumn('render_data', 'text').execute();
    },
  };
}
