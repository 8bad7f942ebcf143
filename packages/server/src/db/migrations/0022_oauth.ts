import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../dialect.js';
import { columnsFor } from './columns.js';

/**
 * The authorization server's storage (areas/oauth): one table for every model `oidc-provider`
 * keeps (grants, device and authorization codes, access, refresh and client-credentials tokens,
 * interactions, sessions, and the clients admins register), per tenant, with their expiry.
 *
 * Rows are found by `key_hash`, the SHA-256 of the model's id: for tokens the id is the token
 * itself, so the table never holds a usable credential. A client's secret is sealed by secrets/.
 *
 * Access tokens are REST credentials, cached like API keys under the tenant's `auth_version`
 * (cache/tenant-cache.ts). Deleting a live access token (revocation, a grant revoked, a rotated
 * refresh token replayed) and any change to a client bumps that version in the same transaction,
 * so every process refuses the token on its next request. Issuing a token bumps nothing: an
 * unknown token is never cached. Expired rows removed by the clean-up bump nothing either.
 */
export function oauth(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<any>) {
      const { ref, table } = columnsFor(dialect);
      await table(db, 'oauth_models')
        .addColumn('tenant_id', ref, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
        .addColumn('model', 'text', (c) => c.notNull())
        .addColumn('key_hash', 'text', (c) => c.notNull())
        // SHA-256 of the grant id, for revoking every token of a grant.
        .addColumn('grant_hash', 'text')
        // SHA-256 of a device code's normalised user code.
        .addColumn('user_code_hash', 'text')
        // A session's uid (not a credential: the session cookie holds the id).
        .addColumn('uid', 'text')
        // The model's payload, JSON, without the token itself.
        .addColumn('payload', 'text', (c) => c.notNull())
        // secrets/: a client's secret, bound to `oauth-client:<tenantId>:<key_hash>`.
        .addColumn('secret', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text')
        .execute();
      await db.schema.createIndex('oauth_models_by_key').on('oauth_models').columns(['tenant_id', 'model', 'key_hash']).unique().execute();
      await db.schema.createIndex('oauth_models_by_grant').on('oauth_models').columns(['tenant_id', 'grant_hash']).execute();
      await db.schema.createIndex('oauth_models_by_user_code').on('oauth_models').columns(['tenant_id', 'user_code_hash']).execute();
      await db.schema.createIndex('oauth_models_by_uid').on('oauth_models').columns(['tenant_id', 'uid']).execute();
      await db.schema.createIndex('oauth_models_expiry').on('oauth_models').column('expires_at').execute();

      // What is a REST credential, or decides one: access tokens and clients.
      const deleted = `old.model in ('AccessToken', 'ClientCredentials', 'Client')`;
      if (dialect === 'postgres') {
        const now = `to_char(now() at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
        await sql`create constraint trigger oauth_models_auth_version_delete
          after delete on oauth_models deferrable initially deferred for each row
          when (${sql.raw(deleted)} and (old.expires_at is null or old.expires_at > ${sql.raw(now)}))
          execute function bump_auth_version()`.execute(db);
        await sql`create constraint trigger oauth_models_auth_version_update
          after update on oauth_models deferrable initially deferred for each row
          when (new.model = 'Client') execute function bump_auth_version()`.execute(db);
        return;
      }
      const now = `strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`;
      await sql`create trigger oauth_models_auth_version_delete after delete on oauth_models
        when ${sql.raw(deleted)} and (old.expires_at is null or old.expires_at > ${sql.raw(now)})
        begin update tenants set auth_version = auth_version + 1 where id = old.tenant_id; end`.execute(db);
      await sql`create trigger oauth_models_auth_version_update after update on oauth_models
        when new.model = 'Client'
        begin update tenants set auth_version = auth_version + 1 where id = new.tenant_id; end`.execute(db);
    },
  };
}
