import { type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../dialect.js';
import { columnsFor } from './columns.js';

/**
 * The git-host repository a deployment is connected to (reference 2.20): its shared branches are
 * pulled from it and pushed to it with a token of the app's installation, minted for each use.
 * Linked accounts keep the host's refresh token and the access token's expiry, for hosts whose
 * user tokens expire.
 */
export function deploymentUpstreams(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<any>) {
      const { ref, table } = columnsFor(dialect);
      await table(db, 'deployment_upstreams')
        .addColumn('tenant_id', ref, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
        // One upstream per deployment; connecting again replaces it.
        .addColumn('deployment_id', ref, (c) => c.notNull().unique().references('deployments.id').onDelete('cascade'))
        .addColumn('installation_id', ref, (c) => c.notNull())
        .addColumn('owner', 'text', (c) => c.notNull())
        .addColumn('repo', 'text', (c) => c.notNull())
        .addColumn('clone_url', 'text', (c) => c.notNull())
        // Who connected it; kept when the user goes (the installation's token does the work).
        .addColumn('connected_by', ref, (c) => c.references('users.id').onDelete('set null'))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      // secrets/: bound to `git-host-link:<tenantId>:<userId>:refresh`.
      await db.schema.alterTable('git_host_links').addColumn('refresh_token', 'text').execute();
      await db.schema.alterTable('git_host_links').addColumn('expires_at', 'text').execute();
    },
  };
}
