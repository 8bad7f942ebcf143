import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../dialect.js';
import { columnsFor } from './columns.js';

/**
 * Creator mode (reference 4.15): each embed tenant gets a user-attribute catalog of its own,
 * written by creator-mode sessions (`userAttributeDefinitions`), with its users' values beside
 * it; both go with the tenant (4.2 cascade). `embed_owner_id` on workbooks and reports records
 * the embed user who made a copy from the shared workspace (8.G.1 `shared: true`): such content
 * is the embed tenant's, and deleting the tenant (its users) deletes it.
 */
export function creatorMode(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<any>) {
      const { ref, table } = columnsFor(dialect);
      const tenant = (c: any) => c.notNull().references('tenants.id').onDelete('cascade');

      await table(db, 'embed_attribute_definitions')
        .addColumn('tenant_id', ref, tenant)
        .addColumn('embed_tenant_id', ref, (c) => c.notNull().references('embed_tenants.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        // One of string, number, boolean, string_array, number_array; never changed once written.
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('display_name', 'text')
        // JSON, or null for none.
        .addColumn('default_value', 'text')
        .addColumn('description', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await sql`create unique index embed_attribute_definitions_name on embed_attribute_definitions (embed_tenant_id, lower(name))`.execute(db);

      await db.schema
        .createTable('embed_attribute_values')
        .addColumn('tenant_id', ref, tenant)
        .addColumn('embed_user_id', ref, (c) => c.notNull().references('embed_users.id').onDelete('cascade'))
        .addColumn('definition_id', ref, (c) => c.notNull().references('embed_attribute_definitions.id').onDelete('cascade'))
        // JSON.
        .addColumn('value', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('embed_attribute_values_pk', ['embed_user_id', 'definition_id'])
        .execute();
      await db.schema.createIndex('embed_attribute_values_definition').on('embed_attribute_values').columns(['definition_id']).execute();

      for (const name of ['workbooks', 'reports']) {
        await db.schema
          .alterTable(name)
          .addColumn('embed_owner_id', ref, (c) => c.references('embed_users.id').onDelete('cascade'))
          .execute();
        await db.schema.createIndex(`${name}_embed_owner`).on(name).columns(['embed_owner_id']).execute();
      }
    },
    async down() {
      // Forward only, like the other migrations.
    },
  };
}
