import type { TenantLookup } from '../../http/tenant.js';
import { defineArea } from '../../platform/index.js';
import { DEFAULT_TENANT_SLUG } from './tenants.service.js';
import { findTenantByHost, findTenantBySlug } from './tenants.store.js';

/** Tenants: which one a request is for (by its host, its slug, or the default one). */
export const tenantsArea = defineArea('tenants', ({ platform: { store } }) => {
  const tenantLookup: TenantLookup = {
    byHost: (host) => findTenantByHost(store.db, host),
    bySlug: (slug) => findTenantBySlug(store.db, slug),
    byDefault: () => findTenantBySlug(store.db, DEFAULT_TENANT_SLUG),
  };
  return { services: { tenantLookup } };
});
