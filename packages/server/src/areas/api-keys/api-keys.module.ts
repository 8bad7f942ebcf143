import { defineArea } from '../../platform/index.js';
import { apiKeysRoutes } from './api-keys.routes.js';
import { apiKeySchemas } from './api-keys.schemas.js';
import { apiKeysService } from './api-keys.service.js';
import { findLiveKeyByHash } from './api-keys.store.js';
import { hashApiKey, hashesEqual, isApiKeyFormat } from './key-format.js';
import { LastUsedRecorder } from './last-used.js';

/** API keys: their routes, and the credential check of every request that carries one. `lastUsedFlushMs`: how often coalesced `lastUsedAt` values are written. */
export const apiKeysArea = defineArea('api-keys', ({ platform: { store, onError, now } }, config: { lastUsedFlushMs?: number }) => {
  // A key's `lastUsedAt` is written in batches, not on every request it authenticates.
  const lastUsed = new LastUsedRecorder(store.db, config.lastUsedFlushMs, (error) => onError(error, 'lastUsedAt flush failed'));
  const apiKeys = apiKeysService(store, now);
  return {
    services: { apiKeys, lastUsed },
    schemas: apiKeySchemas,
    routes: () => [apiKeysRoutes(apiKeys)],
    credentials: {
      apiKeys: {
        isFormat: isApiKeyFormat,
        hash: hashApiKey,
        find: (tenantId, hash) => findLiveKeyByHash(store.db, tenantId, hash),
        equal: hashesEqual,
        touch: (id, at) => lastUsed.touch(id, at),
      },
    },
    close: () => lastUsed.close(),
  };
});
