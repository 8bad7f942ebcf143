import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../dialect.js';
import { columnsFor } from './columns.js';

/**
 * dbt-sync (areas/dbt-sync/): a deployment's transformation-project settings, its sync runs and
 * their log entries. A run's job lives in `jobs` (the jobs service); the run row is what users
 * see (reference 7.0), written by the job as it moves through its stages.
 *
 * JSON columns (`selector`, `phases`, `stats`, `trigger_context`, `generated_files`, `files`) are
 * text on both stores. `manifest` holds a manifest sent in the request (up to 50 MB) until the
 * run ends, so a run taken over by another process still has it.
 */
export function dbtSync(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<any>) {
      const { ref, table } = columnsFor(dialect);
      await table(db, 'dbt_sync_settings')
        .addColumn('tenant_id', ref, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
        .addColumn('deployment_id', ref, (c) => c.notNull().unique().references('deployments.id').onDelete('cascade'))
        .addColumn('repository', 'text', (c) => c.notNull())
        .addColumn('ref', 'text')
        .addColumn('manifest_path', 'text', (c) => c.notNull())
        .addColumn('output_path', 'text', (c) => c.notNull())
        .addColumn('selector', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();

      await table(db, 'dbt_sync_runs')
        .addColumn('public_id', 'text', (c) => c.notNull().unique())
        .addColumn('tenant_id', ref, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
        .addColumn('deployment_id', ref, (c) => c.notNull().references('deployments.id').onDelete('cascade'))
        .addColumn('job_id', ref)
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('stage', 'text', (c) => c.notNull())
        .addColumn('percent', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('message', 'text')
        .addColumn('trigger', 'text', (c) => c.notNull())
        .addColumn('source', 'text', (c) => c.notNull())
        .addColumn('output', 'text', (c) => c.notNull())
        .addColumn('branch_name', 'text', (c) => c.notNull())
        .addColumn('git_ref', 'text')
        .addColumn('user_id', ref)
        .addColumn('options', 'text', (c) => c.notNull())
        .addColumn('manifest', 'text')
        .addColumn('started_at', 'text', (c) => c.notNull())
        .addColumn('completed_at', 'text')
        .addColumn('duration_ms', 'integer')
        .addColumn('error_message', 'text')
        .addColumn('failed_phase', 'text')
        .addColumn('last_stage', 'text')
        .addColumn('phases', 'text')
        .addColumn('stats', 'text')
        .addColumn('trigger_context', 'text')
        .addColumn('commit_sha', 'text')
        .addColumn('generated_files', 'text')
        .addColumn('files', 'text')
        .addColumn('files_expire_at', 'text')
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      // History, newest first, per deployment.
      await db.schema.createIndex('dbt_sync_runs_deployment').on('dbt_sync_runs').columns(['deployment_id', 'id']).execute();
      // One running sync per deployment, held by the store itself: a second start's insert fails.
      await sql`create unique index dbt_sync_runs_one_running on dbt_sync_runs (deployment_id) where status = 'RUNNING'`.execute(db);

      await table(db, 'dbt_sync_logs')
        .addColumn('run_id', ref, (c) => c.notNull().references('dbt_sync_runs.id').onDelete('cascade'))
        .addColumn('seq', 'integer', (c) => c.notNull())
        .addColumn('at', 'text', (c) => c.notNull())
        .addColumn('level', 'text', (c) => c.notNull())
        .addColumn('stream', 'text', (c) => c.notNull())
        .addColumn('message', 'text', (c) => c.notNull())
        .addColumn('phase', 'text')
        .addColumn('duration_ms', 'integer')
        .execute();
      await db.schema.createIndex('dbt_sync_logs_run').on('dbt_sync_logs').columns(['run_id', 'seq']).unique().execute();
    },
  };
}
