import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../dialect.js';
import { columnsFor } from './columns.js';

/**
 * The account's own settings and its audit log.
 *
 * - `tenants.embed_settings` and `tenants.account_settings`: JSON objects holding only the keys an
 *   admin set (null: every default). On the tenant row because every request reads them through
 *   the tenant cache, and a write bumps `auth_version` in the same statement: every server process
 *   sees the change on its next request (cache/tenant-cache.ts).
 * - `user_settings`: per-user preferences (the default deployment, spec 0.5.0). Not on `users`:
 *   a write to `users` empties the tenant's cache, and a preference is not who-may-do-what.
 * - `audit_events`: append-only. No code path updates or deletes a row; a trigger refuses updates
 *   on both stores. Rows go only with their tenant (cascade).
 */
export function account(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<any>) {
      const { ref, table } = columnsFor(dialect);
      await db.schema.alterTable('tenants').addColumn('embed_settings', 'text').execute();
      await db.schema.alterTable('tenants').addColumn('account_settings', 'text').execute();

      await db.schema
        .createTable('user_settings')
        .addColumn('user_id', ref, (c) => c.primaryKey().references('users.id').onDelete('cascade'))
        .addColumn('tenant_id', ref, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
        .addColumn('default_deployment_id', ref, (c) => c.references('deployments.id').onDelete('set null'))
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();

      await table(db, 'audit_events')
        .addColumn('tenant_id', ref, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
        .addColumn('occurred_at', 'text', (c) => c.notNull())
        // 'request' for the hook; otherwise the explicit event's name ('env-vars.read', 'token.issued', 'sign-in').
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('actor_user_id', ref)
        .addColumn('actor_email', 'text')
        .addColumn('credential_kind', 'text')
        .addColumn('credential_id', 'text')
        .addColumn('method', 'text')
        .addColumn('route', 'text')
        // JSON object: the route's path parameters, or the explicit event's target ids.
        .addColumn('target', 'text', (c) => c.notNull().defaultTo('{}'))
        .addColumn('status', 'integer')
        .addColumn('request_id', 'text')
        // JSON object of non-secret facts (names, counts); never bodies or values.
        .addColumn('details', 'text', (c) => c.notNull().defaultTo('{}'))
        .execute();
      await db.schema.createIndex('audit_events_by_tenant').on('audit_events').columns(['tenant_id', 'id']).execute();
      await db.schema.createIndex('audit_events_by_actor').on('audit_events').columns(['tenant_id', 'actor_user_id', 'id']).execute();

      if (dialect === 'postgres') {
        await sql`create function audit_events_append_only() returns trigger language plpgsql as $$
          begin raise exception 'audit events are append-only'; end $$`.execute(db);
        await sql`create trigger audit_events_no_update before update on audit_events for each row execute function audit_events_append_only()`.execute(db);
      } else {
        await sql`create trigger audit_events_no_update before update on audit_events begin select raise(abort, 'audit events are append-only'); end`.execute(
          db,
        );
      }
    },
  };
}
