import { type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../dialect.js';
import { columnsFor } from './columns.js';

/**
 * Third-party OAuth apps a tenant's admins register (reference 5.5-5.9), the tokens each user
 * holds for them (5.10-5.13), and the authorization requests in flight between the two. Every
 * credential is sealed by secrets/: client secrets, access and refresh tokens, PKCE verifiers.
 */
export function oauthIntegrations(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<any>) {
      const { ref, table } = columnsFor(dialect);
      await table(db, 'oauth_integrations')
        .addColumn('tenant_id', ref, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('auth_url', 'text', (c) => c.notNull())
        .addColumn('token_url', 'text', (c) => c.notNull())
        .addColumn('client_id', 'text', (c) => c.notNull())
        // secrets/: bound to `oauth-integration:<id>:client-secret`.
        .addColumn('client_secret', 'text', (c) => c.notNull())
        .addColumn('redirect_uri', 'text', (c) => c.notNull())
        // JSON: string[] or null; an object or null.
        .addColumn('scopes', 'text')
        .addColumn('config', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('oauth_integrations_by_tenant').on('oauth_integrations').columns(['tenant_id', 'id']).execute();

      await table(db, 'user_oauth_tokens')
        .addColumn('tenant_id', ref, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
        .addColumn('user_id', ref, (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('integration_id', ref, (c) => c.notNull().references('oauth_integrations.id').onDelete('cascade'))
        .addColumn('status', 'text', (c) => c.notNull())
        // secrets/: bound to `user-oauth-token:<integrationId>:<userId>:access` (and `:refresh`).
        .addColumn('access_token', 'text', (c) => c.notNull())
        .addColumn('refresh_token', 'text')
        .addColumn('token_type', 'text')
        .addColumn('scope', 'text')
        .addColumn('access_token_expires_at', 'text')
        .addColumn('refresh_token_expires_at', 'text')
        // JSON: what the provider said when a refresh or an exchange last failed.
        .addColumn('last_error', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      // One token per user and integration.
      await db.schema.createIndex('user_oauth_tokens_one').on('user_oauth_tokens').columns(['user_id', 'integration_id']).unique().execute();
      await db.schema.createIndex('user_oauth_tokens_by_integration').on('user_oauth_tokens').column('integration_id').execute();

      await table(db, 'oauth_states')
        .addColumn('tenant_id', ref, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
        .addColumn('user_id', ref, (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('integration_id', ref, (c) => c.notNull().references('oauth_integrations.id').onDelete('cascade'))
        // SHA-256 of the `state` sent to the provider: the value itself is never stored.
        .addColumn('state_hash', 'text', (c) => c.notNull().unique())
        // secrets/: the PKCE verifier, bound to `oauth-state:<stateHash>`.
        .addColumn('code_verifier', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('oauth_states_by_expiry').on('oauth_states').columns(['tenant_id', 'expires_at']).execute();
    },
  };
}
