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
  { table: 'user_oauth_tokens', id: 'id', value: 'access_token', contextColumns: ['integration_id', 'user_id'], context: (row) => sealedAs.accessToken(Number(row.integration_id), Number(row.user_id)) },
  { table: 'user_oauth_tokens', id: 'id', value: 'refresh_token', contextColumns: ['integration_id', 'user_id'], context: (row) => sealedAs.refreshToken(Number(row.integration_id), Number(row.user_id)) },
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
export async function insertIntegration(trx: Executor, tenantId: number, values: IntegrationValues, seal: (id: number) => string, at: string): Promise<OAuthIntegrationRow> {
  const row = await trx
    .insertInto('oauth_integrations')
    .values({ tenant_id: tenantId, ...values, client_secret: '', created_at: at, updated_at: at })
    .returningAll()
    .executeTakeFirstOrThrow();
  const client_secret = seal(row.id);
  await trx.updateTable('oauth_integrations').set({ client_secret }).where('id', '=', row.id).execute();
  return { ...row, client_secret };
}

export async function updateIntegration(db: Executor, tenantId: number, id: number, values: IntegrationValues & { client_secret?: string }, at: string): Promise<OAuthIntegrationRow | undefined> {
  return db.updateTable('oauth_integrations').set({ ...values, updated_at: at }).where('tenant_id', '=', tenantId).where('id', '=', id).returningAll().executeTakeFirst();
}

export async function deleteIntegration(db: Executor, tenantId: number, id: number): Promise<boolean> {
  const result = await db.deleteFrom('oauth_integrations').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function listTokens(db: Executor, tenantId: number, userId: number): Promise<UserOAuthTokenRow[]> {
  return db.selectFrom('user_oauth_tokens').selectAll().where('tenant_id', '=', tenantId).where('user_id', '=', userId).orderBy('integration_id').execute();
}

export async function findToken(db: Executor, tenantId: number, userId: number, integrationId: number): Promise<UserOAuthTokenRow | undefined> {
  return db.selectFrom('user_oauth_tokens').selectAll().where('tenant_id', '=', tenantId).where('user_id', '=', userId).where('integration_id', '=', integrationId).executeTakeFirst();
}

export type TokenValues = Pick<UserOAuthTokenRow, 'status' | 'access_token' | 'refresh_token' | 'token_type' | 'scope' | 'access_token_expires_at' | 'refresh_token_expires_at' | 'last_error'>;

/** Creates or replaces the user's token for the integration (a new authorization replaces the old one). */
export async function upsertToken(db: Executor, key: { tenantId: number; userId: number; integrationId: number }, values: TokenValues, at: string): Promise<UserOAuthTokenRow> {
  return db
    .insertInto('user_oauth_tokens')
    .values({ tenant_id: key.tenantId, user_id: key.userId, integration_id: key.integrationId, ...values, created_at: at, updated_at: at })
    .onConflict((oc) => oc.columns(['user_id', 'integration_id']).doUpdateSet({ ...values, updated_at: at }))
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function updateToken(db: Executor, id: number, values: Partial<TokenValues>, at: string): Promise<UserOAuthTokenRow | undefined> {
  return db.updateTable('user_oauth_tokens').set({ ...values, updated_at: at }).where('id', '=', id).returningAll().executeTakeFirst();
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
