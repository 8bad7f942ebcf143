import type { Executor, TenantRow } from '../../db/tables.js';

export async function findTenantById(db: Executor, id: number): Promise<TenantRow | undefined> {
  return db.selectFrom('tenants').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function findTenantBySlug(db: Executor, slug: string): Promise<TenantRow | undefined> {
  return db.selectFrom('tenants').selectAll().where('slug', '=', slug).executeTakeFirst();
}

/** Limits the tenant to these regions (JSON list), or to none of its own (null: every configured region). */
export async function setTenantRegions(db: Executor, tenantId: number, regions: string | null): Promise<void> {
  await db.updateTable('tenants').set({ regions }).where('id', '=', tenantId).execute();
}

export async function findTenantByHost(db: Executor, host: string): Promise<TenantRow | undefined> {
  return db
    .selectFrom('tenant_hosts')
    .innerJoin('tenants', 'tenants.id', 'tenant_hosts.tenant_id')
    .selectAll('tenants')
    .where('tenant_hosts.host', '=', host)
    .executeTakeFirst();
}

export async function insertTenant(db: Executor, slug: string, name: string, at: string): Promise<TenantRow> {
  return db.insertInto('tenants').values({ slug, name, created_at: at }).returningAll().executeTakeFirstOrThrow();
}

export async function listTenants(db: Executor): Promise<Array<TenantRow & { hosts: string[] }>> {
  const tenants = await db.selectFrom('tenants').selectAll().orderBy('id').execute();
  const hosts = await db.selectFrom('tenant_hosts').select(['tenant_id', 'host']).orderBy('host').execute();
  return tenants.map((t) => ({ ...t, hosts: hosts.filter((h) => h.tenant_id === t.id).map((h) => h.host) }));
}

export async function findHost(db: Executor, host: string) {
  return db.selectFrom('tenant_hosts').selectAll().where('host', '=', host).executeTakeFirst();
}

export async function insertHost(db: Executor, tenantId: number, host: string, at: string): Promise<void> {
  await db.insertInto('tenant_hosts').values({ tenant_id: tenantId, host, created_at: at }).execute();
}

/** The custom domain mapped to a tenant first (the oldest; ties by name), or undefined when it has none. */
export async function findPrimaryHost(db: Executor, tenantId: number): Promise<string | undefined> {
  const row = await db
    .selectFrom('tenant_hosts')
    .select('host')
    .where('tenant_id', '=', tenantId)
    .orderBy('created_at')
    .orderBy('host')
    .limit(1)
    .executeTakeFirst();
  return row?.host;
}
