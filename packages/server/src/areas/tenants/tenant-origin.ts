import type { Executor } from '../../db/tables.js';
import { DEFAULT_TENANT_SLUG } from './tenants.service.js';
import { findPrimaryHost } from './tenants.store.js';

export interface PublicUrls {
  baseDomain: string | null;
  /** The configured public origin (PUBLIC_URL), read when a URL is built: its default needs the bound port. */
  publicUrl: () => URL;
}

/**
 * The origin (`https://host[:port]`) a tenant is reached on, for the absolute URLs the server
 * builds (SCIM locations, deployment URLs). It comes from configuration and the tenant's own
 * domains, never from the request's Host header, which in single-tenant mode may name anything.
 * A tenant's primary domain is its first custom domain, else `<slug>.<BASE_DOMAIN>`; without
 * BASE_DOMAIN the default tenant, which answers on any host, uses PUBLIC_URL. Domains are served
 * on PUBLIC_URL's port, the one the world reaches this server through.
 */
export function tenantOrigin(db: Executor, options: PublicUrls) {
  return async (tenant: { id: number; slug: string }): Promise<string> => {
    const configured = options.publicUrl();
    if (options.baseDomain === null && tenant.slug === DEFAULT_TENANT_SLUG) return configured.origin;
    const host = (await findPrimaryHost(db, tenant.id)) ?? (options.baseDomain !== null ? `${tenant.slug}.${options.baseDomain}` : undefined);
    // Without BASE_DOMAIN, a tenant with no custom domain is reachable on no host of its own.
    if (host === undefined) return configured.origin;
    return `https://${host}${configured.port ? `:${configured.port}` : ''}`;
  };
}
export type TenantOrigin = ReturnType<typeof tenantOrigin>;
