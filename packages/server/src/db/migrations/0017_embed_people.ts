import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../dialect.js';
import { columnsFor } from './columns.js';

/**
 * Embedding's people (reference 4.0-4.14): embed tenants of an account, their users (never
 * account users: they cannot sign in to the API), their groups, and what those users carry into
 * an embed session: memberships of the account's global groups and user-attribute values.
 *
 * `embed_groups` holds three kinds: `tenant-group` (made through 4.7), `tenant` (the implicit
 * `system:tenant:{name}` group, one per embed tenant) and `all` (the account's one built-in
 * all-embed-users group, with no embed tenant). The two system kinds are what content is shared
 * with (`embed_shares`): a separate table from `policies`, so no account user's access is ever
 * computed from an embed grant, and with a foreign key per resource kind, so deleting a workbook,
 * folder, deployment or embed tenant removes its shares on both stores without extra code.
 */
export function embedPeople(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<any>) {
      const { ref, table } = columnsFor(dialect);
      const tenant = (c: any) => c.notNull().references('tenants.id').onDelete('cascade');

      await table(db, 'embed_tenants')
        .addColumn('tenant_id', ref, tenant)
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('display_name', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      // Names are canonical (lowercase) when stored; the list is read in name order through this index.
      await db.schema.createIndex('embed_tenants_name').on('embed_tenants').columns(['tenant_id', 'name']).unique().execute();

      await table(db, 'embed_users')
        .addColumn('tenant_id', ref, tenant)
        .addColumn('embed_tenant_id', ref, (c) => c.notNull().references('embed_tenants.id').onDelete('cascade'))
        // Trimmed and lowercased; null only for users recorded without one.
        .addColumn('external_id', 'text')
        .addColumn('username', 'text', (c) => c.notNull())
        .addColumn('email', 'text', (c) => c.notNull())
        // The profile of 4.0 (EmbedUserProfile); the API's `firstName` is its display name.
        .addColumn('display_name', 'text')
        .addColumn('picture', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addColumn('last_login', 'text')
        .execute();
      await db.schema.createIndex('embed_users_external_id').on('embed_users').columns(['embed_tenant_id', 'external_id']).unique().execute();
      // The users list is sorted by email (then id).
      await db.schema.createIndex('embed_users_email').on('embed_users').columns(['embed_tenant_id', 'email', 'id']).execute();
      // The account-wide cap counts every embed user of the account.
      await db.schema.createIndex('embed_users_tenant').on('embed_users').columns(['tenant_id']).execute();

      await table(db, 'embed_groups')
        .addColumn('tenant_id', ref, tenant)
        .addColumn('embed_tenant_id', ref, (c) => c.references('embed_tenants.id').onDelete('cascade'))
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await sql`create unique index embed_groups_name on embed_groups (embed_tenant_id, lower(name))`.execute(db);
      // One all-embed-users group per account (its embed_tenant_id is null, which the index above does not cover).
      await sql`create unique index embed_groups_all on embed_groups (tenant_id) where kind = 'all'`.execute(db);

      // A surrogate id orders members by when they were added (4.11: newest first).
      await table(db, 'embed_group_members')
        .addColumn('tenant_id', ref, tenant)
        .addColumn('embed_group_id', ref, (c) => c.notNull().references('embed_groups.id').onDelete('cascade'))
        .addColumn('embed_user_id', ref, (c) => c.notNull().references('embed_users.id').onDelete('cascade'))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('embed_group_members_pair').on('embed_group_members').columns(['embed_group_id', 'embed_user_id']).unique().execute();
      await db.schema.createIndex('embed_group_members_user').on('embed_group_members').columns(['embed_user_id']).execute();

      // Global groups (the account's `groups`) of an embed user; deleting the group removes these.
      await db.schema
        .createTable('embed_user_groups')
        .addColumn('tenant_id', ref, tenant)
        .addColumn('embed_user_id', ref, (c) => c.notNull().references('embed_users.id').onDelete('cascade'))
        .addColumn('group_id', ref, (c) => c.notNull().references('groups.id').onDelete('cascade'))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('embed_user_groups_pk', ['embed_user_id', 'group_id'])
        .execute();
      await db.schema.createIndex('embed_user_groups_group').on('embed_user_groups').columns(['group_id']).execute();

      // Attribute values of an embed user, typed by the account's catalog (user_attributes); JSON text.
      await db.schema
        .createTable('embed_user_attribute_values')
        .addColumn('tenant_id', ref, tenant)
        .addColumn('embed_user_id', ref, (c) => c.notNull().references('embed_users.id').onDelete('cascade'))
        .addColumn('attribute_id', ref, (c) => c.notNull().references('user_attributes.id').onDelete('cascade'))
        .addColumn('value', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('embed_user_attribute_values_pk', ['embed_user_id', 'attribute_id'])
        .execute();

      // Read-only shares of a workbook or folder with a system embed group (3.4, 3.5, 4.14).
      await table(db, 'embed_shares')
        .addColumn('tenant_id', ref, tenant)
        .addColumn('deployment_id', ref, (c) => c.notNull().references('deployments.id').onDelete('cascade'))
        .addColumn('embed_group_id', ref, (c) => c.notNull().references('embed_groups.id').onDelete('cascade'))
        .addColumn('workbook_id', ref, (c) => c.references('workbooks.id').onDelete('cascade'))
        .addColumn('folder_id', ref, (c) => c.references('folders.id').onDelete('cascade'))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addCheckConstraint('embed_shares_one_target', sql`(workbook_id is null) <> (folder_id is null)`)
        .execute();
      await db.schema.createIndex('embed_shares_workbook').on('embed_shares').columns(['workbook_id', 'embed_group_id']).unique().execute();
      await db.schema.createIndex('embed_shares_folder').on('embed_shares').columns(['folder_id', 'embed_group_id']).unique().execute();
      await db.schema.createIndex('embed_shares_group').on('embed_shares').columns(['embed_group_id', 'deployment_id']).execute();
    },
  };
}
