import type { Kysely, Migration } from 'kysely';
import type { Dialect } from '../dialect.js';

/** The regions a tenant may run deployments in (JSON array of names); null: every configured region (reference 1.15). */
export function tenantRegions(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('tenants').addColumn('regions', 'text').execute();
    },
  };
}
