import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../dialect.js';
import { columnsFor } from './columns.js';

/**
 * The signing service's keyring (one ES256 key pair per tenant at a time, its private half sealed
 * by secrets/), and the environment tokens minted from it (reference 1.18-1.20), kept so their
 * minters can list them again; each token is sealed too, since it is a credential.
 */
export function signingKeys(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<any>) {
      const { ref, table } = columnsFor(dialect);
      await table(db, 'signing_keys')
        .addColumn('kid', 'text', (c) => c.notNull().unique())
        .addColumn('tenant_id', ref, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
        .addColumn('algorithm', 'text', (c) => c.notNull())
        // The public JWK, in clear: it is what the key set serves.
        .addColumn('public_jwk', 'text', (c) => c.notNull())
        // secrets/: the private JWK, bound to `signing-key:<tenantId>:<kid>`.
        .addColumn('private_key', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('activated_at', 'text', (c) => c.notNull())
        .addColumn('retired_at', 'text')
        .addColumn('expires_at', 'text')
        .execute();
      // One signing key per tenant: two processes creating the first key at once cannot both win.
      await db.schema.createIndex('signing_keys_one_active').on('signing_keys').column('tenant_id').unique().where(sql.ref('retired_at'), 'is', null).execute();
      await table(db, 'environment_tokens')
        .addColumn('tenant_id', ref, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
        .addColumn('deployment_id', ref, (c) => c.notNull().references('deployments.id').onDelete('cascade'))
        .addColumn('environment_id', 'text', (c) => c.notNull())
        .addColumn('jti', 'text', (c) => c.notNull())
        .addColumn('created_by_user_id', ref, (c) => c.notNull().references('users.id').onDelete('cascade'))
        // secrets/: the signed token, bound to `environment-token:<deploymentId>:<jti>`.
        .addColumn('token', 'text', (c) => c.notNull())
        .addColumn('security_context', 'text', (c) => c.notNull())
        .addColumn('scopes', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .execute();
      // The list reads an environment's newest tokens first.
      await db.schema.createIndex('environment_tokens_newest').on('environment_tokens').columns(['deployment_id', 'environment_id', 'id']).execute();
    },
  };
}
