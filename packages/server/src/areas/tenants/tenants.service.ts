import type { Store } from '../../db/database.js';
import { serialized } from '../../db/transactions.js';
import type { Executor, TenantRow, UserRow } from '../../db/tables.js';
import { now } from '../../time.js';
import { findKeyByHash, hasLiveAdminKey, insertKey } from '../api-keys/api-keys.store.js';
import { displayPrefix, generateApiKey, hashApiKey } from '../api-keys/key-format.js';
import { findUserByEmail, insertUser } from '../users/users.store.js';
import { findHost, findTenantBySlug, insertHost, insertTenant, listTenants } from './tenants.store.js';

/** The tenant that answers on any host when BASE_DOMAIN is unset. */
export const DEFAULT_TENANT_SLUG = 'default';
const SLUG = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
const HOST = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$/;

export class TenantError extends Error {}

export interface BootstrapResult {
  tenant: TenantRow;
  admin: UserRow;
  /** The generated admin key, present only when one was made in this call: print it once. */
  generatedKey: string | null;
  /** Set when ADMIN_API_KEY names a key that exists but was revoked; it stays revoked. */
  configuredKeyRevoked: boolean;
}

async function ensureAdmin(trx: Executor, tenantId: number, email: string): Promise<UserRow> {
  const existing = await findUserByEmail(trx, tenantId, email);
  if (existing) return existing;
  const at = now();
  return insertUser(trx, { tenant_id: tenantId, email, first_name: null, role: 'ADMIN', deactivated_at: null, created_at: at, updated_at: at });
}

async function addKey(trx: Executor, tenantId: number, userId: number, name: string, key: string): Promise<void> {
  await insertKey(trx, {
    tenant_id: tenantId,
    user_id: userId,
    name,
    key_hash: hashApiKey(key),
    key_prefix: displayPrefix(key),
    deployment_ids: null,
    expires_at: null,
    revoked_at: null,
    last_used_at: null,
    created_at: now(),
  });
}

/**
 * Start-up bootstrap of the default tenant, idempotent and safe when several processes start
 * at once: the default tenant and its admin exist afterwards; ADMIN_API_KEY, when given,
 * authenticates as that admin; otherwise a key is generated only if no admin key exists yet.
 */
export async function bootstrapDefaultTenant(store: Store, adminEmail: string, adminApiKey: string | null): Promise<BootstrapResult> {
  return serialized(store, 'bootstrap', async (trx) => {
    const tenant = (await findTenantBySlug(trx, DEFAULT_TENANT_SLUG)) ?? (await insertTenant(trx, DEFAULT_TENANT_SLUG, 'Default', now()));
    const admin = await ensureAdmin(trx, tenant.id, adminEmail);
    let generatedKey: string | null = null;
    let configuredKeyRevoked = false;
    if (adminApiKey !== null) {
      const existing = await findKeyByHash(trx, hashApiKey(adminApiKey));
      if (!existing) await addKey(trx, tenant.id, admin.id, 'ADMIN_API_KEY', adminApiKey);
      else configuredKeyRevoked = existing.revoked_at !== null;
    } else if (!(await hasLiveAdminKey(trx, tenant.id))) {
      generatedKey = generateApiKey();
      await addKey(trx, tenant.id, admin.id, 'bootstrap', generatedKey);
    }
    return { tenant, admin, generatedKey, configuredKeyRevoked };
  });
}

export function normaliseHost(host: string): string {
  return host.trim().toLowerCase().replace(/\.$/, '');
}

/** Creates a tenant with its first admin and key (operator command). The key is returned once. */
export async function createTenant(
  store: Store,
  input: { slug: string; name?: string; domains: string[]; adminEmail: string },
): Promise<{ tenant: TenantRow; admin: UserRow; key: string; domains: string[] }> {
  if (!SLUG.test(input.slug)) throw new TenantError(`Tenant slug "${input.slug}" must be lowercase letters, digits and dashes (at most 63).`);
  const domains = input.domains.map(normaliseHost);
  for (const d of domains) if (!HOST.test(d)) throw new TenantError(`"${d}" is not a host name.`);
  return serialized(store, 'tenants', async (trx) => {
    if (await findTenantBySlug(trx, input.slug)) throw new TenantError(`Tenant "${input.slug}" already exists.`);
    for (const d of domains) if (await findHost(trx, d)) throw new TenantError(`Host "${d}" already belongs to a tenant.`);
    const at = now();
    const tenant = await insertTenant(trx, input.slug, input.name ?? input.slug, at);
    for (const d of domains) await insertHost(trx, tenant.id, d, at);
    const admin = await ensureAdmin(trx, tenant.id, input.adminEmail);
    const key = generateApiKey();
    await addKey(trx, tenant.id, admin.id, 'first admin key', key);
    return { tenant, admin, key, domains };
  });
}

/** Maps a custom domain to an existing tenant (operator command). */
export async function addTenantDomain(store: Store, slug: string, domain: string): Promise<void> {
  const host = normaliseHost(domain);
  if (!HOST.test(host)) throw new TenantError(`"${host}" is not a host name.`);
  await serialized(store, 'tenants', async (trx) => {
    const tenant = await findTenantBySlug(trx, slug);
    if (!tenant) throw new TenantError(`Tenant "${slug}" does not exist.`);
    if (await findHost(trx, host)) throw new TenantError(`Host "${host}" already belongs to a tenant.`);
    await insertHost(trx, tenant.id, host, now());
  });
}

export { listTenants };
