import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../dialect.js';
import { columnsFor } from './columns.js';

/**
 * Signed embedding sessions (reference 4.15-4.17).
 *
 * `signing_keys.purpose`: each tenant holds one keyring per purpose. Embed tokens are signed by
 * keys of the `embed` purpose only, published at /api/v1/embed/jwks.json, so a customer's backend
 * that trusts that key set trusts nothing else the tenant signs (data-API tokens keep `default`).
 *
 * `embed_sessions`: one row per generated session. The session id itself is never stored, only
 * its SHA-256 (`session_hash`): the row cannot be redeemed by whoever reads the table. `claims` is
 * what the token will carry, fixed at generation. The exchange is one conditional UPDATE (unused,
 * unrevoked, unexpired), so of racing exchanges exactly one wins, on either store and across
 * processes. The row stays after the exchange, with the token's `jti`, until the token expires:
 * revoking it sets `revoked_at`, which bumps the tenant's `auth_version` (the trigger of 0005), so
 * every process's caller cache drops what it knew and the token is refused on its next request.
 */
export function embedSessions(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<any>) {
      const { ref, table } = columnsFor(dialect);
      await db.schema
        .alterTable('signing_keys')
        .addColumn('purpose', 'text', (c) => c.notNull().defaultTo('default'))
        .execute();
      await db.schema.dropIndex('signing_keys_one_active').execute();
      // One signing key per tenant and purpose.
      await db.schema
        .createIndex('signing_keys_one_active')
        .on('signing_keys')
        .columns(['tenant_id', 'purpose'])
        .unique()
        .where(sql.ref('retired_at'), 'is', null)
        .execute();

      await table(db, 'embed_sessions')
        .addColumn('tenant_id', ref, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
        .addColumn('deployment_id', ref, (c) => c.notNull().references('deployments.id').onDelete('cascade'))
        .addColumn('session_hash', 'text', (c) => c.notNull().unique())
        .addColumn('created_by_user_id', ref, (c) => c.references('users.id').onDelete('set null'))
        // JSON: the claims the token will carry.
        .addColumn('claims', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        // The id may be exchanged until then (5 minutes).
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addColumn('exchanged_at', 'text')
        .addColumn('jti', 'text', (c) => c.unique())
        .addColumn('token_expires_at', 'text')
        .addColumn('revoked_at', 'text')
        .execute();
      // Old rows are swept per tenant by time.
      await db.schema.createIndex('embed_sessions_by_tenant').on('embed_sessions').columns(['tenant_id', 'expires_at']).execute();

      if (dialect === 'postgres') {
        await sql`create constraint trigger embed_sessions_auth_version
          after update of revoked_at on embed_sessions
          deferrable initially deferred for each row execute function bump_auth_version()`.execute(db);
      } else {
        await sql`create trigger embed_sessions_auth_version_update after update of revoked_at on embed_sessions
          begin update tenants set auth_version = auth_version + 1 where id = new.tenant_id; end`.execute(db);
      }
    },
    async down() {
      // Forward only, like the other migrations.
    },
  };
}
