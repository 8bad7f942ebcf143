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
      await db.schema
        .alterTable('deployments')
        .addColumn('deploy_branch_name', 'text', (c) => c.notNull().defaultTo('main'))
        .execute();
      await db.schema
        .alterTable('deployments')
        .addColumn('deploy_branch_read_only', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema
        .alterTable('deployments')
        .addColumn('deploy_branch_merge_allowed', 'integer', (c) => c.notNull().defaultTo(1))
        .execute();
      await db.schema
        .alterTable('deployments')
        .addColumn('deploy_project_root', 'text', (c) => c.notNull().defaultTo(''))
        .execute();
      await db.schema
        .alterTable('deployments')
        .addColumn('deploy_mode', 'text', (c) => c.notNull().defaultTo('git'))
        .execute();
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

      // A build compiles the model of one commit; its id is the reference's `buildJobId`. The job
      // that runs it (jobs service) holds the attempts and the log lines.
      await table(db, 'builds')
        .addColumn('tenant_id', ref, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
        .addColumn('deployment_id', ref, (c) => c.notNull().references('deployments.id').onDelete('cascade'))
        .addColumn('branch_name', 'text', (c) => c.notNull())
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('commit_sha', 'text', (c) => c.notNull())
        .addColumn('files_hash', 'text')
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('error_text', 'text')
        .addColumn('cubes_count', 'integer')
        .addColumn('artifact', 'text')
        .addColumn('job_id', ref)
        .addColumn('cause', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('started_at', 'text')
        .addColumn('finished_at', 'text')
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('builds_by_branch').on('builds').columns(['deployment_id', 'branch_name', 'id']).execute();

      // An upload in progress (reference 2.6-2.8): its files wait in the repository as blobs.
      await db.schema
        .createTable('uploads')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('tenant_id', ref, (c) => c.notNull())
        .addColumn('deployment_id', ref, (c) => c.notNull().references('deployments.id').onDelete('cascade'))
        .addColumn('key_id', ref, (c) => c.notNull())
        .addColumn('branch_name', 'text', (c) => c.notNull())
        // The directory the upload's paths are relative to ('' for the repository root).
        .addColumn('root', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addColumn('finished_at', 'text')
        .addColumn('last_hash', 'text')
        .execute();
      await db.schema.createIndex('uploads_by_deployment').on('uploads').columns(['deployment_id', 'finished_at']).execute();
      // Each file received: a row per path, so files sent side by side never overwrite each other's record.
      await db.schema
        .createTable('upload_files')
        .addColumn('upload_id', 'text', (c) => c.notNull().references('uploads.id').onDelete('cascade'))
        .addColumn('path', 'text', (c) => c.notNull())
        .addColumn('blob_sha', 'text', (c) => c.notNull())
        // The content waits here until the finish writes every file in one git process.
        .addColumn('content', dialect === 'postgres' ? 'bytea' : 'blob', (c) => c.notNull())
        .addPrimaryKeyConstraint('upload_files_pk', ['upload_id', 'path'])
        .execute();
    },
  };
}
