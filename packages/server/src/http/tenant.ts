import type { FastifyRequest } from 'fastify';
import type { TenantRow } from '../db/tables.js';
import { ApiError } from '../shared/problems.js';

export interface Tenant {
  id: number;
  slug: string;
}

/**
 * A request naming two hosts is refused (RFC 9112 section 3.2): a proxy and this server could each
 * pick a different one and so a different tenant. Node keeps the first Host and drops the rest,
 * so the raw headers are counted.
 */
export function refuseRepeatedHost(request: FastifyRequest): void {
  const raw = request.raw.rawHeaders;
  let hosts = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.toLowerCase() === 'host') hosts += 1;
  if (hosts > 1) {
    throw new ApiError('VALIDATION_FAILED', `The request is not valid: /headers/host is sent ${hosts} times; send it once.`, {
      errors: [{ pointer: '/headers/host', message: 'must be sent once' }],
    });
  }
}

/** Lower-cased host name of a request, without port; `[::1]:8443` gives `[::1]`. */
export function hostOf(request: FastifyRequest): string {
  const raw = (request.headers.host ?? '').trim().toLowerCase();
  if (raw.startsWith('[')) return raw.slice(0, raw.indexOf(']') + 1);
  return raw.replace(/:\d+$/, '').replace(/\.$/, '');
}

/** The tenants' lookups, given by the tenants area. */
export interface TenantLookup {
  /** The tenant a custom domain is mapped to. */
  byHost(host: string): Promise<TenantRow | undefined>;
  bySlug(slug: string): Promise<TenantRow | undefined>;
  /** The default tenant, which answers on any host when there is no BASE_DOMAIN. */
  byDefault(): Promise<TenantRow | undefined>;
}

/**
 * Finds the tenant a Host header names: a custom domain mapped to a tenant first, then
 * `<slug>.<BASE_DOMAIN>`; without BASE_DOMAIN the default tenant answers on any host.
 * Answers are cached briefly: tenants are created by an operator command in another process,
 * so a new host is served within seconds without a lookup on every request.
 */
export function tenantResolver(tenants: TenantLookup, baseDomain: string | null, ttlMs = 5000) {
  const cache = new Map<string, { tenant: Tenant | null; until: number }>();

  async function lookup(host: string): Promise<Tenant | null> {
    const mapped = await tenants.byHost(host);
    if (mapped) return pick(mapped);
    if (baseDomain === null) {
      const fallback = await tenants.byDefault();
      return fallback ? pick(fallback) : null;
    }
    const suffix = `.${baseDomain}`;
    if (!host.endsWith(suffix)) return null;
    const slug = host.slice(0, -suffix.length);
    if (slug.includes('.')) return null;
    const bySlug = await tenants.bySlug(slug);
    return bySlug ? pick(bySlug) : null;
  }

  return async function resolve(request: FastifyRequest): Promise<Tenant> {
    const host = hostOf(request);
    const hit = cache.get(host);
    let tenant: Tenant | null;
    if (hit && hit.until > Date.now()) {
      tenant = hit.tenant;
    } else {
      tenant = await lookup(host);
      if (cache.size > 10_000) cache.clear();
      cache.set(host, { tenant, until: Date.now() + ttlMs });
    }
    if (!tenant) throw new ApiError('TENANT_NOT_FOUND', `No tenant answers on host "${host}".`);
    return tenant;
  };
}

function pick(row: TenantRow): Tenant {
  return { id: row.id, slug: row.slug };
}
