import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * The tables whose rows decide who a request's caller is and what they may do: the key and its
 * owner, the owner's groups and grants, and the deployments (read by every workspace request).
 * A change to any of them bumps the tenant's `auth_version`; the caller cache (cache/tenant-cache.ts)
 * serves nothing that was read under another version.
 *
 * api_keys changes only on these columns: `last_used_at` is written in the background for every
 * key in use, and must not empty the cache each time.
 */
const WATCHED: Array<{ table: string; updateOf?: string[] }> = [
  { table: 'users' },
  { table: 'groups' },
  { table: 'group_members' },
  { table: 'policies' },
  { table: 'deployments' },
  { table: 'api_keys', updateOf: ['tenant_id', 'user_id', 'key_hash', 'deployment_ids', 'expires_at', 'revoked_at'] },
];

/**
 * Triggers rather than calls in the services, so that no write path can forget: SCIM, the admin
 * CLI, cascading deletes and every future area bump the version by writing the rows. The bump is
 * in the writer's transaction, so a reader that sees the new rows also sees the new version.
 *
 * PostgreSQL: deferred constraint triggers, so the tenant row is locked only at commit, after
 * every other lock the transaction takes; two writers never wait on each other through it.
 */
export function cacheVersions(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .alterTable('tenants')
        .addColumn('auth_version', dialect === 'postgres' ? 'bigint' : 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      if (dialect === 'postgres') {
        await sql`create function bump_auth_version() returns trigger language plpgsql as $$
          begin
            update tenants set auth_version = auth_version + 1
             where id = case when tg_op = 'DELETE' then old.tenant_id else new.tenant_id end;
            return null;
          end $$`.execute(db);
        for (const { table, updateOf } of WATCHED) {
          const update = updateOf ? sql.raw(`update of ${updateOf.join(', ')}`) : sql`update`;
          await sql`create constraint trigger ${sql.id(`${table}_auth_version`)}
            after insert or ${update} or delete on ${sql.table(table)}
            deferrable initially deferred for each row execute function bump_auth_version()`.execute(db);
        }
        return;
      }
      for (const { table, updateOf } of WATCHED) {
        const bump = (row: 'new' | 'old') => sql.raw(`update tenants set auth_version = auth_version + 1 where id = ${row}.tenant_id;`);
        const update = updateOf ? sql.raw(`update of ${updateOf.join(', ')}`) : sql`update`;
        await sql`create trigger ${sql.id(`${table}_auth_version_insert`)} after insert on ${sql.table(table)} begin ${bump('new')} end`.execute(db);
        await sql`create trigger ${sql.id(`${table}_auth_version_update`)} after ${update} on ${sql.table(table)} begin ${bump('new')} ${bump('old')} end`.execute(
          db,
        );
        await sql`create trigger ${sql.id(`${table}_auth_version_delete`)} after delete on ${sql.table(table)} begin ${bump('old')} end`.execute(db);
      }
    },
    async down() {
      // Forward only, like the other migrations.
    },
  };
}
