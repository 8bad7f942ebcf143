import type { ApiKeyRow, Executor, KeySource, Role } from '../../db/tables.js';
import { displayPrefix, hashApiKey } from './key-format.js';

export interface KeyOwner {
  key: ApiKeyRow;
  user: { id: number; email: string; role: Role; tenant_id: number };
}

/** The tenant's key with this hash, if it is not revoked and its user is active. Expiry is checked by the caller. */
export async function findLiveKeyByHash(db: Executor, tenantId: number, keyHash: string): Promise<KeyOwner | undefined> {
  const row = await db
    .selectFrom('api_keys')
    .innerJoin('users', 'users.id', 'api_keys.user_id')
    .selectAll('api_keys')
    .select(['users.email as user_email', 'users.role as user_role'])
    .where('api_keys.key_hash', '=', keyHash)
    .where('api_keys.tenant_id', '=', tenantId)
    .where('api_keys.revoked_at', 'is', null)
    .where('users.deactivated_at', 'is', null)
    .executeTakeFirst();
  if (!row) return undefined;
  const { user_email, user_role, ...key } = row;
  return { key, user: { id: key.user_id, email: user_email, role: user_role, tenant_id: key.tenant_id } };
}

export interface NewKey {
  tenantId: number;
  userId: number;
  name: string;
  /** The key in clear; only its hash and display prefix are stored. */
  key: string;
  source: KeySource;
  deploymentIds?: number[] | null;
  expiresAt?: string | null;
  createdAt: string;
}

/** Stores a new key as its hash; every way of making a key (API, bootstrap, operator) goes through here. */
export async function insertKey(db: Executor, k: NewKey): Promise<ApiKeyRow> {
  return db
    .insertInto('api_keys')
    .values({
      tenant_id: k.tenantId,
      user_id: k.userId,
      name: k.name,
      key_hash: hashApiKey(k.key),
      key_prefix: displayPrefix(k.key),
      deployment_ids: k.deploymentIds == null ? null : JSON.stringify(k.deploymentIds),
      expires_at: k.expiresAt ?? null,
      revoked_at: null,
      last_used_at: null,
      created_at: k.createdAt,
      source: k.source,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findKey(db: Executor, tenantId: number, id: number): Promise<ApiKeyRow | undefined> {
  return db.selectFrom('api_keys').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

export async function findKeyByHash(db: Executor, keyHash: string): Promise<ApiKeyRow | undefined> {
  return db.selectFrom('api_keys').selectAll().where('key_hash', '=', keyHash).executeTakeFirst();
}

export async function listKeys(
  db: Executor,
  tenantId: number,
  filter: { userId?: number | undefined; includeRevoked: boolean },
  afterId: number | undefined,
  limit: number,
): Promise<ApiKeyRow[]> {
  let query = db.selectFrom('api_keys').selectAll().where('tenant_id', '=', tenantId);
  if (filter.userId !== undefined) query = query.where('user_id', '=', filter.userId);
  if (!filter.includeRevoked) query = query.where('revoked_at', 'is', null);
  if (afterId !== undefined) query = query.where('id', '>', afterId);
  return query.orderBy('id').limit(limit).execute();
}

export async function revokeKey(db: Executor, tenantId: number, id: number, at: string): Promise<void> {
  await db.updateTable('api_keys').set({ revoked_at: at }).where('tenant_id', '=', tenantId).where('id', '=', id).where('revoked_at', 'is', null).execute();
}

/** Writes many last-used times in one statement per key; see last-used.ts for why these are batched. */
export async function recordLastUsed(db: Executor, uses: Map<number, string>): Promise<void> {
  for (const [id, at] of uses) {
    await db
      .updateTable('api_keys')
      .set({ last_used_at: at })
      .where('id', '=', id)
      .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', at)]))
      .execute();
  }
}

/** Revokes the tenant's live keys from `source` other than `keepHash`: rotation of ADMIN_API_KEY. */
export async function revokeOtherKeysFrom(db: Executor, tenantId: number, source: KeySource, keepHash: string, at: string): Promise<number> {
  const result = await db
    .updateTable('api_keys')
    .set({ revoked_at: at })
    .where('tenant_id', '=', tenantId)
    .where('source', '=', source)
    .where('key_hash', '!=', keepHash)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Whether any key was ever issued in the tenant, revoked and expired ones included. */
export async function tenantHasKeys(db: Executor, tenantId: number): Promise<boolean> {
  const row = await db.selectFrom('api_keys').select('id').where('tenant_id', '=', tenantId).limit(1).executeTakeFirst();
  return row !== undefined;
}

/** Whether an active admin of the tenant holds a key that works now (not revoked, not expired). */
export async function hasLiveAdminKey(db: Executor, tenantId: number, at: string): Promise<boolean> {
  const row = await db
    .selectFrom('api_keys')
    .innerJoin('users', 'users.id', 'api_keys.user_id')
    .select('api_keys.id')
    .where('api_keys.tenant_id', '=', tenantId)
    .where('users.role', '=', 'ADMIN')
    .where('users.deactivated_at', 'is', null)
    .where('api_keys.revoked_at', 'is', null)
    .where((eb) => eb.or([eb('api_keys.expires_at', 'is', null), eb('api_keys.expires_at', '>', at)]))
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
