import type { Kysely, Migration } from 'kysely';
import type { Dialect } from '../dialect.js';
import { columnsFor } from './columns.js';

/**
 * Dashboard exports (reference 8.A): one row per export, named to its submitter by `public_id`
 * (the `jobId` of the API); its render runs as a job of the jobs service (`job_id`), and the file
 * it produced waits in `content` until `expires_at`, five minutes after submission, shared by
 * every process. `identity` is whom the render is as (`user:<id>`, `embed:<tenant>:<externalId>`),
 * for the per-identity limit of exports running at once.
 */
export function dashboardExports(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<any>) {
      const { ref, table } = columnsFor(dialect);
      await table(db, 'dashboard_exports')
        .addColumn('public_id', 'text', (c) => c.notNull().unique())
        .addColumn('tenant_id', ref, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
        .addColumn('deployment_id', ref, (c) => c.notNull().references('deployments.id').onDelete('cascade'))
        .addColumn('dashboard_id', ref, (c) => c.notNull().references('dashboards.id').onDelete('cascade'))
        .addColumn('submitted_by', ref, (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('identity', 'text', (c) => c.notNull())
        .addColumn('job_id', ref)
        .addColumn('format', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('error', 'text')
        .addColumn('content_type', 'text')
        .addColumn('content', dialect === 'postgres' ? 'bytea' : 'blob')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      // Running exports per identity (the 429 count), and the sweep of expired ones.
      await db.schema.createIndex('dashboard_exports_identity').on('dashboard_exports').columns(['tenant_id', 'identity', 'status']).execute();
      await db.schema.createIndex('dashboard_exports_expiry').on('dashboard_exports').columns(['expires_at']).execute();
    },
  };
}
