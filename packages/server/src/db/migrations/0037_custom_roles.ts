import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../dialect.js';
import { columnsFor } from './columns.js';

/**
 * Custom roles (reference 8.D): named sets of policies (`{resourceType, actions, resources}`, kept
 * as one JSON array in `policies`, since an update replaces them all), held by users and groups.
 * Names are unique per tenant regardless of case, like group names. An assignment goes with its
 * role, its user or its group (cascades), so none outlives what it names.
 *
 * Roles and their assignments decide what a caller may do, so a write to either bumps the tenant's
 * `auth_version` (migration 0005), like a write to policies or group members.
 */
export function customRoles(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<any>) {
      const { ref, table } = columnsFor(dialect);
      await table(db, 'roles')
        .addColumn('tenant_id', ref, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('policies', 'text', (c) => c.notNull())
        .addColumn('created_by', ref)
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await sql`create unique index roles_tenant_name on roles (tenant_id, lower(name))`.execute(db);
      // Newest first.
      await db.schema.createIndex('roles_tenant_id').on('roles').columns(['tenant_id', 'id']).execute();

      await db.schema
        .createTable('role_users')
        .addColumn('tenant_id', ref, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
        .addColumn('role_id', ref, (c) => c.notNull().references('roles.id').onDelete('cascade'))
        .addColumn('user_id', ref, (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('role_users_pk', ['role_id', 'user_id'])
        .execute();
      await db.schema.createIndex('role_users_user').on('role_users').columns(['user_id']).execute();

      await db.schema
        .createTable('role_groups')
        .addColumn('tenant_id', ref, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
        .addColumn('role_id', ref, (c) => c.notNull().references('roles.id').onDelete('cascade'))
        .addColumn('group_id', ref, (c) => c.notNull().references('groups.id').onDelete('cascade'))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('role_groups_pk', ['role_id', 'group_id'])
        .execute();
      await db.schema.createIndex('role_groups_group').on('role_groups').columns(['group_id']).execute();

      for (const name of ['roles', 'role_users', 'role_groups']) {
        if (dialect === 'postgres') {
          await sql`create constraint trigger ${sql.id(`${name}_auth_version`)}
            after insert or update or delete on ${sql.table(name)}
            deferrable initially deferred for each row execute function bump_auth_version()`.execute(db);
          continue;
        }
        const bump = (row: 'new' | 'old') => sql.raw(`update tenants set auth_version = auth_version + 1 where id = ${row}.tenant_id;`);
        await sql`create trigger ${sql.id(`${name}_auth_version_insert`)} after insert on ${sql.table(name)} begin ${bump('new')} end`.execute(db);
        await sql`create trigger ${sql.id(`${name}_auth_version_update`)} after update on ${sql.table(name)} begin ${bump('new')} ${bump('old')} end`.execute(
          db,
        );
        await sql`create trigger ${sql.id(`${name}_auth_version_delete`)} after delete on ${sql.table(name)} begin ${bump('old')} end`.execute(db);
      }
    },
  };
}
