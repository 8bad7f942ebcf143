import type { Kysely, Migration } from 'kysely';
import type { Dialect } from '../dialect.js';
import { columnsFor } from './columns.js';

/**
 * Workbook promotion across deployments: one row per promotion (its outcome, the idempotency key it
 * was sent with and a hash of its body, so a repeat answers the same promotion), and the links
 * from a source workbook or report to its promoted copy in another deployment, which a promotion
 * follows to update the copy instead of making a second one.
 *
 * Promotions outlive the workbooks they name (history), so their item ids carry no foreign key;
 * links go with either workbook and with the report copy by cascade, so a deleted copy is made
 * afresh by the next promotion.
 */
export function workbookPromotions(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<any>) {
      const { ref, table } = columnsFor(dialect);
      await table(db, 'workbook_promotions')
        .addColumn('tenant_id', ref, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
        .addColumn('source_deployment_id', ref, (c) => c.notNull())
        .addColumn('source_workbook_id', ref, (c) => c.notNull())
        .addColumn('target_deployment_id', ref, (c) => c.notNull())
        .addColumn('target_workbook_id', ref, (c) => c.notNull())
        .addColumn('outcome', 'text', (c) => c.notNull())
        // JSON: the reports copied, `[{sourceReportId, targetReportId, outcome}]`.
        .addColumn('reports', 'text', (c) => c.notNull())
        .addColumn('dashboard_published', 'integer', (c) => c.notNull())
        .addColumn('idempotency_key', 'text')
        .addColumn('request_hash', 'text', (c) => c.notNull())
        .addColumn('created_by', ref, (c) => c.references('users.id').onDelete('set null'))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      // A key names one promotion of one source workbook; NULL keys never collide.
      await db.schema
        .createIndex('workbook_promotions_key')
        .unique()
        .on('workbook_promotions')
        .columns(['tenant_id', 'source_workbook_id', 'idempotency_key'])
        .execute();
      // A workbook's history, either side, newest first.
      await db.schema.createIndex('workbook_promotions_source').on('workbook_promotions').columns(['tenant_id', 'source_workbook_id', 'id']).execute();
      await db.schema.createIndex('workbook_promotions_target').on('workbook_promotions').columns(['tenant_id', 'target_workbook_id', 'id']).execute();

      await table(db, 'workbook_promotion_links')
        .addColumn('tenant_id', ref, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('source_deployment_id', ref, (c) => c.notNull())
        .addColumn('source_workbook_id', ref, (c) => c.notNull().references('workbooks.id').onDelete('cascade'))
        .addColumn('target_deployment_id', ref, (c) => c.notNull())
        .addColumn('target_workbook_id', ref, (c) => c.notNull().references('workbooks.id').onDelete('cascade'))
        // Null on the workbook's own link (`kind` WORKBOOK). No foreign key: a report deleted since
        // the publication is still promoted from its frozen snapshot, and its link keeps a later
        // promotion updating that copy (ids are never reused).
        .addColumn('source_report_id', ref)
        .addColumn('target_report_id', ref, (c) => c.references('reports.id').onDelete('cascade'))
        .addColumn('last_promotion_id', ref, (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('workbook_promotion_links_source')
        .on('workbook_promotion_links')
        .columns(['tenant_id', 'source_workbook_id', 'target_deployment_id', 'kind'])
        .execute();
      await db.schema.createIndex('workbook_promotion_links_target').on('workbook_promotion_links').columns(['tenant_id', 'target_workbook_id']).execute();
    },
  };
}
