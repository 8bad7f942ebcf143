/**
 * The api-keys area's public entry: what other areas may use of it. Everything else in the folder
 * is the area's own (npm run cycles enforces it).
 */
export { findKeyByHash, hasLiveAdminKey, insertKey, revokeOtherKeysFrom, tenantHasKeys } from './api-keys.store.js';
export { generateApiKey, hashApiKey } from './key-format.js';
export { isApiKeyFormat } from './key-format.js';
export { apiKeysArea } from './api-keys.module.js';
export type { LastUsedRecorder } from './last-used.js';
