import { type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../dialect.js';
import { columnsFor } from './columns.js';

/**
 * The data-model area: the deploy settings each deployment's repository is read with, the
 * branches' own facts (git knows a branch's head, not its parent, owner or staging flag), and the
 * dev-mode sessions of credentials. Booleans are integers 0/1 in both dialects.
 *
 * A branch row exists for every branch the API made. A branch pushed over git gets its row the
 * first time the API lists it; git's refs stay the truth for which branches exist and where.
 */
export function dataModel(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<any>) {
      const { ref, table } = columnsFor(dialect);
      await db.schema.alterTable('deployments').addColumn('deploy_branch_name', 'text', (c) => c.notNull().defaultTo('main')).execute();
      await db.schema.alterTable('deployments').addColumn('deploy_branch_read_only', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      await db.schema.alterTable('deployments').addColumn('deploy_branch_merge_allowed', 'integer', (c) => c.notNull().defaultTo(1)).execute();
      await db.schema.alterTable('deployments').addColumn('deploy_project_root', 'text', (c) => c.notNull().defaultTo('')).execute();
      await db.schema.alterTable('deployments').addColumn('deploy_mode', 'text', (c) => c.notNull().defaultTo('git')).execute();
      await db.schema.alterTable('deployments').addColumn('creation_method', 'text').execute();

      await table(db, 'branches')
        .addColumn('tenant_id', ref, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
        .addColumn('deployment_id', ref, (c) => c.notNull().references('deployments.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('parent_name', 'text')
        // The API key whose personal dev-mode branch this is; null for shared branches.
        .addColumn('owner_key_id', ref)
        .addColumn('staging_enabled', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('branches_by_name').on('branches').columns(['deployment_id', 'name']).unique().execute();
      // Entering dev mode finds the credential's fork of a parent through this.
      await db.schema.createIndex('branches_forks').on('branches').columns(['deployment_id', 'owner_key_id', 'parent_name']).execute();

      await db.schema
        .createTable('dev_sessions')
        .addColumn('deployment_id', ref, (c) => c.notNull().references('deployments.id').onDelete('cascade'))
        .addColumn('key_id', ref, (c) => c.notNull())
        .addColumn('tenant_id', ref, (c) => c.notNull())
        // The branch calls without a branch target: the credential's dev branch, or one it activated (2.12).
        .addColumn('branch_name', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('dev_sessions_pk', ['deployment_id', 'key_id'])
        .execute();
    },
  };
}
