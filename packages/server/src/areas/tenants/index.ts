/**
 * The tenants area's public entry: what other areas may use of it. Everything else in the folder
 * is the area's own (npm run cycles enforces it).
 */
export { tenantOrigin } from './tenant-origin.js';
export type { PublicUrls } from './tenant-origin.js';
export { DEFAULT_TENANT_SLUG } from './tenants.service.js';
export { findTenantBySlug } from './tenants.store.js';
export { tenantsArea } from './tenants.module.js';
