import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../dialect.js';

/** The expression indexes built on lower(): case-insensitive uniqueness of emails and names. */
const LOWER_INDEXES = ['users_tenant_email', 'groups_tenant_name', 'user_attributes_tenant_name'];

/**
 * SQLite files now fold case with a Unicode-aware lower() (registered in openStore), where
 * SQLite's built-in one folded ASCII only. Indexes built before hold the old keys, so they are
 * rebuilt with the new function; PostgreSQL's lower() was Unicode-aware already. Two existing
 * names that differ only in non-ASCII case make the rebuild fail on the unique index, and the
 * migration with it, rather than leave a file whose index disagrees with its queries.
 */
export function unicodeLower(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<any>) {
      if (dialect !== 'sqlite') return;
      for (const index of LOWER_INDEXES) await sql`reindex ${sql.id(index)}`.execute(db);
    },
    async down() {
      // Nothing to undo: the indexes are the same definitions, rebuilt.
    },
  };
}
