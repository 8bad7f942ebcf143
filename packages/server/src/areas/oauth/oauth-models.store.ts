import type { Executor, OAuthModelRow } from '../../db/tables.js';

/*
 * The provider's table (`oauth_models`, migration 0022): the models of oidc-provider (through
 * DbAdapter), the registered clients (model `Client`) and each tenant's provider keys.
 */

/** The columns of a model the adapter writes on each upsert. */
export type OAuthModelWrite = Pick<OAuthModelRow, 'payload' | 'grant_hash' | 'user_code_hash' | 'uid' | 'expires_at'>;

export type LiveOAuthModel = Pick<OAuthModelRow, 'id' | 'key_hash' | 'payload' | 'secret' | 'expires_at'>;

export async function upsertOAuthModel(db: Executor, tenantId: number, model: string, keyHash: string, createdAt: string, row: OAuthModelWrite): Promise<void> {
  await db
    .insertInto('oauth_models')
    .values({ tenant_id: tenantId, model, key_hash: keyHash, created_at: createdAt, secret: null, ...row })
    .onConflict((oc) => oc.columns(['tenant_id', 'model', 'key_hash']).doUpdateSet(row))
    .execute();
}

/** Deletes every row (of any tenant and model) that expired before `at`. */
export async function deleteExpiredOAuthModels(db: Executor, at: string): Promise<void> {
  await db.deleteFrom('oauth_models').where('expires_at', '<', at).execute();
}

/** A model not expired, by the hash of its id, the hash of its user code, or its uid. */
export async function findLiveOAuthModel(
  db: Executor,
  tenantId: number,
  model: string,
  by: 'key_hash' | 'user_code_hash' | 'uid',
  value: string,
): Promise<LiveOAuthModel | undefined> {
  return db
    .selectFrom('oauth_models')
    .select(['id', 'key_hash', 'payload', 'secret', 'expires_at'])
    .where('tenant_id', '=', tenantId)
    .where('model', '=', model)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', new Date().toISOString())]))
    .where(by, '=', value)
    .executeTakeFirst();
}

/** Replaces a row's payload only if it is still `expected`; false when another write came first. */
export async function replaceOAuthModelPayload(db: Executor, id: number, expected: string, payload: string): Promise<boolean> {
  const result = await db.updateTable('oauth_models').set({ payload }).where('id', '=', id).where('payload', '=', expected).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function deleteOAuthModel(db: Executor, tenantId: number, model: string, keyHash: string): Promise<void> {
  await db.deleteFrom('oauth_models').where('tenant_id', '=', tenantId).where('model', '=', model).where('key_hash', '=', keyHash).execute();
}

export async function deleteOAuthModelsOfGrant(db: Executor, tenantId: number, model: string, grantHash: string): Promise<void> {
  await db.deleteFrom('oauth_models').where('tenant_id', '=', tenantId).where('model', '=', model).where('grant_hash', '=', grantHash).execute();
}

/** Stores a registered client (model `Client`); `secret` is already sealed. */
export async function insertOAuthClient(
  db: Executor,
  tenantId: number,
  keyHash: string,
  payload: string,
  secret: string | null,
  createdAt: string,
): Promise<Pick<OAuthModelRow, 'id' | 'payload'>> {
  return db
    .insertInto('oauth_models')
    .values({
      tenant_id: tenantId,
      model: 'Client',
      key_hash: keyHash,
      payload,
      secret,
      created_at: createdAt,
      expires_at: null,
      grant_hash: null,
      user_code_hash: null,
      uid: null,
    })
    .returning(['id', 'payload'])
    .executeTakeFirstOrThrow();
}

function clients(db: Executor, tenantId: number) {
  return db.selectFrom('oauth_models').select(['id', 'payload']).where('tenant_id', '=', tenantId).where('model', '=', 'Client');
}

export async function listOAuthClients(db: Executor, tenantId: number): Promise<Array<Pick<OAuthModelRow, 'id' | 'payload'>>> {
  return clients(db, tenantId).orderBy('id').execute();
}

export async function findOAuthClient(db: Executor, tenantId: number, id: number): Promise<Pick<OAuthModelRow, 'id' | 'payload'> | undefined> {
  return clients(db, tenantId).where('id', '=', id).executeTakeFirst();
}

/** Deletes a client's row and its client-credentials tokens (run it in a transaction). */
export async function deleteOAuthClient(trx: Executor, tenantId: number, id: number, clientId: string): Promise<void> {
  await trx.deleteFrom('oauth_models').where('id', '=', id).execute();
  // Its client-credentials tokens are useless without it; removed now rather than left to expire.
  await trx
    .deleteFrom('oauth_models')
    .where('tenant_id', '=', tenantId)
    .where('model', '=', 'ClientCredentials')
    .where('payload', 'like', `%"clientId":${JSON.stringify(clientId)}%`)
    .execute();
}

/** The tenant's provider keys, sealed. */
export async function findProviderKeys(db: Executor, tenantId: number, keyHash: string): Promise<{ secret: string | null } | undefined> {
  return db
    .selectFrom('oauth_models')
    .select('secret')
    .where('tenant_id', '=', tenantId)
    .where('model', '=', 'ProviderKeys')
    .where('key_hash', '=', keyHash)
    .executeTakeFirst();
}

/** Stores the tenant's provider keys (`secret` sealed) unless another process stored them first. */
export async function insertProviderKeysUnlessPresent(db: Executor, tenantId: number, keyHash: string, secret: string, createdAt: string): Promise<void> {
  await db
    .insertInto('oauth_models')
    .values({
      tenant_id: tenantId,
      model: 'ProviderKeys',
      key_hash: keyHash,
      payload: '{}',
      secret,
      created_at: createdAt,
      expires_at: null,
      grant_hash: null,
      user_code_hash: null,
      uid: null,
    })
    .onConflict((oc) => oc.columns(['tenant_id', 'model', 'key_hash']).doNothing())
    .execute();
}

/** Replaces the tenant's provider keys (`secret` sealed). */
export async function setProviderKeys(db: Executor, tenantId: number, keyHash: string, secret: string): Promise<void> {
  await db
    .updateTable('oauth_models')
    .set({ secret })
    .where('tenant_id', '=', tenantId)
    .where('model', '=', 'ProviderKeys')
    .where('key_hash', '=', keyHash)
    .execute();
}

/** An active (not deactivated) user of the tenant: who an OAuth grant may act as. */
export async function findActiveUser(db: Executor, tenantId: number, userId: number): Promise<{ id: number; email: string } | undefined> {
  return db
    .selectFrom('users')
    .select(['id', 'email'])
    .where('tenant_id', '=', tenantId)
    .where('id', '=', userId)
    .where('deactivated_at', 'is', null)
    .executeTakeFirst();
}
