import type { Executor, IdentityProviderRow, IdpSignInRow } from '../../db/tables.js';
import type { SecretColumn } from '../../secrets/index.js';

/** What each sealed value is bound to: copied to another row or tenant, it does not decrypt. */
export const sealedAs = {
  clientSecret: (tenantId: number) => `identity-provider:${tenantId}:client-secret`,
  codeVerifier: (stateHash: string) => `idp-sign-in:${stateHash}`,
};

/** The sealed columns, for the secrets service's start-up check and `secrets re-encrypt`. */
export const identityProviderSecretColumns: SecretColumn[] = [
  {
    table: 'identity_providers',
    id: 'id',
    value: 'client_secret',
    contextColumns: ['tenant_id'],
    context: (row) => sealedAs.clientSecret(Number(row.tenant_id)),
  },
  { table: 'idp_sign_ins', id: 'id', value: 'code_verifier', contextColumns: ['state_hash'], context: (row) => sealedAs.codeVerifier(String(row.state_hash)) },
];

export type ProviderValues = Pick<IdentityProviderRow, 'issuer' | 'client_id' | 'allowed_email_domains'>;

export async function findIdentityProvider(db: Executor, tenantId: number): Promise<IdentityProviderRow | undefined> {
  return db.selectFrom('identity_providers').selectAll().where('tenant_id', '=', tenantId).executeTakeFirst();
}

/** Creates or replaces the tenant's provider; a `client_secret` left out keeps the stored one. */
export async function upsertIdentityProvider(
  db: Executor,
  tenantId: number,
  values: ProviderValues & { client_secret?: string },
  at: string,
): Promise<IdentityProviderRow> {
  return db
    .insertInto('identity_providers')
    .values({ tenant_id: tenantId, ...values, client_secret: values.client_secret ?? '', created_at: at, updated_at: at })
    .onConflict((oc) => oc.column('tenant_id').doUpdateSet({ ...values, updated_at: at }))
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deleteIdentityProvider(db: Executor, tenantId: number): Promise<boolean> {
  const result = await db.deleteFrom('identity_providers').where('tenant_id', '=', tenantId).executeTakeFirst();
  // Sign-ins in flight cannot complete without it.
  await db.deleteFrom('idp_sign_ins').where('tenant_id', '=', tenantId).execute();
  return Number(result.numDeletedRows) > 0;
}

export async function insertSignIn(db: Executor, row: Omit<IdpSignInRow, 'id'>): Promise<void> {
  await db.insertInto('idp_sign_ins').values(row).execute();
}

export async function findSignIn(db: Executor, tenantId: number, stateHash: string): Promise<IdpSignInRow | undefined> {
  return db.selectFrom('idp_sign_ins').selectAll().where('tenant_id', '=', tenantId).where('state_hash', '=', stateHash).executeTakeFirst();
}

/** Takes the sign-in out; true for exactly one caller however many present its state at once (single use). */
export async function consumeSignIn(db: Executor, id: number): Promise<boolean> {
  const result = await db.deleteFrom('idp_sign_ins').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function deleteExpiredSignIns(db: Executor, tenantId: number, before: string): Promise<void> {
  await db.deleteFrom('idp_sign_ins').where('tenant_id', '=', tenantId).where('expires_at', '<=', before).execute();
}
