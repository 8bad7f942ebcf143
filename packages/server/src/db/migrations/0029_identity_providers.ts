import { type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../dialect.js';
import { columnsFor } from './columns.js';

/**
 * The tenant's own identity provider (OIDC), through which its users sign in to the
 * authorization server (docs/api/oauth.md, Identity provider), and the sign-ins in flight there: the
 * browser has been sent to the provider and has not come back yet.
 */
export function identityProviders(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<any>) {
      const { ref, table } = columnsFor(dialect);
      await table(db, 'identity_providers')
        // One provider per tenant.
        .addColumn('tenant_id', ref, (c) => c.notNull().unique().references('tenants.id').onDelete('cascade'))
        .addColumn('issuer', 'text', (c) => c.notNull())
        .addColumn('client_id', 'text', (c) => c.notNull())
        // secrets/: bound to `identity-provider:<tenantId>:client-secret`.
        .addColumn('client_secret', 'text', (c) => c.notNull())
        // JSON: lower-case domain names, at least one.
        .addColumn('allowed_email_domains', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();

      await table(db, 'idp_sign_ins')
        .addColumn('tenant_id', ref, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
        // SHA-256 of the `state` sent to the provider: the value itself is never stored.
        .addColumn('state_hash', 'text', (c) => c.notNull().unique())
        // SHA-256 of the browser-binding cookie set when the sign-in started.
        .addColumn('binding_hash', 'text', (c) => c.notNull())
        // The authorization server's interaction this sign-in completes.
        .addColumn('interaction_uid', 'text', (c) => c.notNull())
        .addColumn('nonce', 'text', (c) => c.notNull())
        // secrets/: the PKCE verifier, bound to `idp-sign-in:<stateHash>`.
        .addColumn('code_verifier', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('idp_sign_ins_by_expiry').on('idp_sign_ins').columns(['tenant_id', 'expires_at']).execute();
    },
  };
}
