import { PostgresAdapter, sql } from 'kysely';
import type { EmbedUserRow, EmbedUserTable, Executor } from '../../db/tables.js';
import { containsPattern } from './embed-tenants.store.js';

/**
 * `lock`: on PostgreSQL the row stays locked for update until the transaction ends, so that
 * writers of one user take turns (SQLite runs one writer at a time anyway).
 */
export async function findEmbedUserByExternalId(
  db: Executor,
  tenantId: number,
  embedTenantId: number,
  externalId: string,
  options: { lock?: boolean } = {},
): Promise<EmbedUserRow | undefined> {
  const query = db
    .selectFrom('embed_users')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('embed_tenant_id', '=', embedTenantId)
    .where('external_id', '=', externalId);
  return (options.lock === true && db.getExecutor().adapter instanceof PostgresAdapter ? query.forUpdate() : query).executeTakeFirst();
}

export async function findEmbedUsersByIds(db: Executor, tenantId: number, embedTenantId: number, ids: number[]): Promise<EmbedUserRow[]> {
  if (ids.length === 0) return [];
  return db
    .selectFrom('embed_users')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('embed_tenant_id', '=', embedTenantId)
    .where('id', 'in', ids)
    .execute();
}

export async function findEmbedUsersByExternalIds(db: Executor, tenantId: number, embedTenantId: number, externalIds: string[]): Promise<EmbedUserRow[]> {
  if (externalIds.length === 0) return [];
  return db
    .selectFrom('embed_users')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('embed_tenant_id', '=', embedTenantId)
    .where('external_id', 'in', externalIds)
    .execute();
}

export async function insertEmbedUser(db: Executor, values: Omit<EmbedUserTable, 'id'>): Promise<EmbedUserRow> {
  return db.insertInto('embed_users').values(values).returningAll().executeTakeFirstOrThrow();
}

/** The id of the user with this external id in the embed tenant of this name, if both exist (a read before any lock). */
export async function existingEmbedUserId(db: Executor, tenantId: number, embedTenantName: string, externalId: string): Promise<number | undefined> {
  const row = await db
    .selectFrom('embed_users as u')
    .innerJoin('embed_tenants as t', 't.id', 'u.embed_tenant_id')
    .select('u.id')
    .where('t.tenant_id', '=', tenantId)
    .where('t.name', '=', embedTenantName)
    .where('u.external_id', '=', externalId)
    .executeTakeFirst();
  return row?.id;
}

/** Inserts the user unless one with its external id is there (or being inserted: this waits for it); then undefined. */
export async function insertEmbedUserUnlessTaken(db: Executor, values: Omit<EmbedUserTable, 'id'>): Promise<EmbedUserRow | undefined> {
  return db
    .insertInto('embed_users')
    .values(values)
    .onConflict((oc) => oc.columns(['embed_tenant_id', 'external_id']).doNothing())
    .returningAll()
    .executeTakeFirst();
}

/** Many users in a few statements (chunks stay under both dialects' bound-parameter limits); rows in input order. */
export async function insertEmbedUsers(db: Executor, values: Array<Omit<EmbedUserTable, 'id'>>): Promise<EmbedUserRow[]> {
  const out: EmbedUserRow[] = [];
  for (let i = 0; i < values.length; i += 200) {
    const rows = await db
      .insertInto('embed_users')
      .values(values.slice(i, i + 200))
      .returningAll()
      .execute();
    const byExternal = new Map(rows.map((r) => [r.external_id, r]));
    for (const v of values.slice(i, i + 200)) {
      const row = byExternal.get(v.external_id);
      if (row) out.push(row);
    }
  }
  return out;
}

export type EmbedUserChanges = Partial<Pick<EmbedUserRow, 'email' | 'display_name' | 'picture' | 'updated_at' | 'last_login'>>;

export async function updateEmbedUser(db: Executor, tenantId: number, id: number, changes: EmbedUserChanges): Promise<EmbedUserRow> {
  return db.updateTable('embed_users').set(changes).where('tenant_id', '=', tenantId).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

/** Every embed user of the account, across its embed tenants: what the account-wide cap counts. */
export async function countAccountEmbedUsers(db: Executor, tenantId: number): Promise<number> {
  const row = await db
    .selectFrom('embed_users')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('tenant_id', '=', tenantId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Sorted by email, then id. `search` (lowercased already; emails and external ids are stored
 * lowercase) matches a substring of the email or of the external id; a complete external id is
 * such a substring too.
 */
export async function listEmbedUsers(
  db: Executor,
  tenantId: number,
  embedTenantId: number,
  search: string | undefined,
  after: { email: string; id: number } | undefined,
  limit: number,
): Promise<EmbedUserRow[]> {
  let query = db.selectFrom('embed_users').selectAll().where('tenant_id', '=', tenantId).where('embed_tenant_id', '=', embedTenantId);
  if (search !== undefined) {
    const pattern = containsPattern(search);
    query = query.where((eb) =>
      eb.or([sql<boolean>`email like ${pattern} escape '\\'`, sql<boolean>`external_id like ${pattern} escape '\\'`, eb('external_id', '=', search)]),
    );
  }
  if (after !== undefined)
    query = query.where((eb) => eb.or([eb('email', '>', after.email), eb.and([eb('email', '=', after.email), eb('id', '>', after.id)])]));
  return query.orderBy('email').orderBy('id').limit(limit).execute();
}

export async function recordEmbedLogin(db: Executor, tenantId: number, embedUserId: number, at: string): Promise<void> {
  await db.updateTable('embed_users').set({ last_login: at }).where('tenant_id', '=', tenantId).where('id', '=', embedUserId).execute();
}

/** Whether the embed user is still there (their embed tenant may have been deleted since their session). */
export async function embedUserExists(db: Executor, tenantId: number, embedUserId: number): Promise<boolean> {
  const row = await db.selectFrom('embed_users').select('id').where('tenant_id', '=', tenantId).where('id', '=', embedUserId).executeTakeFirst();
  return row !== undefined;
}
