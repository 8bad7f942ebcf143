import type { Executor, OAuthIntegrationRow, OAuthStateRow, UserOAuthTokenRow } from '../../db/tables.js';
import type { SecretColumn } from '../../secrets/index.js';

/** What each sealed value is bound to: copied to another row, it does not decrypt. */
export const sealedAs = {
  clientSecret: (integrationId: number) => `oauth-integration:${integrationId}:client-secret`,
  accessToken: (integrationId: number, userId: number) => `user-oauth-token:${integrationId}:${userId}:access`,
  refreshToken: (integrationId: number, userId: number) => `user-oauth-token:${integrationId}:${userId}:refresh`,
  codeVerifier: (stateHash: string) => `oauth-state:${stateHash}`,
};

/** The columns of sealed values, for the secrets service's start-up check and re-encryption. */
export const oauthSecretColumns: SecretColumn[] = [
  { table: 'oauth_integrations', id: 'id', value: 'client_secret', contextColumns: [], context: (row) => sealedAs.clientSecret(Number(row.id)) },
  {
    table: 'user_oauth_tokens',
    id: 'id',
    value: 'access_token',
    contextColumns: ['integration_id', 'user_id'],
    context: (row) => sealedAs.accessToken(Number(row.integration_id), Number(row.user_id)),
  },
  {
    table: 'user_oauth_tokens',
    id: 'id',
    value: 'refresh_token',
    contextColumns: ['integration_id', 'user_id'],
    context: (row) => sealedAs.refreshToken(Number(row.integration_id), Number(row.user_id)),
  },
  { table: 'oauth_states', id: 'id', value: 'code_verifier', contextColumns: ['state_hash'], context: (row) => sealedAs.codeVerifier(String(row.state_hash)) },
];

export type IntegrationValues = Pick<OAuthIntegrationRow, 'name' | 'type' | 'auth_url' | 'token_url' | 'client_id' | 'redirect_uri' | 'scopes' | 'config'>;

export async function listIntegrations(db: Executor, tenantId: number): Promise<OAuthIntegrationRow[]> {
  return db.selectFrom('oauth_integrations').selectAll().where('tenant_id', '=', tenantId).orderBy('id').execute();
}

export async function findIntegration(db: Executor, tenantId: number, id: number): Promise<OAuthIntegrationRow | undefined> {
  return db.selectFrom('oauth_integrations').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

/** Inserts the row, then seals the secret under its id (the context needs it), in the caller's transaction. */
export async function insertIntegration(
  trx: Executor,
  tenantId: number,
  values: IntegrationValues,
  seal: (id: number) => string,
  at: string,
): Promise<OAuthIntegrationRow> {
  const row = await trx
    .insertInto('oauth_integrations')
    .values({ tenant_id: tenantId, ...values, client_secret: '', created_at: at, updated_at: at })
    .returningAll()
    .executeTakeFirstOrThrow();
  const client_secret = seal(row.id);
  await trx.updateTable('oauth_integrations').set({ client_secret }).where('id', '=', row.id).execute();
  return { ...row, client_secret };
}

export async function updateIntegration(
  db: Executor,
  tenantId: number,
  id: number,
  values: IntegrationValues & { client_secret?: string },
  at: string,
): Promise<OAuthIntegrationRow | undefined> {
  return db
    .updateTable('oauth_integrations')
    .set({ ...values, updated_at: at })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteIntegration(db: Executor, tenantId: number, id: number): Promise<boolean> {
  const result = await db.deleteFrom('oauth_integrations').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function listTokens(db: Executor, tenantId: number, userId: number): Promise<UserOAuthTokenRow[]> {
  return db.selectFrom('user_oauth_tokens').selectAll().where('tenant_id', '=', tenantId).where('user_id', '=', userId).orderBy('integration_id').execute();
}

export async function findToken(db: Executor, tenantId: number, userId: number, integrationId: number): Promise<UserOAuthTokenRow | undefined> {
  return db
    .selectFrom('user_oauth_tokens')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .where('integration_id', '=', integrationId)
    .executeTakeFirst();
}

export type TokenValues = Pick<
  UserOAuthTokenRow,
  'status' | 'access_token' | 'refresh_token' | 'token_type' | 'scope' | 'access_token_expires_at' | 'refresh_token_expires_at' | 'last_error'
>;
/** The background refresh's bookkeeping (migration 0026). */
export type RefreshValues = Pick<UserOAuthTokenRow, 'refresh_claim' | 'refresh_claimed_until' | 'refresh_retry_at'>;
const UNCLAIMED: RefreshValues = { refresh_claim: null, refresh_claimed_until: null, refresh_retry_at: null };

/** Creates or replaces the user's token for the integration (a new authorization replaces the old one). */
export async function upsertToken(
  db: Executor,
  key: { tenantId: number; userId: number; integrationId: number },
  values: TokenValues,
  at: string,
): Promise<UserOAuthTokenRow> {
  return (
    db
      .insertInto('user_oauth_tokens')
      .values({ tenant_id: key.tenantId, user_id: key.userId, integration_id: key.integrationId, ...values, created_at: at, updated_at: at })
      // A new authorization starts afresh: no claim of a refresh under way, no retry pending.
      .onConflict((oc) => oc.columns(['user_id', 'integration_id']).doUpdateSet({ ...values, ...UNCLAIMED, updated_at: at }))
      .returningAll()
      .executeTakeFirstOrThrow()
  );
}

export async function updateToken(db: Executor, id: number, values: Partial<TokenValues & RefreshValues>, at: string): Promise<UserOAuthTokenRow | undefined> {
  return db
    .updateTable('user_oauth_tokens')
    .set({ ...values, updated_at: at })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export async function findTokenById(db: Executor, id: number): Promise<UserOAuthTokenRow | undefined> {
  return db.selectFrom('user_oauth_tokens').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * Tokens of every tenant that a background refresh should take now, soonest to expire first: a
 * refresh token still valid, an access token expiring before `before`, no live claim, and either
 * ACTIVE or waiting for a retry that is due. A refresh the provider refused is not retried: the
 * user must authorize again.
 */
export async function tokensDueForRefresh(db: Executor, at: string, before: string, limit: number): Promise<UserOAuthTokenRow[]> {
  return db
    .selectFrom('user_oauth_tokens')
    .selectAll()
    .where('access_token_expires_at', 'is not', null)
    .where('access_token_expires_at', '<=', before)
    .where('refresh_token', 'is not', null)
    .where((eb) => eb.or([eb('refresh_token_expires_at', 'is', null), eb('refresh_token_expires_at', '>', at)]))
    .where((eb) => eb.or([eb('refresh_claimed_until', 'is', null), eb('refresh_claimed_until', '<=', at)]))
    .where((eb) => eb.or([eb('status', '=', 'ACTIVE'), eb.and([eb('refresh_retry_at', 'is not', null), eb('refresh_retry_at', '<=', at)])]))
    .orderBy('access_token_expires_at')
    .orderBy('id')
    .limit(limit)
    .execute();
}

/**
 * Claims the token's refresh for `claim` until `until`: true for exactly one caller, in any
 * process, however many try at once (a conditional update). The token must still be as `seen`
 * (same access-token expiry): one refreshed meanwhile is not claimed.
 */
export async function claimRefresh(db: Executor, seen: UserOAuthTokenRow, claim: string, until: string, at: string): Promise<boolean> {
  const result = await db
    .updateTable('user_oauth_tokens')
    .set({ refresh_claim: claim, refresh_claimed_until: until })
    .where('id', '=', seen.id)
    .where('access_token_expires_at', '=', seen.access_token_expires_at)
    .where((eb) => eb.or([eb('refresh_claimed_until', 'is', null), eb('refresh_claimed_until', '<=', at)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Ends the claim `claim`, if it is still the token's. */
export async function releaseRefresh(db: Executor, id: number, claim: string): Promise<void> {
  await db
    .updateTable('user_oauth_tokens')
    .set({ refresh_claim: null, refresh_claimed_until: null })
    .where('id', '=', id)
    .where('refresh_claim', '=', claim)
    .execute();
}

export async function deleteToken(db: Executor, id: number): Promise<boolean> {
  const result = await db.deleteFrom('user_oauth_tokens').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function insertState(db: Executor, row: Omit<OAuthStateRow, 'id'>): Promise<void> {
  await db.insertInto('oauth_states').values(row).execute();
}

export async function findState(db: Executor, tenantId: number, stateHash: string): Promise<OAuthStateRow | undefined> {
  return db.selectFrom('oauth_states').selectAll().where('tenant_id', '=', tenantId).where('state_hash', '=', stateHash).executeTakeFirst();
}

/** Takes the state out; true for exactly one caller however many present it at once (single use). */
export async function consumeState(db: Executor, id: number): Promise<boolean> {
  const result = await db.deleteFrom('oauth_states').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Forgets the tenant's authorization requests that can no longer complete. */
export async function deleteExpiredStates(db: Executor, tenantId: number, before: string): Promise<void> {
  await db.deleteFrom('oauth_states').where('tenant_id', '=', tenantId).where('expires_at', '<=', before).execute();
}
