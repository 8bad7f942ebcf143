import { type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../dialect.js';
import { columnsFor } from './columns.js';

/**
 * The tenant's git-host app (docs/api/git-host.md), each user's linked account on that host, and the
 * link authorizations in flight (the user was sent to the host and has not come back yet).
 */
export function gitHost(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<any>) {
      const { ref, table } = columnsFor(dialect);
      await table(db, 'git_host_apps')
        // One app per tenant.
        .addColumn('tenant_id', ref, (c) => c.notNull().unique().references('tenants.id').onDelete('cascade'))
        .addColumn('api_base_url', 'text', (c) => c.notNull())
        .addColumn('web_base_url', 'text', (c) => c.notNull())
        .addColumn('app_id', 'text', (c) => c.notNull())
        .addColumn('app_slug', 'text', (c) => c.notNull())
        .addColumn('client_id', 'text', (c) => c.notNull())
        // secrets/: bound to `git-host-app:<tenantId>:client-secret` and `…:private-key`.
        .addColumn('client_secret', 'text', (c) => c.notNull())
        .addColumn('private_key', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();

      await table(db, 'git_host_links')
        .addColumn('tenant_id', ref, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
        .addColumn('user_id', ref, (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('login', 'text', (c) => c.notNull())
        // secrets/: bound to `git-host-link:<tenantId>:<userId>`.
        .addColumn('access_token', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('git_host_links_by_user').on('git_host_links').columns(['tenant_id', 'user_id']).unique().execute();

      await table(db, 'git_host_link_states')
        .addColumn('tenant_id', ref, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
        .addColumn('user_id', ref, (c) => c.notNull().references('users.id').onDelete('cascade'))
        // SHA-256 of the `state` sent to the host: the value itself is never stored.
        .addColumn('state_hash', 'text', (c) => c.notNull().unique())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('git_host_link_states_by_expiry').on('git_host_link_states').columns(['tenant_id', 'expires_at']).execute();
    },
  };
}
