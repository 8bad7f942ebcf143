import type { Kysely, Migration } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * dbt-sync from another repository: the settings name it by URL (`repository = 'url'`), with an
 * access token sealed by secrets/ (`repository_token`, bound to the deployment) that is never
 * answered back.
 */
export function dbtSyncRemote(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('dbt_sync_settings').addColumn('repository_url', 'text').execute();
      await db.schema.alterTable('dbt_sync_settings').addColumn('repository_token', 'text').execute();
    },
  };
}
