/**
 * The embed-tenants area's public entry: what other areas may use of it. Everything else in the folder
 * is the area's own (npm run cycles enforces it).
 */
export { embedShareOf } from './dashboard-embed.js';
export { sharedWorkspaceVisibility } from './shared-workspace.js';
export { attributeValuesOf, globalGroupNamesOf } from './memberships.store.js';
export { SYNTHETIC_EMAIL_DOMAIN, normalizeExternalId, tenantGroupContextName, tenantSystemGroupName } from './names.js';
export { confirmEmbedUserCap, provisionEmbedUser } from './provision.js';
export { findEmbedTenant } from './embed-tenants.store.js';
export { embedUserExists, existingEmbedUserId, findEmbedUserByExternalId } from './embed-users.store.js';
export { DEFAULT_EMBED_USER_LIMIT } from './limits.js';
export { embedTenantsArea } from './embed-tenants.module.js';
export {
  embedIdentities,
  embedSecurityContext,
  embedSecurityContexts,
  embedTenantGroups,
  effectiveAttributesOf,
  userSecurityContext,
} from './security-context.js';
export type { EmbedIdentity } from './security-context.js';
