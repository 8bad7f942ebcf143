import { type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../dialect.js';
import { columnsFor } from './columns.js';

/**
 * Published dashboards (reference 8.G.2, 3.6): `dashboards`, one row per workbook that was ever
 * published, holding what belongs to the dashboard across its versions (the `public_id` embeds
 * address it by, the signed-embedding switch `allow_embed`, 0 or 1 on both stores);
 * `dashboard_versions`, one row per publication (`published` for the current one, `archived` for
 * the ones before it); `dashboard_report_snapshots`, the frozen copies of the reports a version
 * shows, with their own ids (python runs name a snapshot, reference 3.7). A snapshot keeps the
 * report's id but no foreign key to it: deleting the report leaves published versions as they were.
 */
export function dashboards(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<any>) {
      const { ref, table } = columnsFor(dialect);
      await table(db, 'dashboards')
        .addColumn('tenant_id', ref, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
        .addColumn('deployment_id', ref, (c) => c.notNull().references('deployments.id').onDelete('cascade'))
        .addColumn('workbook_id', ref, (c) => c.notNull().references('workbooks.id').onDelete('cascade'))
        .addColumn('public_id', 'text', (c) => c.notNull())
        .addColumn('allow_embed', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('created_by', ref)
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      // One dashboard per workbook; public ids are unguessable and unique across tenants.
      await db.schema.createIndex('dashboards_workbook').on('dashboards').columns(['workbook_id']).unique().execute();
      await db.schema.createIndex('dashboards_public_id').on('dashboards').columns(['public_id']).unique().execute();
      await table(db, 'dashboard_versions')
        .addColumn('tenant_id', ref, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
        .addColumn('dashboard_id', ref, (c) => c.notNull().references('dashboards.id').onDelete('cascade'))
        .addColumn('version_number', 'integer', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('title', 'text')
        .addColumn('description', 'text')
        // JSON DashboardConfig.
        .addColumn('config', 'text', (c) => c.notNull())
        .addColumn('created_by', ref)
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      // Numbers are unique per dashboard; the versions list and the current version read this index from the end.
      await db.schema.createIndex('dashboard_versions_number').on('dashboard_versions').columns(['dashboard_id', 'version_number']).unique().execute();
      await table(db, 'dashboard_report_snapshots')
        .addColumn('tenant_id', ref, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
        .addColumn('version_id', ref, (c) => c.notNull().references('dashboard_versions.id').onDelete('cascade'))
        .addColumn('position', 'integer', (c) => c.notNull())
        .addColumn('report_id', ref, (c) => c.notNull())
        // JSON: the ReportSnapshot fields other than id, reportId and versionNumber.
        .addColumn('content', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('dashboard_report_snapshots_version').on('dashboard_report_snapshots').columns(['version_id', 'position']).unique().execute();
    },
  };
}
