import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../dialect.js';
import { columnsFor, type Columns } from './columns.js';

/** Tenants and the hosts that select them. */
async function tenancy(db: Kysely<any>, { table, ref }: Columns): Promise<void> {
  await table(db, 'tenants')
    .addColumn('slug', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('tenant_hosts')
    .addColumn('host', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', ref, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
}

/** Users, groups and memberships. Emails and group names are unique per tenant regardless of case. */
async function people(db: Kysely<any>, { table, ref }: Columns): Promise<void> {
  await table(db, 'users')
    .addColumn('tenant_id', ref, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('first_name', 'text')
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('deactivated_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await sql`create unique index users_tenant_email on users (tenant_id, lower(email))`.execute(db);

  await table(db, 'groups')
    .addColumn('tenant_id', ref, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await sql`create unique index groups_tenant_name on groups (tenant_id, lower(name))`.execute(db);

  await db.schema
    .createTable('group_members')
    .addColumn('tenant_id', ref, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('group_id', ref, (c) => c.notNull().references('groups.id').onDelete('cascade'))
    .addColumn('user_id', ref, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('group_members_pk', ['group_id', 'user_id'])
    .execute();
  await db.schema.createIndex('group_members_user').on('group_members').columns(['user_id']).execute();
}

async function deployments(db: Kysely<any>, { table, ref }: Columns): Promise<void> {
  await table(db, 'deployments')
    .addColumn('tenant_id', ref, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('settings', 'text', (c) => c.notNull())
    .addColumn('created_by', ref)
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('deployments_tenant').on('deployments').columns(['tenant_id', 'id']).execute();
}

/** API keys, stored as SHA-256 hashes; the hash is looked up on every request. */
async function apiKeys(db: Kysely<any>, { table, ref }: Columns): Promise<void> {
  await table(db, 'api_keys')
    .addColumn('tenant_id', ref, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('user_id', ref, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('key_prefix', 'text', (c) => c.notNull())
    .addColumn('deployment_ids', 'text')
    .addColumn('expires_at', 'text')
    .addColumn('revoked_at', 'text')
    .addColumn('last_used_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull().defaultTo('api'))
    .execute();
  await db.schema.createIndex('api_keys_tenant_user').on('api_keys').columns(['tenant_id', 'user_id']).execute();
}

/** Access grants: one per principal and resource. Access checks read them by principal. */
async function policies(db: Kysely<any>, { table, ref }: Columns): Promise<void> {
  await table(db, 'policies')
    .addColumn('tenant_id', ref, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('principal_type', 'text', (c) => c.notNull())
    .addColumn('principal_id', ref, (c) => c.notNull())
    .addColumn('resource_type', 'text', (c) => c.notNull())
    .addColumn('resource_id', ref, (c) => c.notNull())
    .addColumn('access', 'text', (c) => c.notNull())
    .addColumn('created_by', ref)
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await sql`create unique index policies_principal_resource on policies
    (tenant_id, principal_type, principal_id, resource_type, resource_id)`.execute(db);
  await db.schema.createIndex('policies_resource').on('policies').columns(['tenant_id', 'resource_type', 'resource_id']).execute();
}

/**
 * The spine: tenants and their hosts, users, groups, deployments, API keys, access policies.
 * Written once for both dialects; columns.ts holds what differs.
 */
export function spine(dialect: Dialect): Migration {
  const columns = columnsFor(dialect);
  return {
    async up(db: Kysely<any>) {
      for (const step of [tenancy, people, deployments, apiKeys, policies]) await step(db, columns);
    },
    async down(db: Kysely<any>) {
      for (const table of ['policies', 'api_keys', 'deployments', 'group_members', 'groups', 'users', 'tenant_hosts', 'tenants']) {
        await db.schema.dropTable(table).execute();
      }
    },
  };
}
