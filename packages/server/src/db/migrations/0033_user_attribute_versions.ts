import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * User attributes and their values decide the rows a caller sees through the data API, whose
 * caller cache keeps them under the tenant's `auth_version` (areas/data-api/security-context.ts).
 * Until now the store bumped the version itself after its writes; triggers, like those of 0005,
 * also catch the writes that bypass it: SCIM, the admin CLI, cascades, an operator's SQL.
 *
 * Only the columns a caller's context is built from: `updated_at` alone changes nothing it holds
 * (`type` neither: a value is parsed from its JSON, whatever the attribute's type).
 */
const WATCHED: Array<{ table: string; updateOf: string[] }> = [
  { table: 'user_attributes', updateOf: ['tenant_id', 'name', 'default_value'] },
  { table: 'user_attribute_values', updateOf: ['tenant_id', 'user_id', 'attribute_id', 'value'] },
];

/** PostgreSQL: deferred constraint triggers calling 0005's function, so the tenant row is locked only at commit. */
export function userAttributeVersions(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<any>) {
      for (const { table, updateOf } of WATCHED) {
        const update = sql.raw(`update of ${updateOf.join(', ')}`);
        if (dialect === 'postgres') {
          await sql`create constraint trigger ${sql.id(`${table}_auth_version`)}
            after insert or ${update} or delete on ${sql.table(table)}
            deferrable initially deferred for each row execute function bump_auth_version()`.execute(db);
          continue;
        }
        const bump = (row: 'new' | 'old') => sql.raw(`update tenants set auth_version = auth_version + 1 where id = ${row}.tenant_id;`);
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
