import type { Kysely, Migration } from 'kysely';
import type { Dialect } from '../dialect.js';
import { columnsFor } from './columns.js';

/**
 * Comments on embedded dashboards (reference 8.C): one row per comment, in the partition of one
 * embed tenant on one dashboard, so another tenant's conversations on a dashboard shared with
 * both are never read. A root has `parent_id` null; replies point at their root, one level deep.
 * The thread's state (`resolved_at`, `resolved_by`, `last_activity_at`) lives on its root.
 *
 * Removal is soft (`removed_at`): the row stays and is listed with its body emptied, so a thread
 * stays readable. `mentions` is a JSON array of the embed user ids the body has mentioned, over
 * all its edits, so an edit mails only the users it adds (and nobody twice). Authors and resolvers are embed users; a user who goes
 * (their embed tenant is deleted) takes the tenant's comments with them by cascade.
 */
export function dashboardComments(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<any>) {
      const { ref, table } = columnsFor(dialect);
      await table(db, 'dashboard_comments')
        .addColumn('tenant_id', ref, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
        .addColumn('dashboard_id', ref, (c) => c.notNull().references('dashboards.id').onDelete('cascade'))
        .addColumn('embed_tenant_id', ref, (c) => c.notNull().references('embed_tenants.id').onDelete('cascade'))
        .addColumn('parent_id', ref, (c) => c.references('dashboard_comments.id').onDelete('cascade'))
        .addColumn('author_id', ref, (c) => c.references('embed_users.id').onDelete('set null'))
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('mentions', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('edited_at', 'text')
        .addColumn('removed_at', 'text')
        .addColumn('resolved_at', 'text')
        .addColumn('resolved_by', ref, (c) => c.references('embed_users.id').onDelete('set null'))
        .addColumn('last_activity_at', 'text', (c) => c.notNull())
        .execute();
      // A partition's threads, newest opened first; and a thread's replies, oldest first.
      await db.schema
        .createIndex('dashboard_comments_threads')
        .on('dashboard_comments')
        .columns(['dashboard_id', 'embed_tenant_id', 'parent_id', 'created_at', 'id'])
        .execute();
      await db.schema.createIndex('dashboard_comments_replies').on('dashboard_comments').columns(['parent_id', 'id']).execute();
    },
  };
}
