import { type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../dialect.js';
import { columnsFor } from './columns.js';

/**
 * The runtime service's own tables (src/runtime/): `runtimes`, one row per environment that runs
 * or ran (its current pod: state, restarts, which process owns it and until when, where it
 * listens), and `runtime_logs`, the pods' output, kept across restarts of pods and servers.
 *
 * Ownership is a lease: `owner` is a server process, `lease_expires_at` the time (ISO text, as
 * every time here) after which any process may take the row over. `ready` is 0 or 1 on both
 * stores, like the jobs table's flags. `secret` is sealed by the secrets service: the proxy sends
 * it with each request, so nothing else on the host can call a runtime directly.
 */
export function runtimes(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<any>) {
      const { ref, table } = columnsFor(dialect);
      await table(db, 'runtimes')
        .addColumn('tenant_id', ref, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
        .addColumn('deployment_id', ref, (c) => c.notNull().references('deployments.id').onDelete('cascade'))
        .addColumn('environment_id', 'text', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('branch_name', 'text', (c) => c.notNull())
        .addColumn('pod', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('ready', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('restart_count', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('build_id', ref)
        .addColumn('version', 'text')
        .addColumn('owner', 'text')
        .addColumn('lease_expires_at', 'text')
        .addColumn('address', 'text')
        .addColumn('secret', 'text')
        .addColumn('last_used_at', 'text')
        .addColumn('last_error', 'text')
        .addColumn('started_at', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('runtimes_environment').on('runtimes').columns(['deployment_id', 'environment_id']).unique().execute();
      // Each process renews and sweeps the leases it holds.
      await db.schema.createIndex('runtimes_owner').on('runtimes').columns(['owner']).execute();
      await table(db, 'runtime_logs')
        .addColumn('tenant_id', ref, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
        .addColumn('deployment_id', ref, (c) => c.notNull().references('deployments.id').onDelete('cascade'))
        .addColumn('environment_type', 'text', (c) => c.notNull())
        .addColumn('pod', 'text', (c) => c.notNull())
        .addColumn('container', 'text', (c) => c.notNull())
        .addColumn('at', 'text', (c) => c.notNull())
        .addColumn('message', 'text', (c) => c.notNull())
        .execute();
      // A deployment's tail, newest first, and its trimming: both walk this index from the end.
      await db.schema.createIndex('runtime_logs_deployment').on('runtime_logs').columns(['deployment_id', 'id']).execute();
    },
  };
}
