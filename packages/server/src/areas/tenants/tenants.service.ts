import type { Store } from '../../db/database.js';
import { serialized } from '../../db/transactions.js';
import type { Executor, KeySource, TenantRow, UserRow } from '../../db/tables.js';
import { DOMAIN_NAME, EMAIL, SLUG } from '../../formats.js';
import { timestamp, type Clock } from '../../time.js';
import { findKeyByHash, hasLiveAdminKey, insertKey, revokeOtherKeysFrom, tenantHasKeys } from '../api-keys/index.js';
import { generateApiKey, hashApiKey } from '../api-keys/index.js';
import { findUserByEmail, insertUser } from '../users/index.js';
import { findHost, findTenantBySlug, insertHost, insertTenant, listTenants } from './tenants.store.js';

/** The tenant that answers on any host when BASE_DOMAIN is unset. */
export const DEFAULT_TENANT_SLUG = 'default';

export class TenantError extends Error {}

export interface BootstrapResult {
  tenant: TenantRow;
  admin: UserRow;
  /**
   * `usable`: an active admin holds a working key. `first-start`: the tenant never had a key;
   * `issueFirstAdminKey` makes one once the server can be reached. `none-usable`: keys exist but
   * none works (revoked, expired, or its admin deactivated); the operator must make one.
   */
  adminKeys: 'usable' | 'first-start' | 'none-usable';
  /** Set when ADMIN_API_KEY names a key that exists but was revoked; it stays revoked. */
  configuredKeyRevoked: boolean;
  /** Earlier ADMIN_API_KEY values revoked because the variable now holds another key. */
  rotatedKeys: number;
  /** Set when the ADMIN_EMAIL user is no longer an active admin, so the bootstrap key is not one either. */
  adminWarning: string | null;
}

async function ensureAdmin(trx: Executor, tenantId: number, email: string, at: string): Promise<UserRow> {
  const existing = await findUserByEmail(trx, tenantId, email);
  if (existing) return existing;
  return insertUser(trx, { tenant_id: tenantId, email, first_name: null, role: 'ADMIN', deactivated_at: null, created_at: at, updated_at: at });
}

async function addKey(trx: Executor, tenantId: number, userId: number, name: string, key: string, source: KeySource, at: string): Promise<void> {
  await insertKey(trx, { tenantId, userId, name, key, source, createdAt: at });
}

/**
 * Start-up bootstrap of the default tenant, idempotent and safe when several processes start
 * at once: the default tenant and its admin exist afterwards, and ADMIN_API_KEY, when given,
 * authenticates as that admin. No key is generated here: see `issueFirstAdminKey`. `now`: the
 * clock what it writes is stamped with, and by which keys have expired.
 */
export async function bootstrapDefaultTenant(store: Store, now: Clock, adminEmail: string, adminApiKey: string | null): Promise<BootstrapResult> {
  return serialized(store, 'bootstrap', async (trx) => {
    const at = timestamp(now);
    const tenant = (await findTenantBySlug(trx, DEFAULT_TENANT_SLUG)) ?? (await insertTenant(trx, DEFAULT_TENANT_SLUG, 'Default', at));
    const admin = await ensureAdmin(trx, tenant.id, adminEmail, at);
    let configuredKeyRevoked = false;
    let rotatedKeys = 0;
    if (adminApiKey !== null) {
      const hash = hashApiKey(adminApiKey);
      const existing = await findKeyByHash(trx, hash);
      if (!existing) await addKey(trx, tenant.id, admin.id, 'ADMIN_API_KEY', adminApiKey, 'env', at);
      else if (existing.source !== 'env' || existing.tenant_id !== tenant.id) {
        // The value is already some other key: adopting it would hand that key's holder the admin's rights.
        throw new TenantError('ADMIN_API_KEY is already in use as another API key; generate a fresh one with `npm run admin -- key generate`.');
      } else configuredKeyRevoked = existing.revoked_at !== null;
      // Setting a new ADMIN_API_KEY is how an operator rotates it: the previous value stops working.
      rotatedKeys = await revokeOtherKeysFrom(trx, tenant.id, 'env', hash, at);
    }
    const adminKeys = (await hasLiveAdminKey(trx, tenant.id, at)) ? 'usable' : (await tenantHasKeys(trx, tenant.id)) ? 'none-usable' : 'first-start';
    const adminWarning =
      admin.role !== 'ADMIN' || admin.deactivated_at !== null
        ? `ADMIN_EMAIL ${admin.email} is no longer an active admin (role ${admin.role}${admin.deactivated_at ? ', deactivated' : ''}); its keys carry only what that user may do.`
        : null;
    return { tenant, admin, adminKeys, configuredKeyRevoked, rotatedKeys, adminWarning };
  });
}

/**
 * The first start's admin key, made only if the tenant still has no key at all, so it is shown
 * exactly once even when several processes start together. The server calls it once its port is
 * bound: a start that fails before that leaves no key behind that nobody saw. Revoking every key
 * later never brings this back; the operator sets ADMIN_API_KEY instead (see the start-up hint).
 */
export async function issueFirstAdminKey(store: Store, now: Clock, tenantId: number, adminId: number): Promise<string | null> {
  return serialized(store, 'bootstrap', async (trx) => {
    if (await tenantHasKeys(trx, tenantId)) return null;
    const key = generateApiKey();
    await addKey(trx, tenantId, adminId, 'bootstrap', key, 'bootstrap', timestamp(now));
    return key;
  });
}

export function normaliseHost(host: string): string {
  return host.trim().toLowerCase().replace(/\.$/, '');
}

/** The address of a new tenant's first admin when the operator names none. */
export function defaultAdminEmail(slug: string, baseDomain: string | null): string {
  return `admin@${slug}.${baseDomain ?? 'localhost'}`;
}

/** Every host a tenant answers on: its custom domains, then `<slug>.<BASE_DOMAIN>` when set. */
export function tenantHosts(tenant: { slug: string }, domains: string[], baseDomain: string | null): string[] {
  return baseDomain === null ? [...domains] : [...domains, `${tenant.slug}.${baseDomain}`];
}

/**
 * A custom domain is a host name outside BASE_DOMAIN: `<x>.<BASE_DOMAIN>` names tenant `x`, and a
 * mapping would shadow it (mapped hosts are looked up first).
 */
function checkDomain(host: string, baseDomain: string | null): void {
  if (!DOMAIN_NAME.test(host)) throw new TenantError(`"${host}" is not a host name (for example analytics.example.com).`);
  if (baseDomain !== null && host.endsWith(`.${baseDomain}`)) {
    throw new TenantError(`"${host}" is under BASE_DOMAIN (${baseDomain}), where host names are tenant slugs; map a domain outside it.`);
  }
}

export interface CreateTenantInput {
  slug: string;
  name?: string | undefined;
  domains: string[];
  adminEmail: string;
  /** When set, custom domains under it are refused. */
  baseDomain?: string | null | undefined;
}

/** Creates a tenant with its first admin and key (operator command). The key is returned once. */
export async function createTenant(
  store: Store,
  now: Clock,
  input: CreateTenantInput,
): Promise<{ tenant: TenantRow; admin: UserRow; key: string; domains: string[] }> {
  if (!SLUG.test(input.slug)) throw new TenantError(`Tenant slug "${input.slug}" must be lowercase letters, digits and dashes (at most 63).`);
  if (input.slug === DEFAULT_TENANT_SLUG)
    throw new TenantError(`Tenant slug "${DEFAULT_TENANT_SLUG}" is reserved for the tenant the server creates at start-up.`);
  if (!EMAIL.test(input.adminEmail)) throw new TenantError(`Admin email "${input.adminEmail}" is not an email address.`);
  const domains = [...new Set(input.domains.map(normaliseHost))];
  for (const d of domains) checkDomain(d, input.baseDomain ?? null);
  return serialized(store, 'tenants', async (trx) => {
    if (await findTenantBySlug(trx, input.slug)) throw new TenantError(`Tenant "${input.slug}" already exists.`);
    for (const d of domains) if (await findHost(trx, d)) throw new TenantError(`Host "${d}" already belongs to a tenant.`);
    const at = timestamp(now);
    const tenant = await insertTenant(trx, input.slug, input.name ?? input.slug, at);
    for (const d of domains) await insertHost(trx, tenant.id, d, at);
    const admin = await ensureAdmin(trx, tenant.id, input.adminEmail, at);
    const key = generateApiKey();
    await addKey(trx, tenant.id, admin.id, 'first admin key', key, 'operator', at);
    return { tenant, admin, key, domains };
  });
}

/** Maps a custom domain to an existing tenant (operator command). Returns the normalised host. */
export async function addTenantDomain(store: Store, now: Clock, slug: string, domain: string, baseDomain: string | null = null): Promise<string> {
  const host = normaliseHost(domain);
  checkDomain(host, baseDomain);
  await serialized(store, 'tenants', async (trx) => {
    const tenant = await findTenantBySlug(trx, slug);
    if (!tenant) throw new TenantError(`Tenant "${slug}" does not exist.`);
    if (await findHost(trx, host)) throw new TenantError(`Host "${host}" already belongs to a tenant.`);
    await insertHost(trx, tenant.id, host, timestamp(now));
  });
  return host;
}

export interface TenantSummary {
  id: number;
  slug: string;
  name: string;
  createdAt: string;
  hosts: string[];
  /** The default tenant without BASE_DOMAIN: it also answers on every host no other tenant maps. */
  anyHost: boolean;
}

/** Every tenant with the hosts it answers on, for the operator's listing. */
export async function describeTenants(store: Store, baseDomain: string | null): Promise<TenantSummary[]> {
  const rows = await listTenants(store.db);
  return rows.map((t) => ({
    id: t.id,
    slug: t.slug,
    name: t.name,
    createdAt: t.created_at,
    hosts: tenantHosts(t, t.hosts, baseDomain),
    anyHost: baseDomain === null && t.slug === DEFAULT_TENANT_SLUG,
  }));
}
