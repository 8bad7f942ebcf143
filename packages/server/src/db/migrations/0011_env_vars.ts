import { type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../dialect.js';
import { columnsFor } from './columns.js';

/**
 * A deployment's environment variables (reference 1.11-1.12), their values encrypted by the
 * secrets service; and that service's own table: each key that may have encrypted values, with
 * a check value encrypted under it, so a start with the wrong key fails before serving.
 */
export function envVars(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<any>) {
      const { ref, table } = columnsFor(dialect);
      await db.schema
        .createTable('secret_keys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('check_value', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await table(db, 'env_vars')
        .addColumn('tenant_id', ref, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
        .addColumn('deployment_id', ref, (c) => c.notNull().references('deployments.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        // secrets/: v1:<key id>:<nonce>:<ciphertext>, bound to the deployment and the name.
        .addColumn('value', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      // Names are unique per deployment, and the list is read in name order through this index.
      await db.schema.createIndex('env_vars_by_name').on('env_vars').columns(['deployment_id', 'name']).unique().execute();
    },
  };
}
