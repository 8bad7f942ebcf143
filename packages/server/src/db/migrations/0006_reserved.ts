import type { Kysely, Migration } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * Empty, and must stay so: a release applied this migration while it was still an empty
 * placeholder, and a migration once applied never runs again. What it was reserved for is
 * migration 0007.
 */
export function reserved(_dialect: Dialect): Migration {
  return {
    async up(_db: Kysely<any>) {},
    async down() {},
  };
}
