import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../dialect.js';
import { columnsFor } from './columns.js';

/**
 * Workload identity (reference 5.14-5.18): the tenant's OIDC token configs. Each yields one
 * audience-scoped token per running deployment environment, signed by the tenant's keys of the
 * `workload` purpose and delivered to the runtime as a file.
 *
 * One config per well-known audience type (AWS, GCP, Azure): a partial unique index, so two
 * concurrent creates cannot both win. Names are the token's file name: unique per tenant.
 */
export function workloadIdentity(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<any>) {
      const { ref, table } = columnsFor(dialect);
      await table(db, 'oidc_token_configs')
        .addColumn('tenant_id', ref, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
        .addColumn('audience_type', 'text', (c) => c.notNull())
        .addColumn('audience', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('sub_format', 'text')
        // JSON object of string or string-list values; null: none.
        .addColumn('custom_claims', 'text')
        .addColumn('target_env_var', 'text')
        .addColumn('is_enabled', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('oidc_token_configs_name').on('oidc_token_configs').columns(['tenant_id', 'name']).unique().execute();
      await db.schema
        .createIndex('oidc_token_configs_one_per_cloud')
        .on('oidc_token_configs')
        .columns(['tenant_id', 'audience_type'])
        .unique()
        .where(sql.ref('audience_type'), 'in', ['AWS', 'GCP', 'Azure'])
        .execute();
    },
  };
}
