import { type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../dialect.js';
import { columnsFor } from './columns.js';

/**
 * `jobs` and `job_logs`: the background jobs of the jobs service (src/jobs/), on both stores. These
 * rows are what users see (a build's status, its log); on PostgreSQL, pg-boss only delivers job ids
 * to the processes that run them, from a schema of its own.
 *
 * `cancel_requested` is an integer (0 or 1) on both stores: SQLite has no boolean and its driver
 * binds none, so one column type serves both. `heartbeat_at` is written by the running process
 * every few seconds; a `running` row whose heartbeat is stale belonged to a process that died.
 */
export function jobs(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<any>) {
      const { table, ref } = columnsFor(dialect);
      await table(db, 'jobs')
        .addColumn('tenant_id', ref, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('max_attempts', 'integer', (c) => c.notNull())
        .addColumn('result', 'text')
        .addColumn('error', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('started_at', 'text')
        .addColumn('finished_at', 'text')
        .addColumn('heartbeat_at', 'text')
        .addColumn('cancel_requested', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('owner', 'text')
        .execute();
      // Lists of one tenant's jobs of one kind (a deployment's builds), in id order.
      await db.schema.createIndex('jobs_tenant_kind').on('jobs').columns(['tenant_id', 'kind', 'id']).execute();
      // Workers claim queued rows in id order and sweep running ones; both look rows up by state.
      await db.schema.createIndex('jobs_state').on('jobs').columns(['state', 'id']).execute();
      await db.schema
        .createTable('job_logs')
        .addColumn('job_id', ref, (c) => c.notNull().references('jobs.id').onDelete('cascade'))
        .addColumn('seq', 'integer', (c) => c.notNull())
        .addColumn('at', 'text', (c) => c.notNull())
        .addColumn('line', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('job_logs_pk', ['job_id', 'seq'])
        .execute();
    },
    async down() {
      // Forward only, like the other migrations.
    },
  };
}
