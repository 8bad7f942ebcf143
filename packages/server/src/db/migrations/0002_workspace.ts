import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../dialect.js';
import { columnsFor, type Columns } from './columns.js';

/**
 * Folders form an adjacency list: `parent_id` is the only truth about the tree (DESIGN.md,
 * "Trees"), so a move writes one row. Sibling names are unique; the root is parent 0 in the index
 * because a unique index treats NULLs as distinct.
 */
async function folders(db: Kysely<any>, { table, ref }: Columns): Promise<void> {
  await table(db, 'folders')
    .addColumn('tenant_id', ref, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('deployment_id', ref, (c) => c.notNull().references('deployments.id').onDelete('cascade'))
    // No cascade: a folder with subfolders is never deleted (DESIGN.md, "Deleting folders").
    .addColumn('parent_id', ref, (c) => c.references('folders.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_by', ref)
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await sql`create unique index folders_sibling_name on folders (deployment_id, coalesce(parent_id, 0), name)`.execute(db);
  await db.schema.createIndex('folders_parent').on('folders').columns(['parent_id']).execute();
}

/** Workbooks and reports sit in a folder or at the root (folder_id null). JSON values are text. */
async function items(db: Kysely<any>, { table, ref }: Columns): Promise<void> {
  await table(db, 'workbooks')
    .addColumn('tenant_id', ref, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('deployment_id', ref, (c) => c.notNull().references('deployments.id').onDelete('cascade'))
    .addColumn('folder_id', ref, (c) => c.references('folders.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('meta', 'text', (c) => c.notNull())
    .addColumn('calculated_fields', 'text', (c) => c.notNull())
    .addColumn('dashboard_draft', 'text')
    .addColumn('dashboard_published', 'text')
    .addColumn('published_dashboard', 'text')
    .addColumn('created_by', ref)
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await sql`create unique index workbooks_slug on workbooks (deployment_id, slug)`.execute(db);
  await db.schema.createIndex('workbooks_folder').on('workbooks').columns(['deployment_id', 'folder_id']).execute();

  await table(db, 'reports')
    .addColumn('tenant_id', ref, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('deployment_id', ref, (c) => c.notNull().references('deployments.id').onDelete('cascade'))
    .addColumn('folder_id', ref, (c) => c.references('folders.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('public_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text')
    .addColumn('title', 'text')
    .addColumn('description', 'text')
    .addColumn('sql_query', 'text')
    .addColumn('python_code', 'text')
    .addColumn('spec', 'text')
    .addColumn('meta', 'text')
    .addColumn('preferences', 'text')
    .addColumn('period_comparisons', 'text')
    .addColumn('fill_missing_rows', 'text')
    .addColumn('last_viewed_at', 'text')
    .addColumn('created_by', ref)
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await sql`create unique index reports_public_id on reports (deployment_id, public_id)`.execute(db);
  await db.schema.createIndex('reports_folder').on('reports').columns(['deployment_id', 'folder_id']).execute();

  // isFavorite is per user: one row per user and item.
  await db.schema
    .createTable('favorites')
    .addColumn('tenant_id', ref, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('user_id', ref, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('item_type', 'text', (c) => c.notNull())
    .addColumn('item_id', ref, (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('favorites_pk', ['user_id', 'item_type', 'item_id'])
    .execute();
  await db.schema.createIndex('favorites_item').on('favorites').columns(['item_type', 'item_id']).execute();
}

/** Folders, workbooks, reports and favorites: the workspace of each deployment. */
export function workspace(dialect: Dialect): Migration {
  const columns = columnsFor(dialect);
  return {
    async up(db: Kysely<any>) {
      for (const step of [folders, items]) await step(db, columns);
    },
    async down(db: Kysely<any>) {
      for (const table of ['favorites', 'reports', 'workbooks', 'folders']) await db.schema.dropTable(table).execute();
    },
  };
}
