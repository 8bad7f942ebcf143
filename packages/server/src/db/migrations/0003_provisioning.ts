import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../dialect.js';
import { columnsFor, type Columns } from './columns.js';

/**
 * SCIM provisioning state beside the users and groups it describes. A row here means the identity
 * provider manages that user or group; the core fields (userName = email, name.givenName =
 * first name, active, displayName = group name, members) stay in the REST tables, so both
 * interfaces read and write the same records. `document` holds the other SCIM attributes as JSON.
 */
async function scim(db: Kysely<any>, { ref }: Columns): Promise<void> {
  await db.schema
    .createTable('scim_users')
    .addColumn('user_id', ref, (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('tenant_id', ref, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('document', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('scim_users_tenant').on('scim_users').columns(['tenant_id', 'user_id']).execute();

  await db.schema
    .createTable('scim_groups')
    .addColumn('group_id', ref, (c) => c.primaryKey().references('groups.id').onDelete('cascade'))
    .addColumn('tenant_id', ref, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('document', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('scim_groups_tenant').on('scim_groups').columns(['tenant_id', 'group_id']).execute();
}

/** User attribute definitions and each user's values (JSON text), for per-user row filtering. */
async function userAttributes(db: Kysely<any>, { table, ref }: Columns): Promise<void> {
  await table(db, 'user_attributes')
    .addColumn('tenant_id', ref, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('default_value', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await sql`create unique index user_attributes_tenant_name on user_attributes (tenant_id, lower(name))`.execute(db);

  await db.schema
    .createTable('user_attribute_values')
    .addColumn('tenant_id', ref, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('user_id', ref, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('attribute_id', ref, (c) => c.notNull().references('user_attributes.id').onDelete('cascade'))
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('user_attribute_values_pk', ['user_id', 'attribute_id'])
    .execute();
  await db.schema.createIndex('user_attribute_values_attribute').on('user_attribute_values').columns(['attribute_id']).execute();
}

export function provisioning(dialect: Dialect): Migration {
  const columns = columnsFor(dialect);
  return {
    async up(db: Kysely<any>) {
      for (const step of [scim, userAttributes]) await step(db, columns);
    },
    async down(db: Kysely<any>) {
      for (const table of ['user_attribute_values', 'user_attributes', 'scim_groups', 'scim_users']) {
        await db.schema.dropTable(table).execute();
      }
    },
  };
}
