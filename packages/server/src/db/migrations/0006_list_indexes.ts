import type { Kysely, Migration } from 'kysely';
import type { Dialect } from '../dialect.js';

export function listIndexes(_dialect: Dialect): Migration {
  return {
    async up(_db: Kysely<any>) {},
    async down() {},
  };
}
