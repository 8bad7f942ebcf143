import type { Caller } from '../../access/caller.js';
import type { Store } from '../../db/database.js';
import type { ApiKeyRow } from '../../db/tables.js';
import { afterId, pageRequest, toPage } from '../../shared/pagination.js';
import { ApiError, notFound } from '../../shared/problems.js';
import { timestamp, type Clock } from '../../time.js';
import { existingDeploymentIds } from '../deployments/index.js';
import { findUserById } from '../users/index.js';
import type { ApiKey, CreateApiKeyInput, CreatedApiKey, ListApiKeysInput } from './api-keys.schemas.js';
import { findKey, insertKey, listKeys, revokeKey } from './api-keys.store.js';
import { generateApiKey } from './key-format.js';

export function toApiKey(row: ApiKeyRow): ApiKey {
  return {
    id: row.id,
    name: row.name,
    prefix: row.key_prefix,
    userId: row.user_id,
    deploymentIds: row.deployment_ids === null ? null : (JSON.parse(row.deployment_ids) as number[]),
    expiresAt: row.expires_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
    createdAt: row.created_at,
  };
}

export function apiKeysService(store: Store, now: Clock) {
  const { db } = store;
  return {
    async create({ actor, access }: Caller, input: CreateApiKeyInput): Promise<CreatedApiKey> {
      const userId = input.userId ?? actor.userId;
      if (userId !== actor.userId) access.requireAdmin('create an API key for another user');
      const user = await findUserById(db, actor.tenantId, userId);
      if (!user) throw notFound('USER_NOT_FOUND', 'User', userId);
      if (user.deactivated_at !== null) {
        throw new ApiError('INVALID_OPERATION', `User ${userId} is deactivated; reactivate them before creating keys.`);
      }
      const scope = input.deploymentIds ?? null;
      // A scoped key must not mint a key that reaches further than itself.
      if (actor.scope !== null) {
        const outside = scope === null ? null : scope.filter((id) => !actor.scope?.includes(id));
        if (outside === null || outside.length > 0) {
          throw new ApiError(
            'KEY_SCOPE_FORBIDDEN',
            `This API key is scoped to deployments ${actor.scope.join(', ')}; a key it creates must be scoped within them.`,
          );
        }
      }
      if (scope !== null) {
        const known = await existingDeploymentIds(db, actor.tenantId, scope);
        const missing = scope.filter((id) => !known.has(id));
        if (missing.length > 0) {
          throw new ApiError('DEPLOYMENT_NOT_FOUND', `Deployment ${missing.join(', ')} does not exist.`, {
            errors: missing.map((id) => ({ pointer: `/body/deploymentIds/${scope.indexOf(id)}`, message: 'is not a deployment' })),
          });
        }
      }
      const createdAt = timestamp(now);
      const expiresAt = input.expiresAt == null ? null : Date.parse(input.expiresAt);
      // date-time syntax admits values no calendar has (a leap second on a day without one).
      if (expiresAt !== null && (Number.isNaN(expiresAt) || new Date(expiresAt).toISOString() <= createdAt)) {
        throw new ApiError('VALIDATION_FAILED', 'expiresAt must be a real date-time in the future.', {
          errors: [{ pointer: '/body/expiresAt', message: 'must be a real date-time in the future' }],
        });
      }
      const key = generateApiKey();
      const row = await insertKey(db, {
        tenantId: actor.tenantId,
        userId,
        name: input.name,
        key,
        source: 'api',
        deploymentIds: scope,
        expiresAt: expiresAt === null ? null : new Date(expiresAt).toISOString(),
        createdAt,
      });
      return { ...toApiKey(row), key };
    },

    /** Admins see every key of the tenant; anyone else sees their own. */
    async list({ actor, access }: Caller, input: ListApiKeysInput) {
      let userId = input.userId;
      if (!access.isAdmin) {
        if (userId !== undefined && userId !== actor.userId) access.requireAdmin("list another user's API keys");
        userId = actor.userId;
      }
      const page = pageRequest(input);
      const rows = await listKeys(db, actor.tenantId, { userId, includeRevoked: input.includeRevoked ?? false }, afterId(page), page.first + 1);
      const { items, pageInfo } = toPage(rows, page, (r) => [r.id]);
      return { items: items.map(toApiKey), pageInfo };
    },

    /** Revoking takes effect at once: the next request with the key gets 401. */
    async revoke({ actor, access }: Caller, id: number): Promise<void> {
      const key = await findKey(db, actor.tenantId, id);
      // Someone else's key is reported as missing, not as forbidden: its existence is not theirs to learn.
      if (!key || (!access.isAdmin && key.user_id !== actor.userId)) throw notFound('API_KEY_NOT_FOUND', 'API key', id);
      await revokeKey(db, actor.tenantId, id, timestamp(now));
    },
  };
}
export type ApiKeysService = ReturnType<typeof apiKeysService>;
