import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * `reports.version`: the revision of a report's name and content, 1 when created and one more on
 * every update that changes them. An update may name the version it was made from
 * (`expectedVersion`) and is refused when another write came first, so two editors never
 * overwrite each other unknowingly. Existing reports start at 1.
 */
export function reportVersions(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .alterTable('reports')
        .addColumn('version', 'integer', (column) => column.notNull().defaultTo(sql`1`))
        .execute();
    },
  };
}
