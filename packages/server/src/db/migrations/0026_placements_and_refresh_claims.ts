import { type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * Two small additions to existing tables:
 * - `reports.placements`: where a report is placed in external spreadsheets (reference 3.0-3.3),
 *   as one JSON array on the report row. A report's placements are read with it by every view of
 *   the report (GET, lists, writes), so they come with the row at no extra statement, and a
 *   placement write is one compare-and-set of the row's array.
 * - the background refresh of user OAuth tokens: a claim (`refresh_claim` until
 *   `refresh_claimed_until`) taken by a conditional update, so one process refreshes a token
 *   however many look, and `refresh_retry_at`, when a refresh that failed for a passing reason
 *   (the provider unreachable) is tried again.
 */
export function placementsAndRefreshClaims(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<any>) {
      // JSON: an array of placements; null: none.
      await db.schema.alterTable('reports').addColumn('placements', 'text').execute();
      await db.schema.alterTable('user_oauth_tokens').addColumn('refresh_claim', 'text').execute();
      await db.schema.alterTable('user_oauth_tokens').addColumn('refresh_claimed_until', 'text').execute();
      await db.schema.alterTable('user_oauth_tokens').addColumn('refresh_retry_at', 'text').execute();
      // The refresh scan reads tokens by how soon they expire.
      await db.schema.createIndex('user_oauth_tokens_by_expiry').on('user_oauth_tokens').column('access_token_expires_at').execute();
    },
  };
}
